import type { Role } from '../app/principal.js';

/** Who a credential proved to be: the principal (services/common/principal-id.ts), the name in its source, its roles. */
export interface Identity {
  id: string;
  name: string;
  roles: readonly Role[];
}

/**
 * What checking a request's credentials concluded. `reason` is what the audit records
 * (`detail_json.reason` of an "auth.failed" entry); the caller is told the matching `message`
 * and never anything about the token beyond it.
 */
export type FailureReason =
  | 'missing'
  | 'malformed'
  | 'unknown token'
  | 'bad signature'
  | 'expired'
  | 'not yet valid'
  | 'wrong audience'
  | 'wrong issuer'
  | 'alg not allowed'
  | 'invalid claims'
  | 'role';

export type Verdict =
  | { kind: 'authenticated'; identity: Identity }
  /** `claimedPrincipal`: the token's principal when it is known to be the issuer's (a signed JWT whose claims failed). */
  | { kind: 'refused'; reason: Exclude<FailureReason, 'role'>; claimedPrincipal?: string }
  /** The issuer's keys could not be fetched: the token is neither good nor bad (503, not 401). */
  | { kind: 'unverifiable'; detail: string };

/** What a refused caller is told, by reason. Fixed texts: nothing of the request is echoed. */
export const REFUSAL_MESSAGES: Record<FailureReason, string> = {
  missing: 'authentication required: send "Authorization: Bearer <token>"',
  malformed: 'the Authorization header is not "Bearer <token>" with a well-formed token',
  'unknown token': 'the bearer token is not valid',
  'bad signature': 'the bearer token is not valid',
  expired: 'the bearer token has expired',
  'not yet valid': 'the bearer token is not valid yet (nbf)',
  'wrong audience': 'the bearer token was issued for another audience',
  'wrong issuer': 'the bearer token was issued by an issuer this agent does not trust',
  'alg not allowed': 'the bearer token is signed with an algorithm this agent refuses (asymmetric signatures only)',
  'invalid claims': 'the bearer token lacks a claim this agent needs (exp, or the configured name claim)',
  role: 'forbidden',
};
