import { describe, expect, it } from 'vitest';
import { toLiveSession } from '@/lib/l7mp/liveSession';
import type { MeshLiveState, ProxyLiveState } from '@/server/controlPlane/liveState';
import { compileDraft } from './compileDraft';
import { applyCommand } from './draftCommands';
import type { DraftDoc } from './draftDoc';
import { graphTraffic, sessionsThrough, viewTraffic } from './graphTraffic';
import { NO_LOAD } from './grpcLoad';
import { foldedView, proxyLive } from './liveState.testutil';
import { exampleDraft } from './testDrafts.testutil';

const GW = 'gateway.default.virtualservice.cluster.local';
const CANARY = 'echo-canary.default.target.cluster.local';

/** A UDP session of the canary gateway as l7mp 0.5.7 dumps it (events trimmed), to `endpoint`. */
function udpSession(port: number, endpoint: string, startedAt = '2026-11-28T14:22:22.395Z') {
  return {
    name: `UDP:127.0.0.100:${port}-127.0.0.10:9100-0`,
    metadata: {
      IP: { src_addr: '127.0.0.100', dst_addr: '127.0.0.10' },
      UDP: { src_port: port, dst_port: 9100 },
    },
    source: { origin: GW, listener: { protocol: 'UDP', port: 9100, address: '127.0.0.10' }, status: 'READY' },
    destination: {
      origin: CANARY,
      endpoint: { name: `${CANARY}@${endpoint}`, spec: { address: endpoint } },
      status: 'READY',
    },
    ingress: [],
    egress: [],
    status: 'CONNECTED',
    events: [{ event: 'INIT', timestamp: startedAt, message: '', content: '' }],
  };
}

function proxy(id: string, sessions: ProxyLiveState['sessions'], role = 'gateway'): ProxyLiveState {
  return proxyLive(id, { role, sessions });
}

/** The canary's live state with these raw sessions on the gateway (the endpoints as examples/canary runs them). */
function canaryLive(draft: DraftDoc, raw: unknown[]): MeshLiveState {
  const config = compileDraft(draft).l7mp['default/gateway-0'];
  const items = raw.map((r) => toLiveSession(r, config));
  return {
    version: 1,
    mesh: { source: 'dir', mode: 'local', loadedAt: '2026-11-28T14:00:00Z' },
    proxies: { 'default/gateway-0': proxy('default/gateway-0', { available: true, items }) },
    services: {
      'default/echo-v1': {
        id: 'default/echo-v1',
        endpoints: [
          { address: '127.0.0.51', ready: true },
          { address: '127.0.0.52', ready: true },
        ],
      },
      'default/echo-v2': { id: 'default/echo-v2', endpoints: [{ address: '127.0.0.61', ready: true }] },
    },
    diagnostics: [],
  };
}

const canary = exampleDraft('canary');

/** Four flows through the canary gateway: three to echo-v1's two endpoints, one to echo-v2's. */
const fourFlows = () => [
  udpSession(9001, '127.0.0.51'),
  udpSession(9002, '127.0.0.52'),
  udpSession(9003, '127.0.0.51'),
  udpSession(9004, '127.0.0.61'),
];

