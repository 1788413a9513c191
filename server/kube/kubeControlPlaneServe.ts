/**
 * `meshdeck serve --kubeconfig PATH [--namespace NS]`: one replica of the Kubernetes-mode control plane
 * (kubeControlPlane.ts) with its ADS server and, when the console is built, the console: its drafts start
 * from the cluster's objects (a mirror directory, clusterMirror.ts) and apply with server-side apply as
 * the signed-in user. Runs until SIGINT/SIGTERM; then it leaves the election, releasing the Lease once its
 * pushes and status writes settled, so another replica takes over at once.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import type { CliCommand } from '../cli/args';
import { CliError, ExitCode } from '../cli/cliError';
import type { CliIo } from '../cli/cliIo';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import { AdsServer } from '../xds/AdsServer';
import { AdsListenError, MeshXdsPublisher } from '../xds/meshXds';
import { MESH_CRD_KINDS } from '@/lib/kube/kubeSnapshot';
import { consoleBuilt, REPO_ROOT, resolveSignIn, startConsoleHttp } from '../cli/consoleHttp';
import { getConsoleContext } from '../console/consoleContext';
import { serveConsole, type ServedConsole } from '../console/serveConsole';
import { clusterSyncTarget } from '../gitops/clusterSyncTarget';
import { clusterRolloutTarget } from '../rollout/clusterRolloutTarget';
import { setControlPlane } from '../controlPlane/registry';
import { version } from '../cli/version';
import { MeshMetrics } from '../metrics/MeshMetrics';
import { setMeshMetrics } from '../metrics/metricsRegistry';
import { ClusterClient } from './clusterClient';
import { setClusterContext } from './clusterContext';
import { ClusterMirror } from './clusterMirror';
import { KubeConsole } from './kubeConsole';
import { setKubeHealth } from './kubeHealthContext';
import {
  controllerNamespace,
  KubeControlPlane,
  type KubeControlPlaneOptions,
  LEASE_NAME,
  replicaIdentity,
} from './kubeControlPlane';
import { replicaLeaseName } from './replicaPeers';
import { urlHost } from '@/lib/util/urlHost';
import { AdmissionWebhook, ADMISSION_PATH, clusterFromObjects } from './admissionWebhook';
import { WebhookCertificates } from './webhookCertificates';
import { KubeAdsCaError, listenKubeAds } from './listenKubeAds';
import { XDS_CA_SECRET } from './sharedCaSecret';

const SYNC_WAIT_MS = 30_000;

/** `--kubeconfig in-cluster`: the pod's service account instead of a kubeconfig file. */
export const IN_CLUSTER = 'in-cluster';

