'use client';

import { useCallback, useEffect, useState } from 'react';
import { apiFetch, errorMessage, setCsrfToken } from './api';

/** An OpenID Provider the console can sign in with (GET /api/session says so when one is configured). */
export interface OidcSignInLink {
  provider: string;
  loginUrl: string;
}

export type SessionState =
  | { status: 'checking' }
  | { status: 'signed-in'; user?: string; groups?: string[] }
  | { status: 'read-only'; reason: string; oidc?: OidcSignInLink };

interface SessionAnswer {
  authenticated: boolean;
  csrfToken?: string;
  user?: string;
  groups?: string[];
  signIn?: { token: boolean; oidc?: OidcSignInLink };
}

/**
 * Opens the console session: a `?token=` in the address (the URL `meshdeck serve` prints) is traded
 * for a session cookie and a CSRF token, then removed from the address bar; otherwise an existing
 * session is looked up (one an OIDC sign-in opened, too). Without one the console is read-only (edits
 * stay in this tab) and offers the OIDC provider when there is one. `signOut` ends the session on the
 * server (DELETE /api/session) and forgets the CSRF token; after an OIDC sign-in it goes on to the
 * provider's logout when the server names one.
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
          return { status: 'signed-in', user: 'local-admin', groups: [] };
        } catch (e) {
          return { status: 'read-only', reason: `sign-in failed: ${errorMessage(e)}` };
        }
      }
      try {
        const r = await apiFetch<SessionAnswer>('/api/session');
        if (r.authenticated && r.csrfToken) {
          setCsrfToken(r.csrfToken);
          return { status: 'signed-in', ...(r.user ? { user: r.user, groups: r.groups ?? [] } : {}) };
        }
        return notSignedIn(r.signIn?.oidc, 'not signed in');
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
    const out = await apiFetch<{ endSessionUrl?: string }>('/api/session', { method: 'DELETE' });
    setCsrfToken(undefined);
    // An OIDC session ends at the provider too; it sends the browser back to the console's root.
    if (out.endSessionUrl) {
      window.location.assign(out.endSessionUrl);
      return;
    }
    const after = await apiFetch<SessionAnswer>('/api/session').catch(() => undefined);
    setState(notSignedIn(after?.signIn?.oidc, 'signed out'));
  }, []);
  return [state, signOut];
}

function notSignedIn(oidc: OidcSignInLink | undefined, why: string): SessionState {
  return {
    status: 'read-only',
    reason: oidc
      ? `${why}: sign in with ${oidc.provider}`
      : `${why}: open the console URL \`meshdeck serve\` printed (it carries ?token=...)`,
    ...(oidc ? { oidc } : {}),
  };
}
