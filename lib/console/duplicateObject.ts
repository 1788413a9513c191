/**
 * Duplicate (Ctrl+D, the Inspector's "Duplicate"): a copy of one object under the next free name
 * `<name>-copy`, `<name>-copy-2`, ... in the same namespace, valid the moment it appears. A copied
 * VirtualService would listen on its original's port, and a copied Service would use its ports: both
 * get the next free ones up from the originals (the quick fix "Move to port N" would be the next
 * thing a user did). References stay
 * as they were: a copied Route goes to the same destination, a copied Target to the same Service.
 */
import { ObjectName } from '../model/common';
import { LISTENER_PROTOCOL_KEYS } from '../model/protocols';
import { type DraftModel, isRecord } from './draftModel';
import { freePort, PALETTE_KINDS } from './palette';

export type Duplicate =
  { ok: true; key: string; object: Record<string, unknown>; file: string } | { ok: false; error: string };

/** Cluster-written metadata a copy must not carry (the API server sets it for the new object). */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
];

/** The copy of the object `key` in `model` (to add to the original's file), or why there is none. */
export function duplicateObject(model: DraftModel, key: string): Duplicate {
  const copies = model.byKey.get(key);
  if (!copies?.length) return { ok: false, error: `cannot duplicate ${key}: no such object in the draft` };
  if (copies.length > 1)
    return {
      ok: false,
      error: `cannot duplicate ${key}: it is defined ${copies.length} times; delete a copy first`,
    };
  const original = copies[0]!;
  if (!(PALETTE_KINDS as readonly string[]).includes(original.kind))
    return {
      ok: false,
      error: `cannot duplicate a ${original.kind}: only ${PALETTE_KINDS.join(', ')} objects`,
    };
  const name = copyName(model, original.kind, original.namespace, original.name);
  if (!ObjectName.safeParse(name).success)
    return {
      ok: false,
      error: `cannot duplicate ${key}: "${name}" is too long for a name; rename the original`,
    };
  const object = structuredClone(original.value);
  const { status: _status, ...withoutStatus } = object;
  const meta = isRecord(withoutStatus.metadata) ? { ...withoutStatus.metadata } : {};
  for (const k of SERVER_METADATA) delete meta[k];
  meta.name = name;
  meta.namespace = original.namespace;
  const copy: Record<string, unknown> = { ...withoutStatus, metadata: meta };
  movePorts(model, original.kind, copy);
  return {
    ok: true,
    key: `${original.kind}/${original.namespace}/${name}`,
    object: copy,
    file: original.file,
  };
}

function copyName(model: DraftModel, kind: string, namespace: string, name: string): string {
  const taken = (n: string) => model.byKey.has(`${kind}/${namespace}/${n}`);
  let candidate = `${name}-copy`;
  for (let i = 2; taken(candidate); i++) candidate = `${name}-copy-${i}`;
  return candidate;
}

/** Gives a copied VirtualService's listener, or a copied Service's ports, ports no other object uses. */
function movePorts(model: DraftModel, kind: string, copy: Record<string, unknown>): void {
  const spec = copy.spec;
  if (!isRecord(spec)) return;
  const used = new Set<number>();
  const next = (from: number) => {
    let p = freePort(model, from);
    while (used.has(p) && p < 65535) p = freePort(model, p + 1);
    used.add(p);
    return p;
  };
  if (kind === 'VirtualService') {
    for (const k of LISTENER_PROTOCOL_KEYS) {
      const listener = spec[k];
      if (isRecord(listener) && typeof listener.port === 'number') listener.port = next(listener.port);
    }
  } else if (kind === 'Service' && Array.isArray(spec.ports)) {
    for (const p of spec.ports) if (isRecord(p) && typeof p.port === 'number') p.port = next(p.port);
  }
}
