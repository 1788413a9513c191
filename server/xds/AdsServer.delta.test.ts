/**
 * Incremental ADS (DeltaAggregatedResources, what Envoy can speak; grpc-js-xds never uses it) with a
 * raw @grpc/grpc-js stream against the server in a forked process.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyStatus } from './AdsServer';
import { TypeUrls } from './envoyProtos';
import { type Child, forkAdsServer, waitFor } from './testing/children';
import { demoSnapshot } from './testing/demoSnapshot';
import { adsClientConstructor } from './testing/rawAdsClient';

interface DeltaResponse {
  system_version_info: string;
  resources: { name: string; version: string }[];
  type_url: string;
  removed_resources: string[];
  nonce: string;
}

const NODE = 'ns/envoy-1';

describe('DeltaAggregatedResources', () => {
  let ads: Child;
  let port = 0;
  const snap = (ports: number[], clusters = ['c1', 'c2']) =>
    demoSnapshot({ clusters: clusters.map((name) => ({ name, weight: 1, ports })) });

  beforeAll(async () => {
    ads = await forkAdsServer();
    port = await ads.request<number>('listen', { options: { insecure: true } });
    await ads.request('set', { nodeId: NODE, snapshot: snap([1000]) });
    await ads.request('flush');
  }, 30_000);
  afterAll(async () => {
    await ads?.kill();
  });

  it('sends only changed and removed resources, ACK/NACK by error_detail', async () => {
    const Ctor = adsClientConstructor();
    const client = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = (
      client as unknown as { DeltaAggregatedResources(): grpc.ClientDuplexStream<unknown, DeltaResponse> }
    ).DeltaAggregatedResources();
    const got: DeltaResponse[] = [];
    let nackNext = false;
    call.on('data', (r: DeltaResponse) => {
      got.push(r);
      call.write({
        type_url: r.type_url,
        response_nonce: r.nonce,
        ...(nackNext && r.type_url === TypeUrls.endpoint
          ? { error_detail: { code: 3, message: 'test NACK' } }
          : {}),
      });
    });
    call.on('error', () => {});
    try {
      call.write({ node: { id: NODE }, type_url: TypeUrls.cluster, resource_names_subscribe: [] });
      call.write({ type_url: TypeUrls.endpoint, resource_names_subscribe: ['c1-eds', 'c2-eds'] });
      const byType = (t: string) => got.filter((r) => r.type_url === t);
      await waitFor(
        'CDS and EDS',
        () => byType(TypeUrls.cluster).length && byType(TypeUrls.endpoint).length,
        5000,
      );
      expect(
        byType(TypeUrls.cluster)[0]!
          .resources.map((r) => r.name)
          .sort(),
      ).toEqual(['c1', 'c2']);
      expect(
        byType(TypeUrls.endpoint)[0]!
          .resources.map((r) => r.name)
          .sort(),
      ).toEqual(['c1-eds', 'c2-eds']);

      // Endpoint change on both CLAs: one EDS response with both, no CDS response.
      got.length = 0;
      await ads.request('set', { nodeId: NODE, snapshot: snap([1000, 1001]) });
      await waitFor('EDS update', () => byType(TypeUrls.endpoint).length, 5000);
      await new Promise((r) => setTimeout(r, 100));
      expect(byType(TypeUrls.cluster)).toEqual([]);
      expect(
        byType(TypeUrls.endpoint)[0]!
          .resources.map((r) => r.name)
          .sort(),
      ).toEqual(['c1-eds', 'c2-eds']);

      // Removing cluster c2 (wildcard CDS): removed_resources; EDS c2-eds removed too.
      got.length = 0;
      await ads.request('set', { nodeId: NODE, snapshot: snap([1000, 1001], ['c1']) });
      await waitFor(
        'CDS removal',
        () => byType(TypeUrls.cluster).length && byType(TypeUrls.endpoint).length,
        5000,
      );
      expect(byType(TypeUrls.cluster)[0]!.removed_resources).toEqual(['c2']);
      expect(byType(TypeUrls.cluster)[0]!.resources ?? []).toEqual([]);
      expect(byType(TypeUrls.endpoint)[0]!.removed_resources).toEqual(['c2-eds']);

      // A NACK is recorded by error_detail and the rejected version is not resent.
      nackNext = true;
      got.length = 0;
      await ads.request('set', { nodeId: NODE, snapshot: snap([1002], ['c1']) });
      const st = await waitFor(
        'NACKED',
        async () =>
          (await ads.request<ProxyStatus[]>('status')).find(
            (s) => s.nodeId === NODE && s.status.EDS === 'NACKED',
          ),
        5000,
      );
      expect(st.protocol).toBe('delta');
      expect(st.types[TypeUrls.endpoint]!.lastNack!.errorDetail.message).toBe('test NACK');
      expect(st.status.CDS).toBe('SYNCED');
      await new Promise((r) => setTimeout(r, 100));
      expect(byType(TypeUrls.endpoint).length).toBe(1);
    } finally {
      call.cancel();
      client.close();
    }
  });
});
