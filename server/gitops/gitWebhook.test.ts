import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pushedBranch, verifyWebhook } from './gitWebhook';

const SECRET = 'hook-secret-1';
const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: 'abc' }));
const sign = (b: Buffer, secret = SECRET) => createHmac('sha256', secret).update(b).digest('hex');

describe('verifyWebhook', () => {
  it("accepts GitHub's and Gitea's HMAC of the exact body, and names the forge and event", () => {
    expect(
      verifyWebhook(
        new Headers({ 'x-hub-signature-256': `sha256=${sign(body)}`, 'x-github-event': 'push' }),
        body,
        SECRET,
      ),
    ).toEqual({ ok: true, forge: 'github', event: 'push' });
    expect(
      verifyWebhook(new Headers({ 'x-gitea-signature': sign(body), 'x-gitea-event': 'push' }), body, SECRET),
    ).toEqual({ ok: true, forge: 'gitea', event: 'push' });
  });

  it('refuses another secret, a changed body, a malformed signature and no signature', () => {
    const headers = (sig: string) => new Headers({ 'x-hub-signature-256': sig, 'x-github-event': 'push' });
    expect(verifyWebhook(headers(`sha256=${sign(body, 'other')}`), body, SECRET)).toMatchObject({
      ok: false,
    });
    const changed = Buffer.from(body.toString().replace('main', 'mainx'));
    expect(verifyWebhook(headers(`sha256=${sign(body)}`), changed, SECRET)).toMatchObject({ ok: false });
    expect(verifyWebhook(headers('sha1=abc'), body, SECRET)).toMatchObject({
      ok: false,
      error: 'the signature does not match the configured webhook secret',
    });
    expect(verifyWebhook(new Headers({ 'x-github-event': 'push' }), body, SECRET)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^no signature/),
    });
  });

  it("compares GitLab's token as it is", () => {
    expect(
      verifyWebhook(new Headers({ 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Push Hook' }), body, SECRET),
    ).toEqual({ ok: true, forge: 'gitlab', event: 'push hook' });
    expect(
      verifyWebhook(
        new Headers({ 'x-gitlab-token': 'hook-secret-2', 'x-gitlab-event': 'Push Hook' }),
        body,
        SECRET,
      ),
    ).toMatchObject({ ok: false });
  });
});

describe('pushedBranch', () => {
  it('is the branch of a push, nothing for tags and other events', () => {
    expect(pushedBranch('push', { ref: 'refs/heads/release/1.2' })).toBe('release/1.2');
    expect(pushedBranch('push hook', { ref: 'refs/heads/main' })).toBe('main');
    expect(pushedBranch('push', { ref: 'refs/tags/v1' })).toBeUndefined();
    expect(pushedBranch('pull_request', { ref: 'refs/heads/main' })).toBeUndefined();
    expect(pushedBranch('push', null)).toBeUndefined();
  });
});
