/**
 * Every change to the draft is one of these commands: graph, form and YAML edits alike. Each returns
 * a new DraftDoc or a clear error (what, where, why) and never throws on input, so a bad edit never
 * costs the draft.
 */
import { MSM_API_VERSION, ObjectName } from '../model/common';
import { MESH_KINDS } from '../model/resources';
import { formatFieldPath } from '../model/fieldPath';
import { DraftDoc, DraftPath, NodePosition } from './draftDoc';
import {
  type DocEdit,
  type DraftModel,
  type DraftObject,
  applyValue,
  describeKey,
  editObjects,
  findObject,
  isRecord,
  parseDraft,
  setNode,
  stringifyObject,
  valueAt,
} from './draftModel';
import { duplicateObject } from './duplicateObject';
import type { FieldPath } from './fieldPath';
import { nodeObjectKey, parseNodeId } from './nodeIds';
import { type RefKind, referenceSites, referenceTo, renamedReference, resolveReference } from './references';

export type DraftCommand =
  | { type: 'addObject'; object: Record<string, unknown>; file?: string }
  | { type: 'setField'; key: string; path: FieldPath; value: unknown }
  | { type: 'setFields'; key: string; fields: readonly { path: FieldPath; value: unknown }[] }
  | { type: 'replaceObject'; key: string; object: Record<string, unknown> }
  | { type: 'deleteObject'; key: string }
  | { type: 'deleteCopy'; key: string; file: string; line: number }
  | { type: 'duplicateObject'; key: string }
  | { type: 'clearMesh' }
  | { type: 'renameObject'; key: string; name: string }
  | { type: 'canonicalize'; keys: readonly string[] }
  | { type: 'connect'; source: string; target: string; chain?: 'ingress' | 'egress' }
  | { type: 'disconnect'; refs: readonly { key: string; path: FieldPath }[] }
  | { type: 'setFileText'; path: string; text: string }
  | { type: 'deleteFile'; path: string }
  | { type: 'moveNodes'; positions: Readonly<Record<string, NodePosition | null>> }
  | { type: 'replaceDraft'; draft: DraftDoc };

export type CommandResult = { ok: true; draft: DraftDoc } | { ok: false; error: string };

const fail = (error: string): CommandResult => ({ ok: false, error });

/** Applies one command; `model` may be passed when the caller already parsed this draft. */
export function applyCommand(draft: DraftDoc, cmd: DraftCommand, model?: DraftModel): CommandResult {
  try {
    return run(draft, cmd, model ?? parseDraft(draft));
  } catch (e) {
    // Commands are written not to throw; this keeps a bug from losing the user's draft.
    return fail(`${cmd.type} failed unexpectedly: ${(e as Error).message}`);
  }
}

function run(draft: DraftDoc, cmd: DraftCommand, model: DraftModel): CommandResult {
  switch (cmd.type) {
    case 'addObject':
      return addObject(draft, model, cmd.object, cmd.file);
    case 'setField':
      return setFields(draft, model, cmd.key, [{ path: cmd.path, value: cmd.value }]);
    case 'setFields':
      return setFields(draft, model, cmd.key, cmd.fields);
    case 'replaceObject':
      return replaceObject(draft, model, cmd.key, cmd.object);
    case 'deleteObject':
      return deleteObject(draft, model, cmd.key);
    case 'deleteCopy':
      return deleteCopy(draft, model, cmd.key, cmd.file, cmd.line);
    case 'duplicateObject': {
      const d = duplicateObject(model, cmd.key);
      return d.ok ? addObject(draft, model, d.object, d.file) : fail(d.error);
    }
    case 'clearMesh':
      return clearMesh(draft, model);
    case 'renameObject':
      return renameObject(draft, model, cmd.key, cmd.name);
    case 'canonicalize':
      return canonicalize(draft, model, cmd.keys);
    case 'connect':
      return connect(draft, model, cmd.source, cmd.target, cmd.chain);
    case 'disconnect':
      return disconnect(draft, model, cmd.refs);
    case 'setFileText':
      return setFileText(draft, cmd.path, cmd.text);
    case 'deleteFile':
      if (!(cmd.path in draft.files)) return fail(`cannot delete ${cmd.path}: no such file in the draft`);
      return ok(withFiles(draft, { [cmd.path]: null }));
    case 'moveNodes':
      return moveNodes(draft, cmd.positions);
    case 'replaceDraft': {
      const parsed = DraftDoc.safeParse(cmd.draft);
      if (!parsed.success)
        return fail(
          `cannot load the draft: ${parsed.error.issues.map((i) => `${formatFieldPath(i.path)}: ${i.message}`).join('; ')}`,
        );
      return ok(parsed.data);
    }
  }
}

