import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AgentConfig } from '../../services/common/config/schema.js';
import { ROLES } from '../../services/common/config/schema.js';
import { jwtPrincipal, MAX_PRINCIPAL_NAME_LENGTH, tokenPrincipal } from '../../services/common/principal-id.js';
import type { Role } from '../app/principal.js';
import type { Identity, Verdict } from './verdict.js';

/**
 * JWTs from an OIDC issuer (`auth.jwt`), verified with `jose` against the issuer's JWKS:
 * the keys are fetched once and cached (for `cacheMaxAgeMs`), fetched again when a token names
 * a key id the cache does not have (at most once per `cooldownMs`, so a flood of made-up key ids
 * cannot hammer the issuer), each fetch bounded by `timeoutMs`. A token must be signed with an
 * asymmetric algorithm (RFC 8725 §3.1: `none` and the HMAC family are refused before any key
 * is looked at, so a public key can never serve as an HMAC secret), carry `exp`, and match the
 * configured issuer and audience.
 *
 * The principal a JWT names is `jwt:<issuer>#<name>` (services/common/principal-id.ts): never
 * the API token of the same name, unless `auth.jwt.token_principals` maps that name to a token
 * principal on purpose. The roles are the JWT's own, mapped or not: a credential grants what it
 * carries.
 */

type JwtConfig = NonNullable<NonNullable<AgentConfig['auth']>['jwt']>;

/** Signature algorithms a token may use: the asymmetric ones jose verifies. */
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface JwksOptions {
  /** How long one JWKS fetch may take. */
  timeoutMs?: number;
  /** After a fetch, how long before an unknown key id may cause another. */
  cooldownMs?: number;
  /** How long fetched keys are used before they are fetched again. */
  cacheMaxAgeMs?: number;
  /** Leeway for exp and nbf against clock skew, in seconds. */
  clockToleranceSeconds?: number;
}

const DEFAULTS = { timeoutMs: 5_000, cooldownMs: 30_000, cacheMaxAgeMs: 10 * 60_000, clockToleranceSeconds: 30 };

/** The issuer's keys could not be had (down, slow, not a JWKS): nothing is known about the token. */
class KeysUnavailable extends Error {}

/** A name fit for an audit line and a decision record: printable, at most MAX_PRINCIPAL_NAME_LENGTH characters. */
const NAME = new RegExp(`^[^\\p{Cc}\\p{Cf}]{1,${MAX_PRINCIPAL_NAME_LENGTH}}$`, 'u');

function claimAt(payload: JWTPayload, claim: string): unknown {
  if (claim in payload) return payload[claim];
  // "realm_access.roles" (Keycloak) and the like: a path into nested objects.
  let value: unknown = payload;
  for (const key of claim.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Roles from an array of strings or a space-separated string (OAuth's `scope` style); others ignored. */
export function rolesOf(value: unknown): Role[] {
  const words = Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : typeof value === 'string'
      ? value.split(/\s+/)
      : [];
  return [...new Set(words.filter((word): word is Role => (ROLES as readonly string[]).includes(word)))];
}

function nameOf(payload: JWTPayload | undefined, claim: string): string | undefined {
  const value = payload && claimAt(payload, claim);
  return typeof value === 'string' && NAME.test(value) ? value : undefined;
}

export class JwtVerifier {
  private readonly keys: JWTVerifyGetKey & { reload(): Promise<void> };
  private readonly clockTolerance: number;

  constructor(
    private readonly config: JwtConfig,
    options: JwksOptions = {},
  ) {
    const settings = { ...DEFAULTS, ...options };
    this.clockTolerance = settings.clockToleranceSeconds;
    const remote = createRemoteJWKSet(new URL(config.jwks_url), {
      timeoutDuration: settings.timeoutMs,
      cooldownDuration: settings.cooldownMs,
      cacheMaxAge: settings.cacheMaxAgeMs,
    });
    const keys: JWTVerifyGetKey = async (header, token) => {
      try {
        return await remote(header, token);
      } catch (error) {
        // No key for the token's kid/alg, even after a fresh fetch: the token is not the issuer's.
        if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
        throw new KeysUnavailable(error instanceof Error ? error.message : String(error));
      }
    };
    this.keys = Object.assign(keys, { reload: () => remote.reload() });
  }

  /** Fetches the keys now (at start), so that the first request does not wait for them and a bad URL shows early. */
  prefetch(): Promise<void> {
    return this.keys.reload();
  }

  async verify(token: string): Promise<Verdict> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ASYMMETRIC_ALGORITHMS,
        requiredClaims: ['exp'],
        clockTolerance: this.clockTolerance,
      }));
    } catch (error) {
      return this.refusal(error);
    }
    const name = nameOf(payload, this.config.name_claim);
    if (name === undefined) return { kind: 'refused', reason: 'invalid claims' };
    const identity: Identity = { id: this.principalOf(name), name, roles: rolesOf(claimAt(payload, this.config.roles_claim)) };
    return { kind: 'authenticated', identity };
  }

  /** The principal of a JWT named `name`: its own, or the token principal the config maps it to. */
  private principalOf(name: string): string {
    const mapped = Object.hasOwn(this.config.token_principals, name) ? this.config.token_principals[name] : undefined;
    return mapped === undefined ? jwtPrincipal(this.config.issuer, name) : tokenPrincipal(mapped);
  }

  private claimedPrincipal(payload: JWTPayload | undefined): string | undefined {
    const name = nameOf(payload, this.config.name_claim);
    return name === undefined ? undefined : this.principalOf(name);
  }

  private refusal(error: unknown): Verdict {
    if (error instanceof KeysUnavailable) return { kind: 'unverifiable', detail: error.message };
    if (error instanceof errors.JOSEAlgNotAllowed) return { kind: 'refused', reason: 'alg not allowed' };
    if (
      error instanceof errors.JWSSignatureVerificationFailed ||
      error instanceof errors.JWKSNoMatchingKey ||
      error instanceof errors.JWKSMultipleMatchingKeys
    ) {
      return { kind: 'refused', reason: 'bad signature' };
    }
    // Claims are checked after the signature: the name in them is the issuer's word.
    if (error instanceof errors.JWTExpired)
      return { kind: 'refused', reason: 'expired', claimedPrincipal: this.claimedPrincipal(error.payload) };
    if (error instanceof errors.JWTClaimValidationFailed) {
      const reason =
        error.claim === 'iss'
          ? 'wrong issuer'
          : error.claim === 'aud'
            ? 'wrong audience'
            : error.claim === 'nbf'
              ? 'not yet valid'
              : 'invalid claims';
      return { kind: 'refused', reason, claimedPrincipal: this.claimedPrincipal(error.payload) };
    }
    return { kind: 'refused', reason: 'malformed' };
  }
}
