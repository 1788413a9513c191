/**
 * The objects of a set of manifest files with the exact text each occupies, and in-place file
 * edits (replace, remove, append an object) that leave every byte outside the edited objects as it
 * was. Shared by the object diff and the rebase of issue 6.
 */
import { Document, isSeq, LineCounter, type Node, parseAllDocuments } from 'yaml';
import { LAYOUT_FILE } from '../console/draftDoc';
import { applyValue, type DraftObject } from '../console/draftModel';
import { convertSeedDialect } from '../parse/seedDialect';
import { jsonEqual } from '../util/jsonEqual';

/** Relative path -> file text: a mesh directory, a commit's tree or a draft. */
export type FileMap = Readonly<Record<string, string>>;

/** One object as written in a file: where the draft model finds it, plus its raw value and text. */
export interface ManifestObject extends Omit<DraftObject, 'dialect'> {
  /** The object as written (before the dialect conversion). */
  raw: Record<string, unknown>;
  /** The object's own text: its document's content (comments around it excluded), or its List item. */
  text: string;
  /** The object as a stand-alone document (with its leading comments) to append to another file. */
  docText: string;
}

export interface ParsedFile {
  path: string;
  text: string;
  docs: Document.Parsed[];
  /** Start offset of each document's segment; a segment runs to the next start. */
  starts: number[];
  objects: ManifestObject[];
  /** Set when the file cannot be read as YAML: its objects are unknown. */
  error?: { line: number; message: string };
}

/** Files that hold manifests: YAML or JSON, not the layout file, no dot-folders. */
export function isManifestPath(path: string): boolean {
  if (!/\.(ya?ml|json)$/.test(path)) return false;
  return !path.split('/').some((s) => s.startsWith('.') || s === 'node_modules');
}

/** Whether a path is the console's layout file (node positions). */
export function isLayoutPath(path: string): boolean {
  return path === LAYOUT_FILE || path.endsWith(`/${LAYOUT_FILE}`);
}

/** Parses one file; non-manifest files have no documents and no objects. */
export function parseFile(path: string, text: string): ParsedFile {
  const out: ParsedFile = { path, text, docs: [], starts: [], objects: [] };
  if (!isManifestPath(path)) return out;
  const lc = new LineCounter();
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false });
    docs = Array.isArray(parsed) ? (parsed as Document.Parsed[]) : [];
  } catch (e) {
    out.error = { line: 1, message: (e as Error).message };
    return out;
  }
  out.docs = docs;
  out.starts = docs.map((d, i) => (i === 0 ? 0 : d.range[0]));
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    if (doc.errors.length > 0) {
      const err = doc.errors[0]!;
      out.error = { line: lc.linePos(err.pos[0]).line, message: err.message.split('\n')[0]! };
      out.objects = [];
      return out;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      out.error = { line: 1, message: (e as Error).message };
      out.objects = [];
      return out;
    }
    const contents = doc.contents;
    if (!contents?.range) continue;
    const segment = text.slice(out.starts[i], out.starts[i + 1] ?? text.length);
    if (isRecord(value) && value.kind === 'List' && Array.isArray(value.items)) {
      const items = doc.get('items', true);
      value.items.forEach((item, n) => {
        const node = isSeq(items) ? (items.items[n] as Node | undefined) : undefined;
        if (!node?.range || !isRecord(item)) return;
        const o = toObject(item, path, i, lc.linePos(node.range[0]).line, n);
        if (!o) return;
        o.text = text.slice(node.range[0], node.range[1]);
        o.docText = new Document(item).toString({ lineWidth: 0 });
        out.objects.push(o);
      });
      continue;
    }
    const o = toObject(value, path, i, lc.linePos(contents.range[0]).line);
    if (!o) continue;
    o.text = text.slice(contents.range[0], contents.range[2]);
    o.docText = standalone(segment);
    out.objects.push(o);
  }
  return out;
}

function toObject(
  value: unknown,
  file: string,
  doc: number,
  line: number,
  item?: number,
): ManifestObject | null {
  if (!isRecord(value)) return null;
  const { object } = convertSeedDialect(value);
  const kind = object.kind;
  const metadata = object.metadata;
  if (typeof kind !== 'string' || !isRecord(metadata) || typeof metadata.name !== 'string') return null;
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
  const o: ManifestObject = {
    key: `${kind}/${namespace}/${metadata.name}`,
    kind,
    namespace,
    name: metadata.name,
    file,
    doc,
    line,
    value: object,
    raw: value,
    text: '',
    docText: '',
  };
  if (item !== undefined) o.item = item;
  return o;
}

