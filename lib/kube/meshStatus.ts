/**
 * Status conditions of the mesh custom resources, in the Gateway API style: `Accepted` (the object is
 * valid), `ResolvedRefs` (everything it names exists), `Programmed` (every proxy that carries it runs
 * its config). Messages are the engine's diagnostics about the object. Pure: the controller compares
 * the result with the object's current status and writes only a difference.
 */
import type { ResolvedMesh } from '../engine/resolvedMesh';
import { type Diagnostic, objectKey } from '../model/diagnostic';
import type { MeshObjectInfo } from './kubeSnapshot';

export const CONDITION_TYPES = ['Accepted', 'ResolvedRefs', 'Programmed'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** A `metav1.Condition`. lastTransitionTime is added by {@link withTransitionTimes}. */
export interface MeshCondition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/**
 * Where a proxy stands: an l7mp proxy's Reconciler phase, or a proxyless gRPC client's ADS stream phase
 * (`nacked`, `not-connected`, `disconnected`, `xds-off`: no xDS is served). `message` says why it failed.
 */
export interface ProxyProgress {
  phase: ProxyPhase;
  inSync: boolean;
  message?: string;
}

export const PROXY_PHASES = [
  'pending',
  'syncing',
  'synced',
  'failed',
  'unreachable',
  'nacked',
  'not-connected',
  'disconnected',
  'xds-off',
] as const;
export type ProxyPhase = (typeof PROXY_PHASES)[number];

/** The proxy rejected or cannot take its config. */
const FAILED_PHASES = new Set<ProxyPhase>(['failed', 'unreachable', 'nacked']);
/**
 * No ADS stream: what the client runs cannot be known (a client that was connected keeps its last
 * config), so this makes Programmed Unknown rather than False.
 */
const OFFLINE_PHASES = new Set<ProxyPhase>(['not-connected', 'disconnected', 'xds-off']);

export interface MeshStatusInput {
  meshObjects: Record<string, MeshObjectInfo>;
  /** The engine's diagnostics (the snapshot's included). */
  diagnostics: readonly Diagnostic[];
  mesh: ResolvedMesh;
  /**
   * The proxies whose progress is tracked, by id (`namespace/pod`): the l7mp proxies the controller pushes
   * to and, when the ADS server is followed, the proxyless gRPC clients. A carrier not listed here is
   * served over xDS without its acknowledgements being tracked.
   */
  proxies: Readonly<Record<string, ProxyProgress>>;
}

/** Problems with what an object names: they make ResolvedRefs False (errors) or are said there (warnings). */
const REFERENCE_CODES = new Set([
  'unresolved-reference',
  'selector-no-service',
  'selector-names-virtualservice',
  'circular-selector',
  'selects-no-pods',
  'no-endpoints',
  'split-entry-empty',
  'route-dropped',
  'rule-dropped',
  'listener-dropped',
]);

/** Longest message per condition; metav1.Condition allows 32768, a terse status reads better. */
const MESSAGE_LIMIT = 4000;

/** The three conditions of every mesh object, by `Kind/namespace/name` (no lastTransitionTime). */
export function meshStatusConditions(input: MeshStatusInput): Record<string, MeshCondition[]> {
  const byObject = new Map<string, Diagnostic[]>();
  for (const d of input.diagnostics) {
    const key = objectKey(d.object);
    if (!input.meshObjects[key]) continue;
    const list = byObject.get(key);
    if (list) list.push(d);
    else byObject.set(key, [d]);
  }
  const carriers = carriersByObject(input.mesh);
  const out: Record<string, MeshCondition[]> = {};
  for (const key of Object.keys(input.meshObjects).sort()) {
    const info = input.meshObjects[key]!;
    const diags = byObject.get(key) ?? [];
    const gen = info.generation !== undefined ? { observedGeneration: info.generation } : {};
    const refErrors = diags.filter((d) => d.severity === 'error' && REFERENCE_CODES.has(d.code));
    const refNotes = diags.filter((d) => d.severity !== 'error' && REFERENCE_CODES.has(d.code));
    const otherErrors = diags.filter((d) => d.severity === 'error' && !REFERENCE_CODES.has(d.code));
    const otherNotes = diags.filter((d) => d.severity !== 'error' && !REFERENCE_CODES.has(d.code));

    let accepted: MeshCondition;
    if (info.rejected || otherErrors.length > 0) {
      const conflict = !info.rejected && otherErrors.every((d) => d.code.includes('clash'));
      accepted = {
        type: 'Accepted',
        status: 'False',
        reason: conflict ? 'Conflicted' : 'Invalid',
        message: describe(otherErrors.length > 0 ? otherErrors : diags, 'the object is invalid'),
        ...gen,
      };
    } else {
      accepted = {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message: otherNotes.length > 0 ? `accepted; ${describe(otherNotes, '')}` : 'accepted',
        ...gen,
      };
    }

    let resolved: MeshCondition;
    if (info.rejected) {
      resolved = {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'Invalid',
        message: 'references not resolved: the object is invalid (see Accepted)',
        ...gen,
      };
    } else if (refErrors.length > 0) {
      resolved = {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'InvalidReference',
        message: describe(refErrors, 'a reference does not resolve'),
        ...gen,
      };
    } else {
      resolved = {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
        message:
          refNotes.length > 0
            ? `all references resolved; ${describe(refNotes, '')}`
            : 'all references resolved',
        ...gen,
      };
    }

    out[key] = [accepted, resolved, programmed(accepted, resolved, carriers.get(key), input.proxies, gen)];
  }
  return out;
}

function programmed(
  accepted: MeshCondition,
  resolved: MeshCondition,
  carriedBy: Set<string> | undefined,
  proxies: Readonly<Record<string, ProxyProgress>>,
  gen: { observedGeneration?: number },
): MeshCondition {
  const base = { type: 'Programmed' as const, ...gen };
  if (accepted.status === 'False') {
    return { ...base, status: 'False', reason: 'Invalid', message: 'not programmed: not accepted' };
  }
  if (resolved.status === 'False') {
    return {
      ...base,
      status: 'False',
      reason: 'Invalid',
      message: 'not programmed: references do not resolve (see ResolvedRefs)',
    };
  }
  const all = [...(carriedBy ?? [])].sort();
  const tracked = all.filter((p) => proxies[p] !== undefined);
  if (all.length === 0) {
    return {
      ...base,
      status: 'False',
      reason: 'NoProxies',
      message: 'no proxy carries it: it selects no running proxy pod and nothing on a proxy uses it',
    };
  }
  if (tracked.length === 0) {
    return {
      ...base,
      status: 'Unknown',
      reason: 'Pending',
      message: `served over xDS only (${all.join(', ')}); acknowledgements are not tracked in status`,
    };
  }
  const said = (p: string) => `${p}: ${proxies[p]!.message ?? proxies[p]!.phase}`;
  const failed = tracked.filter((p) => FAILED_PHASES.has(proxies[p]!.phase));
  if (failed.length > 0) {
    return { ...base, status: 'False', reason: 'ProxyError', message: truncate(failed.map(said).join('; ')) };
  }
  const notSynced = tracked.filter((p) => !(proxies[p]!.phase === 'synced' && proxies[p]!.inSync));
  const waiting = notSynced.filter((p) => !OFFLINE_PHASES.has(proxies[p]!.phase));
  if (waiting.length > 0) {
    return {
      ...base,
      status: 'False',
      reason: 'Pending',
      message: truncate(`waiting for ${notSynced.map((p) => `${p} (${proxies[p]!.phase})`).join(', ')}`),
    };
  }
  if (notSynced.length > 0) {
    return {
      ...base,
      status: 'Unknown',
      reason: 'NotConnected',
      message: truncate(`not connected over xDS: ${notSynced.map(said).join('; ')}`),
    };
  }
  return {
    ...base,
    status: 'True',
    reason: 'Programmed',
    message: truncate(`programmed on ${tracked.join(', ')}`),
  };
}

/**
 * Which proxies carry something of each mesh object (`Kind/namespace/name`): a VirtualService's listener,
 * the cluster generated from it and its inline Routes' and Targets' clusters; a named Route; a named Target.
 */
export function carriersByObject(mesh: ResolvedMesh): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (key: string | undefined, proxy: string) => {
    if (!key) return;
    const set = out.get(key);
    if (set) set.add(proxy);
    else out.set(key, new Set([proxy]));
  };
  for (const [proxy, placement] of Object.entries(mesh.placement)) {
    for (const l of placement.listeners) {
      const vs = mesh.virtualServices[l];
      if (vs && !vs.generated) add(objectKey(vs.ref), proxy);
    }
    for (const r of placement.routes) {
      const route = mesh.routes[r];
      if (route) add(objectKey(route.ref), proxy);
    }
    for (const c of placement.clusters) {
      const t = mesh.targets[c];
      if (!t) continue;
      // The cluster generated for a VirtualService is named after it with kind Target.
      add(objectKey(t.origin === 'virtualservice' ? { ...t.ref, kind: 'VirtualService' } : t.ref), proxy);
    }
  }
  return out;
}

