/**
 * The draft's objects and how one of them is rewritten in place. Files stay text: an edit parses the
 * document it targets with the `yaml` Document API (that document's text alone, cut at its `---`
 * lines), changes it and splices its text back, so comments, key order and the other documents of the
 * file are kept byte for byte.
 */
import { Document, isMap, isScalar, isSeq, type Node, parseAllDocuments, YAMLSeq } from 'yaml';
import { MSM_API_VERSION, SEED_API_VERSION } from '../model/common';
import { formatFieldPath } from '../model/fieldPath';
import { type ParsedYamlFile, parseYamlFile } from '../parse/parseYamlFile';
import {
  DocumentMemo,
  documentStarts,
  hasDirectives,
  type YamlSegment,
  yamlSegments,
} from '../parse/yamlDocuments';
import { convertSeedDialect } from '../parse/seedDialect';
import { jsonEqual } from '../util/jsonEqual';
import type { DraftDoc } from './draftDoc';
import type { FieldPath } from './fieldPath';

/** One object of the draft and where it is written. */
export interface DraftObject {
  /** `Kind/namespace/name` (namespace defaults to `default`, as the engine reads it). */
  key: string;
  kind: string;
  namespace: string;
  name: string;
  file: string;
  /** Index of its YAML document in the file. */
  doc: number;
  /** Index in `items` when the document is a `kind: List`. */
  item?: number;
  /** 1-based line where the object starts. */
  line: number;
  /** The object as the engine reads it (seed dialect converted). */
  value: Record<string, unknown>;
  /** Written in the seed's `l7mp.io/MSM/v1` dialect: the first edit rewrites it in canonical form. */
  dialect: boolean;
}

/** A YAML problem that keeps a file's objects from being edited through the graph or forms. */
export interface FileProblem {
  file: string;
  line: number;
  message: string;
}

export interface DraftModel {
  objects: DraftObject[];
  byKey: Map<string, DraftObject[]>;
  problems: FileProblem[];
}

/** One file's part of the model, for the text it was read from. */
export interface ParsedFileObjects {
  text: string;
  objects: DraftObject[];
  problems: FileProblem[];
}

/**
 * A file read document by document (lib/parse/yamlDocuments.ts), as the compile worker hands it on:
 * only the documents, by their text, that it has not handed on before. An edit of a 500-object file
 * then sends one document's objects, not the file's 500 (about 7 ms to clone in Node).
 */
export interface ParsedFileDocuments {
  text: string;
  documents: Record<string, { objects: DraftObject[]; problems: FileProblem[] }>;
}

/** What takeParsedFiles hands on for a file. */
export type ParsedFile = ParsedFileObjects | ParsedFileDocuments;

// Parsing is memoised per path while the text is unchanged: an edit touches one file of hundreds.
const fileCache = new Map<string, ParsedFileObjects>();
const FILE_CACHE_LIMIT = 5000;
// Paths read here since takeParsedFiles last ran: the compile worker hands them to the main thread.
const freshPaths = new Set<string>();

/** The draft's objects with their file, document index and line; YAML problems per file. */
export function parseDraft(draft: DraftDoc): DraftModel {
  const objects: DraftObject[] = [];
  const problems: FileProblem[] = [];
  for (const path of Object.keys(draft.files).sort()) {
    const parsed = fileObjects(path, draft.files[path]!);
    objects.push(...parsed.objects);
    problems.push(...parsed.problems);
  }
  const byKey = new Map<string, DraftObject[]>();
  for (const o of objects) {
    const list = byKey.get(o.key);
    if (list) list.push(o);
    else byKey.set(o.key, [o]);
  }
  return { objects, byKey, problems };
}

/** One file's part of the model (parseDraft's per-file memo: read once while its text stays the same). */
export function fileObjects(path: string, text: string): ParsedFileObjects {
  let parsed = fileCache.get(path);
  if (!parsed || parsed.text !== text) {
    parsed = readFileObjects(path, text);
    remember(path, parsed);
    freshPaths.add(path);
  }
  return parsed;
}

