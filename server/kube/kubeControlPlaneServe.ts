/**
 * `meshdeck serve --kubeconfig PATH [--namespace NS]`: one replica of the Kubernetes-mode control plane
 * (kubeControlPlane.ts) with its ADS server, until SIGINT/SIGTERM; then it leaves the election, releasing
 * the Lease once its pushes and status writes settled, so another replica takes over at once.
 */
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { CliCommand } from '../cli/args';
import { CliError, ExitCode } from '../cli/cliError';
import type { CliIo } from '../cli/cliIo';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import { AdsServer } from '../xds/AdsServer';
import { AdsListenError, listenAds, MeshXdsPublisher } from '../xds/meshXds';
import { KubeControlPlane, LEASE_NAME } from './kubeControlPlane';

const SYNC_WAIT_MS = 30_000;

/** Runs Kubernetes mode for `meshdeck serve --kubeconfig`; never returns while serving. */
export async function runKubeServe(
  cmd: Extract<CliCommand, { command: 'serve' }>,
  io: CliIo,
): Promise<number> {
  const { kubeconfig, namespace } = cmd.kube!;
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromFile(kubeconfig);
  } catch (e) {
    throw new CliError(
      `serve: cannot read --kubeconfig ${kubeconfig}: ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
  if (!kc.getCurrentCluster())
    throw new CliError(`serve: --kubeconfig ${kubeconfig} has no current cluster`, ExitCode.usage);
  const publisher = new MeshXdsPublisher();
  let ads: AdsServer | undefined;
  let adsLine = 'xDS: off (--no-xds)\n';
  if (cmd.xds) {
    ads = new AdsServer({
      cache: publisher.cache,
      logger: { info: (m) => console.info(m), warn: (m) => console.warn(m) },
    });
    const caDir = cmd.xds.insecure ? undefined : path.join(localMeshStateDir(), 'xds-ca');
    try {
      const { port, tls } = await listenAds(ads, {
        host: cmd.xds.host,
        port: cmd.xds.port,
        ...(caDir ? { tlsDir: caDir } : { insecure: true }),
      });
      const host = cmd.xds.host.includes(':') ? `[${cmd.xds.host}]` : cmd.xds.host;
      adsLine = tls
        ? `xDS (ADS): ${host}:${port}, mTLS: proxies present a certificate from the CA in ${caDir}\n`
        : `xDS (ADS): ${host}:${port}, plaintext (--xds-insecure): proxies are not authenticated\n`;
    } catch (e) {
      if (e instanceof AdsListenError)
        throw new CliError(
          `serve: ${e.message} (see --xds-listen, --xds-insecure and --no-xds)`,
          ExitCode.usage,
        );
      throw e;
    }
  }
  const started = Date.now();
  const cp = KubeControlPlane.start({
    kubeConfig: kc,
    ...(namespace ? { namespace } : {}),
    xds: publisher,
  });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    io.stderr(`meshdeck: ${signal}: leaving the election and stopping\n`);
    await cp.stop();
    await ads?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  const synced = await cp.controller.whenSynced(SYNC_WAIT_MS).then(
    () => true,
    () => false,
  );
  const h = cp.health();
  const informers = h.informers.filter((s) => s.synced).length;
  io.stdout(
    `Meshdeck control plane (Kubernetes mode): ${kc.getCurrentCluster()!.server}, ` +
      `${namespace ? `namespace ${namespace}` : 'all namespaces'}\n` +
      `replica ${cp.identity}, lease ${cp.leaseNamespace}/${LEASE_NAME}` +
      `${h.leader ? `, leader ${h.leader}` : ', no leader yet'}\n` +
      `informers: ${informers}/${h.informers.length} synced` +
      `${synced ? `, ready in ${((Date.now() - started) / 1000).toFixed(1)} s` : ` after ${SYNC_WAIT_MS / 1000} s (still trying)`}\n` +
      adsLine,
  );
  await new Promise(() => {}); // serve until a signal
  return 0;
}
