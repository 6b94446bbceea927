import type { Agent } from './agent.js';
import { allows, currentAuthScope, type AuthScope } from './principal.js';

/**
 * Deciding an approval needs the `approve` role, whichever face the decision comes through.
 * REST and tRPC name the decision in the route, so the check in front of the
 * routers (auth/middleware.ts) refuses it there; over A2A ("yes" to a task that waits, or
 * cancelling it) and MCP (the answer to an approval question) a decision is a message like any
 * other, known only once the application layer sees it — so the check is made again where
 * every decision passes: the agent's resolveApproval.
 */

/** Refused for the caller's role: HTTP 403 on every face (app/errors.ts reads `status`). */
export class AccessDenied extends Error {
  readonly status = 403;
  constructor(message: string) {
    super(message);
    this.name = 'AccessDenied';
  }
}

/**
 * `agent` whose resolveApproval first checks that the caller may decide approvals; a refusal is
 * reported to `onRefused` (the audit) with the approval's uuid. A call outside any request
 * (no scope) is refused too: with `auth` on, a decision always has someone behind it.
 */
export function guardDecisions<T extends Pick<Agent, 'resolveApproval'>>(
  agent: T,
  onRefused: (scope: AuthScope, uuid: string) => void = () => undefined,
): T {
  const resolveApproval: Agent['resolveApproval'] = (...args) => {
    const scope = currentAuthScope();
    if (!scope || !allows(scope.principal, 'approve')) {
      if (scope) onRefused(scope, args[0]);
      const name = scope?.principal.name ?? 'a caller without identity';
      const roles = scope?.principal.roles.join(', ') || 'none';
      return Promise.reject(new AccessDenied(`${name} may not decide approvals: that needs the approve role (${name} has ${roles})`));
    }
    return agent.resolveApproval(...args);
  };
  return { ...agent, resolveApproval };
}
