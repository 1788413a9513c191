/**
 * SotW protocol details with a hand-driven raw stream (in-process: no timing is measured here).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsServer, type ProxyRecord, type ProxyStatus } from './AdsServer';
import { decodeResource, TypeUrls } from './envoyProtos';
import { SnapshotCache } from './SnapshotCache';
import { waitFor } from './testing/children';
import { demoSnapshot } from './testing/demoSnapshot';
import { adsClientConstructor } from './testing/rawAdsClient';

interface Res {
  version_info: string;
  resources?: { type_url: string; value: Buffer }[];
  type_url: string;
  nonce: string;
}

const twoServices = (w: number) => {
  const a = demoSnapshot({ service: 'svc-a', clusters: [{ name: 'ca', weight: w, ports: [1] }] });
  const b = demoSnapshot({ service: 'svc-b', clusters: [{ name: 'cb', weight: 1, ports: [2] }] });
  return {
    listeners: [...a.listeners, ...b.listeners],
    routes: [...a.routes, ...b.routes],
    clusters: [...a.clusters, ...b.clusters],
    endpoints: [...a.endpoints, ...b.endpoints],
  };
};

describe('AdsServer SotW protocol', () => {
  const cache = new SnapshotCache({ coalesceMs: 1, maxDelayMs: 5 });
  const warnings: string[] = [];
  const server = new AdsServer({ cache, logger: { warn: (m) => warnings.push(m) } });
  let port = 0;
  let client: grpc.Client;

  beforeAll(async () => {
    cache.setSnapshot('ns/p', twoServices(1));
    cache.flush();
    port = await server.listen({ insecure: true });
    client = new (adsClientConstructor())(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    client?.close();
    await server.stop();
    cache.close();
  });

  const open = () => {
    const call = (
      client as unknown as { StreamAggregatedResources(): grpc.ClientDuplexStream<unknown, Res> }
    ).StreamAggregatedResources();
    const got: Res[] = [];
    const status = new Promise<grpc.StatusObject | grpc.ServiceError>((resolve) => {
      call.on('status', resolve);
      call.on('error', resolve);
    });
    call.on('data', (r: Res) => got.push(r));
    const names = (r: Res) => (r.resources ?? []).map((a) => String(decodeResource(a).name));
    return { call, got, status, names };
  };

  it('refuses plaintext unless asked, and warns when it is', async () => {
    const other = new AdsServer({ cache, logger: { warn: () => {} } });
    await expect(other.listen({} as never)).rejects.toThrow(/insecure: true/);
    expect(warnings.some((w) => /WITHOUT TLS/.test(w))).toBe(true);
  });

  it('requires node.id in the first request', async () => {
    const s = open();
    s.call.write({ type_url: TypeUrls.listener, resource_names: [] });
    const st = await s.status;
    expect(st.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('wildcard LDS, explicit RDS; stale nonces ignored; name changes answered; NACK not resent', async () => {
    const s = open();
    try {
      s.call.write({ node: { id: 'ns/p' }, type_url: TypeUrls.listener, resource_names: [] });
      await waitFor('LDS', () => s.got.length === 1, 3000, 5);
      const lds = s.got[0]!;
      expect(s.names(lds).sort()).toEqual(['svc-a', 'svc-b']);
      s.call.write({
        type_url: TypeUrls.listener,
        resource_names: [],
        response_nonce: lds.nonce,
        version_info: lds.version_info,
      });

      s.call.write({ type_url: TypeUrls.route, resource_names: ['svc-a-route'] });
      await waitFor('RDS', () => s.got.length === 2, 3000, 5);
      const rds1 = s.got[1]!;
      expect(s.names(rds1)).toEqual(['svc-a-route']);
      // The client has not ACKed rds1 yet and sends a request with the LDS nonce: stale, ignored.
      s.call.write({
        type_url: TypeUrls.route,
        resource_names: ['svc-a-route', 'svc-b-route'],
        response_nonce: lds.nonce,
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(s.got.length).toBe(2);
      // With the current nonce (an ACK that also grows the subscription): answered with both.
      s.call.write({
        type_url: TypeUrls.route,
        resource_names: ['svc-a-route', 'svc-b-route'],
        response_nonce: rds1.nonce,
        version_info: rds1.version_info,
      });
      await waitFor('RDS with both', () => s.got.length === 3, 3000, 5);
      const rds2 = s.got[2]!;
      expect(s.names(rds2).sort()).toEqual(['svc-a-route', 'svc-b-route']);
      expect(rds2.version_info).toBe(rds1.version_info);
      s.call.write({
        type_url: TypeUrls.route,
        resource_names: ['svc-a-route', 'svc-b-route'],
        response_nonce: rds2.nonce,
        version_info: rds2.version_info,
      });
      await waitFor('SYNCED', () => server.proxyStatus()[0]?.status.RDS === 'SYNCED', 3000, 5);
      expect(server.proxyStatus()[0]!.status).toMatchObject({
        LDS: 'SYNCED',
        RDS: 'SYNCED',
        CDS: 'NOT SENT',
        EDS: 'NOT SENT',
      });

      // New version -> pushed; NACK (version_info still the old one) -> recorded, not resent.
      cache.setSnapshot('ns/p', twoServices(7));
      await waitFor('RDS v2', () => s.got.length === 4, 3000, 5);
      const rds3 = s.got[3]!;
      expect(rds3.type_url).toBe(TypeUrls.route);
      expect(rds3.version_info).not.toBe(rds2.version_info);
      s.call.write({
        type_url: TypeUrls.route,
        resource_names: ['svc-a-route', 'svc-b-route'],
        response_nonce: rds3.nonce,
        version_info: rds2.version_info,
        error_detail: { code: 3, message: 'nope' },
      });
      await waitFor('NACKED', () => server.proxyStatus()[0]?.status.RDS === 'NACKED', 3000, 5);
      const st = server.proxyStatus()[0]!.types[TypeUrls.route]!;
      expect(st.lastNack).toMatchObject({
        version: rds3.version_info,
        nonce: rds3.nonce,
        errorDetail: { code: 3, message: 'nope' },
      });
      expect(st.lastAckedVersion).toBe(rds2.version_info);
      await new Promise((r) => setTimeout(r, 100));
      expect(s.got.length).toBe(4);
      // A NACK carrying the new version_info (some resources valid) is still a NACK.
      cache.setSnapshot('ns/p', twoServices(8));
      await waitFor('RDS v3', () => s.got.length === 5, 3000, 5);
      const rds4 = s.got[4]!;
      s.call.write({
        type_url: TypeUrls.route,
        resource_names: ['svc-a-route', 'svc-b-route'],
        response_nonce: rds4.nonce,
        version_info: rds4.version_info,
        error_detail: { code: 3, message: 'partly' },
      });
      await waitFor(
        'NACKED again',
        () => server.proxyStatus()[0]?.types[TypeUrls.route]?.lastNack?.errorDetail.message === 'partly',
        3000,
        5,
      );
      expect(server.proxyStatus()[0]!.status.RDS).toBe('NACKED');
      // LDS did not change content: nothing resent for it.
      expect(s.got.filter((r) => r.type_url === TypeUrls.listener).length).toBe(1);
    } finally {
      s.call.cancel();
    }
  });

  it("coalesces a stream's record changes into one 'status' with the latest state; none after its disconnect", async () => {
    // A window far longer than the four changes below take, so exactly one event is due.
    const quiet = new AdsServer({ cache, logger: {}, statusCoalesceMs: 1000 });
    const events: ProxyStatus[] = [];
    const gone: ProxyRecord[] = [];
    quiet.on('status', (st) => events.push(st));
    quiet.on('disconnect', (r) => gone.push(r));
    const qport = await quiet.listen({ insecure: true });
    const qclient = new (adsClientConstructor())(`127.0.0.1:${qport}`, grpc.credentials.createInsecure());
    const openQ = () => {
      const call = (
        qclient as unknown as { StreamAggregatedResources(): grpc.ClientDuplexStream<unknown, Res> }
      ).StreamAggregatedResources();
      const got: Res[] = [];
      call.on('data', (r: Res) => got.push(r));
      call.on('error', () => {});
      return { call, got };
    };
    try {
      const a = openQ();
      a.call.write({ node: { id: 'ns/p' }, type_url: TypeUrls.listener, resource_names: [] });
      await waitFor('LDS', () => a.got.length === 1, 3000, 2);
      const ack = (r: Res, names: string[]) =>
        a.call.write({
          type_url: r.type_url,
          resource_names: names,
          response_nonce: r.nonce,
          version_info: r.version_info,
        });
      ack(a.got[0]!, []);
      a.call.write({ type_url: TypeUrls.route, resource_names: ['svc-a-route'] });
      await waitFor('RDS', () => a.got.length === 2, 3000, 2);
      ack(a.got[1]!, ['svc-a-route']);
      await waitFor('a status', () => events.length > 0, 5000, 10);
      // Sent LDS, ACKed it, sent RDS, ACKed it: four changes, one event, the last state.
      expect(events).toHaveLength(1);
      expect(events[0]!.status).toMatchObject({ LDS: 'SYNCED', RDS: 'SYNCED' });
      expect(quiet.proxyStatus().map((st) => st.status)).toEqual([events[0]!.status]);

      const b = openQ();
      b.call.write({ node: { id: 'ns/p' }, type_url: TypeUrls.listener, resource_names: [] });
      await waitFor('LDS on b', () => b.got.length === 1, 3000, 2);
      b.call.cancel();
      await waitFor('b disconnected', () => gone.length === 1, 3000, 5);
      // b's send was pending when it closed: its window passes without a status that would revive it.
      await new Promise((r) => setTimeout(r, 1300));
      expect(events.map((e) => e.streamId)).toEqual([events[0]!.streamId]);
      expect(gone[0]!.streamId).not.toBe(events[0]!.streamId);
      a.call.cancel();
    } finally {
      qclient.close();
      await quiet.stop();
    }
  });
});
