import type { EndpointSlice } from '../model/kube';
import { SERVICE_NAME_LABEL } from '../model/kube';
import type { Snapshot } from '../model/snapshot';
import { isL7mpProxy, sliceEndpoints } from './clusterIndex';
import { type CompiledMesh, compileMesh } from './compileMesh';
import { renderL7mpProxy } from './renderL7mp';
import { atPath, diagnosticSource } from './resolveMesh';
import type { ResolvedTarget } from './resolvedMesh';
import { SPLIT_NOTE_CODES, type SplitNote, splitEndpoints } from './splitTarget';
import { type Diagnostic, normalizeDiagnostics, objectKey } from '../model/diagnostic';
import { jsonEqual } from '../util/jsonEqual';

/** What an update did: the proxies whose desired config changed, and whether it took the fast path. */
export interface EngineUpdate {
  changedProxies: string[];
  incremental: boolean;
}

interface ReverseIndex {
  vsByService: Map<string, string[]>;
  targetsByVs: Map<string, string[]>;
  proxiesByTarget: Map<string, string[]>;
}

/**
 * The engine with memory. Like the SMC catalog's announcements, a change recomputes only what it
 * touches: an EndpointSlice change that only moves addresses re-renders just the proxies whose
 * clusters follow that Service (a canary split's shares and weights computed again). Anything structural
 * (a Service gaining or losing all endpoints, a mesh edit) takes the full path. Either way the result equals `compileMesh` of the
 * updated snapshot (a property test checks it). `current` is owned by the engine: treat it as read-only.
 */
export class MeshEngine {
  private base: Snapshot;
  private compiled: CompiledMesh;
  private reverse: ReverseIndex;
  /** EndpointSlices by `namespace/service`, so a slice change costs O(1) instead of a scan. */
  private slices = new Map<string, EndpointSlice[]>();
  private services = new Set<string>();
  private snapshotCache: Snapshot | undefined;

  constructor(snapshot: Snapshot) {
    this.base = snapshot;
    this.compiled = compileMesh(snapshot);
    this.reverse = buildReverseIndex(this.compiled);
    this.indexSnapshot(snapshot);
  }

  get current(): CompiledMesh {
    return this.compiled;
  }

  /** The snapshot the current result was computed from. */
  get snapshot(): Snapshot {
    this.snapshotCache ??= { ...this.base, endpointSlices: [...this.slices.values()].flat() };
    return this.snapshotCache;
  }

  /** Replaces the whole snapshot (a mesh edit, a new cluster state): full recompute. */
  setSnapshot(snapshot: Snapshot): EngineUpdate {
    const before = this.compiled;
    this.base = snapshot;
    this.compiled = compileMesh(snapshot);
    this.reverse = buildReverseIndex(this.compiled);
    this.indexSnapshot(snapshot);
    return { changedProxies: changedProxies(before, this.compiled), incremental: false };
  }

  /** Replaces the EndpointSlices of Service `namespace/name`, on the fast path when it can. */
  setServiceEndpointSlices(namespace: string, name: string, slices: EndpointSlice[]): EngineUpdate {
    const svcKey = `${namespace}/${name}`;
    const old = this.slices.get(svcKey) ?? [];
    const full = () => {
      this.slices.set(svcKey, slices);
      this.snapshotCache = undefined;
      return this.setSnapshot(this.snapshot);
    };
    if (!this.services.has(svcKey) || old.length === 0 || slices.length === 0) return full();

    const endpoints = sliceEndpoints(namespace, slices);
    const { mesh, l7mp } = this.compiled;
    const vsNames = this.reverse.vsByService.get(svcKey) ?? [];
    const targetIds = new Set<string>();
    for (const v of vsNames) {
      const vs = mesh.virtualServices[v]!;
      // Zero endpoints change diagnostics ("no endpoints yet"): structural.
      if ((vs.endpoints.length === 0) !== (endpoints.length === 0)) return full();
      for (const t of this.reverse.targetsByVs.get(v) ?? []) targetIds.add(t);
    }
    this.slices.set(svcKey, slices);
    this.snapshotCache = undefined;
    for (const v of vsNames) mesh.virtualServices[v] = { ...mesh.virtualServices[v]!, endpoints };
    const proxies = new Set<string>();
    const splits: { target: ResolvedTarget; notes: SplitNote[] }[] = [];
    for (const t of targetIds) {
      const target = mesh.targets[t]!;
      if (target.split) {
        const s = this.resplit(target);
        mesh.targets[t] = s.target;
        splits.push(s);
      } else mesh.targets[t] = { ...target, endpoints };
      for (const p of this.reverse.proxiesByTarget.get(t) ?? []) proxies.add(p);
    }
    if (splits.length) this.replaceSplitNotes(splits);
    const changed: string[] = [];
    for (const p of [...proxies].sort()) {
      const config = renderL7mpProxy(mesh, p).config;
      const prev = l7mp.proxies[p];
      if (!prev) continue; // a proxyless gRPC client: no l7mp config
      if (jsonEqual(prev.config, config)) continue;
      l7mp.proxies[p] = { proxy: prev.proxy, config };
      changed.push(p);
    }
    return { changedProxies: changed, incremental: true };
  }