const ok = (draft: DraftDoc): CommandResult => ({ ok: true, draft });

/** The draft with some files replaced (null removes a file); untouched files keep their order. */
export function withFiles(draft: DraftDoc, changes: Record<string, string | null>): DraftDoc {
  const files: Record<string, string> = {};
  for (const [p, t] of Object.entries(draft.files)) {
    if (!(p in changes)) files[p] = t;
    else if (changes[p] !== null) files[p] = changes[p]!;
  }
  for (const [p, t] of Object.entries(changes)) if (!(p in draft.files) && t !== null) files[p] = t;
  return { files, layout: draft.layout };
}

function edit(draft: DraftDoc, edits: { object: DraftObject; edit: DocEdit }[]): CommandResult {
  const r = editObjects(draft, edits);
  if (typeof r === 'string') return fail(r);
  return ok(withFiles(draft, r.files));
}

// ------------------------------------------------------------------ objects

function addObject(
  draft: DraftDoc,
  model: DraftModel,
  object: Record<string, unknown>,
  file?: string,
): CommandResult {
  if (!isRecord(object)) return fail('cannot add the object: it is not a mapping');
  const kind = object.kind;
  const meta = object.metadata;
  if (typeof kind !== 'string' || kind === '') return fail('cannot add the object: kind is missing');
  if (!isRecord(meta) || typeof meta.name !== 'string')
    return fail(`cannot add the ${kind}: metadata.name is missing`);
  const nameCheck = ObjectName.safeParse(meta.name);
  if (!nameCheck.success)
    return fail(`cannot add ${kind} "${meta.name}": metadata.name ${nameCheck.error.issues[0]!.message}`);
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
  const key = `${kind}/${namespace}/${meta.name}`;
  if (model.byKey.has(key)) {
    const where = model.byKey.get(key)!.map((o) => `${o.file}:${o.line}`);
    return fail(`cannot add ${describeKey(key)}: it already exists (${where.join(', ')}); pick another name`);
  }
  let path = file;
  if (path === undefined) {
    const stem = `${kind.toLowerCase()}-${namespace === 'default' ? '' : `${namespace}-`}${meta.name}`;
    path = `${stem}.yaml`;
    for (let i = 2; path in draft.files; i++) path = `${stem}-${i}.yaml`;
  }
  const pathCheck = DraftPath.safeParse(path);
  if (!pathCheck.success)
    return fail(`cannot add ${describeKey(key)} as ${path}: ${pathCheck.error.issues[0]!.message}`);
  const text = stringifyObject(object);
  const existing = draft.files[path];
  const content =
    existing === undefined || existing.trim() === ''
      ? text
      : `${existing}${existing.endsWith('\n') ? '' : '\n'}---\n${text}`;
  return ok(withFiles(draft, { [path]: content }));
}

function setFields(
  draft: DraftDoc,
  model: DraftModel,
  key: string,
  fields: readonly { path: FieldPath; value: unknown }[],
): CommandResult {
  const object = findObject(model, key);
  if (typeof object === 'string') return fail(`cannot edit: ${object}`);
  for (const f of fields) {
    if (f.path.length === 0) return fail(`cannot edit ${describeKey(key)}: empty field path`);
    const bad = f.path.find((s) => typeof s === 'number' && (!Number.isInteger(s) || s < 0));
    if (bad !== undefined)
      return fail(`cannot edit ${describeKey(key)}: bad index ${bad} in ${formatFieldPath(f.path)}`);
  }
  return edit(draft, [
    {
      object,
      edit: (doc, base) => {
        for (const f of fields) {
          const err = setNode(doc, [...base, ...f.path], f.value);
          if (err) return err;
        }
      },
    },
  ]);
}

