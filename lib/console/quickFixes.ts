/**
 * Quick fixes: for a diagnostic, the edits that would settle it, each one draft command (so one
 * Ctrl+Z takes it back). A dangling reference (or a selector naming no Service) offers the existing
 * names closest to what was written and creating the object it names; an object defined twice the
 * deletion of a copy; a seed-dialect warning offers the conversion; a port clash the
 * next free port. Pure: computed from the diagnostic and the draft's model when the user asks.
 */
import { parseRef } from '../engine/names';
import { ObjectName } from '../model/common';
import { type Diagnostic } from '../model/diagnostic';
import { formatFieldPath } from '../model/fieldPath';
import type { DraftCommand } from './draftCommands';
import type { DraftModel, DraftObject } from './draftModel';
import { freePort, newObject, type PaletteKind } from './palette';
import { NAME_KIND, type RefKind, referenceSites, referenceTo, renamedReference } from './references';

export interface QuickFix {
  /** What the fix does, as its button reads. */
  title: string;
  command: DraftCommand;
  /** The node to select once the fix is applied (an object it creates). */
  select?: string;
}

/** Codes that may have a quick fix: cheap to ask for every row of a long diagnostics list. */
const FIXABLE = /^(unresolved-reference|selector-no-service|port-clash|duplicate-name|seed-dialect-.*)$/;

/** True when `quickFixes` may offer something for this diagnostic. */
export function mayHaveQuickFix(d: Diagnostic): boolean {
  return FIXABLE.test(d.code);
}

/** At most this many "Change to" suggestions per reference. */
const MAX_SUGGESTIONS = 3;

/** The fixes for one diagnostic, best first; none when the object is ambiguous or gone. */
export function quickFixes(d: Diagnostic, model: DraftModel): QuickFix[] {
  if (!mayHaveQuickFix(d)) return [];
  const key = `${d.object.kind}/${d.object.namespace ?? 'default'}/${d.object.name}`;
  const list = model.byKey.get(key);
  if (d.code === 'duplicate-name') return copyFixes(d, key, list ?? []);
  // A duplicated object has its own error; editing one of the copies would be a guess.
  if (!list || list.length !== 1) return [];
  const object = list[0]!;
  if (d.code === 'unresolved-reference' || d.code === 'selector-no-service')
    return referenceFixes(d, object, model);
  if (d.code === 'port-clash') return portFixes(d, object, model);
  return dialectFixes(object, model);
}

/** Each definition of an object defined twice has its diagnostic: that one can go. */
function copyFixes(d: Diagnostic, key: string, list: readonly DraftObject[]): QuickFix[] {
  const at = d.source;
  if (!at || list.length < 2 || !list.some((o) => o.file === at.file && o.line === at.line)) return [];
  return [
    {
      title: `Delete this copy (${at.file}:${at.line})`,
      command: { type: 'deleteCopy', key, file: at.file, line: at.line },
    },
  ];
}

function dialectFixes(object: DraftObject, model: DraftModel): QuickFix[] {
  if (!object.dialect) return [];
  const fixes: QuickFix[] = [
    { title: 'Convert to msm.l7mp.io/v1', command: { type: 'canonicalize', keys: [object.key] } },
  ];
  const all = model.objects
    .filter((o) => o.dialect && model.byKey.get(o.key)?.length === 1)
    .map((o) => o.key);
  if (all.length > 1)
    fixes.push({
      title: `Convert all ${all.length} seed-dialect objects`,
      command: { type: 'canonicalize', keys: all },
    });
  return fixes;
}

