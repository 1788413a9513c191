/**
 * The forge's push webhook (POST /api/gitops/webhook): a push to the base branch makes the server compare
 * what runs with Git now, and so sync at once under an automated policy, instead of at the next poll
 * (every 180 s): Argo CD's webhook. A request must carry the repository config's webhook secret: the
 * HMAC-SHA256 of its body that GitHub, Gitea and Forgejo send (`X-Hub-Signature-256: sha256=<hex>`, or
 * Gitea's `X-Gitea-Signature: <hex>`), or the token GitLab sends as it is (`X-Gitlab-Token`). The payload
 * is trusted for nothing but the branch it names: the comparison fetches Git itself, so a replayed or
 * forged push can at most make the server fetch early.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Where a verified request came from and which event it is. */
export type WebhookRequest =
  { ok: true; forge: 'github' | 'gitea' | 'gitlab'; event: string } | { ok: false; error: string };

/** Checks the request's signature or token against `secret`; see the module comment. */
export function verifyWebhook(headers: Headers, body: Buffer, secret: string): WebhookRequest {
  const hmac = () => createHmac('sha256', secret).update(body).digest();
  const hub = headers.get('x-hub-signature-256');
  const gitea = headers.get('x-gitea-signature') ?? headers.get('x-forgejo-signature');
  const gitlab = headers.get('x-gitlab-token');
  const githubEvent = headers.get('x-github-event');
  const giteaEvent = headers.get('x-gitea-event') ?? headers.get('x-forgejo-event');
  if (hub !== null || gitea !== null) {
    const hex =
      hub !== null
        ? /^sha256=([0-9a-f]{64})$/i.exec(hub.trim())?.[1]
        : /^([0-9a-f]{64})$/i.exec(gitea!.trim())?.[1];
    if (!hex || !timingSafeEqual(Buffer.from(hex, 'hex'), hmac()))
      return { ok: false, error: 'the signature does not match the configured webhook secret' };
    const forge = giteaEvent !== null ? 'gitea' : 'github';
    return { ok: true, forge, event: (giteaEvent ?? githubEvent ?? '').toLowerCase() };
  }
  if (gitlab !== null) {
    const a = Buffer.from(gitlab);
    const b = Buffer.from(secret);
    if (a.length !== b.length || !timingSafeEqual(a, b))
      return { ok: false, error: 'the token does not match the configured webhook secret' };
    return { ok: true, forge: 'gitlab', event: (headers.get('x-gitlab-event') ?? '').toLowerCase() };
  }
  return {
    ok: false,
    error:
      'no signature: set the webhook secret in the forge (X-Hub-Signature-256, X-Gitea-Signature or X-Gitlab-Token)',
  };
}

/** The branch a push event updated (`refs/heads/<branch>`), or undefined for other events and refs. */
export function pushedBranch(event: string, payload: unknown): string | undefined {
  if (event !== 'push' && event !== 'push hook') return undefined;
  const ref = (payload as { ref?: unknown } | null)?.ref;
  return typeof ref === 'string' && ref.startsWith('refs/heads/')
    ? ref.slice('refs/heads/'.length)
    : undefined;
}
