/**
 * The field-level difference between a live object and what a server-side apply would make of it, with
 * the fields the API server changes on every write (managedFields, resourceVersion, generation,
 * timestamps, uid) left out, so "no diff" means the apply changes nothing a user wrote or can see.
 */
import { formatFieldPath } from '@/lib/model/fieldPath';
import { jsonEqual } from '@/lib/util/jsonEqual';

/** One changed field: absent before (`before` undefined) is an addition, absent after is a removal. */
export interface FieldChange {
  /** e.g. `spec.websocket.port`, `spec.rules[0].action` (lib/model/fieldPath's form). */
  path: string;
  before?: unknown;
  after?: unknown;
}

const VOLATILE_METADATA = ['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'];

/** A copy without the server-maintained bookkeeping fields (see the module comment). */
export function withoutVolatileFields(obj: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(obj);
  const meta = copy.metadata;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    for (const k of VOLATILE_METADATA) delete (meta as Record<string, unknown>)[k];
  }
  return copy;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The changed leaves from `before` to `after` (either may be null: a create or a delete), volatile fields
 * ignored. Arrays of equal length are compared item by item; otherwise the whole array is one change.
 */
export function objectDiff(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): FieldChange[] {
  const out: FieldChange[] = [];
  walk(
    before ? withoutVolatileFields(before) : undefined,
    after ? withoutVolatileFields(after) : undefined,
    [],
    out,
  );
  return out;
}

function walk(a: unknown, b: unknown, at: (string | number)[], out: FieldChange[]): void {
  if (jsonEqual(a, b)) return;
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], [...at, k], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => walk(x, b[i], [...at, i], out));
    return;
  }
  const change: FieldChange = { path: formatFieldPath(at) };
  if (a !== undefined) change.before = a;
  if (b !== undefined) change.after = b;
  out.push(change);
}
