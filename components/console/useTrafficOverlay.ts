'use client';

import { useCallback, useSyncExternalStore } from 'react';

const KEY = 'meshdeck:traffic';
const listeners = new Set<() => void>();

// Without storage (private mode) the choice lives as long as the page.
let memory = true;

function stored(): boolean {
  try {
    const v = localStorage.getItem(KEY);
    return v === null ? memory : v !== 'off';
  } catch {
    return memory;
  }
}

/** Storage read on each mount, then only our own toggle changes it: React asks on every render of the canvas. */
let current: boolean | undefined;
const read = (): boolean => (current ??= stored());

/** Whether the canvas shows live traffic (on unless turned off), kept in localStorage across reloads. */
export function useTrafficOverlay(): [boolean, () => void] {
  const on = useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      const before = current;
      current = stored();
      if (current !== before) cb();
      return () => listeners.delete(cb);
    },
    read,
    () => true,
  );
  const toggle = useCallback(() => {
    memory = !read();
    current = memory;
    try {
      localStorage.setItem(KEY, memory ? 'on' : 'off');
    } catch {
      // Storage can be off (private mode): `memory` keeps the choice.
    }
    for (const l of listeners) l();
  }, []);
  return [on, toggle];
}
