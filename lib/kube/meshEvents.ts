/**
 * Kubernetes Events about what the controller did (`kubectl describe vsvc NAME`, `kubectl describe pod
 * NAME`, `kubectl get events`): a mesh resource whose Accepted, ResolvedRefs or Programmed condition
 * changes gets an event saying so, with the engine's message; an l7mp proxy's Pod gets one when a push
 * to it fails, when it cannot be reached, and when it is in sync again. Only changes are news: a new
 * valid object gets "Programmed" once it runs, not an event per condition; transient Pending states and
 * conditions that only repeat a failed Accepted (reason Invalid) get none. server/kube/eventRecorder.ts names,
 * de-duplicates (a series), rate-limits and writes them (events.k8s.io/v1). Pure.
 */
import type { MeshCondition } from './meshStatus';

/** What an event is about (an object reference; `uid` lets `kubectl describe` find it). */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

/** One event, before the recorder names and times it. */
export interface MeshEvent {
  regarding: EventSubject;
  type: 'Normal' | 'Warning';
  /** CamelCase, why (the condition's reason, or PushFailed, ProxyUnreachable, Synced). */
  reason: string;
  /** What the controller did: Validate, ResolveReferences, Program, Push. */
  action: string;
  /** For humans, at most 1 KiB (the API server's limit). */
  note: string;
}

/** The API server refuses a note over 1 KiB. */
export const MAX_NOTE_BYTES = 1024;

const ACTION: Record<string, string> = {
  Accepted: 'Validate',
  ResolvedRefs: 'ResolveReferences',
  Programmed: 'Program',
};

/** The events for a status write: `before` is the object's status as it was, `after` the conditions written. */
export function conditionEvents(
  regarding: EventSubject,
  before: unknown,
  after: readonly MeshCondition[],
): MeshEvent[] {
  const old = oldConditions(before);
  const out: MeshEvent[] = [];
  for (const c of after) {
    const prev = old.find((o) => o.type === c.type);
    if (prev && prev.status === c.status && prev.reason === c.reason) continue;
    if (c.reason === 'Pending') continue;
    // ResolvedRefs or Programmed False because the object is not accepted: the Accepted event says why.
    if (c.type !== 'Accepted' && c.reason === 'Invalid') continue;
    // A new valid object: only "Programmed" is news.
    if (!prev && c.status === 'True' && c.type !== 'Programmed') continue;
    out.push({
      regarding,
      type: c.status === 'False' ? 'Warning' : 'Normal',
      reason: c.reason,
      action: ACTION[c.type] ?? 'Reconcile',
      note: truncateNote(c.message || `${c.type} is ${c.status}`),
    });
  }
  return out;
}

/** One l7mp proxy's push state, as the recorder needs it. */
export interface ProxyPushState {
  /** `<namespace>/<pod name>`. */
  id: string;
  phase: string;
  /** The failed push's own words (the operation, the HTTP status, the proxy's message). */
  failure?: string;
}

/** The event for a proxy whose phase moved from `before` (undefined: first seen) to `now`, if any. */
export function proxyEvent(before: string | undefined, now: ProxyPushState): MeshEvent | undefined {
  if (before === now.phase) return undefined;
  const slash = now.id.indexOf('/');
  if (slash <= 0) return undefined;
  const regarding = {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: now.id.slice(0, slash),
    name: now.id.slice(slash + 1),
  };
  if (now.phase === 'failed')
    return {
      regarding,
      type: 'Warning',
      reason: 'PushFailed',
      action: 'Push',
      note: truncateNote(
        `pushing the mesh's config to its l7mp proxy failed: ${now.failure ?? 'no reason given'}`,
      ),
    };
  if (now.phase === 'unreachable')
    return {
      regarding,
      type: 'Warning',
      reason: 'ProxyUnreachable',
      action: 'Push',
      note: truncateNote(`its l7mp proxy's REST API does not answer: ${now.failure ?? 'no reason given'}`),
    };
  if (now.phase === 'synced' && (before === 'failed' || before === 'unreachable'))
    return {
      regarding,
      type: 'Normal',
      reason: 'Synced',
      action: 'Push',
      note: 'its l7mp proxy runs the mesh config again',
    };
  return undefined;
}

/** A note cut to the API server's 1 KiB on a character boundary, marked with an ellipsis when cut. */
export function truncateNote(note: string): string {
  const bytes = new TextEncoder().encode(note);
  if (bytes.length <= MAX_NOTE_BYTES) return note;
  let end = MAX_NOTE_BYTES - 3;
  // Back up to the start of a UTF-8 sequence.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${new TextDecoder().decode(bytes.slice(0, end))}…`;
}

function oldConditions(status: unknown): { type: string; status: string; reason: string }[] {
  const list = (status as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (c): c is { type: string; status: string; reason: string } =>
      typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string',
  );
}
