import { createServer, type Server } from 'node:http';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { handleMetricsRequest, METRICS_PATH } from '../metrics/metricsHttp';
import { serveXdsDir } from '../xds/serveXdsDir';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { loadMesh } from './loadMesh';
import { version } from './version';
import { urlHost } from '@/lib/util/urlHost';

/**
 * `meshdeck xds serve DIR --listen [HOST:]PORT (--insecure | --tls-dir PATH) [--metrics-listen [HOST:]PORT]`:
 * the ADS server on the mesh in DIR, re-rendering on edits, and GET /metrics on its own port when asked
 * (nothing else listens there). Runs until SIGINT/SIGTERM.
 */
export async function runXds(
  cmd: Extract<CliCommand, { command: 'xds'; sub: 'serve' }>,
  io: CliIo,
): Promise<number> {
  // Fails early (and as a user error) on a missing path or a directory without manifests.
  await loadMesh(cmd.dir);
  const log = (m: string) => io.stderr(`${m}\n`);
  const metrics = cmd.metrics ? new MeshMetrics({ version: version(), mode: 'local' }) : undefined;
  let served;
  try {
    served = await serveXdsDir({
      dir: cmd.dir,
      host: cmd.host,
      port: cmd.port,
      insecure: cmd.insecure,
      ...(cmd.tlsDir ? { tlsDir: cmd.tlsDir } : {}),
      ...(metrics ? { metrics } : {}),
      logger: { info: log, warn: log },
    });
  } catch (e) {
    throw new CliError(
      `xds serve: cannot serve on ${cmd.host}:${cmd.port}: ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
  let metricsServer: Server | undefined;
  if (cmd.metrics && metrics) {
    const { host, port } = cmd.metrics;
    metricsServer = createServer((req, res) => {
      if (handleMetricsRequest(req, res, metrics)) return;
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`not found: this port answers ${METRICS_PATH} only\n`);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        metricsServer!.once('error', reject);
        metricsServer!.listen(port, host, resolve);
      });
    } catch (e) {
      await served.stop();
      throw new CliError(
        `xds serve: cannot serve metrics on ${host}:${port}: ${(e as Error).message}`,
        ExitCode.usage,
      );
    }
  }
  io.stdout(
    `meshdeck xDS: serving ${cmd.dir} on ${cmd.host}:${served.port}${cmd.insecure ? ' (insecure)' : ' (mTLS)'}\n` +
      (cmd.metrics
        ? `metrics: http://${urlHost(cmd.metrics.host)}:${cmd.metrics.port}${METRICS_PATH}\n`
        : ''),
  );
  return new Promise<number>((resolve) => {
    let closing = false;
    const shutdown = (signal: string) => {
      if (closing) return;
      closing = true;
      io.stderr(`meshdeck: ${signal}: stopping the xDS server\n`);
      metricsServer?.close();
      void served.stop().then(() => resolve(ExitCode.ok));
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
}
