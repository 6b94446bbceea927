import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/**
 * An OIDC issuer in miniature for tests: real key pairs (jose), a JWKS served over HTTP on
 * 127.0.0.1 that a test can change (publish a key, rotate) or take down, a count of fetches,
 * and signing — honest tokens, and the forged kinds a verifier must refuse (alg none, HS256
 * keyed with the public key).
 */

type TestAlgorithm = 'RS256' | 'ES256';

export interface TestKey {
  kid: string;
  alg: TestAlgorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The public key as PEM (SPKI): what an attacker knows and might use as an HMAC secret. */
  publicPem: string;
}

export interface TestIssuer {
  /** The `iss` of honest tokens. */
  issuer: string;
  /** The `aud` of honest tokens. */
  audience: string;
  jwksUrl: string;
  /** JWKS requests answered so far. */
  fetches: number;
  /** A new key pair; published at once unless `publish` is false. */
  newKey(alg: TestAlgorithm, kid: string, publish?: boolean): Promise<TestKey>;
  publish(key: TestKey): void;
  /** Answer every JWKS request with 503 (true) or the keys again (false). */
  setDown(down: boolean): void;
  /** A signed JWT: `sub` alice, roles [chat, approve], this issuer and audience, valid for an hour; `claims` override. */
  sign(key: TestKey, claims?: JWTPayload, header?: { kid?: string }): Promise<string>;
  /** An unsigned token (`alg: none`) with the honest claims. */
  unsigned(claims?: JWTPayload): string;
  /** An HS256 token whose secret is the public key's PEM (the classic key-confusion forgery). */
  hmacWithPublicKey(key: TestKey, claims?: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(options: { issuer?: string; audience?: string } = {}): Promise<TestIssuer> {
  const issuer = options.issuer ?? 'https://issuer.test';
  const audience = options.audience ?? 'agent-stop-and-go';
  const published: JWK[] = [];
  let down = false;
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    if (down) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  const honest = (claims: JWTPayload = {}): JWTPayload => ({ sub: 'alice', roles: ['chat', 'approve'], ...claims });

  const testIssuer: TestIssuer = {
    issuer,
    audience,
    jwksUrl,
    get fetches() {
      return fetches;
    },
    async newKey(alg, kid, publish = true) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const key: TestKey = {
        kid,
        alg,
        privateKey,
        publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
        publicPem: await exportSPKI(publicKey),
      };
      if (publish) testIssuer.publish(key);
      return key;
    },
    publish(key) {
      published.push(key.publicJwk);
    },
    setDown(value) {
      down = value;
    },
    async sign(key, claims = {}, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(honest({ iss: issuer, aud: audience, iat: now, exp: now + 3600, ...claims }))
        .setProtectedHeader({ alg: key.alg, kid: header.kid ?? key.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    unsigned(claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
      return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(honest({ iss: issuer, aud: audience, iat: now, exp: now + 3600, ...claims }))}.`;
    },
    async hmacWithPublicKey(key, claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(honest({ iss: issuer, aud: audience, iat: now, exp: now + 3600, ...claims }))
        .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
        .sign(new TextEncoder().encode(key.publicPem));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return testIssuer;
}