/**
 * The per-file results parseDraft computed since the last call, by path, each once: the compile worker
 * sends them with its result so the main thread's parseDraft of the same draft reads no YAML.
 */
export function takeParsedFiles(): Record<string, ParsedFile> {
  const out: Record<string, ParsedFile> = {};
  if (handedOn.size > HANDED_ON_LIMIT) handedOn.clear();
  for (const path of freshPaths) {
    const parsed = fileCache.get(path);
    if (!parsed) continue;
    const segments = segmentsOf.get(parsed);
    if (!segments) {
      out[path] = parsed;
      continue;
    }
    const documents: ParsedFileDocuments['documents'] = {};
    for (const text of segments) {
      const key = `${path}\0${text}`;
      const entry = documentMemo.has(path, text) ? documentMemo.get(path, text) : null;
      if (!entry || handedOn.has(key)) continue;
      documents[text] = { objects: entry.objects, problems: entry.problems };
      handedOn.add(key);
    }
    out[path] = { text: parsed.text, documents };
  }
  freshPaths.clear();
  return out;
}

/**
 * Takes another thread's results (takeParsedFiles) into the memos: a file's, for its text only; a
 * file's documents, for parseDraft to put together (with those it was given before).
 */
export function seedParsedFiles(files: Readonly<Record<string, ParsedFile>>): void {
  for (const [path, parsed] of Object.entries(files)) {
    if (!('documents' in parsed)) {
      remember(path, parsed);
      continue;
    }
    for (const [text, read] of Object.entries(parsed.documents))
      documentMemo.set(path, text, { objects: read.objects, problems: read.problems });
  }
}

function remember(path: string, parsed: ParsedFileObjects): void {
  if (fileCache.size >= FILE_CACHE_LIMIT && !fileCache.has(path)) {
    fileCache.clear();
    freshPaths.clear();
  }
  fileCache.set(path, parsed);
}

/** One document's objects and problems read alone (doc 0, lines from its own start), and its last placing. */
interface SegmentObjects {
  objects: DraftObject[];
  problems: FileProblem[];
  placed?: { doc: number; line: number; objects: DraftObject[]; problems: FileProblem[] };
}
const documentMemo = new DocumentMemo<SegmentObjects>((file, text) => {
  const { objects, problems } = readWholeFile(file, text);
  return { objects, problems };
});
const HANDED_ON_LIMIT = 20_000;
// A file's result put together from its documents, and their texts (what takeParsedFiles hands on).
const segmentsOf = new WeakMap<ParsedFileObjects, string[]>();
// The documents (by file and text) takeParsedFiles has handed on: the receiver keeps them.
const handedOn = new Set<string>();

function readFileObjects(file: string, text: string): ParsedFileObjects {
  const segments = yamlSegments(text);
  const joined = segments && readSegments(file, segments);
  if (!joined) return readWholeFile(file, text);
  const parsed = { text, ...joined };
  segmentsOf.set(
    parsed,
    segments.map((s) => s.text),
  );
  return parsed;
}

/**
 * A file's objects from its documents read one by one, each remembered by its text: a 500-object file
 * whose one document changed reads that document (the rest were toJS'd once). Undefined where a
 * document does not read alone as exactly one clean document: the caller reads the file whole.
 */
function readSegments(
  file: string,
  segments: readonly YamlSegment[],
): { objects: DraftObject[]; problems: FileProblem[] } | undefined {
  const objects: DraftObject[] = [];
  const problems: FileProblem[] = [];
  for (let doc = 0; doc < segments.length; doc++) {
    const { text, line } = segments[doc]!;
    const entry = documentMemo.get(file, text);
    if (entry === null) return undefined;
    if (entry.placed?.doc !== doc || entry.placed.line !== line) {
      const by = line - 1;
      entry.placed = {
        doc,
        line,
        objects: entry.objects.map((o) => ({ ...o, doc, line: o.line + by })),
        problems: entry.problems.map((p) => ({ ...p, line: p.line + by })),
      };
    }
    objects.push(...entry.placed.objects);
    problems.push(...entry.placed.problems);
  }
  return { objects, problems };
}

