import { describe, expect, it } from 'vitest';
import { forgeMessage, splitHead } from './forgeHttp';
import { classifyProviderFailure, isProviderError, providerError, redactToken } from './ProviderError';

describe('forgeMessage', () => {
  it("reads each forge's error body shape", () => {
    expect(forgeMessage({ message: 'Bad credentials', documentation_url: 'x' }, '', 401, '')).toBe(
      'Bad credentials',
    );
    expect(
      forgeMessage(
        {
          message: 'Validation Failed',
          errors: [
            { resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for a:b.' },
          ],
        },
        '',
        422,
        '',
      ),
    ).toBe('Validation Failed: A pull request already exists for a:b.');
    expect(forgeMessage({ message: ['one', 'two'] }, '', 409, '')).toBe('one; two');
    expect(forgeMessage({ message: { title: ["can't be blank"], base: ['x', 'y'] } }, '', 400, '')).toBe(
      "title can't be blank; base x, y",
    );
    expect(
      forgeMessage({ error: 'invalid_token', error_description: 'Token was revoked.' }, '', 401, ''),
    ).toBe('invalid_token: Token was revoked.');
    expect(
      forgeMessage(
        [{ fieldNames: ['Title'], classification: 'RequiredError', message: 'Required' }],
        '',
        422,
        '',
      ),
    ).toBe('Title: Required');
    expect(forgeMessage(undefined, 'plain text', 500, '')).toBe('plain text');
    expect(forgeMessage(undefined, '', 503, 'Service Unavailable')).toBe('HTTP 503 Service Unavailable');
  });
});

describe('classifyProviderFailure', () => {
  it('derives the kind from the status and, for 403/422, the message', () => {
    expect(classifyProviderFailure(null, 'fetch failed')).toBe('network');
    expect(classifyProviderFailure(401, '')).toBe('bad-token');
    expect(classifyProviderFailure(403, 'API rate limit exceeded for user ID 1.')).toBe('rate-limited');
    expect(classifyProviderFailure(403, '403 Forbidden')).toBe('forbidden');
    expect(classifyProviderFailure(404, '')).toBe('repo-not-found');
    expect(classifyProviderFailure(409, '')).toBe('already-exists');
    expect(classifyProviderFailure(422, 'Validation Failed: A pull request already exists for a:b.')).toBe(
      'already-exists',
    );
    expect(classifyProviderFailure(422, 'Validation Failed: PullRequest head invalid')).toBe(
      'invalid-request',
    );
    expect(classifyProviderFailure(502, '')).toBe('server-error');
    expect(classifyProviderFailure(418, '')).toBe('other');
  });
});

describe('redactToken', () => {
  it('removes the token as is, URL-encoded and inside Basic credentials', () => {
    const token = 'abc+/=def';
    const basic = Buffer.from(`me:${token}`).toString('base64');
    const text = `a ${token} b ${encodeURIComponent(token)} c ${basic}`;
    expect(redactToken(text, token, ['me'])).toBe('a *** b *** c ***');
    expect(redactToken('nothing', '')).toBe('nothing');
  });
});

describe('ProviderError', () => {
  it('is recognised by shape and serialises without a stack', () => {
    const e = providerError('gitlab', 'openPullRequest', 401, '401 Unauthorized');
    expect(isProviderError(e)).toBe(true);
    expect(isProviderError({ ...e.toJSON() })).toBe(false);
    expect(isProviderError(new Error('x'))).toBe(false);
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      provider: 'gitlab',
      status: 401,
      message: '401 Unauthorized',
      hint: expect.stringMatching(/^GitLab rejected the token/),
      kind: 'bad-token',
      operation: 'openPullRequest',
    });
  });
});

describe('splitHead', () => {
  it('splits a fork head', () => {
    expect(splitHead('me:feature/x')).toEqual({ owner: 'me', branch: 'feature/x' });
    expect(splitHead('feature/x')).toEqual({ branch: 'feature/x' });
  });
});
