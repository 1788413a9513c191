/** ProxyReconciler's assumeLive fast path, against a real l7mp process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { emptyL7mpConfig } from '@/lib/model/l7mp';
import { type L7mpProcess, startL7mp } from '../testing/startL7mp';
import { L7mpRestClient } from './L7mpRestClient';
import { config, udpCluster, udpListener } from './l7mpTestConfigs.testutil';
import { ProxyReconciler } from './ProxyReconciler';

let l7mp: L7mpProcess;
beforeAll(async () => {
  l7mp = await startL7mp();
});
afterAll(async () => {
  await l7mp?.stop();
});

/** A client that counts the GETs it makes. */
class CountingClient extends L7mpRestClient {
  gets = 0;
  override get(path: string, options?: Parameters<L7mpRestClient['get']>[1]): Promise<unknown> {
    this.gets++;
    return super.get(path, options);
  }
}

describe('ProxyReconciler with assumeLive', () => {
  it('pushes only the operations, reading nothing, and the proxy ends up as desired', async () => {
    const client = new CountingClient(l7mp.apiUrl);
    const r = new ProxyReconciler(client);
    const a = config({
      clusters: [udpCluster('c', 9000, ['127.0.0.81'])],
      listeners: [udpListener('l', '127.0.0.80', 17001, 'c')],
    });
    expect((await r.reconcile(a)).ok).toBe(true);
    const b = config({
      clusters: [udpCluster('c', 9000, ['127.0.0.81', '127.0.0.82'])],
      listeners: a.listeners,
    });
    client.gets = 0;
    const res = await r.reconcile(b, { assumeLive: a });
    expect(res.ok).toBe(true);
    expect(client.gets).toBe(0);
    expect(res.applied.map((o) => `${o.method} ${o.kind}`)).toEqual(['POST endpoint']);
    const live = await client.readLive();
    expect(diffL7mp(live.config, b)).toEqual([]);
  });

  it('reads the proxy anyway when the change deletes a listener (only a read names its leftovers)', async () => {
    const client = new CountingClient(l7mp.apiUrl);
    const r = new ProxyReconciler(client);
    const live = (await client.readLive()).config;
    client.gets = 0;
    const res = await r.reconcile(emptyL7mpConfig(), { assumeLive: live });
    expect(res.ok).toBe(true);
    expect(client.gets).toBeGreaterThan(0);
    expect(diffL7mp((await client.readLive()).config, emptyL7mpConfig())).toEqual([]);
  });
});
