import { describe, expect, it } from 'vitest';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { compileDraft } from './compileDraft';
import type { DraftDoc } from './draftDoc';
import { graphTraffic, splitTraffic, viewTraffic } from './graphTraffic';
import {
  formatRps,
  formatSuccess,
  grpcLoad,
  loadFailing,
  loadLabel,
  loadRows,
  NO_LOAD,
  showsLoad,
  totalLoad,
} from './grpcLoad';
import { clusterLoad, foldedView, grpcClientLive, proxyLive } from './liveState.testutil';
import { exampleDraft } from './testDrafts.testutil';

const SPLIT = 'echo-split.default.target.cluster.local';
const V1 = `${SPLIT}/echo-v1`;
const V2 = `${SPLIT}/echo-v2`;

const CLIENT = 'Pod/default/grpc-client';
const VS = 'VirtualService/default/echo';
const ROUTE = 'VirtualService/default/echo#spec.rules[0].action.route';
const TARGET = 'Target/default/echo-split';

const E = {
  selects: `${VS}->${CLIENT}:selects`,
  rule: `${VS}->${ROUTE}:rule:0`,
  destination: `${ROUTE}->${TARGET}:destination`,
  split0: `${TARGET}->VirtualService/default/echo-v1:split:0`,
  split1: `${TARGET}->VirtualService/default/echo-v2:split:1`,
  v1Service: 'VirtualService/default/echo-v1->Service/default/echo-v1:selects',
  v2Service: 'VirtualService/default/echo-v2->Service/default/echo-v2:selects',
};

function liveOf(...proxies: ProxyLiveState[]): MeshLiveState {
  return {
    version: 1,
    mesh: { source: 'dir', mode: 'local', loadedAt: '2026-11-28T14:00:00Z' },
    proxies: Object.fromEntries(proxies.map((p) => [p.id, p])),
    services: {},
    diagnostics: [],
  };
}

/** examples/grpc-canary with a file's text replaced or added. */
function withFile(name: string, text: string): DraftDoc {
  const d = exampleDraft('grpc-canary');
  return { ...d, files: { ...d.files, [name]: text } };
}

const grpcCanary = exampleDraft('grpc-canary');

/** The canary's client: 80 RPCs to echo-v1, all fine; 20 to echo-v2, 5 of them failed. */
const canaryClient = () =>
  grpcClientLive('default/grpc-client', [
    clusterLoad(V1, { issued: 80 }),
    clusterLoad(V2, { issued: 20, succeeded: 15, failed: 5, inProgress: 1 }),
  ]);

