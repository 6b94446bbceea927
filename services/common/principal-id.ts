/**
 * How a principal is written wherever it is kept or shown — a conversation's owner, an
 * approval's `decided_by`, an audit entry's actor, an MCP session's owner: its name qualified
 * by the source that vouched for it, so that an API token and a JWT carrying the same name are
 * two principals, not one.
 *
 * - `token:<name>`: the API token of `auth.tokens` named so (or a JWT that `auth.jwt.token_principals`
 *   maps to it, on purpose);
 * - `jwt:<issuer>#<name>`: a JWT of `auth.jwt` whose name claim says `<name>` (OIDC issuers
 *   have no fragment, so `#` ends the issuer).
 *
 * Without `auth` everyone is "anonymous"; an expiry decides as "timeout". Ids are compared
 * whole, never parsed.
 */

export const TOKEN_PRINCIPAL_PREFIX = 'token:';
const JWT_PRINCIPAL_PREFIX = 'jwt:';

/** The longest issuer `auth.jwt.issuer` may name, so that every principal fits MAX_PRINCIPAL_LENGTH. */
export const MAX_ISSUER_LENGTH = 200;
/** The longest name a source may give (a JWT's name claim; token names are shorter). */
export const MAX_PRINCIPAL_NAME_LENGTH = 200;
/** The longest principal: `jwt:` + issuer + `#` + name, with room to spare. What the store keeps of an owner, a decider and an actor. */
export const MAX_PRINCIPAL_LENGTH = 512;

export function tokenPrincipal(name: string): string {
  return `${TOKEN_PRINCIPAL_PREFIX}${name}`;
}

export function jwtPrincipal(issuer: string, name: string): string {
  return `${JWT_PRINCIPAL_PREFIX}${issuer}#${name}`;
}
