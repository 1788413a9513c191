import { isMap, isPair, isScalar, isSeq, type LineCounter, type Node } from 'yaml';
import { MSM_API_VERSION } from '../model/common';
import { type Diagnostic, type ObjectRef, normalizeDiagnostics, objectKey } from '../model/diagnostic';
import { formatFieldPath, parentPaths } from '../model/fieldPath';
import { EndpointSlice, Pod, Service } from '../model/kube';
import { Route, Target, VirtualService } from '../model/resources';
import { emptySnapshot, type ObjectSource, type Snapshot } from '../model/snapshot';
import { dialectDiagnostic, schemaDiagnostics } from './objectDiagnostics';
import { type ParsedYamlFile, parseYamlFile } from './parseYamlFile';
import { convertSeedDialect } from './seedDialect';

/** One input file: its path (for diagnostics) and its text. */
export interface ManifestFile {
  path: string;
  content: string;
}

const SCHEMAS = {
  VirtualService,
  Route,
  Target,
  Service,
  EndpointSlice,
  Pod,
} as const;
type KnownKind = keyof typeof SCHEMAS;

const SNAPSHOT_FIELD: Record<
  KnownKind,
  keyof Pick<Snapshot, 'virtualServices' | 'routes' | 'targets' | 'services' | 'endpointSlices' | 'pods'>
> = {
  VirtualService: 'virtualServices',
  Route: 'routes',
  Target: 'targets',
  Service: 'services',
  EndpointSlice: 'endpointSlices',
  Pod: 'pods',
};

interface Candidate {
  kind: KnownKind;
  object: Record<string, unknown>;
  source: ObjectSource;
}

/**
 * Reads multi-document YAML files into a Snapshot. Never throws: malformed YAML, unknown kinds,
 * schema violations and duplicates become diagnostics with the file and line, and the rest is kept.
 */
export function parseManifests(files: readonly ManifestFile[]): Snapshot {
  const diagnostics: Diagnostic[] = [];
  const candidates: Candidate[] = [];
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of sorted) {
    readFile(file, candidates, diagnostics);
  }
  return buildSnapshot(candidates, diagnostics);
}

function readFile(file: ManifestFile, out: Candidate[], diagnostics: Diagnostic[]): void {
  const fileRef: ObjectRef = { kind: 'File', name: file.path };
  let parsed: ParsedYamlFile;
  try {
    parsed = parseYamlFile(file.content);
  } catch (e) {
    diagnostics.push({
      severity: 'error',
      code: 'yaml-syntax',
      message: `cannot read YAML: ${(e as Error).message}`,
      object: fileRef,
      source: { file: file.path, line: 1 },
    });
    return;
  }
  const { docs, lineCounter } = parsed;
  for (const doc of docs) {
    const docLine = doc.contents?.range ? lineCounter.linePos(doc.contents.range[0]).line : 1;
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
        diagnostics.push({
          severity: 'error',
          code: 'yaml-syntax',
          message: `malformed YAML: ${err.message.split('\n')[0]}`,
          object: fileRef,
          source: { file: file.path, line: pos.line, col: pos.col },
        });
      }
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      diagnostics.push({
        severity: 'error',
        code: 'yaml-syntax',
        message: `cannot read YAML document: ${(e as Error).message}`,
        object: fileRef,
        source: { file: file.path, line: docLine },
      });
      continue;
    }
    if (value === null || value === undefined) continue;
    const fields = new Map<string, number>();
    if (doc.contents) collectFieldLines(doc.contents as Node, [], fields, lineCounter);
    if (isRecord(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, i) => {
        const prefix = `items[${i}]`;
        const sub = new Map<string, number>();
        for (const [k, l] of fields) {
          if (k === prefix) sub.set('', l);
          else if (k.startsWith(prefix + '.') || k.startsWith(prefix + '['))
            sub.set(k.slice(prefix.length).replace(/^\./, ''), l);
        }
        readObject(item, file.path, sub.get('') ?? docLine, sub, out, diagnostics);
      });
      continue;
    }
    readObject(value, file.path, docLine, fields, out, diagnostics);
  }
}

