import type { AgentConfig } from '../../services/common/config/schema.js';
import type { Logger } from '../../services/common/log.js';
import { JwtVerifier, type JwksOptions } from './jwt.js';
import { ApiTokens } from './tokens.js';
import type { Verdict } from './verdict.js';

/**
 * One bearer credential in, one verdict out: the API tokens of `auth.tokens` first (a hash
 * and a constant-time compare), then — for a JWT-shaped value, when `auth.jwt` is set — the
 * issuer's signature and claims.
 */

export type AuthConfig = NonNullable<AgentConfig['auth']>;

/** Longer than any real token or JWT; a longer value is refused before it is hashed or parsed. */
const MAX_TOKEN_LENGTH = 8192;

// RFC 6750's b64token is narrower; any visible ASCII is taken so that an API token made by other
// means still works. A blank or a control character is never part of a token.
const TOKEN = /^[\x21-\x7e]+$/;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export type Credential = { token: string } | { problem: 'missing' | 'malformed' };

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 9110 §11.1). */
export function bearerToken(header: string | undefined): Credential {
  if (header === undefined || header.trim() === '') return { problem: 'missing' };
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match ? tokenCredential(match[1]!) : { problem: 'malformed' };
}

/** A token given on its own (the `token` query parameter of an event stream). */
export function tokenCredential(value: string): Credential {
  if (value === '') return { problem: 'missing' };
  return value.length <= MAX_TOKEN_LENGTH && TOKEN.test(value) ? { token: value } : { problem: 'malformed' };
}

export class Authenticator {
  private constructor(
    private readonly tokens: ApiTokens,
    private readonly jwt: JwtVerifier | undefined,
  ) {}

  /**
   * Reads `auth` (tokens from the environment: AuthConfigError names a missing variable) and,
   * with `auth.jwt`, starts fetching the issuer's keys; a JWKS that cannot be had yet is a
   * warning, not a failure to start (the issuer may come up later).
   */
  static fromConfig(auth: AuthConfig, log: Logger, options: { env?: NodeJS.ProcessEnv; jwks?: JwksOptions } = {}): Authenticator {
    const tokens = ApiTokens.load(auth.tokens, options.env);
    let jwt: JwtVerifier | undefined;
    if (auth.jwt) {
      jwt = new JwtVerifier(auth.jwt, options.jwks);
      const url = new URL(auth.jwt.jwks_url);
      if (url.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
        log.warn('auth.jwt.jwks_url is plain http: whoever sits between this agent and the issuer could swap the keys', {
          jwks_url: auth.jwt.jwks_url,
        });
      }
      jwt.prefetch().catch((error: unknown) => {
        log.warn('the issuer keys (auth.jwt.jwks_url) could not be fetched yet; JWTs are answered 503 until they can', {
          jwks_url: auth.jwt!.jwks_url,
          error: error instanceof Error ? error.message : String(error),
        });
      });
    }
    if (tokens.size === 0 && !jwt) log.warn('auth is configured with no tokens and no jwt: every request but the open ones is refused');
    return new Authenticator(tokens, jwt);
  }

  async verify(token: string): Promise<Verdict> {
    const identity = this.tokens.verify(token);
    if (identity) return { kind: 'authenticated', identity };
    if (this.jwt && JWT_SHAPE.test(token)) return this.jwt.verify(token);
    return { kind: 'refused', reason: 'unknown token' };
  }
}
