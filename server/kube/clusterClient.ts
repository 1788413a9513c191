/**
 * Requests to the API server as Meshdeck's own identity (a kubeconfig) acting for a console user
 * through impersonation. Plain node:https with the kubeconfig's TLS material and credentials
 * (KubeConfig.applyToHTTPSOptions, so client certificates, tokens and exec plugins all work) rather than
 * client-node's generated APIs: those throw ApiException with the raw body, have no per-call header
 * hook for Impersonate-Group (a repeated header), drop the Warning headers, and need discovery for each
 * kind; here every answer, error or not, comes back as status + parsed Status, and nothing throws.
 */
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { warningTexts } from '@/lib/kube/warningHeader';

/** The console user the API server checks: Kubernetes RBAC decides what they may do. */
export interface ActingUser {
  user: string;
  groups: string[];
}

/** One API server answer (`status` 0: no answer, `body.message` says why). */
export interface ClusterResponse {
  status: number;
  body: Record<string, unknown>;
  /** The Warning headers' texts (what kubectl prints after `Warning:`). */
  warnings: string[];
}

export interface ClusterRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  /** Sent as Impersonate-User / Impersonate-Group; without it the request is Meshdeck's own. */
  as?: ActingUser;
  timeoutMs?: number;
}

/** A connection to one cluster: Meshdeck's kubeconfig (its current context). */
export class ClusterClient {
  constructor(private readonly kc: KubeConfig) {}

  /** The server URL of the kubeconfig's current cluster. */
  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  /** Sends one request; network failures and timeouts answer with status 0 instead of throwing. */
  async request(r: ClusterRequest): Promise<ClusterResponse> {
    const fail = (message: string): ClusterResponse => ({
      status: 0,
      body: { kind: 'Status', status: 'Failure', message },
      warnings: [],
    });
    if (!this.server) return fail('the kubeconfig has no current cluster');
    const url = new URL(r.path, this.server.endsWith('/') ? this.server : `${this.server}/`);
    // A server URL with a path prefix (a proxy) keeps it.
    url.pathname = `${new URL(this.server).pathname.replace(/\/$/, '')}${r.path}`;
    for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const payload =
      r.body === undefined ? undefined : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const opts: https.RequestOptions = { method: r.method, headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(opts);
    } catch (e) {
      return fail(`the kubeconfig's credentials could not be used: ${(e as Error).message}`);
    }
    const headers: Record<string, string | string[] | number> = {
      ...(opts.headers as Record<string, string>),
      accept: 'application/json',
    };
    if (payload !== undefined) {
      headers['content-type'] = r.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    if (r.as) {
      headers['impersonate-user'] = r.as.user;
      if (r.as.groups.length > 0) headers['impersonate-group'] = r.as.groups;
    }
    opts.headers = headers;
    opts.timeout = r.timeoutMs ?? 15_000;
    return new Promise((resolve) => {
      const req = https.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => resolve(fail(`${r.method} ${r.path}: ${e.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown>;
          try {
            const parsed: unknown = JSON.parse(text);
            body =
              parsed && typeof parsed === 'object' && !Array.isArray(parsed)
                ? (parsed as Record<string, unknown>)
                : { message: text };
          } catch {
            // A 401 or a proxy's error page: keep the text as the message.
            body = { kind: 'Status', status: 'Failure', message: text.trim() || `HTTP ${res.statusCode}` };
          }
          resolve({
            status: res.statusCode ?? 0,
            body,
            warnings: warningTexts(rawWarnings(res.rawHeaders)),
          });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeout} ms`)));
      req.on('error', (e) => resolve(fail(`${r.method} ${r.path}: ${e.message}`)));
      req.end(payload);
    });
  }
}

/** Each Warning header as sent (res.headers joins repeated ones with ", "). */
export function rawWarnings(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'warning') out.push(raw[i + 1]!);
  return out;
}
