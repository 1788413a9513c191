/**
 * Kubernetes objects, as an API server or an informer hands them out, to the Snapshot the engine reads:
 * the same shape `parseManifests` gives for a mesh directory, with each object's source named after the
 * object itself (`default/gateway-vsvc (VirtualService)`) instead of a file and line. Pure: no I/O.
 */
import type { z } from 'zod';
import { MSM_API_VERSION } from '../model/common';
import { type Diagnostic, type ObjectRef, normalizeDiagnostics, objectKey } from '../model/diagnostic';
import { EndpointSlice, Pod, Service } from '../model/kube';
import { Route, Target, VirtualService } from '../model/resources';
import { emptySnapshot, type Snapshot } from '../model/snapshot';
import { dialectDiagnostic, schemaDiagnostics } from '../parse/objectDiagnostics';
import { convertSeedDialect } from '../parse/seedDialect';

/** The kinds a Kubernetes source watches. */
export const KUBE_SOURCE_KINDS = [
  'VirtualService',
  'Route',
  'Target',
  'Service',
  'EndpointSlice',
  'Pod',
] as const;
export type KubeSourceKind = (typeof KUBE_SOURCE_KINDS)[number];

/** The mesh kinds: custom resources of `msm.l7mp.io/v1`, with a status subresource. */
export const MESH_CRD_KINDS = ['VirtualService', 'Route', 'Target'] as const;
export type MeshCrdKind = (typeof MESH_CRD_KINDS)[number];

/** The plural resource name of each mesh kind (`/apis/msm.l7mp.io/v1/<plural>`). */
export const MESH_CRD_PLURALS: Record<MeshCrdKind, string> = {
  VirtualService: 'virtualservices',
  Route: 'routes',
  Target: 'targets',
};

/** A plain JSON object with only the fields the engine reads (see {@link leanKubeObject}). */
export type LeanKubeObject = Record<string, unknown> & {
  metadata: { name: string; namespace: string; generation?: number };
};

/** The lean objects of every kind, as a source keeps them. */
export type KubeObjects = Record<KubeSourceKind, readonly LeanKubeObject[]>;

/** A mesh object as the controller writes status for it: what it is and which generation was read. */
export interface MeshObjectInfo {
  ref: ObjectRef & { kind: MeshCrdKind; namespace: string };
  generation?: number;
  /** It failed validation: the engine never saw it. */
  rejected: boolean;
}

/** A snapshot built from Kubernetes objects, plus the mesh objects it holds (valid or not). */
export interface KubeSnapshot {
  snapshot: Snapshot;
  /** By `Kind/namespace/name`. */
  meshObjects: Record<string, MeshObjectInfo>;
}

const API_VERSION: Record<KubeSourceKind, string> = {
  VirtualService: MSM_API_VERSION,
  Route: MSM_API_VERSION,
  Target: MSM_API_VERSION,
  Service: 'v1',
  EndpointSlice: 'discovery.k8s.io/v1',
  Pod: 'v1',
};

const SCHEMAS: Record<KubeSourceKind, z.ZodType> = {
  VirtualService,
  Route,
  Target,
  Service,
  EndpointSlice,
  Pod,
};

const SNAPSHOT_FIELD = {
  VirtualService: 'virtualServices',
  Route: 'routes',
  Target: 'targets',
  Service: 'services',
  EndpointSlice: 'endpointSlices',
  Pod: 'pods',
} as const satisfies Record<KubeSourceKind, keyof Snapshot>;

/** Annotations nobody reads that can be as large as the object (kubectl apply's copy of it). */
const DROPPED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);

/** How diagnostics name an object's source: `namespace/name (Kind)`. */
export function kubeSourceName(kind: string, namespace: string, name: string): string {
  return `${namespace}/${name} (${kind})`;
}

/**
 * The fields of a Kubernetes object that the engine reads, as plain JSON, with apiVersion and kind set
 * (list responses leave them out of their items). Accepts both the client library's typed models and
 * raw JSON (an informer mixes them: typed from its list, raw from its watch). Status, managed fields,
 * timestamps and resource versions are dropped, so an update that changes none of what the engine
 * reads gives an equal object. Undefined for something that is not an object with a name.
 */
