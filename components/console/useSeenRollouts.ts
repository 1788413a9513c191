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

/** Reads storage again: on each mount, after our own write and on another tab's. */
function refresh(): void {
  const raw = stored();
  const key = raw === undefined ? `memory:${memory.join(',')}` : raw;
  if (!cached || cached.raw !== key) cached = { raw: key, set: new Set(idsOf(raw)) };
}

/**
 * The same Set while storage holds the same ids (useSyncExternalStore compares snapshots by identity).
 * Storage is not read here: React asks for the snapshot on every render of the toolbar and again in
 * an effect after it, and a localStorage read there showed up on an edit's main-thread path (issue 5,
 * P8); only writes (ours, or another tab's `storage` event) change what it holds.
 */
function snapshot(): ReadonlySet<string> {
  if (!cached) refresh();
  return cached!.set;
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
      // What storage holds now, once per mount (the render before read what was cached).
      const before = cached;
      refresh();
      if (cached !== before) cb();
      // Another tab opened one.
      const fromOtherTab = () => {
        refresh();
        cb();
      };
      window.addEventListener('storage', fromOtherTab);
      return () => {
        listeners.delete(cb);
        window.removeEventListener('storage', fromOtherTab);
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
    refresh();
    for (const l of listeners) l();
  }, []);
  return [seen, markSeen];
}
