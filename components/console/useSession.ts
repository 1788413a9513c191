'use client';

import { useCallback, useEffect, useState } from 'react';
import { apiFetch, errorMessage, setCsrfToken } from './api';

export type SessionState =
  { status: 'checking' } | { status: 'signed-in' } | { status: 'read-only'; reason: string };

/**
 * Opens the console session: a `?token=` in the address (the URL `meshdeck serve` prints) is traded
 * for a session cookie and a CSRF token, then removed from the address bar; otherwise an existing
 * session is looked up. Without one the console is read-only (edits stay in this tab). `signOut` ends
 * the session on the server (DELETE /api/session) and forgets the CSRF token.
 */
export function useSession(): [SessionState, () => Promise<void>] {
  const [state, setState] = useState<SessionState>({ status: 'checking' });
  useEffect(() => {
    let cancelled = false;
    const url = new URL(window.location.href);
    const token = url.searchParams.get('token');
    if (token !== null) {
      // The token must not stay in the address bar, history or a bookmark.
      url.searchParams.delete('token');
      window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
    }
    const open = async (): Promise<SessionState> => {
      if (token !== null) {
        try {
          const r = await apiFetch<{ csrfToken: string }>('/api/session', {
            method: 'POST',
            body: { token },
          });
          setCsrfToken(r.csrfToken);
          return { status: 'signed-in' };
        } catch (e) {
          return { status: 'read-only', reason: `sign-in failed: ${errorMessage(e)}` };
        }
      }
      try {
        const r = await apiFetch<{ authenticated: boolean; csrfToken?: string }>('/api/session');
        if (r.authenticated && r.csrfToken) {
          setCsrfToken(r.csrfToken);
          return { status: 'signed-in' };
        }
        return {
          status: 'read-only',
          reason: 'not signed in: open the console URL `meshdeck serve` printed (it carries ?token=...)',
        };
      } catch (e) {
        return { status: 'read-only', reason: `no console session: ${errorMessage(e)}` };
      }
    };
    void open().then((s) => {
      if (!cancelled) setState(s);
    });
    return () => {
      cancelled = true;
    };
  }, []);
  const signOut = useCallback(async () => {
    await apiFetch('/api/session', { method: 'DELETE' });
    setCsrfToken(undefined);
    setState({
      status: 'read-only',
      reason: 'signed out: open the console URL `meshdeck serve` printed (it carries ?token=...) to sign in',
    });
  }, []);
  return [state, signOut];
}