/** A document segment as the start of its own file: no `---` marker line, one final newline. */
function standalone(segment: string): string {
  const s = segment.replace(/^---[ \t]*(\r?\n|$)/, '').replace(/^---[ \t]+/, '');
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** Every file parsed, and the objects by key (a key may occur more than once: a duplicate). */
export interface ParsedFiles {
  files: Map<string, ParsedFile>;
  byKey: Map<string, ManifestObject[]>;
}

/**
 * Parsed files by path and text, shared between the sides of one merge: most files are the same on
 * all three, and YAML parsing is most of the cost. Entries are never mutated.
 */
export type ParseCache = Map<string, ParsedFile>;

/** Parses a file map (reusing `cache` entries for unchanged texts). */
export function parseFiles(files: FileMap, cache?: ParseCache): ParsedFiles {
  const parsed = new Map<string, ParsedFile>();
  const byKey = new Map<string, ManifestObject[]>();
  for (const path of Object.keys(files).sort()) {
    const text = files[path]!;
    const id = `${path}\0${text}`;
    let f = cache?.get(id);
    if (!f) {
      f = parseFile(path, text);
      cache?.set(id, f);
    }
    parsed.set(path, f);
    for (const o of f.objects) {
      const list = byKey.get(o.key);
      if (list) list.push(o);
      else byKey.set(o.key, [o]);
    }
  }
  return { files: parsed, byKey };
}

// ------------------------------------------------------------------ editing files in place

/** What an object should become: where it lives and its text. */
export interface ObjectPlacement {
  file: string;
  /** Content text for a whole-document object (as ManifestObject.text). */
  text: string;
  /** The object as written (for List items, which are edited through the Document API). */
  raw: Record<string, unknown>;
  /** The stand-alone document to append when the object is not in `file` yet. */
  docText: string;
  /** The object as the engine reads it. */
  value: unknown;
}

/** Edits of one file, applied together so document indices hold. */
export interface FileEdits {
  /** Document index -> new content text, for whole-document objects. */
  replace: Map<number, string>;
  /** List items to rewrite: document, item, the item's current and new value. */
  setItems: { doc: number; item: number; prev: unknown; next: Record<string, unknown> }[];
  removeDocs: Set<number>;
  removeItems: { doc: number; item: number }[];
  /** Stand-alone documents appended at the end of the file. */
  append: string[];
}

/** No edits yet. */
export function emptyEdits(): FileEdits {
  return { replace: new Map(), setItems: [], removeDocs: new Set(), removeItems: [], append: [] };
}

/** Queues the removal of an object from its file. */
export function queueRemove(edits: FileEdits, o: ManifestObject): void {
  if (o.item === undefined) edits.removeDocs.add(o.doc);
  else edits.removeItems.push({ doc: o.doc, item: o.item });
}

/** Queues rewriting an object where it is to `to` (already known to be in the same file). */
export function queueReplace(edits: FileEdits, o: ManifestObject, to: ObjectPlacement): void {
  if (o.item === undefined) {
    if (to.text !== o.text) edits.replace.set(o.doc, to.text);
  } else if (!jsonEqual(o.raw, to.raw)) {
    // Rewriting an unchanged item would restyle its whole List document.
    edits.setItems.push({ doc: o.doc, item: o.item, prev: o.raw, next: to.raw });
  }
}

/**
 * The file's new text with the edits applied (`undefined` text: the file does not exist yet), or
 * null when no document is left. Untouched documents keep every byte.
 */
export function applyFileEdits(file: ParsedFile | undefined, edits: FileEdits): string | null {
  let text = '';
  let remaining = 0;
  if (file) {
    const itemDocs = new Set([...edits.setItems, ...edits.removeItems].map((e) => e.doc));
    let firstKept = true;
    file.docs.forEach((doc, i) => {
      const start = file.starts[i]!;
      const end = file.starts[i + 1] ?? file.text.length;
      if (edits.removeDocs.has(i)) return;
      let segment = file.text.slice(start, end);
      if (itemDocs.has(i)) {
        for (const s of edits.setItems.filter((e) => e.doc === i))
          applyValue(doc, ['items', s.item], s.prev, s.next);
        const gone = edits.removeItems.filter((e) => e.doc === i).sort((a, b) => b.item - a.item);
        for (const r of gone) doc.deleteIn(['items', r.item]);
        let s = doc.toString({ lineWidth: 0 });
        if (i > 0 && !s.startsWith('---')) s = `---\n${s}`;
        segment = s;
      } else if (edits.replace.has(i) && doc.contents?.range) {
        const [a, , b] = doc.contents.range;
        const old = file.text.slice(a, b);
        let next = edits.replace.get(i)!;
        if (old.endsWith('\n') && !next.endsWith('\n')) next += '\n';
        else if (!old.endsWith('\n') && next.endsWith('\n')) next = next.slice(0, -1);
        segment = file.text.slice(start, a) + next + file.text.slice(b, end);
      }
      // The first document left after removing the file's first ones needs no leading marker.
      if (firstKept && i > 0 && edits.removeDocs.has(0)) segment = segment.replace(/^---[ \t]*\r?\n/, '');
      firstKept = false;
      if (doc.contents !== null) remaining++;
      text += segment;
    });
    // Comments-only tail after the last document (no document of its own) stays too.
    if (file.docs.length === 0) text = file.text;
  }
  for (const doc of edits.append) {
    if (text.trim() === '') text = doc;
    else text = `${text}${text.endsWith('\n') ? '' : '\n'}---\n${doc}`;
    remaining++;
  }
  return remaining === 0 ? null : text;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
