/**
 * The validating admission webhook (`meshdeck serve --kubeconfig ... --webhook-listen`): an HTTPS server
 * the API server POSTs an AdmissionReview to for every create, update and delete of a VirtualService,
 * Route or Target (deploy/webhook.yaml). The decision is lib/kube/admission.ts's, on the objects this
 * replica's informers hold. Every replica answers (leading or not): the API server may call any.
 *
 * A body that is not an AdmissionReview gets a 400, a failure of ours a 500: the API server then applies
 * the configuration's failurePolicy (Ignore in deploy/webhook.yaml: a console that is down must not stop
 * anyone from changing the cluster).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type AdmissionCluster, meshDiagnostics, reviewAdmission } from '@/lib/kube/admission';
import { KUBE_SOURCE_KINDS, type KubeObjects, type LeanKubeObject } from '@/lib/kube/kubeSnapshot';
import type { Diagnostic } from '@/lib/model/diagnostic';

/** Where the API server sends reviews (the configuration's `path`). */
export const ADMISSION_PATH = '/validate';
/** The API server's requests are at most 3 MiB; a little more is refused unread. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What one review came to, for the metrics. */
export type AdmissionOutcome = 'allowed' | 'warned' | 'denied' | 'malformed' | 'failed';

export interface AdmissionWebhookOptions {
  host: string;
  port: number;
  tls: { key: Buffer; cert: Buffer };
  /** The cluster as the informers hold it; undefined until they have all listed. */
  cluster: () => AdmissionCluster | undefined;
  logger?: { info(m: string): void; warn(m: string): void };
  /** Called once per request with what it came to. */
  onReview?: (outcome: AdmissionOutcome, kind: string, operation: string) => void;
}

/** The webhook's HTTPS server. */
export class AdmissionWebhook {
  private constructor(
    private readonly server: https.Server,
    readonly port: number,
  ) {}

  /** Listens on host:port (port 0: a free one); rejects if it cannot. */
  static async listen(options: AdmissionWebhookOptions): Promise<AdmissionWebhook> {
    const server = https.createServer({ key: options.tls.key, cert: options.tls.cert }, (req, res) =>
      handle(req, res, options),
    );
    // The API server keeps connections open between reviews; a stuck one must not pin a socket forever.
    server.keepAliveTimeout = 30_000;
    server.headersTimeout = 15_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new AdmissionWebhook(server, (server.address() as AddressInfo).port);
  }

  /** Serves a renewed certificate to new connections. */
  setTls(tls: { key: Buffer; cert: Buffer }): void {
    this.server.setSecureContext({ key: tls.key, cert: tls.cert });
  }

  /**
   * Stops listening; idle connections close at once, and connections still busy after `graceMs` are
   * cut (the API server keeps its connections to a webhook open, and a stop must not wait on them).
   */
  async close(graceMs = 1000): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const timer = setTimeout(() => this.server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(timer);
  }
}

function handle(
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
  o: AdmissionWebhookOptions,
) {
  const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
    if (res.headersSent) return;
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const url = new URL(req.url ?? '/', 'https://webhook');
  if (url.pathname !== ADMISSION_PATH)
    return reply(404, `not found: ${url.pathname} (reviews go to ${ADMISSION_PATH})\n`);
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return reply(405, 'POST an admission.k8s.io/v1 AdmissionReview\n');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    // Past the limit the rest is read and dropped (requestTimeout bounds it), so the client reads the 413.
    if (size <= MAX_BODY_BYTES) chunks.push(c);
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (res.headersSent) return;
    if (size > MAX_BODY_BYTES) {
      res.setHeader('connection', 'close');
      return reply(413, `an AdmissionReview of over ${MAX_BODY_BYTES} bytes\n`);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (e) {
      o.onReview?.('malformed', '', '');
      return reply(400, `the body is not JSON: ${(e as Error).message}\n`);
    }
    try {
      const answer = reviewAdmission(body, o.cluster());
      if (!answer.ok) {
        o.onReview?.('malformed', '', '');
        return reply(400, `${answer.error}\n`);
      }
      const r = answer.review.response;
      const request = (
        body as {
          request: {
            kind: { kind: string };
            operation: string;
            namespace?: string;
            name?: string;
            userInfo?: { username?: string };
          };
        }
      ).request;
      const outcome: AdmissionOutcome = !r.allowed ? 'denied' : r.warnings?.length ? 'warned' : 'allowed';
      o.onReview?.(outcome, request.kind.kind, request.operation);
      if (!r.allowed) {
        o.logger?.info(
          `admission: denied ${request.operation} of ${request.kind.kind} ${request.namespace ?? ''}/${request.name ?? ''}` +
            ` by ${request.userInfo?.username ?? 'unknown'}: ${r.status?.message ?? ''}`,
        );
      }
      reply(200, JSON.stringify(answer.review), 'application/json');
    } catch (e) {
      // The engine never throws on input; if something else does, failurePolicy decides.
      o.onReview?.('failed', '', '');
      o.logger?.warn(`admission: the review failed: ${(e as Error).stack ?? String(e)}`);
      reply(500, `the review failed: ${(e as Error).message}\n`);
    }
  });
}

/**
 * The cluster for reviews from a source of lean objects: the objects as they are now, and the mesh's
 * diagnostics of them, recompiled only when an object changed (a source keeps an unchanged object's lean
 * form, so comparing references finds a change). Undefined while `synced()` is false.
 */
export function clusterFromObjects(
  objects: () => KubeObjects,
  synced: () => boolean,
): () => AdmissionCluster | undefined {
  let memo: { refs: LeanKubeObject[]; before: Diagnostic[] } | undefined;
  return () => {
    if (!synced()) return undefined;
    const now = objects();
    const refs = KUBE_SOURCE_KINDS.flatMap((k) => now[k] ?? []);
    if (!memo || memo.refs.length !== refs.length || memo.refs.some((r, i) => r !== refs[i])) {
      memo = { refs, before: meshDiagnostics(now) };
    }
    return { objects: now, before: memo.before };
  };
}