function replaceObject(
  draft: DraftDoc,
  model: DraftModel,
  key: string,
  value: Record<string, unknown>,
): CommandResult {
  const object = findObject(model, key);
  if (typeof object === 'string') return fail(`cannot replace: ${object}`);
  if (!isRecord(value)) return fail(`cannot replace ${describeKey(key)}: the new value is not a mapping`);
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const newKey = `${String(value.kind)}/${typeof meta.namespace === 'string' ? meta.namespace : 'default'}/${String(meta.name)}`;
  if (newKey !== key)
    return fail(
      `cannot replace ${describeKey(key)} with ${describeKey(newKey)}: kind, namespace and name must stay (rename it instead)`,
    );
  return edit(draft, [{ object, edit: (doc, base) => applyValue(doc, base, valueAt(doc, base), value) }]);
}

/**
 * Deletes one definition of an object defined more than once (the engine uses none of them); the
 * layout stays, for the copy that remains.
 */
function deleteCopy(
  draft: DraftDoc,
  model: DraftModel,
  key: string,
  file: string,
  line: number,
): CommandResult {
  const list = model.byKey.get(key) ?? [];
  const object = list.find((o) => o.file === file && o.line === line);
  if (!object) return fail(`cannot delete: no definition of ${describeKey(key)} starts at ${file}:${line}`);
  if (list.length < 2)
    return fail(`cannot delete a copy: ${describeKey(key)} is defined once; delete the object instead`);
  return edit(draft, [{ object, edit: removeObject }]);
}

/**
 * Rewrites objects written in the seed's `l7mp.io/MSM/v1` dialect in canonical form (what their
 * first edit would do), comments kept; objects already canonical are left as they are.
 */
function canonicalize(draft: DraftDoc, model: DraftModel, keys: readonly string[]): CommandResult {
  const edits: { object: DraftObject; edit: DocEdit }[] = [];
  for (const key of keys) {
    const object = findObject(model, key);
    if (typeof object === 'string') return fail(`cannot convert: ${object}`);
    // editObjects converts a dialect object before any edit: an empty edit is the conversion.
    if (object.dialect) edits.push({ object, edit: () => {} });
  }
  if (edits.length === 0)
    return fail(`nothing to convert: these objects are already written in ${MSM_API_VERSION}`);
  return edit(draft, edits);
}

/** Removes an object's document (or its item of a `kind: List`). */
const removeObject: DocEdit = (doc, base) => {
  if (base.length === 0) doc.contents = null;
  else doc.deleteIn(base);
};

function deleteObject(draft: DraftDoc, model: DraftModel, key: string): CommandResult {
  const object = findObject(model, key);
  if (typeof object === 'string') return fail(`cannot delete: ${object}`);
  const r = edit(draft, [{ object, edit: removeObject }]);
  if (!r.ok) return r;
  const layout = { ...r.draft.layout };
  let moved = false;
  for (const id of Object.keys(layout)) {
    if (nodeObjectKey(id) === key) {
      delete layout[id];
      moved = true;
    }
  }
  return ok(moved ? { files: r.draft.files, layout } : r.draft);
}

/**
 * Deletes every mesh object (VirtualService, Route, Target) and their layout entries, keeping the
 * cluster objects (Services, Pods, EndpointSlices): a mesh to draw from scratch on the same cluster.
 */
function clearMesh(draft: DraftDoc, model: DraftModel): CommandResult {
  const kinds: readonly string[] = MESH_KINDS;
  // Items of one `kind: List` document go from the last, so the indices of the others hold.
  const gone = model.objects
    .filter((o) => kinds.includes(o.kind))
    .sort((a, b) => (b.item ?? -1) - (a.item ?? -1));
  if (gone.length === 0) return ok(draft);
  const r = edit(
    draft,
    gone.map((object) => ({
      object,
      edit: (doc, base) => {
        if (base.length === 0) doc.contents = null;
        else doc.deleteIn(base);
      },
    })),
  );
  if (!r.ok) return r;
  const keys = new Set(gone.map((o) => o.key));
  const layout = Object.fromEntries(
    Object.entries(r.draft.layout).filter(([id]) => !keys.has(nodeObjectKey(id))),
  );
  return ok({ files: r.draft.files, layout });
}

// ------------------------------------------------------------------ rename

const REF_KINDS = new Set<string>(['Route', 'Target', 'VirtualService', 'Service']);