/**
 * Reads the documents of a file of several into the per-document memo ahead of an edit (the compile
 * worker, in idle time: a file the server read whole, or that was first read whole here, has none
 * yet, and its first edit read all 500 documents of a one-file mesh, 0.3 s). Stops when `stop()` says
 * so between two documents; true when every document is in.
 */
export function readDocumentsAhead(file: string, text: string, stop: () => boolean): boolean {
  return documentMemo.readAhead(file, text, stop);
}

function readWholeFile(file: string, text: string): ParsedFileObjects {
  const objects: DraftObject[] = [];
  const problems: FileProblem[] = [];
  let parsed: ParsedYamlFile;
  try {
    // Shared with parseManifests (the same compile reads the file again): read the documents only.
    parsed = parseYamlFile(text);
  } catch (e) {
    return { text, objects, problems: [{ file, line: 1, message: (e as Error).message }] };
  }
  const { docs, lineCounter: lc } = parsed;
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      const err = doc.errors[0]!;
      problems.push({ file, line: lc.linePos(err.pos[0]).line, message: err.message.split('\n')[0]! });
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      problems.push({ file, line: 1, message: (e as Error).message });
      return;
    }
    const line = doc.contents?.range ? lc.linePos(doc.contents.range[0]).line : 1;
    if (isRecord(value) && value.kind === 'List' && Array.isArray(value.items)) {
      const items = doc.get('items', true);
      value.items.forEach((item, i) => {
        const node = isSeq(items) ? (items.items[i] as Node | undefined) : undefined;
        const itemLine = node?.range ? lc.linePos(node.range[0]).line : line;
        const o = toObject(item, file, index, itemLine, i);
        if (o) objects.push(o);
      });
      return;
    }
    const o = toObject(value, file, index, line);
    if (o) objects.push(o);
  });
  return { text, objects, problems };
}

function toObject(
  value: unknown,
  file: string,
  doc: number,
  line: number,
  item?: number,
): DraftObject | null {
  if (!isRecord(value)) return null;
  const { object, conversions } = convertSeedDialect(value);
  const kind = object.kind;
  const metadata = object.metadata;
  if (typeof kind !== 'string' || !isRecord(metadata) || typeof metadata.name !== 'string') return null;
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
  const o: DraftObject = {
    key: `${kind}/${namespace}/${metadata.name}`,
    kind,
    namespace,
    name: metadata.name,
    file,
    doc,
    line,
    value: object,
    dialect: conversions.length > 0,
  };
  if (item !== undefined) o.item = item;
  return o;
}

/** Finds the one object with this key, or says why there is none to edit. */
export function findObject(model: DraftModel, key: string): DraftObject | string {
  const list = model.byKey.get(key);
  if (!list || list.length === 0) return `${describeKey(key)} is not in the draft`;
  if (list.length > 1) {
    const where = list.map((o) => `${o.file}:${o.line}`).join(', ');
    return `${describeKey(key)} is defined ${list.length} times (${where}); remove the duplicates in the YAML tab first`;
  }
  return list[0]!;
}

/** `VirtualService default/gateway` for messages. */
export function describeKey(key: string): string {
  const [kind, ns, ...name] = key.split('/');
  return `${kind} ${ns}/${name.join('/')}`;
}

// ------------------------------------------------------------------ editing documents in place

/** One edit of one object's document; returns an error message to abort the whole command. */
export type DocEdit = (doc: Document.Parsed, base: FieldPath) => string | void;

/**
 * A file opened for editing: its documents' texts (`starts`), each parsed on demand, alone, as an edit
 * needs it. Parsing the whole file for an edit of one object cost 130 ms on the main thread for a
 * 500-object mesh in one file (issue 5, P8); a document parsed alone costs what its own text does.
 */
