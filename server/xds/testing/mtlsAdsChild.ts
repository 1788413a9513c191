import { CertificateManager } from '../CertificateManager';
import { type Child, forkAdsServer } from './children';
import { demoSnapshot } from './demoSnapshot';

/**
 * An ADS server in a forked process serving mTLS from the CA in `caDir` (a server certificate as
 * listenAds issues it for 127.0.0.1), with a one-listener snapshot `svc-<x>` for each of ns1/pod-a and
 * ns1/pod-b: what the mTLS tests dial.
 */
export async function forkMtlsAds(
  caDir: string,
): Promise<{ ads: Child; port: number; cm: CertificateManager }> {
  const cm = new CertificateManager({ dir: caDir, defaultValidityMs: 600_000 });
  const server = await cm.issue('meshdeck-system/xds-server', 600_000, ['DNS:localhost', 'IP:127.0.0.1']);
  const root = await cm.root();
  const ads = await forkAdsServer();
  const port = await ads.request<number>('listen', {
    options: {
      tls: {
        key: server.privateKey.toString(),
        cert: server.certificateChain.toString(),
        ca: root.certificateChain.toString(),
      },
    },
  });
  const one = (service: string) =>
    demoSnapshot({ service, clusters: [{ name: `${service}-c`, weight: 1, ports: [1] }] });
  await ads.request('set', { nodeId: 'ns1/pod-a', snapshot: one('svc-a') });
  await ads.request('set', { nodeId: 'ns1/pod-b', snapshot: one('svc-b') });
  await ads.request('flush');
  return { ads, port, cm };
}