describe('grpcLoad', () => {
  it("places each split entry's cluster from the client through its VirtualService and rule to the backend", () => {
    const { graph } = compileDraft(grpcCanary);
    const load = grpcLoad(graph, liveOf(canaryClient()));
    const rps = (cells: Record<string, { rps: number }>) =>
      Object.fromEntries(Object.entries(cells).map(([k, v]) => [k, v.rps]));
    expect(rps(load.nodes)).toEqual({
      [CLIENT]: 10,
      [VS]: 10,
      [ROUTE]: 10,
      [TARGET]: 10,
      'VirtualService/default/echo-v1': 8,
      'Service/default/echo-v1': 8,
      'VirtualService/default/echo-v2': 2,
      'Service/default/echo-v2': 2,
    });
    expect(rps(load.edges)).toEqual({
      [E.selects]: 10,
      [E.rule]: 10,
      [E.destination]: 10,
      [E.split0]: 8,
      [E.split1]: 2,
      [E.v1Service]: 8,
      [E.v2Service]: 2,
    });
    // Every edge id named exists: the canvas finds them.
    const ids = new Set(graph.edges.map((e) => e.id));
    expect(Object.keys(load.edges).filter((id) => !ids.has(id))).toEqual([]);
    expect(load.nodes[TARGET]).toEqual({
      rps: 10,
      issued: 100,
      succeeded: 95,
      failed: 5,
      dropped: 0,
      inProgress: 1,
      successPercent: 95,
    });
    expect(load.edges[E.split1]!.successPercent).toBe(75);
    expect(load.edges[E.split0]!.successPercent).toBe(100);
    expect(load.clusters.map((c) => [c.cluster, c.target, c.entry, c.missing])).toEqual([
      [V1, TARGET, 'VirtualService/default/echo-v1', undefined],
      [V2, TARGET, 'VirtualService/default/echo-v2', undefined],
    ]);
    expect(load.rps).toBe(10);
    expect(load.reporting).toEqual(['default/grpc-client']);
    expect(totalLoad(load)).toEqual(load.nodes[TARGET]);
  });

  it('sums the clients on the nodes they share, each client on its own proxy node', () => {
    const second = `---
apiVersion: v1
kind: Pod
metadata:
  name: grpc-client-2
  namespace: default
  labels: { app: grpc-client, msm.l7mp.io/proxy: grpc }
status: { podIP: 127.0.0.73 }
`;
    const draft = withFile('client-2.yaml', second);
    const { graph } = compileDraft(draft);
    const other = grpcClientLive('default/grpc-client-2', [
      clusterLoad(V1, { issued: 30, succeeded: 29, failed: 1 }),
    ]);
    const load = grpcLoad(graph, liveOf(canaryClient(), other));
    expect(load.nodes['Pod/default/grpc-client-2']!.rps).toBe(3);
    expect(load.nodes[CLIENT]!.rps).toBe(10);
    expect(load.nodes[VS]!.rps).toBe(13);
    expect(load.edges[E.split0]).toMatchObject({ rps: 11, issued: 110, succeeded: 109, failed: 1 });
    expect(load.edges[`${VS}->Pod/default/grpc-client-2:selects`]!.rps).toBe(3);
    expect(load.rps).toBe(13);
    // The Target's table: per cluster, over both clients.
    expect(loadRows(load, TARGET).map((r) => [r.cluster, r.rps, r.successPercent, r.clients])).toEqual([
      [V1, 11, 99.1, ['default/grpc-client', 'default/grpc-client-2']],
      [V2, 2, 75, ['default/grpc-client']],
    ]);
    // A client's table has its own clusters only.
    expect(loadRows(load, 'Pod/default/grpc-client-2').map((r) => [r.cluster, r.rps])).toEqual([[V1, 3]]);
  });

  it('lists a cluster the draft no longer has on its client, and stops a removed split entry at its Target', () => {
    const { graph } = compileDraft(grpcCanary);
    const client = grpcClientLive('default/grpc-client', [
      clusterLoad('gone.default.target.cluster.local', { issued: 10 }),
      clusterLoad(`${SPLIT}/echo-v3`, { issued: 40 }),
    ]);
    const load = grpcLoad(graph, liveOf(client));
    expect(load.clusters.map((c) => [c.cluster, c.missing, c.target, c.nodes])).toEqual([
      ['gone.default.target.cluster.local', 'cluster', undefined, [CLIENT]],
      [`${SPLIT}/echo-v3`, 'entry', TARGET, [CLIENT, VS, ROUTE, TARGET]],
    ]);
    expect(load.edges[E.split0]).toBeUndefined();
    expect(load.edges[E.destination]!.rps).toBe(4);
    // The client's node counts both, and its table says which are not in the draft.
    expect(load.nodes[CLIENT]!.rps).toBe(5);
    expect(loadRows(load, CLIENT).map((r) => [r.cluster, r.missing])).toEqual([
      [`${SPLIT}/echo-v3`, 'entry'],
      ['gone.default.target.cluster.local', 'cluster'],
    ]);
  });

  it('counts on no rule when two rules route to the same Target: the report does not say which ran', () => {
    const mesh = grpcCanary.files['mesh.yaml']!.replace(
      '    - action: { route: { destination: echo-split } }',
      '    - action: { route: { destination: echo-split } }\n    - action: { route: { destination: echo-split } }',
    );
    const { graph } = compileDraft(withFile('mesh.yaml', mesh));
    expect(graph.edges.filter((e) => e.kind === 'rule')).toHaveLength(2);
    const load = grpcLoad(graph, liveOf(canaryClient()));
    expect(Object.keys(load.nodes).sort()).toEqual(
      [
        CLIENT,
        VS,
        TARGET,
        'VirtualService/default/echo-v1',
        'Service/default/echo-v1',
        'VirtualService/default/echo-v2',
        'Service/default/echo-v2',
      ].sort(),
    );
    expect(load.edges[E.selects]!.rps).toBe(10);
    expect(
      Object.keys(load.edges).filter((id) => id.includes(':rule:') || id.includes(':destination')),
    ).toEqual([]);
  });

  it('still counts on a Target the client is routed to by a rule the draft has dropped, without the way there', () => {
    // The draft routes echo straight to echo-v1 now; the client still runs the split.
    const mesh = grpcCanary.files['mesh.yaml']!.replace('destination: echo-split', 'destination: echo-v1');
    const { graph } = compileDraft(withFile('mesh.yaml', mesh));
    const load = grpcLoad(graph, liveOf(canaryClient()));
    expect(load.clusters[0]!.nodes).toEqual([
      CLIENT,
      TARGET,
      'VirtualService/default/echo-v1',
      'Service/default/echo-v1',
    ]);
    expect(load.clusters[0]!.edges).toEqual([E.split0, E.v1Service]);
  });

  it('places a plain Target cluster on its one endpoint source', () => {
    const mesh = grpcCanary.files['mesh.yaml']!.replace('destination: echo-split', 'destination: echo-v1');
    const { graph } = compileDraft(withFile('mesh.yaml', mesh));
    const cluster = Object.keys(graph.clusterNodes).find((c) => c.startsWith('echo-v1.'))!;
    const target = graph.clusterNodes[cluster]!;
    const client = grpcClientLive('default/grpc-client', [clusterLoad(cluster, { issued: 50 })]);
    const load = grpcLoad(graph, liveOf(client));
    expect(load.clusters[0]!.missing).toBeUndefined();
    expect(load.clusters[0]!.nodes).toEqual([
      CLIENT,
      VS,
      ROUTE,
      target,
      'VirtualService/default/echo-v1',
      'Service/default/echo-v1',
    ]);
    expect(load.nodes['Service/default/echo-v1']!.rps).toBe(5);
  });

  it('knows the Targets a client is served before any report, and nothing without gRPC clients', () => {
    const { graph } = compileDraft(grpcCanary);
    const idle = grpcLoad(graph, liveOf(grpcClientLive('default/grpc-client', undefined, [V1, V2])));
    expect(idle.served).toEqual([TARGET]);
    expect(idle.clients).toEqual(['default/grpc-client']);
    expect(idle.reporting).toEqual([]);
    expect(idle.clusters).toEqual([]);
    expect(totalLoad(idle)).toBeUndefined();
    expect(
      showsLoad(
        idle,
        graph.nodes.find((n) => n.id === TARGET)!,
      ),
    ).toBe(true);
    expect(
      showsLoad(
        idle,
        graph.nodes.find((n) => n.id === CLIENT)!,
      ),
    ).toBe(true);
    expect(
      showsLoad(
        idle,
        graph.nodes.find((n) => n.id === VS)!,
      ),
    ).toBe(false);
    expect(grpcLoad(graph, liveOf(proxyLive('default/gateway-0')))).toBe(NO_LOAD);
    expect(grpcLoad(graph, undefined)).toBe(NO_LOAD);
  });

  it("gives a canary Target's split editor the RPCs on each entry by index, and no RPC line where no client is served it", () => {
    const { graph } = compileDraft(grpcCanary);
    const t = graphTraffic(graph, liveOf(canaryClient()));
    const split = splitTraffic(graph, TARGET, t, 2);
    expect(split.sessions).toEqual([0, 0]);
    expect(split.rpc!.map((c) => c && [c.issued, c.failed])).toEqual([
      [80, 0],
      [20, 5],
    ]);
    // Served but silent: the line is there (no report in the window is news), each entry without load.
    const idle = graphTraffic(graph, liveOf(grpcClientLive('default/grpc-client', undefined, [V1, V2])));
    expect(splitTraffic(graph, TARGET, idle, 2).rpc).toEqual([undefined, undefined]);
    // No gRPC client at all: sessions only.
    const none = splitTraffic(graph, TARGET, graphTraffic(graph, liveOf(proxyLive('default/gateway-0'))), 2);
    expect(none).toEqual({ sessions: [0, 0] });
  });

  it('in a grouped view: RPCs per collapsed group and per edge a group stands in for, each cluster once', () => {
    const { graph } = compileDraft(grpcCanary);
    const t = graphTraffic(graph, liveOf(canaryClient()));
    // The client with its VirtualService, and each backend's VirtualService and Service, folded.
    const { view, groupOf } = foldedView(graph, {
      'Group:client': [CLIENT, VS],
      'Group:v1': ['VirtualService/default/echo-v1', 'Service/default/echo-v1'],
      'Group:v2': ['VirtualService/default/echo-v2', 'Service/default/echo-v2'],
    });
    const v = viewTraffic(t, graph, view, groupOf);
    const counts = (cells: Record<string, { issued: number; failed: number }>) =>
      Object.fromEntries(Object.entries(cells).map(([k, c]) => [k, [c.issued, c.failed]]));
    // Both clusters run through the client's group: counted once each, not once per node inside it.
    expect(counts(v.groupLoad)).toEqual({
      'Group:client': [100, 5],
      'Group:v1': [80, 0],
      'Group:v2': [20, 5],
    });
    // Edges inside a group (selects, the backends' Services) and between shown nodes (destination) are no pairs.
    expect(counts(v.pairLoad)).toEqual({
      [`Group:client->${ROUTE}`]: [100, 5],
      [`${TARGET}->Group:v1`]: [80, 0],
      [`${TARGET}->Group:v2`]: [20, 5],
    });
    expect(v.groupLoad['Group:v2']!.successPercent).toBe(75);
    expect(v.groups).toEqual({});
    expect(v.pairs).toEqual({});
  });

  it('comes with the sessions in graphTraffic, and the client is not a proxy whose sessions are missing', () => {
    const { graph } = compileDraft(grpcCanary);
    const live = liveOf(canaryClient());
    const t = graphTraffic(graph, live);
    expect(t.load).toEqual(grpcLoad(graph, live));
    expect(t.unavailable).toEqual([]);
    expect(t.sessions).toEqual([]);
  });
});

describe('load labels', () => {
  it('reads RPC/s and success, and is red only when RPCs failed', () => {
    const cell = { rps: 12.34, issued: 1, succeeded: 199, failed: 1, dropped: 0, inProgress: 0 };
    expect(loadLabel({ ...cell, successPercent: 99.5 })).toBe('12.3 RPC/s · 99.5%');
    expect(loadLabel({ ...cell, rps: 250.4, successPercent: null })).toBe('250 RPC/s');
    expect(formatRps(0)).toBe('0 RPC/s');
    expect(formatSuccess(null)).toBe('–');
    expect(loadFailing({ failed: 1, successPercent: 99.5 })).toBe(true);
    expect(loadFailing({ failed: 0, successPercent: 100 })).toBe(false);
    expect(loadFailing({ failed: 0, successPercent: null })).toBe(false);
  });
});