export function leanKubeObject(kind: KubeSourceKind, raw: unknown): LeanKubeObject | undefined {
  if (!isRecord(raw) || !isRecord(raw.metadata) || typeof raw.metadata.name !== 'string') return undefined;
  const meta = raw.metadata;
  const metadata: LeanKubeObject['metadata'] & Record<string, unknown> = {
    name: meta.name as string,
    namespace: typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'default',
  };
  if (isRecord(meta.labels) && Object.keys(meta.labels).length > 0) metadata.labels = { ...meta.labels };
  if (isRecord(meta.annotations)) {
    const kept = Object.entries(meta.annotations).filter(([k]) => !DROPPED_ANNOTATIONS.has(k));
    if (kept.length > 0) metadata.annotations = Object.fromEntries(kept);
  }
  const base = { apiVersion: API_VERSION[kind], kind, metadata };
  switch (kind) {
    case 'VirtualService':
    case 'Route':
    case 'Target': {
      if (typeof meta.generation === 'number') metadata.generation = meta.generation;
      // The seed's dialect may still arrive through a CRD that preserves unknown fields: keep what the
      // user wrote (bar status), convertSeedDialect and the schema judge it.
      const out: Record<string, unknown> = { ...base, apiVersion: raw.apiVersion ?? MSM_API_VERSION };
      for (const [k, v] of Object.entries(raw)) {
        if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata' && k !== 'status') out[k] = plain(v);
      }
      return out as LeanKubeObject;
    }
    case 'Service': {
      const spec = isRecord(raw.spec) ? raw.spec : {};
      const outSpec: Record<string, unknown> = {};
      if (isRecord(spec.selector)) outSpec.selector = { ...spec.selector };
      if (Array.isArray(spec.ports)) {
        outSpec.ports = spec.ports
          .filter(isRecord)
          .map((p) => pick(p, ['name', 'protocol', 'appProtocol', 'port', 'targetPort']));
      }
      if (typeof spec.clusterIP === 'string') outSpec.clusterIP = spec.clusterIP;
      return { ...base, spec: outSpec };
    }
    case 'EndpointSlice': {
      const out: Record<string, unknown> = { ...base };
      if (typeof raw.addressType === 'string') out.addressType = raw.addressType;
      if (Array.isArray(raw.endpoints)) {
        out.endpoints = raw.endpoints.filter(isRecord).map((e) => {
          const ep: Record<string, unknown> = {
            addresses: Array.isArray(e.addresses) ? [...e.addresses] : [],
          };
          if (isRecord(e.conditions)) ep.conditions = pick(e.conditions, ['ready', 'serving', 'terminating']);
          if (isRecord(e.targetRef)) ep.targetRef = pick(e.targetRef, ['kind', 'name', 'namespace']);
          return ep;
        });
      }
      if (Array.isArray(raw.ports)) {
        out.ports = raw.ports
          .filter(isRecord)
          .map((p) => pick(p, ['name', 'port', 'protocol', 'appProtocol']));
      }
      return out as LeanKubeObject;
    }
    case 'Pod': {
      const status = isRecord(raw.status) ? pick(raw.status, ['podIP', 'phase']) : undefined;
      return (status && Object.keys(status).length > 0 ? { ...base, status } : base) as LeanKubeObject;
    }
  }
}

/**
 * The Snapshot of a set of lean Kubernetes objects (see {@link leanKubeObject}). Never throws: an object
 * that fails the schema becomes `schema` diagnostics (with the field path) and a `rejected` entry, as in
 * `parseManifests`; seed-dialect spellings are converted with a warning each. Order-independent.
 */
export function snapshotFromKube(objects: Partial<KubeObjects>): KubeSnapshot {
  const snapshot = emptySnapshot();
  const diagnostics: Diagnostic[] = [];
  const meshObjects: Record<string, MeshObjectInfo> = {};
  for (const kind of KUBE_SOURCE_KINDS) {
    const list = (objects[kind] ?? [])
      .map((lean) => ({ lean, sortKey: `${lean.metadata.namespace}/${lean.metadata.name}` }))
      .sort((a, b) => cmp(a.sortKey, b.sortKey));
    const out = snapshot[SNAPSHOT_FIELD[kind]] as unknown[];
    for (const { lean } of list) {
      const checked = checkObject(kind, lean);
      diagnostics.push(...checked.diagnostics);
      if (checked.meshObject) meshObjects[checked.key] = checked.meshObject;
      if (checked.data === undefined) {
        snapshot.rejected.push(checked.ref);
        continue;
      }
      snapshot.sources[checked.key] = checked.source;
      out.push(checked.data);
    }
  }
  snapshot.diagnostics = normalizeDiagnostics(diagnostics);
  return { snapshot, meshObjects };
}

/** One object after the dialect conversion and the schema check: what the snapshot takes from it. */
interface CheckedObject {
  ref: ObjectRef;
  key: string;
  source: { file: string; line: number };
  diagnostics: Diagnostic[];
  /** The parsed object; undefined when the schema refused it. */
  data?: unknown;
  meshObject?: MeshObjectInfo;
}

/**
 * Checked objects by lean object. A source keeps the same lean object while the object is unchanged and
 * never mutates it, so a snapshot after one EndpointSlice change checks one object, not all of them
 * (bench/kube: the full check of 20,000 objects took 0.6-0.9 s on every change). Weak: dropped objects
 * are collected. The result is the same as checking afresh.
 */
const checkedCache = new WeakMap<LeanKubeObject, CheckedObject>();

function checkObject(kind: KubeSourceKind, lean: LeanKubeObject): CheckedObject {
  const cached = checkedCache.get(lean);
  if (cached && cached.ref.kind === kind) return cached;
  const { namespace, name } = lean.metadata;
  const ref: ObjectRef = { kind, namespace, name };
  const key = objectKey(ref);
  const file = kubeSourceName(kind, namespace, name);
  const diagnostics: Diagnostic[] = [];
  let candidate: Record<string, unknown> = lean;
  if (isMeshKind(kind)) {
    const { object, conversions } = convertSeedDialect(structuredClone(lean));
    candidate = object;
    for (const c of conversions) diagnostics.push(dialectDiagnostic(c, ref, { file, line: 1 }));
  }
  const result = SCHEMAS[kind].safeParse(candidate);
  const checked: CheckedObject = { ref, key, source: { file, line: 1 }, diagnostics };
  if (isMeshKind(kind)) {
    checked.meshObject = {
      ref: { kind, namespace, name },
      ...(lean.metadata.generation !== undefined ? { generation: lean.metadata.generation } : {}),
      rejected: !result.success,
    };
  }
  if (result.success) checked.data = result.data;
  else diagnostics.push(...schemaDiagnostics(result.error, candidate, ref, () => ({ file, line: 1 })));
  checkedCache.set(lean, checked);
  return checked;
}

function isMeshKind(kind: KubeSourceKind): kind is MeshCrdKind {
  return kind === 'VirtualService' || kind === 'Route' || kind === 'Target';
}

function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) out[k] = plain(o[k]);
  return out;
}

/** A JSON copy: typed models may hold Dates and class instances. */
function plain(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = plain(x);
    return out;
  }
  return v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