/** Where the engine reads the object's references (canonical form, as `object.value` is). */
function referenceFixes(d: Diagnostic, object: DraftObject, model: DraftModel): QuickFix[] {
  const site = referenceSites(object.kind, object.value).refs.find((s) => formatFieldPath(s.path) === d.path);
  if (!site) return [];
  const ref = parseRef(site.value, object.namespace);
  // A selector's serviceName selects a Kubernetes Service's pods: only a Service will do.
  const lookup: readonly RefKind[] = site.role === 'selector' ? ['Service'] : site.kinds;
  const kinds = lookup.filter((k) => ref.kind === undefined || NAME_KIND[k] === ref.kind);
  const fixes: QuickFix[] = [];
  const seen = new Set<string>([site.value]);
  for (const c of closestNames(ref.name, ref.namespace, kinds, model)) {
    // A long name stays long (`x.ns.route.cluster.local`): only its name part changes.
    const value =
      ref.kind !== undefined
        ? renamedReference(site.value, c.name, object.namespace)
        : referenceTo(c.kind, c.namespace, c.name, object.namespace);
    if (seen.has(value)) continue;
    seen.add(value);
    fixes.push({
      title: `Change to "${value}" (${c.kind})`,
      command: { type: 'setField', key: object.key, path: site.path, value },
    });
    if (fixes.length >= MAX_SUGGESTIONS) break;
  }
  const create = createKind(site.role, kinds);
  if (
    create &&
    ObjectName.safeParse(ref.name).success &&
    !model.byKey.has(`${create}/${ref.namespace}/${ref.name}`)
  ) {
    const created = newObject(create, model, { namespace: ref.namespace, name: ref.name });
    fixes.push({
      title: `Create ${create} "${ref.name}"${ref.namespace === object.namespace ? '' : ` in ${ref.namespace}`}`,
      command: { type: 'addObject', object: created },
      select: `${create}/${ref.namespace}/${ref.name}`,
    });
  }
  return fixes;
}

/** What to create for a dangling reference: a rule's route a Route, a route's target a Target, endpoints a Service. */
function createKind(role: string, kinds: readonly RefKind[]): PaletteKind | undefined {
  if (kinds.length === 0) return undefined;
  if (role === 'serviceName' || role === 'split' || role === 'selector')
    return kinds.includes('Service') ? 'Service' : kinds[0];
  return kinds[0];
}

interface Candidate {
  kind: RefKind;
  namespace: string;
  name: string;
  distance: number;
}

/** Objects of `kinds` in `namespace` whose names are close to `name` (typos, a missing suffix). */
function closestNames(
  name: string,
  namespace: string,
  kinds: readonly RefKind[],
  model: DraftModel,
): Candidate[] {
  const limit = Math.max(2, Math.floor(name.length / 3));
  const out: Candidate[] = [];
  for (const o of model.objects) {
    const kind = o.kind as RefKind;
    if (o.namespace !== namespace || !kinds.includes(kind) || o.name === name) continue;
    const distance = editDistance(name, o.name, limit);
    const affix = name.length >= 3 && (o.name.startsWith(name) || name.startsWith(o.name));
    if (distance <= limit || affix) out.push({ kind, namespace, name: o.name, distance });
  }
  // Closest first; then the lookup order (a Target before a VirtualService), then by name.
  return out.sort(
    (a, b) =>
      a.distance - b.distance ||
      kinds.indexOf(a.kind) - kinds.indexOf(b.kind) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

/** Levenshtein distance, giving up (returning limit + 1) once it must exceed `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < best) best = v;
    }
    if (best > limit) return limit + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** A clashing listener moved to the first port above its own that no object of the draft uses. */
function portFixes(d: Diagnostic, object: DraftObject, model: DraftModel): QuickFix[] {
  const m = /^spec\.([a-zA-Z]+)$/.exec(d.path ?? '');
  if (!m) return [];
  const protocol = (object.value.spec as Record<string, unknown> | undefined)?.[m[1]!];
  const port = (protocol as { port?: unknown } | undefined)?.port;
  if (typeof port !== 'number') return [];
  const next = freePort(model, port + 1);
  if (next > 65535 || next === port) return [];
  return [
    {
      title: `Move to port ${next}`,
      command: { type: 'setField', key: object.key, path: ['spec', m[1]!, 'port'], value: next },
    },
  ];
}
