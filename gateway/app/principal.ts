import { context, createContextKey } from '@opentelemetry/api';
import type { ROLES } from '../../services/common/config/schema.js';
// Registers the AsyncLocalStorage context manager the scope rides in, with the request context.
import '../../services/common/context.js';
import type { DecisionFace } from './decider.js';

/**
 * Who a request is, as every face of the gateway sees it: a principal — an identity qualified
 * by where it comes from (principal-id.ts), so that an API token and a JWT that carry the same
 * name are two principals —, the name it goes by there, the roles it holds and the face it came
 * through. The authentication middleware (auth/middleware.ts) puts it in the request's async
 * context; ownership.ts reads it for whose conversations it may see, decider.ts where a face
 * makes a decision (`decided_by`), and the decision guard (decision-guard.ts) where any decision
 * passes.
 */

export type Role = (typeof ROLES)[number];

/**
 * The faces a request comes through (decider.ts DecisionFace): the web chat speaks tRPC, and
 * `asg approvals` is REST that says `X-ASG-Via: cli` (a label, not a credential). The
 * OpenAI-compatible face (`/v1/…`) decides nothing — its approvals are decided over REST — but
 * answers refusals in its own shape.
 */
export type Face = DecisionFace | 'openai';

export interface Principal {
  /**
   * The principal: `token:<name>`, `jwt:<issuer>#<name>` (principal-id.ts), or "anonymous"
   * without `auth`. What owns conversations and MCP sessions, decides approvals and is audited.
   */
  id: string;
  /** The name within its source (a token's name, a JWT's name claim): how messages address the caller. */
  name: string;
  roles: readonly Role[];
  via: Face;
}

/** The identity of every request when `auth` is not configured: it may do everything. */
export const ANONYMOUS = 'anonymous';

export function anonymousPrincipal(via: Face): Principal {
  return { id: ANONYMOUS, name: ANONYMOUS, roles: ['admin'], via };
}

/** `admin` may do everything; otherwise the role itself is needed. */
export function allows(principal: Pick<Principal, 'roles'>, role: Role): boolean {
  return principal.roles.includes('admin') || principal.roles.includes(role);
}

/** The principal of a request and the route it asked for (for the audit of a refusal made later, e.g. a decision). */
export interface AuthScope {
  principal: Principal;
  /** "POST /a2a", "POST /approvals/:uuid": what an audit entry names as its subject. */
  subject: string;
  /** Whether `auth` is configured (GET /auth/whoami says so). */
  authentication: boolean;
}

const AUTH_SCOPE = createContextKey('asg.gateway.auth-scope');

export function withAuthScope<T>(scope: AuthScope, fn: () => T): T {
  return context.with(context.active().setValue(AUTH_SCOPE, scope), fn);
}

/** The current request's scope; undefined outside a request (tests that call the application layer directly). */
export function currentAuthScope(): AuthScope | undefined {
  return context.active().getValue(AUTH_SCOPE) as AuthScope | undefined;
}