/** Renames an object and rewrites every reference that resolves to it (and its layout entries). */
function renameObject(draft: DraftDoc, model: DraftModel, key: string, name: string): CommandResult {
  const object = findObject(model, key);
  if (typeof object === 'string') return fail(`cannot rename: ${object}`);
  const check = ObjectName.safeParse(name);
  if (!check.success)
    return fail(`cannot rename ${describeKey(key)} to "${name}": ${check.error.issues[0]!.message}`);
  if (name === object.name) return ok(draft);
  const newKey = `${object.kind}/${object.namespace}/${name}`;
  if (model.byKey.has(newKey))
    return fail(`cannot rename ${describeKey(key)}: ${describeKey(newKey)} already exists`);
  const exists = existsIn(model);
  const edits: { object: DraftObject; edit: DocEdit }[] = [];
  const ownEdits: [FieldPath, unknown][] = [[['metadata', 'name'], name]];
  for (const o of model.objects) {
    const changes: [FieldPath, unknown][] = o === object ? ownEdits : [];
    if (REF_KINDS.has(object.kind)) {
      for (const site of referenceSites(o.kind, o.value).refs) {
        const r = resolveReference(site.value, o.namespace, site.kinds, exists);
        if ('missing' in r) continue;
        if (r.kind === object.kind && r.namespace === object.namespace && r.name === object.name)
          changes.push([site.path, renamedReference(site.value, name, o.namespace)]);
      }
    }
    // EndpointSlices name their Service in a label.
    if (
      object.kind === 'Service' &&
      o.kind === 'EndpointSlice' &&
      o.namespace === object.namespace &&
      isRecord(o.value.metadata) &&
      isRecord(o.value.metadata.labels) &&
      o.value.metadata.labels['kubernetes.io/service-name'] === object.name
    )
      changes.push([['metadata', 'labels', 'kubernetes.io/service-name'], name]);
    if (changes.length > 0)
      edits.push({
        object: o,
        edit: (doc, base) => {
          for (const [p, v] of changes) {
            const err = setNode(doc, [...base, ...p], v);
            if (err) return err;
          }
        },
      });
  }
  const r = edit(draft, edits);
  if (!r.ok) return r;
  return ok({ files: r.draft.files, layout: renameLayout(draft.layout, object, name, exists) });
}

function renameLayout(
  layout: DraftDoc['layout'],
  object: DraftObject,
  name: string,
  exists: (k: RefKind, ns: string, n: string) => boolean,
): DraftDoc['layout'] {
  const from = new Map<string, string>([[object.key, `${object.kind}/${object.namespace}/${name}`]]);
  // Generated nodes carry the name of what they were generated from.
  if (object.kind === 'VirtualService' || object.kind === 'Service') {
    if (!exists('Target', object.namespace, object.name))
      from.set(`Target/${object.namespace}/${object.name}`, `Target/${object.namespace}/${name}`);
  }
  if (object.kind === 'Service' && !exists('VirtualService', object.namespace, object.name))
    from.set(
      `VirtualService/${object.namespace}/${object.name}`,
      `VirtualService/${object.namespace}/${name}`,
    );
  let changed = false;
  const out: DraftDoc['layout'] = {};
  for (const [id, pos] of Object.entries(layout)) {
    const owner = nodeObjectKey(id);
    const to = from.get(owner);
    if (to === undefined) out[id] = pos;
    else {
      out[to + id.slice(owner.length)] = pos;
      changed = true;
    }
  }
  return changed ? out : layout;
}

function existsIn(model: DraftModel): (kind: RefKind, namespace: string, name: string) => boolean {
  return (kind, namespace, name) => model.byKey.has(`${kind}/${namespace}/${name}`);
}

// ------------------------------------------------------------------ connect

/**
 * Creates a reference by connecting two graph nodes: Route -> Target sets `destination` (or appends
 * to the `ingress`/`egress` chain), VirtualService -> Route adds a rule, Target -> VirtualService or
 * Service sets `serviceName` (or, for a canary Target, adds a split entry).
 */
