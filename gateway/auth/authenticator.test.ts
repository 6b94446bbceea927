import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { startTestIssuer, type TestIssuer, type TestKey } from '../../test/support/jwks-issuer.js';
import { Authenticator, bearerToken, tokenCredential, type AuthConfig } from './authenticator.js';
import { JwtVerifier, rolesOf } from './jwt.js';
import { ApiTokens, AuthConfigError } from './tokens.js';

/**
 * Token and JWT verification, against a real JWKS served over HTTP on
 * 127.0.0.1 with real key pairs: each kind of forged or invalid token is refused with its reason,
 * keys are cached and fetched again for an unknown key id, and an issuer that is down makes
 * a token unverifiable (503), not bad.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const ALICE = 'alice-token-6c1f0e9d8b7a';
const BOB = 'bob-token-2a3b4c5d6e7f8a9b';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('bearerToken', () => {
  it('reads "Bearer <token>" in any case of the scheme, and says what is wrong otherwise', () => {
    expect(bearerToken('Bearer abc.def')).toEqual({ token: 'abc.def' });
    expect(bearerToken('bearer   abc')).toEqual({ token: 'abc' });
    expect(bearerToken(undefined)).toEqual({ problem: 'missing' });
    expect(bearerToken('   ')).toEqual({ problem: 'missing' });
    for (const header of ['Basic YWxpY2U6cHc=', 'Bearer', 'Bearer a b', 'Token abc', `Bearer ${'x'.repeat(9000)}`, 'Bearer caf\u00e9']) {
      expect(bearerToken(header), header.slice(0, 30)).toEqual({ problem: 'malformed' });
    }
    expect(tokenCredential('')).toEqual({ problem: 'missing' });
    expect(tokenCredential('a\u0000b')).toEqual({ problem: 'malformed' });
  });
});

describe('ApiTokens', () => {
  const env = { ALICE_TOKEN: ALICE, SHORT_TOKEN: 'short' };

  it('knows a token from the environment or by its SHA-256, and nothing else', () => {
    const tokens = ApiTokens.load(
      [
        { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat', 'approve'] },
        { name: 'bob', token_sha256: sha(BOB), roles: ['chat'] },
      ],
      env,
    );
    expect(tokens.verify(ALICE)).toEqual({ id: 'token:alice', name: 'alice', roles: ['chat', 'approve'] });
    expect(tokens.verify(BOB)).toEqual({ id: 'token:bob', name: 'bob', roles: ['chat'] });
    expect(tokens.verify(`${ALICE}x`)).toBeUndefined();
    expect(tokens.verify(sha(BOB))).toBeUndefined();
    expect(tokens.verify('')).toBeUndefined();
  });

  it('refuses to start when a token variable is unset, naming it; or too short; or shared by two names', () => {
    expect(() => ApiTokens.load([{ name: 'carol', token_env: 'CAROL_TOKEN', roles: ['admin'] }], env)).toThrow(AuthConfigError);
    expect(() => ApiTokens.load([{ name: 'carol', token_env: 'CAROL_TOKEN', roles: ['admin'] }], env)).toThrow(/CAROL_TOKEN is not set/);
    expect(() => ApiTokens.load([{ name: 'carol', token_env: 'SHORT_TOKEN', roles: ['admin'] }], env)).toThrow(
      /SHORT_TOKEN is 5 characters; use at least 16/,
    );
    expect(() =>
      ApiTokens.load(
        [
          { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] },
          { name: 'mallory', token_sha256: sha(ALICE), roles: ['admin'] },
        ],
        env,
      ),
    ).toThrow(/alice and mallory have the same token/);
  });

  it('registers a token from the environment with the secret redaction', () => {
    const secret = 'redact-me-token-5e4d3c2b1a09';
    ApiTokens.load([{ name: 'dave', token_env: 'DAVE_TOKEN', roles: ['chat'] }], { DAVE_TOKEN: secret });
    expect(redactSecrets(`got ${secret} here`)).toBe('got [redacted] here');
  });
});

describe('rolesOf', () => {
  it('takes an array or a space-separated string and ignores unknown roles', () => {
    expect(rolesOf(['chat', 'approve', 'root', 7])).toEqual(['chat', 'approve']);
    expect(rolesOf('chat  admin openid')).toEqual(['chat', 'admin']);
    expect(rolesOf(undefined)).toEqual([]);
    expect(rolesOf({ chat: true })).toEqual([]);
  });
});

describe('JwtVerifier against a JWKS on 127.0.0.1', () => {
  let issuer: TestIssuer;
  let rsa: TestKey;
  let ec: TestKey;
  let verifier: JwtVerifier;

  const config = () => ({
    issuer: issuer.issuer,
    audience: issuer.audience,
    jwks_url: issuer.jwksUrl,
    roles_claim: 'roles',
    name_claim: 'sub',
    token_principals: {},
  });
  const jwtPrincipal = (name: string) => `jwt:${issuer.issuer}#${name}`;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    rsa = await issuer.newKey('RS256', 'rsa-1');
    ec = await issuer.newKey('ES256', 'ec-1');
    // No cooldown: a token with an unknown key id makes the verifier fetch the keys again at once.
    verifier = new JwtVerifier(config(), { cooldownMs: 0, timeoutMs: 2_000 });
  });

  afterAll(async () => {
    await issuer?.close();
  });

  it('accepts RS256 and ES256 tokens of the issuer, as the principal jwt:<issuer>#<name>, with the name and roles of their claims', async () => {
    expect(await verifier.verify(await issuer.sign(rsa))).toEqual({
      kind: 'authenticated',
      identity: { id: jwtPrincipal('alice'), name: 'alice', roles: ['chat', 'approve'] },
    });
    expect(await verifier.verify(await issuer.sign(ec, { sub: 'bob', roles: 'chat' }))).toEqual({
      kind: 'authenticated',
      identity: { id: jwtPrincipal('bob'), name: 'bob', roles: ['chat'] },
    });
  });

  it("makes a JWT name the token principal only where auth.jwt.token_principals maps it, keeping the JWT's own roles", async () => {
    const mapping = new JwtVerifier({ ...config(), token_principals: { 'carol@example.com': 'carol' } });
    expect(await mapping.verify(await issuer.sign(rsa, { sub: 'carol@example.com', roles: ['chat'] }))).toEqual({
      kind: 'authenticated',
      identity: { id: 'token:carol', name: 'carol@example.com', roles: ['chat'] },
    });
    // Only the mapped name: a JWT named as the token itself stays its own principal; "__proto__" is no key of the mapping.
    expect(await mapping.verify(await issuer.sign(rsa, { sub: 'carol' }))).toMatchObject({ identity: { id: jwtPrincipal('carol') } });
    expect(await mapping.verify(await issuer.sign(rsa, { sub: '__proto__' }))).toMatchObject({
      identity: { id: jwtPrincipal('__proto__') },
    });
    // A refusal names the mapped principal too (the audit's actor).
    const now = Math.floor(Date.now() / 1000);
    expect(await mapping.verify(await issuer.sign(rsa, { sub: 'carol@example.com', exp: now - 3600, iat: now - 7200 }))).toEqual({
      kind: 'refused',
      reason: 'expired',
      claimedPrincipal: 'token:carol',
    });
  });

  it('reads the configured name and roles claims, nested ones too', async () => {
    const keycloak = new JwtVerifier({ ...config(), roles_claim: 'realm_access.roles', name_claim: 'preferred_username' });
    const token = await issuer.sign(rsa, { preferred_username: 'carol', realm_access: { roles: ['admin', 'offline_access'] } });
    expect(await keycloak.verify(token)).toEqual({
      kind: 'authenticated',
      identity: { id: jwtPrincipal('carol'), name: 'carol', roles: ['admin'] },
    });
  });

  it('refuses each forgery with its reason', async () => {
    const now = Math.floor(Date.now() / 1000);
    const otherKey = await issuer.newKey('RS256', 'rsa-1', false);
    const cases: Array<[string, string, string | undefined]> = [
      ['bad signature', await issuer.sign(otherKey), undefined],
      ['expired', await issuer.sign(rsa, { exp: now - 3600, iat: now - 7200 }), 'alice'],
      ['wrong audience', await issuer.sign(rsa, { aud: 'someone-else' }), 'alice'],
      ['wrong issuer', await issuer.sign(rsa, { iss: 'https://evil.test' }), 'alice'],
      ['not yet valid', await issuer.sign(rsa, { nbf: now + 3600 }), 'alice'],
      ['alg not allowed', issuer.unsigned(), undefined],
      ['alg not allowed', await issuer.hmacWithPublicKey(rsa), undefined],
      ['invalid claims', await issuer.sign(rsa, { sub: undefined }), undefined],
      ['invalid claims', await issuer.sign(rsa, { exp: undefined }), 'alice'],
      ['malformed', 'bm90IGpzb24.bm90IGpzb24.c2ln', undefined],
      ['bad signature', 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln', undefined],
      ['malformed', 'not.a.jwt', undefined],
    ];
    for (const [reason, token, claimedName] of cases) {
      const verdict = await verifier.verify(token);
      expect(verdict, reason).toEqual({ kind: 'refused', reason, ...(claimedName && { claimedPrincipal: jwtPrincipal(claimedName) }) });
    }
  });

  it('fetches the keys again for an unknown key id (rotation), and refuses a key id the issuer never published', async () => {
    const before = issuer.fetches;
    const rotated = await issuer.newKey('ES256', 'ec-2');
    expect(await verifier.verify(await issuer.sign(rotated))).toMatchObject({ kind: 'authenticated' });
    expect(issuer.fetches).toBe(before + 1);
    // Cached now: no fetch for a known key.
    await verifier.verify(await issuer.sign(rotated));
    expect(issuer.fetches).toBe(before + 1);
    const stray = await issuer.newKey('ES256', 'ec-never', false);
    expect(await verifier.verify(await issuer.sign(stray))).toEqual({ kind: 'refused', reason: 'bad signature' });
  });

  it('with a cooldown, made-up key ids do not make it fetch again and again', async () => {
    const cooling = new JwtVerifier(config(), { cooldownMs: 60_000 });
    await cooling.prefetch();
    const before = issuer.fetches;
    const stray = await issuer.newKey('RS256', 'made-up', false);
    for (let i = 0; i < 5; i++)
      expect(await cooling.verify(await issuer.sign(stray))).toEqual({ kind: 'refused', reason: 'bad signature' });
    expect(issuer.fetches).toBe(before);
  });

  it('is unverifiable, not refused, while the issuer keys cannot be had', async () => {
    issuer.setDown(true);
    try {
      const fresh = new JwtVerifier(config(), { timeoutMs: 2_000 });
      expect(await fresh.verify(await issuer.sign(rsa))).toMatchObject({ kind: 'unverifiable' });
    } finally {
      issuer.setDown(false);
    }
    const nobody = new JwtVerifier({ ...config(), jwks_url: 'http://127.0.0.1:1/jwks.json' }, { timeoutMs: 2_000 });
    expect(await nobody.verify(await issuer.sign(rsa))).toMatchObject({ kind: 'unverifiable' });
  });
});

describe('Authenticator', () => {
  let issuer: TestIssuer;
  let key: TestKey;
  let authenticator: Authenticator;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    key = await issuer.newKey('RS256', 'k1');
    const auth: AuthConfig = {
      tokens: [{ name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat', 'approve'] }],
      jwt: {
        issuer: issuer.issuer,
        audience: issuer.audience,
        jwks_url: issuer.jwksUrl,
        roles_claim: 'roles',
        name_claim: 'sub',
        token_principals: {},
      },
    };
    authenticator = Authenticator.fromConfig(auth, quiet, { env: { ALICE_TOKEN: ALICE } });
  });

  afterAll(async () => {
    await issuer?.close();
  });

  it('takes API tokens and JWTs, each as a principal of its source (a JWT named alice is not the token alice); anything else is an unknown token', async () => {
    expect(await authenticator.verify(ALICE)).toEqual({
      kind: 'authenticated',
      identity: { id: 'token:alice', name: 'alice', roles: ['chat', 'approve'] },
    });
    expect(await authenticator.verify(await issuer.sign(key, { sub: 'alice', roles: ['chat'] }))).toEqual({
      kind: 'authenticated',
      identity: { id: `jwt:${issuer.issuer}#alice`, name: 'alice', roles: ['chat'] },
    });
    expect(await authenticator.verify(await issuer.sign(key, { sub: 'erin', roles: ['admin'] }))).toEqual({
      kind: 'authenticated',
      identity: { id: `jwt:${issuer.issuer}#erin`, name: 'erin', roles: ['admin'] },
    });
    expect(await authenticator.verify('not-a-token-of-anyone')).toEqual({ kind: 'refused', reason: 'unknown token' });
    expect(await authenticator.verify(issuer.unsigned())).toEqual({ kind: 'refused', reason: 'alg not allowed' });
  });

  it('without auth.jwt, a JWT is just an unknown token', async () => {
    const tokensOnly = Authenticator.fromConfig({ tokens: [{ name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] }] }, quiet, {
      env: { ALICE_TOKEN: ALICE },
    });
    expect(await tokensOnly.verify(await issuer.sign(key))).toEqual({ kind: 'refused', reason: 'unknown token' });
  });
});