  /**
   * A canary split whose entries' endpoints moved: its shares and per-endpoint weights computed again
   * from the entries' current endpoints, as the resolver computes them.
   */
  private resplit(target: ResolvedTarget): { target: ResolvedTarget; notes: SplitNote[] } {
    const { virtualServices } = this.compiled.mesh;
    const entries = target.split!.map((s) => {
      const vs = virtualServices[s.virtualService]!;
      return { longName: vs.longName, name: vs.ref.name, endpoints: vs.endpoints, weight: s.weight };
    });
    // As the resolver decides it: the pods, and so the proxies, are the last compile's.
    const l7mp = Object.values(this.compiled.mesh.proxies).some(isL7mpProxy);
    const { endpoints, shares, notes } = splitEndpoints(entries, target.loadbalancer, { l7mp });
    return { target: { ...target, endpoints, split: shares }, notes };
  }

  /** The diagnostics of the re-split Targets (their "canary-split" shares, duplicate addresses) replaced. */
  private replaceSplitNotes(splits: { target: ResolvedTarget; notes: SplitNote[] }[]): void {
    const { mesh } = this.compiled;
    const stale = new Set<string>();
    const fresh: Diagnostic[] = [];
    for (const { target: t, notes } of splits) {
      // A named Target's fields are under `spec`; an inline one's under its place in the owner.
      const diagPath = t.origin === 'inline' ? t.path! : 'spec';
      const key = objectKey(t.ref);
      for (const code of SPLIT_NOTE_CODES) {
        stale.add(`${key}|${code}|${atPath(diagPath, 'split')}`);
        stale.add(`${key}|${code}|${atPath(diagPath, 'loadbalancer')}`);
        t.split!.forEach((_, i) => stale.add(`${key}|${code}|${atPath(diagPath, `split[${i}]`)}`));
      }
      for (const n of notes) {
        const path = atPath(diagPath, n.path);
        const d: Diagnostic = { severity: n.severity, code: n.code, message: n.message, object: t.ref, path };
        const source = diagnosticSource(this.base.sources, t.ref, path);
        if (source) d.source = source;
        fresh.push(d);
      }
    }
    const keep = (d: Diagnostic) => !stale.has(`${objectKey(d.object)}|${d.code}|${d.path ?? ''}`);
    mesh.diagnostics = [...mesh.diagnostics.filter(keep), ...fresh];
    this.compiled.diagnostics = normalizeDiagnostics([...this.compiled.diagnostics.filter(keep), ...fresh]);
  }

  private indexSnapshot(snapshot: Snapshot): void {
    this.snapshotCache = snapshot;
    this.slices = new Map();
    for (const s of snapshot.endpointSlices) {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      const key = svc ? `${s.metadata.namespace ?? 'default'}/${svc}` : '';
      const list = this.slices.get(key);
      if (list) list.push(s);
      else this.slices.set(key, [s]);
    }
    this.services = new Set(
      snapshot.services.map((s) => `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`),
    );
  }
}

function buildReverseIndex(c: CompiledMesh): ReverseIndex {
  const vsByService = new Map<string, string[]>();
  const targetsByVs = new Map<string, string[]>();
  const proxiesByTarget = new Map<string, string[]>();
  const push = (m: Map<string, string[]>, k: string, v: string) => {
    const l = m.get(k);
    if (l) l.push(v);
    else m.set(k, [v]);
  };
  for (const vs of Object.values(c.mesh.virtualServices))
    for (const s of vs.services) push(vsByService, s, vs.longName);
  for (const t of Object.values(c.mesh.targets))
    for (const v of t.endpointSources) push(targetsByVs, v, t.id);
  for (const [proxy, p] of Object.entries(c.mesh.placement))
    for (const t of p.clusters) push(proxiesByTarget, t, proxy);
  return { vsByService, targetsByVs, proxiesByTarget };
}

function changedProxies(a: CompiledMesh, b: CompiledMesh): string[] {
  const ids = new Set([...Object.keys(a.l7mp.proxies), ...Object.keys(b.l7mp.proxies)]);
  const out: string[] = [];
  for (const id of [...ids].sort()) {
    const x = a.l7mp.proxies[id];
    const y = b.l7mp.proxies[id];
    if (!x || !y || !jsonEqual(x, y)) out.push(id);
  }
  return out;
}