describe('graphTraffic', () => {
  it("places the canary's sessions on its path, and each on the split entry whose Service has its endpoint", () => {
    const { graph } = compileDraft(canary);
    const live = canaryLive(canary, fourFlows());
    const t = graphTraffic(graph, live);
    expect(t.nodes).toEqual({
      'VirtualService/default/gateway': 4,
      'Pod/default/gateway-0': 4,
      'Route/default/echo-route': 4,
      'Target/default/echo-canary': 4,
      'VirtualService/default/echo-v1': 3,
      'Service/default/echo-v1': 3,
      'VirtualService/default/echo-v2': 1,
      'Service/default/echo-v2': 1,
    });
    const byEdge = Object.fromEntries(
      graph.edges
        .filter((e) => t.edges[e.id])
        .map((e) => [`${e.source} -${e.kind}-> ${e.target}`, t.edges[e.id]]),
    );
    expect(byEdge).toEqual({
      'VirtualService/default/gateway -selects-> Pod/default/gateway-0': 4,
      'VirtualService/default/gateway -rule-> Route/default/echo-route': 4,
      'Route/default/echo-route -destination-> Target/default/echo-canary': 4,
      'Target/default/echo-canary -split-> VirtualService/default/echo-v1': 3,
      'VirtualService/default/echo-v1 -selects-> Service/default/echo-v1': 3,
      'Target/default/echo-canary -split-> VirtualService/default/echo-v2': 1,
      'VirtualService/default/echo-v2 -selects-> Service/default/echo-v2': 1,
    });
    expect(t.unplaced).toBe(0);
    expect(t.unavailable).toEqual([]);
    expect(sessionsThrough(t, 'Service/default/echo-v2').map((s) => s.session.source)).toEqual([
      '127.0.0.100:9004',
    ]);
  });

  it('lists the sessions through a node oldest first', () => {
    const { graph } = compileDraft(canary);
    const live = canaryLive(canary, [
      udpSession(9001, '127.0.0.51', '2026-11-28T14:22:30.000Z'),
      udpSession(9002, '127.0.0.52', '2026-11-28T14:22:10.000Z'),
    ]);
    const through = sessionsThrough(graphTraffic(graph, live), 'Target/default/echo-canary');
    expect(through.map((s) => s.session.source)).toEqual(['127.0.0.100:9002', '127.0.0.100:9001']);
    expect(through.every((s) => s.proxy === 'default/gateway-0')).toBe(true);
  });

  it('maps a rule by its spec.rules index when the listener has fewer rules than the VirtualService', () => {
    // Two rules; the first is dropped from the listener (its route names nothing), so the listener's rule 0
    // is spec.rules[1].
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'VirtualService/default/gateway',
      path: ['spec', 'rules'],
      value: [{ action: { route: 'nowhere' } }, { action: { route: 'echo-route' } }],
    });
    if (!r.ok) throw new Error(r.error);
    const { graph } = compileDraft(r.draft);
    expect(graph.listeners[GW]).toEqual({ node: 'VirtualService/default/gateway', rules: [1] });
    const t = graphTraffic(graph, canaryLive(r.draft, [udpSession(9001, '127.0.0.61')]));
    const lit = graph.edges.filter((e) => t.edges[e.id] && e.kind === 'rule');
    expect(lit.map((e) => [e.order, e.target])).toEqual([[1, 'Route/default/echo-route']]);
  });

  it('counts sessions on a listener the draft does not have as unplaced, and names proxies it could not read', () => {
    const { graph } = compileDraft(canary);
    const live = canaryLive(canary, [
      {
        ...udpSession(9001, '127.0.0.51'),
        source: { origin: 'removed.default.virtualservice.cluster.local' },
      },
      udpSession(9002, '127.0.0.52'),
    ]);
    live.proxies['default/other-0'] = proxy('default/other-0', {
      available: false,
      reason: 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)',
    });
    // A proxyless gRPC client has no sessions: not a proxy that failed to answer.
    live.proxies['default/client-0'] = proxy('default/client-0', { available: false, reason: 'xds' }, 'grpc');
    const t = graphTraffic(graph, live);
    expect(t.unplaced).toBe(1);
    expect(t.sessions).toHaveLength(1);
    expect(t.nodes['VirtualService/default/gateway']).toBe(1);
    expect(t.unavailable).toEqual([
      {
        proxy: 'default/other-0',
        reason: 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)',
      },
    ]);
  });

  it('stops a flow at the Target when the draft removed the split entry it still runs on', () => {
    // New flows follow the weights; an established one stays on echo-v2 until it ends.
    const r = applyCommand(canary, {
      type: 'setField',
      key: 'Target/default/echo-canary',
      path: ['spec', 'split'],
      value: [{ serviceName: 'echo-v1', weight: 100 }],
    });
    if (!r.ok) throw new Error(r.error);
    const { graph } = compileDraft(r.draft);
    const t = graphTraffic(graph, canaryLive(canary, [udpSession(9001, '127.0.0.61')]));
    expect(t.nodes['Target/default/echo-canary']).toBe(1);
    expect(t.nodes['VirtualService/default/echo-v1']).toBeUndefined();
    expect(graph.edges.filter((e) => t.edges[e.id] && e.kind === 'split')).toEqual([]);
  });

  it('takes the only endpoint source when it has no Service to ask (a proxy behind a Target)', () => {
    const ex1 = exampleDraft('seed-example-1');
    const { graph, l7mp } = compileDraft(ex1);
    const tc = 'transcoder-vsvc.default.target.cluster.local';
    const raw = {
      name: 'UDP:127.0.0.100:9050-127.0.0.10:9001-0',
      metadata: { IP: { src_addr: '127.0.0.100' }, UDP: { src_port: 9050, dst_port: 9001 } },
      source: { origin: 'gateway-vsvc.default.virtualservice.cluster.local' },
      destination: { origin: tc, endpoint: { spec: { address: '127.0.0.20' } } },
      status: 'CONNECTED',
    };
    const live = canaryLive(canary, []);
    live.proxies = {
      'default/gateway-0': proxy('default/gateway-0', {
        available: true,
        items: [toLiveSession(raw, l7mp['default/gateway-0'])],
      }),
    };
    const t = graphTraffic(graph, live);
    expect(t.nodes['Target/default/transcoder-vsvc']).toBe(1);
    expect(t.nodes['VirtualService/default/transcoder-vsvc']).toBe(1);
  });

  it('in a grouped view: sessions per collapsed group and per edge a group stands in for, each session once', () => {
    const { graph } = compileDraft(canary);
    const live = canaryLive(canary, fourFlows());
    const t = graphTraffic(graph, live);
    // Each backend's VirtualService and Service folded into a group; the rest shown as themselves.
    const { view, groupOf } = foldedView(graph, {
      'Group:v1': ['VirtualService/default/echo-v1', 'Service/default/echo-v1'],
      'Group:v2': ['VirtualService/default/echo-v2', 'Service/default/echo-v2'],
    });
    expect(viewTraffic(t, graph, view, groupOf)).toEqual({
      groups: { 'Group:v1': 3, 'Group:v2': 1 },
      // The split edges into the groups; the edges inside a group and between shown nodes are not pairs.
      pairs: { 'Target/default/echo-canary->Group:v1': 3, 'Target/default/echo-canary->Group:v2': 1 },
      // No gRPC client: no RPCs.
      groupLoad: {},
      pairLoad: {},
    });
    // An expanded group (not collapsed) is shown as its members: nothing to stand in for.
    expect(viewTraffic(t, graph, { nodes: graph.nodes, collapsed: [] }, groupOf)).toEqual({
      groups: {},
      pairs: {},
      groupLoad: {},
      pairLoad: {},
    });
  });

  it('is empty without live state', () => {
    const { graph } = compileDraft(canary);
    expect(graphTraffic(graph, undefined)).toEqual({
      nodes: {},
      edges: {},
      sessions: [],
      unplaced: 0,
      unavailable: [],
      load: NO_LOAD,
    });
  });
});
