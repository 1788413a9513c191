import { describe, expect, it } from 'vitest';
import type { GraphNode } from '@/lib/console/meshGraph';
import { graphNode, grpcClientLive, proxyLive } from '@/lib/console/liveState.testutil';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { nodeLive } from './nodeLive';

const node = (kind: GraphNode['kind'], name: string) => graphNode(kind, name);

const live: MeshLiveState = {
  version: 1,
  mesh: { source: 'dir', mode: 'local', loadedAt: '2026-11-28T14:00:00Z' },
  proxies: {},
  services: {
    'default/echo-v1': {
      id: 'default/echo-v1',
      endpoints: [
        { address: '127.0.0.51', ready: true },
        { address: '127.0.0.52', ready: false },
      ],
    },
  },
  diagnostics: [],
};

describe('nodeLive with the traffic overlay', () => {
  it('gives a node without live state of its own its sessions as a flow', () => {
    expect(nodeLive(node('VirtualService', 'gateway'), live, 20)).toEqual({
      tone: 'flow',
      text: '⇄ 20 sessions',
      sessions: 20,
    });
    expect(nodeLive(node('Route', 'r'), live, 1)?.text).toBe('⇄ 1 session');
  });

  it("adds the sessions to a Service's endpoints, keeping its tone", () => {
    expect(nodeLive(node('Service', 'echo-v1'), live, 17)).toEqual({
      tone: 'ok',
      text: '1/2 endpoints ready · ⇄ 17',
      sessions: 17,
    });
  });

  it('marks a proxy whose sessions cannot be listed: its traffic is unknown, not none', () => {
    const withProxy: MeshLiveState = {
      ...live,
      proxies: {
        'default/gateway-0': proxyLive('default/gateway-0', {
          sessions: { available: false, reason: '422' },
        }),
      },
    };
    const gw = { ...node('Proxy', 'gateway-0'), id: 'Pod/default/gateway-0', proxyId: 'default/gateway-0' };
    expect(nodeLive(gw, withProxy, 'n/a')).toEqual({ tone: 'ok', text: 'in sync · ⇄ n/a' });
  });

  it('is unchanged without sessions, and absent without live state', () => {
    expect(nodeLive(node('Service', 'echo-v1'), live, 0)).toEqual({
      tone: 'ok',
      text: '1/2 endpoints ready',
    });
    expect(nodeLive(node('VirtualService', 'gateway'), live)).toBeUndefined();
    expect(nodeLive(node('VirtualService', 'gateway'), undefined, 3)).toBeUndefined();
  });

  it("adds the gRPC clients' RPCs, red where some failed", () => {
    const ok = {
      rps: 8,
      issued: 80,
      succeeded: 80,
      failed: 0,
      dropped: 0,
      inProgress: 0,
      successPercent: 100,
    };
    const failing = { ...ok, rps: 2, issued: 20, succeeded: 15, failed: 5, successPercent: 75 };
    expect(nodeLive(node('VirtualService', 'echo-v1'), live, undefined, ok)).toEqual({
      tone: 'flow',
      text: '⇄ 8 RPC/s · 100%',
    });
    expect(nodeLive(node('VirtualService', 'echo-v2'), live, undefined, failing)).toEqual({
      tone: 'bad',
      text: '⇄ 2 RPC/s · 75%',
    });
    // After the node's own state; a failing load turns a good state red, and sessions still follow.
    expect(nodeLive(node('Service', 'echo-v1'), live, 3, failing)).toEqual({
      tone: 'bad',
      text: '1/2 endpoints ready · ⇄ 2 RPC/s · 75% · ⇄ 3',
      sessions: 3,
    });
    const client = {
      ...node('Proxy', 'grpc-client'),
      id: 'Pod/default/grpc-client',
      proxyId: 'default/grpc-client',
    };
    const withClient: MeshLiveState = {
      ...live,
      proxies: { 'default/grpc-client': grpcClientLive('default/grpc-client', undefined) },
    };
    expect(nodeLive(client, withClient, undefined, ok)).toEqual({
      tone: 'ok',
      text: 'in sync · ⇄ 8 RPC/s · 100%',
    });
  });
});
