import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import { xdsConfigDump } from './configDump';
import { exampleDraft } from './testDrafts.testutil';

describe('xdsConfigDump', () => {
  it("puts each of a proxy's resources under its config_dump section with its type URL", () => {
    const c = compileDraft(exampleDraft('canary'));
    if ('error' in c.xds) throw new Error(c.xds.error);
    const r = c.xds.proxies['default/gateway-0']!;
    const dump = xdsConfigDump(r);
    expect(dump.configs.map((x) => x['@type'])).toEqual([
      'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
      'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
      'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
      'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
    ]);
    const listeners = dump.configs[0]!.dynamic_listeners as {
      name: string;
      active_state: { listener: Record<string, unknown> };
    }[];
    expect(listeners.map((l) => l.name)).toEqual(r.listeners.map((l) => l.name));
    expect(listeners[0]!.active_state.listener['@type']).toBe(
      'type.googleapis.com/envoy.config.listener.v3.Listener',
    );
    expect((dump.configs[1]!.dynamic_active_clusters as unknown[]).length).toBe(r.clusters.length);
  });
});