function connect(
  draft: DraftDoc,
  model: DraftModel,
  sourceId: string,
  targetId: string,
  chain?: 'ingress' | 'egress',
): CommandResult {
  const src = parseNodeId(sourceId);
  const dst = parseNodeId(targetId);
  if (!src || !dst) return fail(`cannot connect ${sourceId} to ${targetId}: not graph nodes`);
  const ownerKey = nodeObjectKey(sourceId);
  const owner = findObject(model, ownerKey);
  if (typeof owner === 'string')
    return fail(
      `cannot connect from ${describeKey(ownerKey)}: ${src.kind === 'Target' || src.kind === 'VirtualService' ? 'it is generated by Meshdeck, not written in the draft' : owner}`,
    );
  const dstKind = dst.kind as RefKind;
  const refTo = () => referenceTo(dstKind, dst.namespace, dst.name, owner.namespace);
  const srcKind = src.path === undefined ? src.kind : inlineKind(src.path);
  const at = src.path ? pathSegments(owner, src.path) : ['spec'];
  if (!at) return fail(`cannot connect from ${sourceId}: ${src.path} is not in ${describeKey(ownerKey)}`);
  const explain = `connect a Route to a Target (destination; Shift for ingress, Alt for egress), a VirtualService to a Route, or a Target to a VirtualService or Service`;

  if (srcKind === 'Route' && ['Target', 'VirtualService', 'Service'].includes(dst.kind)) {
    if (dst.path !== undefined)
      return fail(
        `cannot connect to ${targetId}: an inline Target cannot be referenced; give it a name first`,
      );
    const ref = refTo();
    if (chain) {
      const body = getAt(owner.value, at);
      const list = isRecord(body) && Array.isArray(body[chain]) ? body[chain] : [];
      return fieldEdit(draft, owner, [[[...at, chain, list.length], ref]]);
    }
    return fieldEdit(draft, owner, [[[...at, 'destination'], ref]]);
  }
  if (srcKind === 'VirtualService' && src.path === undefined) {
    const spec = isRecord(owner.value.spec) ? owner.value.spec : {};
    const n = Array.isArray(spec.rules) ? spec.rules.length : 0;
    if (dst.kind === 'Route' && dst.path === undefined)
      return fieldEdit(draft, owner, [[['spec', 'rules', n], { action: { route: refTo() } }]]);
    if (['Target', 'VirtualService', 'Service'].includes(dst.kind) && dst.path === undefined)
      return fieldEdit(draft, owner, [
        [['spec', 'rules', n], { action: { route: { destination: refTo() } } }],
      ]);
  }
  if (srcKind === 'Target' && (dst.kind === 'VirtualService' || dst.kind === 'Service') && !dst.path) {
    const spec = getAt(owner.value, at);
    const ref = refTo();
    if (isRecord(spec) && Array.isArray(spec.split)) {
      if (spec.split.some((e) => isRecord(e) && e.serviceName === ref))
        return fail(`${describeKey(ownerKey)} already splits to ${ref}`);
      return fieldEdit(draft, owner, [
        [[...at, 'split', spec.split.length], { serviceName: ref, weight: 0 }],
      ]);
    }
    return fieldEdit(draft, owner, [
      [[...at, 'endpoints'], undefined],
      [[...at, 'serviceName'], ref],
    ]);
  }
  return fail(`cannot connect ${src.kind} ${src.name} to ${dst.kind} ${dst.name}: ${explain}`);
}

function inlineKind(path: string): string {
  return /\.route$/.test(path) ? 'Route' : 'Target';
}

function pathSegments(owner: DraftObject, path: string): (string | number)[] | null {
  for (const site of referenceSites(owner.kind, owner.value).inlines) {
    if (formatFieldPath(site.path) === path) return site.path;
  }
  return null;
}

