import path from 'node:path';
import { serveConsole } from '../console/serveConsole';
import { ControlPlane } from '../controlPlane/ControlPlane';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import { setControlPlane } from '../controlPlane/registry';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { setMeshMetrics } from '../metrics/metricsRegistry';
import { AdsListenError } from '../xds/meshXds';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { consoleBuilt, REPO_ROOT, resolveSignIn, startConsoleHttp } from './consoleHttp';
import { version } from './version';

/**
 * `meshdeck serve [DIR]`: the control plane on the local mesh of DIR (with its ADS server unless
 * --no-xds), and the console (Next.js, in this process, so that route handlers reach the control
 * plane through globalThis). Runs until SIGINT/SIGTERM, then stops every proxy and app it started.
 */
export async function runServe(cmd: Extract<CliCommand, { command: 'serve' }>, io: CliIo): Promise<number> {
  if (cmd.kube) return (await import('../kube/kubeControlPlaneServe')).runKubeServe(cmd, io);
  if (!consoleBuilt()) {
    throw new CliError(
      'serve: the console is not built yet; run `npm run build` first (npm run demo does both)',
      ExitCode.usage,
    );
  }
  const { token, oidc } = await resolveSignIn(cmd);
  const started = Date.now();
  const metrics = new MeshMetrics({ version: version(), mode: 'local' });
  let cp: ControlPlane;
  try {
    cp = await ControlPlane.startLocal({
      meshDir: cmd.dir,
      metrics,
      ...(cmd.xds ? { xds: cmd.xds } : {}),
    });
  } catch (e) {
    if (e instanceof AdsListenError)
      throw new CliError(
        `serve: ${e.message} (see --xds-listen, --xds-insecure and --no-xds)`,
        ExitCode.usage,
      );
    throw e;
  }
  setControlPlane(cp);
  setMeshMetrics(metrics);
  // The console's sign-in and draft; the token is printed once, in the URL below, and never logged.
  const served = await serveConsole({
    meshDir: cmd.dir,
    host: cmd.host,
    port: cmd.port,
    token,
    ...(oidc ? { oidc } : {}),
    stateDir: localMeshStateDir(),
    examplesDir: path.join(REPO_ROOT, 'examples'),
    localMesh: true,
  }).catch(async (e: Error) => {
    await cp.stop();
    throw new CliError(`serve: cannot set up the console: ${e.message}`, ExitCode.usage);
  });
  if (served.gitSync) {
    const watcher = served.gitSync;
    metrics.setSources({ gitSync: () => watcher.last });
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    io.stderr(`meshdeck: ${signal}: stopping the local mesh\n`);
    await served.dispose().catch(() => undefined);
    await cp.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    await startConsoleHttp(cmd.host, cmd.port, metrics);
  } catch (e) {
    await served.dispose().catch(() => undefined);
    await cp.stop();
    throw e;
  }

  await Promise.race([cp.whenIdle(), new Promise((r) => setTimeout(r, 20000))]);
  const states = cp.syncStates();
  const synced = states.filter((s) => s.inSync).length;
  const errors = cp.live.get().diagnostics.filter((d) => d.severity === 'error').length;
  // l7mp proxies (pushed over REST) and proxyless gRPC clients (xDS only) are counted apart: a
  // gRPC-only mesh has no l7mp proxy, and "0/0 proxies in sync" read like a failure.
  const grpc = Object.values(cp.live.get().proxies).filter((p) => p.role === 'grpc');
  const counts = [
    ...(states.length || !grpc.length ? [`${synced}/${states.length} l7mp proxies in sync`] : []),
    ...(grpc.length ? [`${grpc.filter((p) => p.inSync).length}/${grpc.length} gRPC clients in sync`] : []),
  ];
  io.stdout(
    `Meshdeck console: ${served.url}\n` +
      (oidc
        ? `sign-in: OIDC at ${oidc.config.issuer}${oidc.config.tokenSignIn ? ', or the token in the URL above' : ' only (the token opens no session)'}\n`
        : '') +
      `local mesh ${cmd.dir}: ${counts.join(', ')}, ${errors} errors, ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  for (const s of states) {
    io.stdout(
      `  ${s.id.padEnd(28)} ${s.phase.padEnd(12)} ${s.apiUrl}${s.lastPush?.failed ? `  ${s.lastPush.failed.message}` : ''}\n`,
    );
  }
  for (const p of Object.values(cp.live.get().proxies)) {
    if (p.role === 'grpc')
      io.stdout(`  ${p.id.padEnd(28)} ${p.phase.padEnd(12)} proxyless gRPC (xDS only)\n`);
  }
  const xds = cp.xdsServer;
  io.stdout(
    !xds
      ? 'xDS: off (--no-xds)\n'
      : xds.tls
        ? `xDS (ADS): ${xds.listen}, mTLS: proxies present a certificate from the CA in ${xds.caDir}\n` +
          `  a proxy's certificate and bootstraps: meshdeck xds bootstrap NAMESPACE/POD --xds ${xds.listen}\n`
        : `xDS (ADS): ${xds.listen}, plaintext (--xds-insecure): proxies are not authenticated\n`,
  );
  await new Promise(() => {}); // serve until a signal
  return 0;
}
