// deploy/monitoring/ is current (npm run gen:monitoring), and every series its alerts and dashboard read
// is one Meshdeck exports: the names are taken from a real MeshMetrics registry in Kubernetes mode (which
// has every series of the local mode too), so a renamed metric fails here, not silently in Grafana.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ALERT_GROUPS } from '@/lib/monitoring/alertRules';
import { dashboardQueries, meshdeckDashboard } from '@/lib/monitoring/grafanaDashboard';
import { monitoringFiles } from '@/lib/monitoring/monitoringFiles';
import { MeshMetrics } from './MeshMetrics';

const DIR = path.join(__dirname, '..', '..', 'deploy', 'monitoring');

/** Series names in PromQL: identifiers of our prefixes (label names and functions never have them). */
function seriesIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:meshdeck|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}

/** What a registry exports: each metric, and a histogram's _bucket, _sum and _count. */
async function exported(): Promise<Set<string>> {
  const metrics = new MeshMetrics({ version: 'test', mode: 'kubernetes' });
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    // prom-client's typings say an enum; at run time the type is the exposition's word ('histogram').
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

describe('deploy/monitoring', () => {
  it.each(Object.keys(monitoringFiles()))('holds the current %s (npm run gen:monitoring)', (name) => {
    expect(readFileSync(path.join(DIR, name), 'utf8')).toBe(monitoringFiles()[name]);
  });

  it('the PrometheusRule and the rules file hold the same groups', () => {
    const rule = parseYaml(readFileSync(path.join(DIR, 'prometheus-rule.yaml'), 'utf8')) as {
      kind: string;
      spec: { groups: unknown };
    };
    const file = parseYaml(readFileSync(path.join(DIR, 'meshdeck.rules.yaml'), 'utf8')) as {
      groups: unknown;
    };
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.spec.groups).toEqual(file.groups);
  });

  it('every series an alert or a dashboard panel reads is one Meshdeck exports', async () => {
    const names = await exported();
    const used = new Map<string, string>();
    for (const g of ALERT_GROUPS)
      for (const r of g.rules) for (const s of seriesIn(r.expr)) used.set(s, r.alert);
    for (const q of dashboardQueries()) for (const s of seriesIn(q.expr)) used.set(s, q.panel);
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter(([s]) => !names.has(s)).map(([s, where]) => `${s} (${where})`);
    expect(missing).toEqual([]);
    // The check can fail: a name Meshdeck does not export.
    expect(names.has('meshdeck_l7mp_pushes')).toBe(false);
  });

  it("deploy/README.md's table lists every alert with its expression and `for`", () => {
    const readme = readFileSync(path.join(DIR, '..', 'README.md'), 'utf8');
    for (const g of ALERT_GROUPS)
      for (const r of g.rules) {
        const cell = `\`${r.expr.replaceAll('|', '\\|')}\`${r.for ? ` for ${r.for}` : ''}`;
        expect(readme, r.alert).toMatch(
          new RegExp(`\\| \`${r.alert}\` +\\| ${r.severity} +\\| ${escape(cell)} +\\|`),
        );
      }
  });

  it('the dashboard: unique panel ids, every panel on the 24-column grid without overlap', () => {
    const panels = meshdeckDashboard().panels as {
      id: number;
      gridPos: { x: number; y: number; w: number; h: number };
    }[];
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Set<string>();
    for (const { gridPos: g, id } of panels) {
      expect(g.x + g.w, `panel ${id}`).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `panel ${id} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