interface EditableFile {
  file: string;
  text: string;
  /** Where each document's text starts: the file's start, then each `---` line. */
  starts: number[];
  /** The 1-based line each document's text starts on. */
  lines: number[];
  /** Documents parsed so far, by index. */
  docs: Map<number, Document.Parsed>;
  /** The file's documents from one parse of the whole file, once a document read alone did not match. */
  whole?: Document.Parsed[];
}

function openFile(file: string, text: string): EditableFile | string {
  // Directives (`%YAML`, `%TAG`) come before a document's `---`: the text cannot be cut there.
  if (hasDirectives(text)) {
    const whole = parseWholeFile(file, text);
    return typeof whole === 'string' ? whole : { file, text, ...whole, docs: new Map(whole.whole.entries()) };
  }
  return { file, text, ...documentStarts(text), docs: new Map() };
}

function parseWholeFile(
  file: string,
  text: string,
): { whole: Document.Parsed[]; starts: number[]; lines: number[] } | string {
  let whole: Document.Parsed[];
  try {
    // Its own parse, not parseYamlFile's shared one: the edits change these documents.
    whole = toDocList(parseAllDocuments(text, { prettyErrors: false }));
  } catch (e) {
    return `${file} cannot be read as YAML: ${(e as Error).message}`;
  }
  const starts = whole.map((d, i) => (i === 0 ? 0 : d.range[0]));
  // Lines are only compared for documents read alone; a whole-file parse is not checked against them.
  return { whole, starts, lines: starts.map(() => 0) };
}

/**
 * Parses the documents of `objects` for editing: each alone where it starts on the object's own line
 * (the model's), else, if any one does not, every document from one parse of the whole file (the old
 * way, always right). A string says why the file cannot be edited.
 */
function openDocs(f: EditableFile, objects: readonly DraftObject[]): string | void {
  if (f.whole) return;
  for (const object of objects) {
    const i = object.doc;
    if (f.docs.has(i)) continue;
    const doc = i < f.starts.length ? parseAlone(f, i) : undefined;
    if (doc && startLine(doc, segmentOf(f, i), object) + f.lines[i]! - 1 === object.line) {
      f.docs.set(i, doc);
      continue;
    }
    const whole = parseWholeFile(f.file, f.text);
    if (typeof whole === 'string') return whole;
    Object.assign(f, { whole: whole.whole, starts: whole.starts, lines: whole.lines });
    f.docs = new Map(whole.whole.entries());
    return;
  }
}

function segmentOf(f: EditableFile, i: number): string {
  return f.text.slice(f.starts[i], f.starts[i + 1] ?? f.text.length);
}

/** Document `i` read alone from its own text; undefined where that text is not one clean document. */
function parseAlone(f: EditableFile, i: number): Document.Parsed | undefined {
  try {
    const alone = toDocList(parseAllDocuments(segmentOf(f, i), { prettyErrors: false }));
    return alone.length === 1 && alone[0]!.errors.length === 0 ? alone[0] : undefined;
  } catch {
    return undefined;
  }
}