/**
 * The conditions to write: each keeps the current lastTransitionTime while its status is unchanged,
 * and gets `now` when it changes or is new (metav1.Condition semantics).
 */
export function withTransitionTimes(
  desired: readonly MeshCondition[],
  current: unknown,
  now: string,
): MeshCondition[] {
  const old = currentConditions(current);
  return desired.map((c) => {
    const prev = old.find((o) => o.type === c.type);
    const at = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    return { ...c, lastTransitionTime: at };
  });
}

/** Whether an object's current status already says `desired` (lastTransitionTime aside). */
export function conditionsEqual(desired: readonly MeshCondition[], current: unknown): boolean {
  const old = currentConditions(current);
  if (old.length !== desired.length) return false;
  return desired.every((c) => {
    const o = old.find((x) => x.type === c.type);
    return (
      o !== undefined &&
      o.status === c.status &&
      o.reason === c.reason &&
      o.message === c.message &&
      o.observedGeneration === c.observedGeneration
    );
  });
}

/** The conditions list of a status object (anything else reads as none). */
function currentConditions(status: unknown): Partial<MeshCondition>[] {
  const conditions = (status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions)
    ? conditions.filter((c): c is Partial<MeshCondition> => typeof c === 'object' && c !== null)
    : [];
}

function describe(diags: readonly Diagnostic[], fallback: string): string {
  if (diags.length === 0) return fallback;
  return truncate(
    diags.map((d) => `${d.severity}: ${d.path ? `${d.path}: ` : ''}${d.message} [${d.code}]`).join('; '),
  );
}

function truncate(s: string): string {
  return s.length <= MESSAGE_LIMIT ? s : `${s.slice(0, MESSAGE_LIMIT - 1)}…`;
}
