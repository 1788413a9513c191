/**
 * Kubernetes mode's ADS server: every replica serves mTLS from the one CA in the Secret meshdeck-xds-ca
 * (server/kube/sharedCaSecret.ts), so a proxy's certificate (`meshdeck xds bootstrap --kubeconfig`) is
 * good at whichever replica the Service sends it to, and the server certificate names the Service as
 * proxies in the cluster dial it (deploy/console.yaml: `meshdeck.<ns>.svc`).
 */
import * as k8s from '@kubernetes/client-node';
import type { AdsServer } from '../xds/AdsServer';
import { listenAds } from '../xds/meshXds';
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
}

/** Starts `ads` with the replicas' shared CA (or in plaintext); resolves with the bound port. */
export async function listenKubeAds(
  ads: AdsServer,
  o: KubeAdsOptions,
): Promise<{ port: number; tls: boolean }> {
  if (o.insecure) return listenAds(ads, { host: o.host, port: o.port, insecure: true });
  if (!o.caDir) throw new Error('listenKubeAds needs a caDir for mTLS (or insecure: true)');
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
  } catch (e) {
    throw new KubeAdsCaError(`the xDS CA in Secret ${o.namespace}/${XDS_CA_SECRET}: ${(e as Error).message}`);
  }
  return listenAds(ads, {
    host: o.host,
    port: o.port,
    tlsDir: o.caDir,
    extraSans: [`DNS:meshdeck.${o.namespace}.svc`, `DNS:meshdeck.${o.namespace}.svc.cluster.local`],
  });
}
