import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyL7mpOps } from '../l7mp/applyL7mpOps';
import { canonicalL7mpConfig } from '../l7mp/canonicalL7mp';
import { compileMesh } from '../engine/compileMesh';
import { emptyL7mpConfig } from '../model/l7mp';
import { parseManifests } from '../parse/parseManifests';
import { renderedChanges } from './renderedChanges';

function example(name: string): {
  'mesh.yaml': string;
  'cluster.yaml': string;
  '.meshdeck-layout.json': string;
} {
  const dir = path.join(__dirname, '../../examples', name);
  return {
    'mesh.yaml': readFileSync(path.join(dir, 'mesh.yaml'), 'utf8'),
    'cluster.yaml': readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'),
    '.meshdeck-layout.json': '{ "not": "a manifest" }\n',
  };
}

describe('renderedChanges', () => {
  it('is empty when nothing that renders changed (layout and comments alone)', () => {
    const base = example('seed-example-1');
    const draft = {
      ...base,
      'mesh.yaml': `# reviewed\n${base['mesh.yaml']}`,
      '.meshdeck-layout.json': '{}\n',
    };
    const r = renderedChanges(base, draft);
    expect(r.proxies).toEqual([]);
    // The layout file is not read as a manifest (no diagnostic about it).
    expect(r.diagnostics.some((d) => d.source?.file === '.meshdeck-layout.json')).toBe(false);
    // The same diagnostics, one line lower.
    const shifted = r.baseDiagnostics.map((d) =>
      d.source ? { ...d, source: { ...d.source, line: d.source.line + 1 } } : d,
    );
    expect(r.diagnostics).toEqual(shifted);
  });

  it('a canary weight change: endpoint operations on the gateway and a changed ClusterLoadAssignment', () => {
    const base = example('canary');
    const draft = {
      ...base,
      'mesh.yaml': base['mesh.yaml'].replace('weight: 80', 'weight: 50').replace('weight: 20', 'weight: 50'),
    };
    const r = renderedChanges(base, draft);
    expect(r.proxies.map((p) => [p.proxy, p.status])).toEqual([['default/gateway-0', 'changed']]);
    const p = r.proxies[0]!;
    expect(new Set(p.l7mp.map((o) => o.kind))).toEqual(new Set(['endpoint']));
    expect(p.xds.endpoints).toEqual({
      added: [],
      changed: ['echo-canary.default.target.cluster.local'],
      removed: [],
    });
    expect(p.xds.listeners).toEqual({ added: [], changed: [], removed: [] });
    // The operations take the base render to the draft render (checked with the l7mp simulator).
    const render = (files: Record<string, string>) =>
      compileMesh(parseManifests(['mesh.yaml', 'cluster.yaml'].map((f) => ({ path: f, content: files[f]! }))))
        .l7mp.proxies['default/gateway-0']!.config;
    const applied = applyL7mpOps(render(base), p.l7mp);
    expect(canonicalL7mpConfig(applied.config)).toEqual(canonicalL7mpConfig(render(draft)));
  });

  it('a proxy that appears: everything added; the gRPC example changes xDS routes only', () => {
    const base = example('seed-example-2');
    const empty = { 'cluster.yaml': base['cluster.yaml'] };
    const r = renderedChanges(empty, base);
    expect(r.proxies.length).toBeGreaterThan(0);
    for (const p of r.proxies) {
      expect(p.l7mp.every((o) => o.method === 'POST')).toBe(true);
      expect(Object.values(p.xds).every((c) => c.changed.length === 0 && c.removed.length === 0)).toBe(true);
    }
    expect(emptyL7mpConfig()).toEqual({ listeners: [], routes: [], clusters: [] });

    const g = example('grpc-canary');
    const g2 = renderedChanges(g, {
      ...g,
      'mesh.yaml': g['mesh.yaml'].replace('weight: 80', 'weight: 70').replace('weight: 20', 'weight: 30'),
    });
    expect(g2.proxies.map((p) => [p.proxy, p.l7mp.length, p.xds.routes.changed])).toEqual([
      ['default/grpc-client', 0, ['echo.default.virtualservice.cluster.local']],
    ]);
  });

  it('reports the draft diagnostics, errors first', () => {
    const base = example('canary');
    const draft = {
      ...base,
      'mesh.yaml': base['mesh.yaml'].replace('destination: echo-canary', 'destination: nowhere'),
    };
    const r = renderedChanges(base, draft);
    expect(r.diagnostics[0]!.severity).toBe('error');
    expect(r.diagnostics.some((d) => d.message.includes('nowhere'))).toBe(true);
    // The gateway loses its listener.
    const gw = r.proxies.find((p) => p.proxy === 'default/gateway-0')!;
    expect(gw.l7mp.some((o) => o.method === 'DELETE' && o.kind === 'listener')).toBe(true);
  });
});
