'use client';

import type { SessionState } from './useSession';

/**
 * Who the console acts as when signed in (the user, with the groups in its tooltip), or the
 * "Sign in with <provider>" link when the console is read-only and an OpenID Provider is set up.
 */
export function SessionUser({ session }: { session: SessionState }) {
  if (session.status === 'signed-in' && session.user)
    return (
      <span
        className="session__user"
        data-testid="session-user"
        title={session.groups?.length ? `groups: ${session.groups.join(', ')}` : 'no groups'}
      >
        {session.user}
      </span>
    );
  if (session.status === 'read-only' && session.oidc)
    return (
      // A full navigation, not a fetch: the provider's sign-in page takes over the tab.
      <a href={session.oidc.loginUrl} className="toolbar__link" data-testid="oidc-sign-in">
        Sign in with {session.oidc.provider}
      </a>
    );
  return null;
}
