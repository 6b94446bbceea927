import { ApprovalStatus, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { ROLES } from '../../services/common/config/schema.js';
import { ANONYMOUS, currentAuthScope } from './principal.js';

/**
 * Who decides an approval and through which face: stored with the decision
 * (PendingApproval.decided_by, via) and in the audit trail.
 */

/** The faces a human decides through; `timeout` is the store's own expiry, never a caller's. */
export type DecisionFace = 'rest' | 'web' | 'a2a' | 'mcp' | 'cli';

export interface Decider {
  /** The principal (`token:<name>`, `jwt:<issuer>#<name>`; principal.ts), or ANONYMOUS without authentication. */
  principal: string;
  via: DecisionFace;
  /** The principal's roles: an approval with a quorum is decided only by the people of its role. */
  roles?: string[];
}

/**
 * The one place a face learns who is deciding: every face calls this with its own name and
 * passes the result to Agent.resolveApproval, so that the caller's identity is read here and
 * nowhere else. Without gateway authentication every caller is anonymous; with it, the
 * principal the authentication middleware put in the request's context (principal.ts) names
 * the decider.
 */
export function currentDecider(via: DecisionFace): Decider {
  const scope = currentAuthScope();
  // Without authentication nobody can be told apart, and everyone holds every role.
  const roles = scope?.authentication ? [...scope.principal.roles] : [...ROLES];
  return { principal: scope?.principal.id ?? ANONYMOUS, via, roles };
}

/** Who the caller is, as `auth.whoami` tells the web chat; `authentication: "off"` when `auth` is not configured. */
export interface Whoami {
  /** The principal, as decided_by and a conversation's owner name it. */
  principal: string;
  /** The name within its source, to greet the caller with. */
  name: string;
  roles: string[];
  authentication: 'on' | 'off';
}

/** Read where currentDecider reads: without gateway authentication, everyone is anonymous and may do everything. */
export function currentWhoami(): Whoami {
  const scope = currentAuthScope();
  if (!scope) return { principal: ANONYMOUS, name: ANONYMOUS, roles: ['admin'], authentication: 'off' };
  return {
    principal: scope.principal.id,
    name: scope.principal.name,
    roles: [...scope.principal.roles],
    authentication: scope.authentication ? 'on' : 'off',
  };
}

/**
 * The header by which `asg approvals` (cli/approvals-client.ts) labels its REST calls, so that
 * its decisions record via "cli": a label, not a credential — the identity is the token's.
 */
export const VIA_HEADER = 'X-ASG-Via';

/** REST is the CLI's face too: its decisions say `cli` when the request is labelled so. */
export function restFace(viaHeader: string | undefined): DecisionFace {
  return viaHeader?.trim().toLowerCase() === 'cli' ? 'cli' : 'rest';
}

/**
 * Whether `voter` may still vote for (or decide) a pending approval — what "needs my vote"
 * lists: an ordinary approval, to anyone who may decide approvals; one with a quorum, to a
 * holder of its role (or, once escalated, of its escalation role) who is not the requester
 * under not_requester and has not voted for the arguments in force.
 */
export function needsVoteOf(approval: PendingApproval, voter: Decider): boolean {
  if (approval.status !== ApprovalStatus.APPROVAL_STATUS_PENDING) return false;
  const roles = voter.roles ?? [];
  const quorum = approval.quorum;
  if (!quorum) return roles.includes('approve') || roles.includes('admin');
  const escalated = approval.escalatedAt !== undefined && approval.escalationRole !== undefined && roles.includes(approval.escalationRole);
  if (!roles.includes(quorum.role || 'approve') && !escalated) return false;
  if (quorum.notRequester && quorum.requester === voter.principal) return false;
  return !approval.votes.some((vote) => vote.by === voter.principal);
}