function getAt(value: unknown, path: FieldPath): unknown {
  let cur = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

function fieldEdit(draft: DraftDoc, object: DraftObject, changes: [FieldPath, unknown][]): CommandResult {
  return edit(draft, [
    {
      object,
      edit: (doc, base) => {
        for (const [p, v] of changes) {
          const err = setNode(doc, [...base, ...p], v);
          if (err) return err;
        }
      },
    },
  ]);
}

// ------------------------------------------------------------------ disconnect

/**
 * Removes the references graph edges stand for (the edge's `ref`): an ingress/egress chain entry, a
 * VirtualService rule, a split entry. A required reference (a route's destination, a Target's
 * serviceName, a selector) is never emptied silently: the whole command fails and says what to do.
 */
function disconnect(
  draft: DraftDoc,
  model: DraftModel,
  refs: readonly { key: string; path: FieldPath }[],
): CommandResult {
  const byObject = new Map<string, { object: DraftObject; paths: FieldPath[] }>();
  for (const ref of refs) {
    const object = findObject(model, ref.key);
    if (typeof object === 'string') return fail(`cannot remove the connection: ${object}`);
    const where = `${formatFieldPath(ref.path)} of ${describeKey(ref.key)}`;
    if (typeof getAt(object.value, ref.path) !== 'string' && !isRecord(getAt(object.value, ref.path)))
      return fail(`cannot remove the connection: ${where} is not there any more`);
    const entry = removablePath(ref.path);
    if (typeof entry === 'string') return fail(`cannot remove the connection: ${where} ${entry}`);
    const item = byObject.get(object.key) ?? { object, paths: [] };
    if (!item.paths.some((p) => formatFieldPath(p) === formatFieldPath(entry))) item.paths.push(entry);
    byObject.set(object.key, item);
  }
  return edit(
    draft,
    [...byObject.values()].map(({ object, paths }) => ({
      object,
      edit: (doc, base) => {
        // Later entries of a list go first, so the indices of the others hold.
        for (const p of [...paths].sort(comparePathsDescending)) {
          const err = setNode(doc, [...base, ...p], undefined);
          if (err) return err;
          const list = p.slice(0, -1);
          const last = list[list.length - 1];
          if (
            (last === 'ingress' || last === 'egress') &&
            (getAt(doc.toJS(), [...base, ...list]) as unknown[]).length === 0
          )
            doc.deleteIn([...base, ...list]);
        }
      },
    })),
  );
}

/** The list entry a reference at `path` lives in, or why it cannot be removed. */
function removablePath(path: FieldPath): FieldPath | string {
  const n = path.length;
  const last = path[n - 1];
  if (typeof last === 'number' && (path[n - 2] === 'ingress' || path[n - 2] === 'egress')) return path;
  if (n === 5 && path[0] === 'spec' && path[1] === 'rules' && path[3] === 'action' && last === 'route')
    return path.slice(0, 3);
  if (last === 'serviceName' && typeof path[n - 2] === 'number' && path[n - 3] === 'split')
    return path.slice(0, -1);
  if (last === 'destination')
    return 'is required: connect the route to another Target to replace it, or delete the route';
  if (last === 'serviceName' && path[n - 2] === 'selector')
    return 'is required: edit the selector in the form instead';
  if (last === 'serviceName')
    return 'is required (a Target needs serviceName or endpoints): connect another VirtualService or Service to replace it';
  return 'is not a reference that can be removed';
}

function comparePathsDescending(a: FieldPath, b: FieldPath): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    if (typeof a[i] === 'number' && typeof b[i] === 'number') return (b[i] as number) - (a[i] as number);
    return String(b[i]) < String(a[i]) ? -1 : 1;
  }
  return b.length - a.length;
}

// ------------------------------------------------------------------ files and layout

function setFileText(draft: DraftDoc, path: string, text: string): CommandResult {
  const check = DraftPath.safeParse(path);
  if (!check.success) return fail(`cannot write ${path}: ${check.error.issues[0]!.message}`);
  if (typeof text !== 'string') return fail(`cannot write ${path}: the text is not a string`);
  if (text.length > 5_000_000)
    return fail(`cannot write ${path}: ${text.length} characters is over the 5,000,000 limit`);
  if (draft.files[path] === text) return ok(draft);
  return ok(withFiles(draft, { [path]: text }));
}

function moveNodes(draft: DraftDoc, positions: Readonly<Record<string, NodePosition | null>>): CommandResult {
  const layout = { ...draft.layout };
  for (const [id, pos] of Object.entries(positions)) {
    if (pos === null) {
      delete layout[id];
      continue;
    }
    const p = NodePosition.safeParse(pos);
    if (!p.success) return fail(`cannot move ${id}: the position must be finite x and y numbers`);
    layout[id] = { x: Math.round(p.data.x), y: Math.round(p.data.y) };
  }
  return ok({ files: draft.files, layout });
}
