'use client';

import { useCallback, useSyncExternalStore } from 'react';
import { THEME_KEY as KEY } from './themeScript';

export type Theme = 'dark' | 'light';
const listeners = new Set<() => void>();

function read(): Theme {
  return document.documentElement.dataset.theme === 'light' ? 'light' : 'dark';
}

/** The colour theme, kept on <html data-theme> (set before paint by the layout's script) and in localStorage. */
export function useTheme(): [Theme, (t: Theme) => void] {
  const theme = useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    read,
    () => 'dark' as Theme,
  );
  const set = useCallback((t: Theme) => {
    document.documentElement.dataset.theme = t;
    document.documentElement.style.colorScheme = t;
    try {
      localStorage.setItem(KEY, t);
    } catch {
      // Storage can be off (private mode); the theme still applies to this page.
    }
    for (const l of listeners) l();
  }, []);
  return [theme, set];
}
