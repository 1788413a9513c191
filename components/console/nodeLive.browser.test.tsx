import { describe, expect, it } from 'vitest';
import type { GraphNode } from '@/lib/console/meshGraph';
import { graphNode, proxyLive } from '@/lib/console/liveState.testutil';
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
});
