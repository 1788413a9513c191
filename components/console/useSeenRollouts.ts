'use client';

import { useCallback, useSyncExternalStore } from 'react';

const KEY = 'meshdeck:rollouts-seen';
/** Rollout ids kept: the chip only asks about the newest rollout, so a few are plenty. */
const KEEP = 20;
const listeners = new Set<() => void>();

// Without storage (private mode) the ids live as long as the page.
let memory: string[] = [];
let cached: { raw: string | null; set: ReadonlySet<string> } | undefined;

/** What storage holds (`null`: nothing yet), or undefined when there is no storage to read. */
function stored(): string | null | undefined {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return undefined;
  }
}

function idsOf(raw: string | null | undefined): string[] {
  if (raw === undefined) return memory;
  if (raw === null) return [];
  try {
    const ids: unknown = JSON.parse(raw);
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** The same Set while storage holds the same ids (useSyncExternalStore compares snapshots by identity). */
function snapshot(): ReadonlySet<string> {
  const raw = stored();
  const key = raw === undefined ? `memory:${memory.join(',')}` : raw;
  if (!cached || cached.raw !== key) cached = { raw: key, set: new Set(idsOf(raw)) };
  return cached.set;
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * The rollouts this browser has opened (kept in localStorage): the toolbar's "Rollout rolled back"
 * chip stays until its rollout was looked at, in any tab of this browser.
 */
export function useSeenRollouts(): [ReadonlySet<string>, (id: string) => void] {
  const seen = useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      // Another tab opened one.
      window.addEventListener('storage', cb);
      return () => {
        listeners.delete(cb);
        window.removeEventListener('storage', cb);
      };
    },
    snapshot,
    () => EMPTY,
  );
  const markSeen = useCallback((id: string) => {
    const ids = idsOf(stored());
    if (ids.includes(id)) return;
    memory = [id, ...ids].slice(0, KEEP);
    try {
      localStorage.setItem(KEY, JSON.stringify(memory));
    } catch {
      // Storage can be off (private mode): `memory` keeps them.
    }
    for (const l of listeners) l();
  }, []);
  return [seen, markSeen];
}
