/**
 * The console's HTTP server for `meshdeck serve` (both modes): Next.js in this process, so that its
 * route handlers reach the control plane and the console context through globalThis.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOidcSignIn, oidcConfigFromFlags, type OidcSignIn } from '../console/oidc';
import { resolveConsoleToken } from '../console/serveConsole';
import { dropLoopbackAcceptEncoding, StaticAssets } from '../console/staticAssets';
import type { MeshMetrics } from '../metrics/MeshMetrics';
import { handleMetricsRequest } from '../metrics/metricsHttp';
import type { OidcFlags } from './args';
import { CliError, ExitCode } from './cliError';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Whether `npm run build` has built the console. */
export function consoleBuilt(): boolean {
  return existsSync(path.join(REPO_ROOT, '.next', 'BUILD_ID'));
}

/**
 * Starts the console's HTTP server, with `GET /metrics` answered before Next.js when `metrics` is given;
 * a CliError says why it could not listen.
 */
export async function startConsoleHttp(host: string, port: number, metrics?: MeshMetrics): Promise<void> {
  try {
    const { default: next } = await import('next');
    const app = next({ dev: false, dir: REPO_ROOT, hostname: host, port });
    const handle = app.getRequestHandler();
    await app.prepare();
    const assets = new StaticAssets(path.join(REPO_ROOT, '.next', 'static'));
    const server = createServer((req, res) => {
      if (handleMetricsRequest(req, res, metrics) || assets.handle(req, res)) return;
      dropLoopbackAcceptEncoding(req);
      void handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    // In the background: until a file is ready, Next.js serves it (uncompressed).
    void assets.warm();
  } catch (e) {
    throw new CliError(
      `serve: cannot start the console on ${host}:${port}: ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
}

/** The console token and the OIDC sign-in of `meshdeck serve`, from its flags and environment. */
export async function resolveSignIn(cmd: {
  token?: string;
  oidc?: OidcFlags;
}): Promise<{ token: string; oidc?: OidcSignIn }> {
  let token: string;
  try {
    token = resolveConsoleToken(cmd.token);
  } catch (e) {
    throw new CliError(`serve: ${(e as Error).message}`, ExitCode.usage);
  }
  try {
    const config = oidcConfigFromFlags(cmd.oidc ?? {});
    // The provider itself is asked at the first sign-in: a provider down now does not stop the console.
    return config ? { token, oidc: await createOidcSignIn(config) } : { token };
  } catch (e) {
    throw new CliError(`serve: OIDC sign-in: ${(e as Error).message}`, ExitCode.usage);
  }
}
