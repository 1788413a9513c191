import { describe, expect, it } from 'vitest';
import { compileDraft } from './compileDraft';
import type { GraphNode } from './meshGraph';
import { meshSummary } from './meshSummary';
import { exampleDraft } from './testDrafts.testutil';

function node(
  kind: GraphNode['kind'],
  name: string,
  error = 0,
  warning = 0,
  generated?: GraphNode['generated'],
): GraphNode {
  return {
    id: `${kind}/default/${name}`,
    kind,
    name,
    namespace: 'default',
    detail: '',
    diagnostics: [],
    counts: { error, warning, info: 0 },
    ...(generated ? { generated } : {}),
  };
}

describe('meshSummary', () => {
  it('counts kinds in the canvas order, the generated ones, and diagnostics by severity', () => {
    const s = meshSummary(
      {
        nodes: [
          node('Service', 's'),
          node('VirtualService', 'a'),
          node('VirtualService', 'b', 0, 0, 'naked-service'),
          node('Proxy', 'p-0'),
        ],
      },
      [{ severity: 'error' }, { severity: 'warning' }, { severity: 'warning' }, { severity: 'info' }],
    );
    expect(s.kinds).toEqual([
      { kind: 'VirtualService', count: 2, generated: 1 },
      { kind: 'Service', count: 1, generated: 0 },
      { kind: 'Proxy', count: 1, generated: 0 },
    ]);
    expect([s.errors, s.warnings, s.infos]).toEqual([1, 2, 1]);
    expect(s.attention).toEqual([]);
  });

  it('lists what needs attention worst first, up to the limit, with the total', () => {
    const s = meshSummary(
      {
        nodes: [
          node('Route', 'w1', 0, 1),
          node('Route', 'e1', 1, 0),
          node('Route', 'e2', 2, 0),
          node('Route', 'w3', 0, 3),
          node('Route', 'ok'),
          node('Route', 'e1w', 1, 5),
        ],
      },
      [],
      3,
    );
    expect(s.attention.map((a) => a.name)).toEqual(['e2', 'e1w', 'e1']);
    expect(s.attentionTotal).toBe(5);
  });

  it('on seed Example 1: two proxies, its warnings and the objects that carry them', () => {
    const c = compileDraft(exampleDraft('seed-example-1'), { xds: false });
    const s = meshSummary(c.graph, c.diagnostics);
    expect(s.kinds.find((k) => k.kind === 'Proxy')?.count).toBe(2);
    expect(s.errors).toBe(0);
    expect(s.warnings).toBe(c.diagnostics.filter((d) => d.severity === 'warning').length);
    expect(s.warnings).toBeGreaterThan(0);
    expect(s.attention.map((a) => a.id)).toContain('VirtualService/default/gateway-vsvc');
  });
});
