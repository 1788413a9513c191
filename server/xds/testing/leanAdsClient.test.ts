/** The bench's lean ADS client against the real AdsServer: it must subscribe, read versions and ACK. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsServer } from '../AdsServer';
import { TypeUrls, XDS_TYPE_URLS } from '../envoyProtos';
import { SnapshotCache } from '../SnapshotCache';
import { waitFor } from './children';
import { demoSnapshot } from './demoSnapshot';
import { connectLeanAds } from './leanAdsClient';

describe('leanAdsClient', () => {
  const cache = new SnapshotCache();
  const ads = new AdsServer({ cache, logger: {} });
  let port = 0;

  beforeAll(async () => {
    cache.setSnapshot(
      'ns/lean',
      demoSnapshot({ clusters: [{ name: 'cluster-a', weight: 1, ports: [1, 2] }] }),
    );
    cache.flush();
    port = await ads.listen({ insecure: true });
  });
  afterAll(async () => {
    await ads.stop();
    cache.close();
  });

  it('reads each type version and resource count, and its ACKs make the server report SYNCED', async () => {
    const c = connectLeanAds({
      address: `127.0.0.1:${port}`,
      nodeId: 'ns/lean',
      subscriptions: [
        [TypeUrls.listener, ['demo-service']],
        [TypeUrls.route, ['demo-service-route']],
        [TypeUrls.cluster, []],
        [TypeUrls.endpoint, ['cluster-a-eds']],
      ],
    });
    try {
      await waitFor('4 types', () => c.latest.size === 4, 10_000, 10);
      const snap = cache.getSnapshot('ns/lean')!;
      for (const t of XDS_TYPE_URLS) expect(c.latest.get(t)?.version).toBe(snap.types[t].version);
      expect(c.latest.get(TypeUrls.cluster)?.resources).toBe(snap.types[TypeUrls.cluster].resources.size);
      await waitFor(
        'SYNCED',
        () => Object.values(ads.proxyStatus()[0]?.status ?? {}).every((s) => s === 'SYNCED'),
        10_000,
        10,
      );
      expect(ads.proxyStatus()[0]?.nodeId).toBe('ns/lean');
    } finally {
      c.close();
    }
  });
});