/** The 1-based line, within `text`, the object starts on in `doc` (its item's, in a List). */
function startLine(doc: Document.Parsed, text: string, object: DraftObject): number {
  const items = object.item === undefined ? undefined : doc.get('items', true);
  const node =
    object.item === undefined ? doc.contents : isSeq(items) ? (items.items[object.item] as Node) : null;
  const at = node?.range?.[0];
  if (at === undefined) return -1;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * Applies edits to objects' documents, grouped by file (each document parsed once), and returns the new
 * file texts. Seed-dialect objects are rewritten in canonical form first, so that an edit made on
 * the canonical object lands where the engine reads it.
 */
export function editObjects(
  draft: DraftDoc,
  edits: readonly { object: DraftObject; edit: DocEdit }[],
): { files: Record<string, string | null> } | string {
  const byFile = new Map<string, { object: DraftObject; edit: DocEdit }[]>();
  for (const e of edits) {
    const list = byFile.get(e.object.file) ?? [];
    list.push(e);
    byFile.set(e.object.file, list);
  }
  const out: Record<string, string | null> = {};
  for (const [file, list] of byFile) {
    const text = draft.files[file];
    if (text === undefined) return `${file} is not in the draft`;
    const f = openFile(file, text);
    if (typeof f === 'string') return f;
    const opened = openDocs(
      f,
      list.map((e) => e.object),
    );
    if (typeof opened === 'string') return opened;
    const changed = new Set<number>();
    const deleted = new Set<number>();
    for (const { object, edit } of list) {
      const doc = f.docs.get(object.doc);
      if (!doc) return `${describeKey(object.key)}: document ${object.doc} of ${file} is gone`;
      if (doc.errors.length > 0)
        return `${file} has a YAML error in the document of ${describeKey(object.key)} (${doc.errors[0]!.message.split('\n')[0]}); fix it in the YAML tab first`;
      const base: FieldPath = object.item === undefined ? [] : ['items', object.item];
      // A no-op edit must not re-serialise the document (that would restyle it).
      const before = object.dialect || changed.has(object.doc) ? null : doc.toString({ lineWidth: 0 });
      if (object.dialect) canonicalizeDialect(doc, base);
      const err = edit(doc, base);
      if (typeof err === 'string') return `${describeKey(object.key)}: ${err}`;
      if (doc.contents === null) deleted.add(object.doc);
      else if (before === null || doc.toString({ lineWidth: 0 }) !== before) changed.add(object.doc);
    }
    if (changed.size > 0 || deleted.size > 0) out[file] = spliceDocs(f, changed, deleted);
  }
  return { files: out };
}

/** The file text with changed documents re-serialised and deleted ones cut; null if nothing is left. */
function spliceDocs(f: EditableFile, changed: Set<number>, deleted: Set<number>): string | null {
  let text = '';
  f.starts.forEach((start, i) => {
    if (deleted.has(i)) return;
    const segment = f.text.slice(start, f.starts[i + 1] ?? f.text.length);
    text += changed.has(i) ? serializeDoc(f.docs.get(i)!, segment, i === 0) : segment;
  });
  // Nothing but markers, comments and blank lines: no document has contents any more.
  if (/^(?:[ \t]*(?:(?:---|\.\.\.)(?=[ \t\r\n]|$))?[ \t]*(?:#[^\n]*)?\r?(?:\n|$))*$/.test(text)) return null;
  // A leading separator left by deleting the first document is valid YAML but noise.
  return text.replace(/^---\s*\n/, '');
}

function serializeDoc(doc: Document.Parsed, original: string, first: boolean): string {
  // Keep the file's sequence style: `key:\n- item` (not indented) when the original wrote it so.
  const indentSeq = !/^(\s*)[^\s#-][^\n]*:\s*\n\1- /m.test(original);
  let s = doc.toString({ lineWidth: 0, indentSeq });
  if (!first && !s.startsWith('---')) s = `---\n${s}`;
  return s;
}

/** Rewrites a seed-dialect object in canonical form inside its document, keeping comments. */
function canonicalizeDialect(doc: Document.Parsed, base: FieldPath): void {
  const at = (...p: (string | number)[]) => [...base, ...p];
  if (doc.getIn(at('apiVersion')) === SEED_API_VERSION) doc.setIn(at('apiVersion'), MSM_API_VERSION);
  if (doc.getIn(at('apiVersion')) !== MSM_API_VERSION) return;
  const selector = doc.getIn(at('metadata', 'selector'), true);
  if (selector !== undefined) {
    if (!doc.hasIn(at('spec', 'selector'))) doc.setIn(at('spec', 'selector'), selector);
    doc.deleteIn(at('metadata', 'selector'));
  }
  const rules = doc.getIn(at('spec', 'rules'), true);
  if (doc.getIn(at('kind')) === 'VirtualService' && isMap(rules)) {
    const seq = new YAMLSeq(doc.schema);
    seq.items.push(rules);
    doc.setIn(at('spec', 'rules'), seq);
  }
  fixPortStrings(doc.getIn(at('spec'), true) as Node | undefined);
}

function fixPortStrings(node: Node | undefined | null): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      const v = pair.value as Node | null;
      if (key === 'port' && isScalar(v) && typeof v.value === 'string') {
        const m = /^\s*(\d{1,5})\s*,?\s*$/.exec(v.value);
        if (m) {
          v.value = Number(m[1]);
          v.type = 'PLAIN';
        }
      } else fixPortStrings(v);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) fixPortStrings(item as Node);
  }
}

/** Sets (or with `undefined`, deletes) one field, keeping the scalar's comment and quoting. */
export function setNode(doc: Document.Parsed, path: FieldPath, value: unknown): string | void {
  if (path.length === 0) {
    if (value === undefined) return 'cannot delete the whole object with a field edit';
    doc.contents = doc.createNode(value) as typeof doc.contents;
    return;
  }
  const where = formatFieldPath(path);
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1]!;
  const parent = parentPath.length === 0 ? doc.contents : doc.getIn(parentPath, true);
  if (value === undefined) {
    if (parent === undefined || parent === null) return;
    if (!isMap(parent) && !isSeq(parent)) return;
    if (doc.hasIn(path)) doc.deleteIn(path);
    return;
  }
  if (parent !== undefined && parent !== null && !isMap(parent) && !isSeq(parent)) {
    return `cannot set ${where}: ${formatFieldPath(parentPath) || 'the document'} is a single value, not a mapping or list`;
  }
  if (isSeq(parent) && (typeof last !== 'number' || last > parent.items.length)) {
    return `cannot set ${where}: index out of range (the list has ${parent.items.length} items)`;
  }
  const existing = doc.getIn(path, true);
  if (isScalar(existing) && isPrimitive(value) && typeof existing.value === typeof value) {
    existing.value = value;
    return;
  }
  try {
    doc.setIn(path, doc.createNode(value));
  } catch (e) {
    return `cannot set ${where}: ${(e as Error).message}`;
  }
}

/**
 * Rewrites the object at `base` to `next` by touching only what differs, so the comments and
 * styles of unchanged fields survive a whole-object replace.
 */
export function applyValue(
  doc: Document.Parsed,
  path: FieldPath,
  prev: unknown,
  next: unknown,
): string | void {
  if (jsonEqual(prev, next)) return;
  const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
  if (isRecord(prev) && isRecord(next) && isMap(node)) {
    for (const k of Object.keys(prev)) if (!(k in next)) doc.deleteIn([...path, k]);
    for (const [k, v] of Object.entries(next)) {
      const err = k in prev ? applyValue(doc, [...path, k], prev[k], v) : setNode(doc, [...path, k], v);
      if (err) return err;
    }
    return;
  }
  if (Array.isArray(prev) && Array.isArray(next) && prev.length === next.length && isSeq(node)) {
    for (let i = 0; i < next.length; i++) {
      const err = applyValue(doc, [...path, i], prev[i], next[i]);
      if (err) return err;
    }
    return;
  }
  return setNode(doc, path, next);
}

/** The object's current value inside its document (after any dialect rewrite). */
export function valueAt(doc: Document.Parsed, base: FieldPath): unknown {
  const node = base.length === 0 ? doc.contents : doc.getIn(base, true);
  return node && typeof (node as Node).toJSON === 'function' ? (node as Node).toJSON() : node;
}

/** Serialises a new object as a YAML document. */
export function stringifyObject(value: unknown): string {
  return new Document(value).toString({ lineWidth: 0 });
}

function toDocList(docs: ReturnType<typeof parseAllDocuments>): Document.Parsed[] {
  return Array.isArray(docs) ? (docs as Document.Parsed[]) : [];
}

function isPrimitive(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