/** Runs Kubernetes mode for `meshdeck serve --kubeconfig`; never returns while serving. */
export async function runKubeServe(
  cmd: Extract<CliCommand, { command: 'serve' }>,
  io: CliIo,
): Promise<number> {
  const { kubeconfig, namespace } = cmd.kube!;
  const kc = new k8s.KubeConfig();
  try {
    // Inside a pod: the service account's token and CA, and the API server from the environment.
    if (kubeconfig === IN_CLUSTER) {
      if (!process.env.KUBERNETES_SERVICE_HOST)
        throw new Error('not running in a pod ($KUBERNETES_SERVICE_HOST is not set)');
      kc.loadFromCluster();
    } else kc.loadFromFile(kubeconfig);
  } catch (e) {
    throw new CliError(
      `serve: cannot read --kubeconfig ${kubeconfig}: ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
  if (!kc.getCurrentCluster())
    throw new CliError(`serve: --kubeconfig ${kubeconfig} has no current cluster`, ExitCode.usage);
  const withConsole = consoleBuilt();
  // Before anything starts: a bad OIDC configuration is a usage error.
  const signIn = withConsole ? await resolveSignIn(cmd) : undefined;
  const publisher = new MeshXdsPublisher();
  const metrics = new MeshMetrics({ version: version(), mode: 'kubernetes' });
  let ads: AdsServer | undefined;
  let adsListen: { listen: string; tls: boolean } | undefined;
  let adsLine = 'xDS: off (--no-xds)\n';
  let caRoot: string | undefined;
  let peers: KubeControlPlaneOptions['peers'];
  let peersLine = '';
  const identity = replicaIdentity(process.env);
  if (cmd.xds) {
    ads = new AdsServer({
      cache: publisher.cache,
      logger: { info: (m) => console.info(m), warn: (m) => console.warn(m) },
      metrics: metrics.ads,
    });
    const ns = controllerNamespace(process.env, namespace);
    try {
      const { port, tls, peerCredentials } = await listenKubeAds(ads, {
        kubeConfig: kc,
        namespace: ns,
        host: cmd.xds.host,
        port: cmd.xds.port,
        ...(cmd.xds.insecure ? { insecure: true } : { caDir: path.join(localMeshStateDir(), 'xds-ca') }),
        logger: { info: (m) => console.info(m) },
        metrics: metrics.ca,
        replicaStreams: { replica: identity },
      });
      // The other replicas reach this one's ADS port at the pod's address (deploy/console.yaml: POD_IP).
      const peerAddress =
        process.env.MESHDECK_XDS_PEER_ADDRESS ||
        (process.env.POD_IP ? `${urlHost(process.env.POD_IP)}:${port}` : '');
      if (peerAddress) {
        peers = {
          address: peerAddress,
          credentials: peerCredentials ?? (() => grpc.credentials.createInsecure()),
          serverName: `meshdeck.${ns}.svc`,
        };
        peersLine = `xDS replicas: this one is ${identity} at ${peerAddress}; each follows the others' clients (Leases ${replicaLeaseName('*')})\n`;
      } else
        peersLine =
          'xDS replicas: not shared ($POD_IP is not set): each replica sees only the clients streaming from it\n';
      // Published to the proxies' namespaces for their agents (caRootPublisher.ts).
      if (tls) caRoot = await fs.readFile(path.join(localMeshStateDir(), 'xds-ca', 'root.crt'), 'utf8');
      const host = urlHost(cmd.xds.host);
      adsListen = { listen: `${host}:${port}`, tls };
      adsLine = tls
        ? `xDS (ADS): ${host}:${port}, mTLS: proxies present a certificate from the CA in Secret ` +
          `${ns}/${XDS_CA_SECRET}: a pod's agent gets one on this port with its bound token ` +
          `(meshdeck xds agent), an operator with meshdeck xds bootstrap NAMESPACE/POD --kubeconfig PATH\n`
        : `xDS (ADS): ${host}:${port}, plaintext (--xds-insecure): proxies are not authenticated\n`;
    } catch (e) {
      if (e instanceof AdsListenError || e instanceof KubeAdsCaError)
        throw new CliError(
          `serve: ${e.message} (see --xds-listen, --xds-insecure and --no-xds)`,
          ExitCode.usage,
        );
      throw e;
    }
  }
  const started = Date.now();
  const { lease, watchIdleMs } = cmd.kube!;
  const cp = KubeControlPlane.start({
    kubeConfig: kc,
    ...(namespace ? { namespace } : {}),
    xds: publisher,
    // Proxyless gRPC clients' ADS sync feeds their objects' Programmed condition.
    ...(ads ? { xdsServer: ads } : {}),
    identity,
    ...(peers ? { peers } : {}),
    ...(caRoot ? { caRoot } : {}),
    ...(lease?.durationSeconds !== undefined ? { leaseDurationSeconds: lease.durationSeconds } : {}),
    ...(lease?.renewDeadlineMs !== undefined ? { renewDeadlineMs: lease.renewDeadlineMs } : {}),
    ...(lease?.retryPeriodMs !== undefined ? { retryPeriodMs: lease.retryPeriodMs } : {}),
    ...(watchIdleMs !== undefined ? { controller: { source: { watchIdleMs } } } : {}),
  });
  // The probe routes (/api/health, /api/ready) read it.
  setKubeHealth(() => cp.health());
  let webhook: { server: AdmissionWebhook; certs: WebhookCertificates; dir: string } | undefined;
  let webhookLine = '';
  if (cmd.kube!.webhook) {
    try {
      const started = await startWebhook(cmd.kube!.webhook, kc, cp, metrics);
      webhook = started;
      webhookLine = started.line;
    } catch (e) {
      await cp.stop();
      await ads?.stop();
      throw new CliError(
        `serve: the admission webhook did not start: ${(e as Error).message}`,
        ExitCode.usage,
      );
    }
  }
  metrics.watchReconciler(cp.controller.reconciler);
  metrics.setSources({
    leading: () => cp.health().leading,
    informers: () => cp.controller.informerStates(),
    ...(ads ? { xds: () => ads.streamStats() } : {}),
    ...(cp.peers ? { replicaPeers: () => cp.peers?.peers() } : {}),
  });
  setMeshMetrics(metrics);
  let closing = false;
  let consoleParts: { served: ServedConsole; mirror: ClusterMirror; view: KubeConsole } | undefined;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    io.stderr(`meshdeck: ${signal}: leaving the election and stopping\n`);
    if (consoleParts) {
      consoleParts.view.stop();
      await consoleParts.mirror.stop();
      await consoleParts.served.dispose().catch(() => undefined);
    }
    if (webhook) {
      webhook.certs.stop();
      await webhook.server.close();
      await fs.rm(webhook.dir, { recursive: true, force: true });
    }
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
  let consoleLine = 'console: not built (run `npm run build`): control plane only\n';
  if (withConsole && signIn) {
    const server = kc.getCurrentCluster()!.server;
    // Each cluster (and namespace) has its own drafts, GitOps repository and mirror of the cluster.
    const stateDir = path.join(
      localMeshStateDir(),
      'kube',
      createHash('sha256')
        .update(`${server}\n${namespace ?? ''}`)
        .digest('hex')
        .slice(0, 16),
    );
    // The console's view is made after the mirror's first write (its first base); it hears the later ones.
    const mirrorListener: { view?: KubeConsole } = {};
    const mirror = new ClusterMirror(path.join(stateDir, 'cluster'), cp.controller.source, {
      onWritten: (paths) => mirrorListener.view?.mirrored(paths),
    });
    // The drafts' first base is what the informers listed (empty if they have not synced yet).
    await mirror.writeNow();
    mirror.start();
    const view = new KubeConsole({
      cp,
      server,
      ...(namespace ? { namespace } : {}),
      ...(ads && adsListen ? { xds: { server: ads, publisher, ...adsListen } } : {}),
    });
    mirrorListener.view = view;
    setControlPlane(view);
    metrics.setSources({ diagnostics: () => view.live.get().diagnostics });
    const clusterClient = new ClusterClient(kc);
    setClusterContext({
      client: clusterClient,
      kubeconfigPath: kubeconfig,
      applyKinds: MESH_CRD_KINDS,
    });
    const served = await serveConsole({
      meshDir: mirror.dir,
      host: cmd.host,
      port: cmd.port,
      token: signIn.token,
      ...(signIn.oidc ? { oidc: signIn.oidc } : {}),
      stateDir,
      examplesDir: path.join(REPO_ROOT, 'examples'),
      localMesh: false,
      sync: {
        target: (history) =>
          clusterSyncTarget({
            client: clusterClient,
            kinds: MESH_CRD_KINDS,
            mirrorDir: mirror.dir,
            history,
            // The runner serveConsole makes below: a sync does not undo the split of a rollout it runs.
            rollouts: () => getConsoleContext()?.rollouts?.list() ?? [],
          }),
        // Every replica compares; only the Lease holder writes, so two replicas never sync the same commit.
        automated: () => cp.health().leading,
      },
      rollouts: {
        // Steps are applied as the user who started the rollout; only the Lease holder runs them (one
        // writer of a split at a time), and a rollout's state stays in this replica's state directory.
        target: (history) =>
          clusterRolloutTarget({
            client: clusterClient,
            mirrorDir: mirror.dir,
            leading: () => cp.health().leading,
            history,
            // Only the gRPC clients streaming ADS from this replica report to it (no cross-replica sum).
            ...(ads ? { loadReports: view.loadReports, mesh: () => cp.controller.compiled?.mesh } : {}),
          }),
      },
    });
    consoleParts = { served, mirror, view };
    if (served.gitSync) {
      const watcher = served.gitSync;
      metrics.setSources({ gitSync: () => watcher.last });
    }
    try {
      await startConsoleHttp(cmd.host, cmd.port, metrics);
    } catch (e) {
      // A taken port must not leave a replica running (and leading) with no console: stop everything.
      view.stop();
      await mirror.stop();
      await served.dispose().catch(() => undefined);
      await cp.stop();
      await ads?.stop();
      throw e;
    }
    consoleLine =
      `Meshdeck console: ${served.url}\n` +
      (signIn.oidc
        ? `sign-in: OIDC at ${signIn.oidc.config.issuer}${signIn.oidc.config.tokenSignIn ? ', or the token in the URL above' : ' only (the token opens no session)'}\n`
        : '');
  }
  const h = cp.health();
  const informers = h.informers.filter((s) => s.synced).length;
  io.stdout(
    `Meshdeck control plane (Kubernetes mode): ${kc.getCurrentCluster()!.server}, ` +
      `${namespace ? `namespace ${namespace}` : 'all namespaces'}\n` +
      `replica ${cp.identity}, lease ${cp.leaseNamespace}/${LEASE_NAME}` +
      `${h.leader ? `, leader ${h.leader}` : ', no leader yet'}\n` +
      `informers: ${informers}/${h.informers.length} synced` +
      `${synced ? `, ready in ${((Date.now() - started) / 1000).toFixed(1)} s` : ` after ${SYNC_WAIT_MS / 1000} s (still trying)`}\n` +
      adsLine +
      peersLine +
      webhookLine +
      consoleLine,
  );
  await new Promise(() => {}); // serve until a signal
  return 0;
}

