/**
 * Leftovers of failed adds, found by name. l7mp 0.5.7 adds a listener's inline rules by first creating
 * an auto-generated rulelist `<listener>-RuleList-<n>` and then its rules one by one; if a rule (or its
 * inline route) fails, the call answers 400 but the rulelist and the rules added so far stay
 * (shared/notes/l7mp-rest-api.md §3). An interrupted listener delete (diffL7mp deletes the rulelist and
 * then each rule) can also leave auto-generated rules `<rulelist>-Rule-<n>` outside any rulelist.
 * parseL7mpDump cannot see either (the model has no rulelists), so diffL7mp never removes them.
 */
import { l7mpPaths } from '@/lib/l7mp/l7mpPaths';
import type { L7mpOperation } from '@/lib/model/l7mp';

/** The plain (non-recursive) dumps the leftovers are found in. */
export interface L7mpRuleTables {
  /** `GET /api/v1/listeners`: each listener's `rules` is the name of its rulelist. */
  listeners: unknown;
  /** `GET /api/v1/rulelists`: `{name, rules: [rule names]}`. */
  rulelists: unknown;
  /** `GET /api/v1/rules`: `{name, match, action}`. */
  rules: unknown;
}

/** l7mp.js newName: `<base>-<Kind>-<global counter>`, plus `_<i>` if that name was taken. */
const GENERATED_RULELIST = /-RuleList-\d+(?:_\d+)?$/;
const GENERATED_RULE = /-RuleList-\d+(?:_\d+)?-Rule-\d+(?:_\d+)?$/;

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter(
        (v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v),
      )
    : [];
}

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * The DELETEs that remove orphaned auto-generated rulelists (no listener refers to them) with their
 * rules, and auto-generated rules that no rulelist lists. Rules go first, each with `?recursive=true`
 * so that its auto-generated route goes too, and only then the rulelists with a plain delete: a
 * recursive rulelist delete answers 400 as soon as one of its rules is already gone. A rule that a
 * rulelist still in use also lists is kept. The controller's rulelist is referenced by its listener,
 * so it is never touched.
 */
export function leftoverL7mpOps(tables: L7mpRuleTables): L7mpOperation[] {
  const referenced = new Set<string>();
  for (const listener of records(tables.listeners)) {
    if (typeof listener.rules === 'string') referenced.add(listener.rules);
  }
  const rulelists = records(tables.rulelists).filter(
    (rl): rl is Record<string, unknown> & { name: string } => typeof rl.name === 'string',
  );
  const orphans = rulelists.filter((rl) => GENERATED_RULELIST.test(rl.name) && !referenced.has(rl.name));
  const orphanNames = new Set(orphans.map((rl) => rl.name));
  const listed = new Set<string>();
  const inUse = new Set<string>();
  for (const rl of rulelists) {
    for (const rule of names(rl.rules)) {
      listed.add(rule);
      if (!orphanNames.has(rl.name)) inUse.add(rule);
    }
  }

  const ruleOps = new Map<string, L7mpOperation>();
  for (const rl of orphans) {
    for (const rule of names(rl.rules)) {
      if (inUse.has(rule) || ruleOps.has(rule)) continue;
      ruleOps.set(rule, {
        method: 'DELETE',
        path: l7mpPaths.rule(rule, { recursive: true }),
        kind: 'rule',
        name: rule,
        reason: `rule of orphaned rulelist ${rl.name} (left over from a failed listener add)`,
      });
    }
  }
  for (const rule of records(tables.rules)) {
    const name = rule.name;
    if (typeof name !== 'string' || !GENERATED_RULE.test(name) || listed.has(name) || ruleOps.has(name)) {
      continue;
    }
    ruleOps.set(name, {
      method: 'DELETE',
      path: l7mpPaths.rule(name, { recursive: true }),
      kind: 'rule',
      name,
      reason: 'auto-generated rule in no rulelist (left over from an interrupted listener delete)',
    });
  }
  const rulelistOps: L7mpOperation[] = orphans.map((rl) => ({
    method: 'DELETE',
    path: l7mpPaths.rulelist(rl.name),
    kind: 'rulelist',
    name: rl.name,
    reason: 'auto-generated rulelist no listener refers to (left over from a failed listener add)',
  }));
  const byName = (a: L7mpOperation, b: L7mpOperation) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...[...ruleOps.values()].sort(byName), ...rulelistOps.sort(byName)];
}
