import { describe, expect, it } from 'vitest';
import { leftoverL7mpOps } from './leftoverL7mpOps';

const controller = {
  listeners: [{ name: 'controller-listener', rules: 'controller-listener-RuleList-0' }],
  rulelists: [{ name: 'controller-listener-RuleList-0', rules: ['controller-listener-RuleList-0-Rule-0'] }],
  rules: [{ name: 'controller-listener-RuleList-0-Rule-0' }],
};

function ops(tables: { listeners: unknown[]; rulelists: unknown[]; rules: unknown[] }): string[] {
  return leftoverL7mpOps(tables).map((op) => `${op.method} ${op.path}`);
}

describe('leftoverL7mpOps', () => {
  it('finds nothing on a clean proxy (the controller is referenced by its listener)', () => {
    expect(ops(controller)).toEqual([]);
    expect(leftoverL7mpOps({ listeners: 'junk', rulelists: undefined, rules: null })).toEqual([]);
  });

  it("removes the note §3 leftovers: the old listener's rulelist with its named rule, and the empty one", () => {
    // Recorded from l7mp 0.5.7 after: add gw2 (inline rule "gw2-rule"), delete gw2, add gw2 again (400).
    expect(
      ops({
        listeners: [...controller.listeners, { name: 'gw', rules: 'gw-RuleList-1' }],
        rulelists: [
          ...controller.rulelists,
          { name: 'gw-RuleList-1', rules: ['gw-RuleList-1-Rule-1'] },
          { name: 'gw2-RuleList-2', rules: ['gw2-rule'] },
          { name: 'gw2-RuleList-3', rules: [] },
        ],
        rules: [...controller.rules, { name: 'gw-RuleList-1-Rule-1' }, { name: 'gw2-rule' }],
      }),
    ).toEqual([
      'DELETE /api/v1/rules/gw2-rule?recursive=true',
      'DELETE /api/v1/rulelists/gw2-RuleList-2',
      'DELETE /api/v1/rulelists/gw2-RuleList-3',
    ]);
  });

  it('deletes rules one by one (even stale ones) before a plain rulelist delete, and keeps shared rules', () => {
    expect(
      ops({
        listeners: [{ name: 'a', rules: 'named-list' }],
        rulelists: [
          { name: 'named-list', rules: ['shared'] },
          {
            name: 'x/y-RuleList-4_1',
            rules: ['x/y-RuleList-4_1-Rule-9', 'gone-RuleList-1-Rule-1', 'shared'],
          },
        ],
        rules: [{ name: 'x/y-RuleList-4_1-Rule-9' }, { name: 'shared' }],
      }),
    ).toEqual([
      'DELETE /api/v1/rules/gone-RuleList-1-Rule-1?recursive=true',
      'DELETE /api/v1/rules/x%2Fy-RuleList-4_1-Rule-9?recursive=true',
      'DELETE /api/v1/rulelists/x%2Fy-RuleList-4_1',
    ]);
  });

  it('removes auto-generated rules no rulelist lists, but never named rules or rulelists', () => {
    expect(
      ops({
        listeners: [],
        rulelists: [{ name: 'my-rulelist', rules: [] }],
        rules: [{ name: 'l-RuleList-3-Rule-5' }, { name: 'my-rule' }, { name: 'l-RuleList-3-Rule-x' }],
      }),
    ).toEqual(['DELETE /api/v1/rules/l-RuleList-3-Rule-5?recursive=true']);
  });
});