/** The Secret holding the admission webhook's CA (in the Lease's namespace). */
export const WEBHOOK_CA_SECRET = 'meshdeck-webhook-ca';

/**
 * Starts the admission webhook: the shared CA and this replica's certificate, the HTTPS server on the
 * informers' objects, and the caBundle of the webhook configuration.
 */
async function startWebhook(
  flags: NonNullable<NonNullable<Extract<CliCommand, { command: 'serve' }>['kube']>['webhook']>,
  kc: k8s.KubeConfig,
  cp: KubeControlPlane,
  metrics: MeshMetrics,
): Promise<{ server: AdmissionWebhook; certs: WebhookCertificates; dir: string; line: string }> {
  const ns = cp.leaseNamespace;
  const names = flags.names ?? [`meshdeck.${ns}.svc`, `meshdeck.${ns}.svc.cluster.local`];
  const sans = names.map((n) => {
    const bare = n.replace(/^\[(.*)\]$/, '$1');
    return isIP(bare) ? `IP:${bare}` : `DNS:${n}`;
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'meshdeck-webhook-'));
  const logger = { info: (m: string) => console.info(m), warn: (m: string) => console.warn(m) };
  const certs = new WebhookCertificates({
    kubeConfig: kc,
    namespace: ns,
    secretName: WEBHOOK_CA_SECRET,
    dir,
    sans,
    logger,
  });
  try {
    const tls = await certs.start();
    const source = cp.controller.source;
    const server = await AdmissionWebhook.listen({
      host: flags.host,
      port: flags.port,
      tls,
      cluster: clusterFromObjects(
        () => source.leanObjects(),
        () => source.states().every((s) => s.synced),
      ),
      logger,
      onReview: (outcome, kind, operation) =>
        metrics.admitted(outcome, kind || 'unknown', operation || 'unknown'),
    });
    certs.autoRenew((t) => server.setTls(t));
    let bundle: string;
    try {
      const result = await certs.patchCaBundle(flags.config);
      bundle =
        result === 'missing'
          ? `ValidatingWebhookConfiguration ${flags.config} not found: the API server does not call it yet (kubectl apply -f deploy/webhook.yaml)`
          : `caBundle of ValidatingWebhookConfiguration ${flags.config} ${result === 'patched' ? 'set' : 'already set'}`;
    } catch (e) {
      // Serving still helps a configuration that holds the CA already; say why it may not.
      bundle = (e as Error).message;
      logger.warn(`admission webhook: ${bundle}`);
    }
    return {
      server,
      certs,
      dir,
      line:
        `admission webhook: https://${urlHost(flags.host)}:${server.port}${ADMISSION_PATH} ` +
        `(certificate for ${names.join(', ')}; CA in Secret ${ns}/${WEBHOOK_CA_SECRET}); ${bundle}\n`,
    };
  } catch (e) {
    certs.stop();
    await fs.rm(dir, { recursive: true, force: true });
    throw e;
  }
}