function readObject(
  value: unknown,
  file: string,
  line: number,
  fields: Map<string, number>,
  out: Candidate[],
  diagnostics: Diagnostic[],
): void {
  const at = (path: string): number => lineOf(fields, path) ?? line;
  if (!isRecord(value)) {
    diagnostics.push({
      severity: 'error',
      code: 'not-an-object',
      message: 'a manifest document must be a mapping with apiVersion, kind and metadata',
      object: { kind: 'File', name: file },
      source: { file, line },
    });
    return;
  }
  const { object: converted, conversions } = convertSeedDialect(value);
  for (const c of conversions) {
    if (c.moved) moveFieldLines(fields, c.moved.from, c.moved.to);
  }
  const kind = typeof converted.kind === 'string' ? converted.kind : undefined;
  const metadata = isRecord(converted.metadata) ? converted.metadata : undefined;
  const name = typeof metadata?.name === 'string' ? metadata.name : undefined;
  if (metadata && metadata.namespace === undefined && kind !== undefined) metadata.namespace = 'default';
  const namespace = typeof metadata?.namespace === 'string' ? metadata.namespace : undefined;
  const ref: ObjectRef = { kind: kind ?? 'Unknown', namespace, name: name ?? '(unnamed)' };
  for (const c of conversions)
    diagnostics.push(dialectDiagnostic(c, ref, { file, line: at(c.moved?.to ?? c.path) }));
  if (kind === undefined || typeof converted.apiVersion !== 'string') {
    diagnostics.push({
      severity: 'error',
      code: 'missing-kind',
      message: 'the document has no apiVersion or kind',
      object: kind ? ref : { kind: 'File', name: file },
      path: kind ? 'apiVersion' : 'kind',
      source: { file, line },
    });
    return;
  }
  if (!(kind in SCHEMAS)) {
    const ours = converted.apiVersion === MSM_API_VERSION || converted.apiVersion.startsWith('msm.l7mp.io/');
    diagnostics.push({
      severity: ours ? 'error' : 'info',
      code: 'unknown-kind',
      message: ours
        ? `unknown kind "${kind}" in ${converted.apiVersion}; the MSM API has VirtualService, Route and Target`
        : `${kind} is not used by Meshdeck (it reads VirtualService, Route, Target, Service, EndpointSlice and Pod); ignored`,
      object: ref,
      path: 'kind',
      source: { file, line: at('kind') },
    });
    return;
  }
  const knownKind = kind as KnownKind;
  const result = SCHEMAS[knownKind].safeParse(converted);
  if (!result.success) {
    diagnostics.push(
      ...schemaDiagnostics(result.error, converted, ref, (path) => ({ file, line: at(path) })),
    );
    out.push({ kind: knownKind, object: { __rejected: true, ...converted }, source: { file, line } });
    return;
  }
  out.push({
    kind: knownKind,
    object: result.data as Record<string, unknown>,
    source: {
      file,
      line,
      fields: Object.fromEntries([...fields].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    },
  });
}

function buildSnapshot(candidates: Candidate[], diagnostics: Diagnostic[]): Snapshot {
  const snapshot = emptySnapshot();
  const byKey = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const meta = c.object.metadata as { name?: unknown; namespace?: unknown } | undefined;
    const key = objectKey({
      kind: c.kind,
      namespace: String(meta?.namespace ?? ''),
      name: String(meta?.name ?? ''),
    });
    const list = byKey.get(key) ?? [];
    list.push(c);
    byKey.set(key, list);
  }
  for (const key of [...byKey.keys()].sort()) {
    const list = byKey.get(key)!;
    const first = list[0]!;
    const meta = first.object.metadata as { name: string; namespace: string };
    const ref: ObjectRef = { kind: first.kind, namespace: meta.namespace, name: meta.name };
    if (list.length > 1) {
      // Duplicates make the input ambiguous; keep neither so that no order decides which wins.
      const where = list.map((c) => `${c.source.file}:${c.source.line}`).join(', ');
      for (const c of list) {
        diagnostics.push({
          severity: 'error',
          code: 'duplicate-name',
          message: `${first.kind} ${meta.namespace}/${meta.name} is defined ${list.length} times (${where}); none of them is used`,
          object: ref,
          path: 'metadata.name',
          source: { file: c.source.file, line: c.source.line },
        });
      }
      snapshot.rejected.push(ref);
      continue;
    }
    if (first.object.__rejected) {
      snapshot.rejected.push(ref);
      continue;
    }
    snapshot.sources[key] = first.source;
    (snapshot[SNAPSHOT_FIELD[first.kind]] as unknown[]).push(first.object);
  }
  snapshot.diagnostics = normalizeDiagnostics(diagnostics);
  return snapshot;
}

function collectFieldLines(node: Node, path: PropertyKey[], out: Map<string, number>, lc: LineCounter): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const p = [...path, key];
      const keyNode = pair.key as Node | null;
      const start = keyNode?.range?.[0] ?? (pair.value as Node | null)?.range?.[0];
      if (start !== undefined) out.set(formatFieldPath(p), lc.linePos(start).line);
      if (pair.value) collectFieldLines(pair.value as Node, p, out, lc);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const p = [...path, i];
      const n = item as Node | null;
      if (n?.range) out.set(formatFieldPath(p), lc.linePos(n.range[0]).line);
      if (n) collectFieldLines(n, p, out, lc);
    });
  }
}

function moveFieldLines(fields: Map<string, number>, from: string, to: string): void {
  for (const [k, line] of [...fields]) {
    if (k === from || k.startsWith(from + '.') || k.startsWith(from + '[')) {
      fields.set(to + k.slice(from.length), line);
    }
  }
}

function lineOf(fields: Map<string, number>, path: string): number | undefined {
  for (const p of parentPaths(path)) {
    const l = fields.get(p);
    if (l !== undefined) return l;
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
