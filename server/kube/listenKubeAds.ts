/**
 * Kubernetes mode's ADS server: every replica serves mTLS from the one CA in the Secret meshdeck-xds-ca
 * (server/kube/sharedCaSecret.ts), so a proxy's certificate (`meshdeck xds bootstrap --kubeconfig`) is
 * good at whichever replica the Service sends it to, and the server certificate names the Service as
 * proxies in the cluster dial it (deploy/console.yaml: `meshdeck.<ns>.svc`). A pod gets its own
 * certificate on the same port from the CA's signing service, with its bound token (`meshdeck xds agent`).
 */
import * as k8s from '@kubernetes/client-node';
import type { AdsServer } from '../xds/AdsServer';
import { type AdsListening, type AdsListenOptions, listenAds } from '../xds/meshXds';
import type { CertificateServiceOptions } from '../xds/certificateService';
import { podTokenAuthenticator } from './podTokenAuthenticator';
import { seedCaDir, sharedCaSecret, XDS_CA_SECRET } from './sharedCaSecret';

/** The shared CA could not be read or created: its message is fit to print. */
export class KubeAdsCaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeAdsCaError';
  }
}

export interface KubeAdsOptions {
  kubeConfig: k8s.KubeConfig;
  /** The controller's namespace: where the CA's Secret is. */
  namespace: string;
  host: string;
  port: number;
  /** Plaintext: no CA at all. */
  insecure?: boolean;
  /** This replica's copy of the CA (required without `insecure`). */
  caDir?: string;
  logger?: { info(m: string): void };
  /** How often to try reaching the API server for the CA (default 8: about 15 s). */
  attempts?: number;
  /**
   * The CA's signing service for pods' agents (`meshdeck xds agent`), on by default: a pod's bound
   * service-account token (podTokenAuthenticator.ts) gets it a certificate for itself. `false`: off
   * (certificates only from `meshdeck xds bootstrap --kubeconfig`). The lifetimes default to 10 min..24 h.
   */
  signing?: false | { minValidityMs?: number; maxValidityMs?: number };
  /** Told how each signing request ended (MeshMetrics.ca). */
  metrics?: CertificateServiceOptions['metrics'];
  /** Serve this replica's streams to the others (replicaStreams.ts), as `replica`. */
  replicaStreams?: AdsListenOptions['replicaStreams'];
}

/** Errors of a connection, not of the API server's answer. */
const UNREACHABLE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|socket hang up/;

/** Starts `ads` with the replicas' shared CA (or in plaintext); resolves with the bound port. */
export async function listenKubeAds(ads: AdsServer, o: KubeAdsOptions): Promise<AdsListening> {
  const shared = o.replicaStreams ? { replicaStreams: o.replicaStreams } : {};
  if (o.insecure) return listenAds(ads, { host: o.host, port: o.port, insecure: true, ...shared });
  if (!o.caDir) throw new Error('listenKubeAds needs a caDir for mTLS (or insecure: true)');
  const where = `the xDS CA in Secret ${o.namespace}/${XDS_CA_SECRET}`;
  for (let attempt = 1; ; attempt++) {
    try {
      const ca = await sharedCaSecret({
        core: o.kubeConfig.makeApiClient(k8s.CoreV1Api),
        namespace: o.namespace,
        secretName: XDS_CA_SECRET,
        workDir: `${o.caDir}.work`,
        component: 'xds',
        ...(o.logger ? { logger: o.logger } : {}),
      });
      await seedCaDir(o.caDir, ca);
      break;
    } catch (e) {
      const message = (e as Error).message;
      // A pod may start while the API server is briefly out of reach (it restarts, the network is not
      // up yet): wait for it a while, as the informers do. A refusal (403) is final.
      if (!UNREACHABLE.test(message) || attempt >= (o.attempts ?? 8))
        throw new KubeAdsCaError(`${where}: ${message}`);
      o.logger?.info(`${where}: the API server is out of reach (${message}); trying again`);
      await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 3000)));
    }
  }
  return listenAds(ads, {
    host: o.host,
    port: o.port,
    tlsDir: o.caDir,
    extraSans: [`DNS:meshdeck.${o.namespace}.svc`, `DNS:meshdeck.${o.namespace}.svc.cluster.local`],
    ...shared,
    ...(o.signing === false
      ? {}
      : {
          signing: {
            authenticate: podTokenAuthenticator(o.kubeConfig),
            ...o.signing,
            ...(o.logger ? { logger: o.logger } : {}),
            ...(o.metrics ? { metrics: o.metrics } : {}),
          },
        }),
  });
}
