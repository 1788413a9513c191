import { describe, expect, it } from 'vitest';
import { createOidcSignIn, oidcConfigFromFlags, OidcError, readClientSecret } from './oidc';

const REDIRECT = 'https://meshdeck.example.com/api/auth/oidc/callback';

describe('oidcConfigFromFlags', () => {
  it('is undefined without an issuer, and refuses other --oidc-* flags without one', () => {
    expect(oidcConfigFromFlags({}, {})).toBeUndefined();
    expect(() => oidcConfigFromFlags({ 'client-id': 'x' }, {})).toThrow(
      '--oidc-client-id needs --oidc-issuer (or $MESHDECK_OIDC_ISSUER)',
    );
  });

  it('takes flags first, then $MESHDECK_OIDC_*; lists split; defaults filled in', () => {
    const config = oidcConfigFromFlags(
      {
        issuer: 'https://idp.example.com',
        scopes: 'openid email,groups',
        'allowed-groups': 'ops,dev',
        only: true,
      },
      {
        MESHDECK_OIDC_ISSUER: 'https://ignored.example.com',
        MESHDECK_OIDC_CLIENT_ID: 'meshdeck',
        MESHDECK_OIDC_REDIRECT_URL: REDIRECT,
        MESHDECK_OIDC_USER_CLAIM: 'preferred_username',
      },
    );
    expect(config).toEqual({
      issuer: 'https://idp.example.com',
      clientId: 'meshdeck',
      clientSecretEnv: 'MESHDECK_OIDC_CLIENT_SECRET',
      redirectUrl: REDIRECT,
      scopes: ['openid', 'email', 'groups'],
      userClaim: 'preferred_username',
      groupsClaim: 'groups',
      allowedGroups: ['ops', 'dev'],
      tokenSignIn: false,
    });
  });

  it('says which flag is missing or wrong', () => {
    expect(() =>
      oidcConfigFromFlags({ issuer: 'https://idp.example.com', 'redirect-url': REDIRECT }, {}),
    ).toThrow('--oidc-client-id (or $MESHDECK_OIDC_CLIENT_ID) is needed with --oidc-issuer');
    expect(() =>
      oidcConfigFromFlags(
        { issuer: 'https://idp.example.com', 'client-id': 'c', 'redirect-url': 'nope' },
        {},
      ),
    ).toThrow(/^--oidc-redirect-url \("nope"\): /);
  });
});

describe('the client secret', () => {
  const base = { issuer: 'https://idp.example.com', clientId: 'c', redirectUrl: REDIRECT };

  it('comes from $MESHDECK_OIDC_CLIENT_SECRET or a file; errors name where, never the value', async () => {
    const config = oidcConfigFromFlags(
      { issuer: base.issuer, 'client-id': 'c', 'redirect-url': REDIRECT },
      {},
    )!;
    expect(await readClientSecret(config, { MESHDECK_OIDC_CLIENT_SECRET: 's3cret' })).toBe('s3cret');
    await expect(readClientSecret(config, {})).rejects.toThrow(
      '$MESHDECK_OIDC_CLIENT_SECRET is empty: the OIDC client secret is needed',
    );
    await expect(
      readClientSecret({ ...config, clientSecretFile: '/nonexistent/secret' }, {}),
    ).rejects.toThrow('cannot read the client secret file /nonexistent/secret: ENOENT');
  });

  it('a plain-http issuer is refused unless it is a loopback address', async () => {
    const env = { MESHDECK_OIDC_CLIENT_SECRET: 's3cret' };
    await expect(createOidcSignIn({ ...base, issuer: 'http://idp.example.com' }, { env })).rejects.toThrow(
      /must be an https URL/,
    );
    const local = await createOidcSignIn({ ...base, issuer: 'http://127.0.0.1:9' }, { env });
    expect(JSON.stringify(local)).not.toContain('s3cret');
    expect(local.providerName).toBe('127.0.0.1');
  });
});

describe('OidcError', () => {
  it('is recognised by brand: an error thrown by another copy of this module (Next bundles routes apart) is one too', () => {
    const e = new OidcError(403, 'no', 'not-allowed');
    expect(e).toBeInstanceOf(OidcError);
    expect(e).toBeInstanceOf(Error);
    expect([e.status, e.failure, e.message]).toEqual([403, 'not-allowed', 'no']);
    // What another copy of the class makes: the same brand on an object of another prototype.
    const fromOtherCopy = Object.assign(new Error('x'), { [Symbol.for('meshdeck.oidcError')]: true });
    expect(fromOtherCopy instanceof OidcError).toBe(true);
    expect(new Error('x') instanceof OidcError).toBe(false);
  });
});
