import type { InputView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ApprovalTimeoutAction, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { jsonObjectOf } from './json-value.js';

/**
 * An approval as the outside sees it: its status named as decided, what came of the
 * call, and the whole record as one JSON resource. One definition for every place that shows
 * one — the gateway's REST and tRPC (`GET /approvals/:uuid`) and the orchestrator's webhooks —
 * so that a webhook's `data` is exactly what the REST resource says.
 */

/** An approval decision as the store records it. */
export type Decision = 'approved' | 'rejected';

/**
 * The decision an approval carries once it has left pending. Executing, done, failed and
 * interrupted all come after an approval; undefined while still pending.
 */
export function decisionOfStatus(status: ApprovalStatus): Decision | undefined {
  switch (status) {
    case ApprovalStatus.APPROVAL_STATUS_REJECTED:
      return 'rejected';
    case ApprovalStatus.APPROVAL_STATUS_APPROVED:
    case ApprovalStatus.APPROVAL_STATUS_EXECUTING:
    case ApprovalStatus.APPROVAL_STATUS_DONE:
    case ApprovalStatus.APPROVAL_STATUS_FAILED:
    case ApprovalStatus.APPROVAL_STATUS_INTERRUPTED:
      return 'approved';
    default:
      return undefined;
  }
}

/**
 * How an approval left pending: a decision, or an expiry that rejected it — nobody
 * decided, so it is neither a human's yes nor a human's no. An expiry that approves is approved.
 */
export type Verdict = Decision | 'expired';

export function verdictOfStatus(status: ApprovalStatus): Verdict | undefined {
  return status === ApprovalStatus.APPROVAL_STATUS_EXPIRED ? 'expired' : decisionOfStatus(status);
}

/**
 * The status of an approval as a resource (`GET /approvals`): what was decided, not
 * what came of the call. Approved covers every approval a human (or an expiry that approves)
 * said yes to, whether its call waits to run, runs, ran or was cut off; `execution` says which.
 */
export type ApprovalStatusName = 'pending' | 'approved' | 'rejected' | 'expired';

export const APPROVAL_STATUS_NAMES: readonly ApprovalStatusName[] = ['pending', 'approved', 'rejected', 'expired'];

/** What came of an approved call once it started; absent before it does. */
type ExecutionName = 'executing' | 'done' | 'failed' | 'interrupted';

function approvalStatusName(status: ApprovalStatus): ApprovalStatusName {
  // UNSPECIFIED, which the store never writes, reads as still waiting: nothing was decided.
  return verdictOfStatus(status) ?? 'pending';
}

function executionName(status: ApprovalStatus): ExecutionName | undefined {
  switch (status) {
    case ApprovalStatus.APPROVAL_STATUS_EXECUTING:
      return 'executing';
    case ApprovalStatus.APPROVAL_STATUS_DONE:
      return 'done';
    case ApprovalStatus.APPROVAL_STATUS_FAILED:
      return 'failed';
    case ApprovalStatus.APPROVAL_STATUS_INTERRUPTED:
      return 'interrupted';
    default:
      return undefined;
  }
}

export type TimeoutActionName = 'reject' | 'approve';

export function timeoutActionName(action: ApprovalTimeoutAction | undefined): TimeoutActionName | undefined {
  if (action === ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE) return 'approve';
  if (action === ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT) return 'reject';
  return undefined;
}

/**
 * An approval as a resource (`GET /approvals`, `GET /approvals/:uuid`): P's call and
 * its whole record — the status as decided, who decided, when, through which face and why,
 * the arguments it ran with when they were edited, and its expiry.
 */
export interface ApprovalRecordJson {
  uuid: string;
  conversation_id: string;
  tool_name: string;
  /** The arguments as the model asked for them. */
  tool_args: Record<string, unknown>;
  description: string;
  status: ApprovalStatusName;
  /** Approved only: what came of the call once it started (absent before). */
  execution?: ExecutionName;
  requested_at: string;
  decided_at?: string;
  /** A token's name, a JWT's subject, "anonymous" without authentication, "timeout" for an expiry. */
  decided_by?: string;
  /** rest, web, a2a, mcp, cli, timeout. */
  via?: string;
  reason?: string;
  /** The arguments the call ran with when the human edited them before approving; for an approval that asked for input, the answer. */
  edited_args?: Record<string, unknown>;
  /** While it waits: "input" when it asks for an answer to an MCP server's question (approve with "input"), not for a yes to a call. */
  kind?: 'input';
  /** With kind "input": who asks, what, and the schema the answer must fit. */
  input_request?: { server: string; questions: string[]; requested_schema: Record<string, unknown> };
  expires_at?: string;
  on_timeout?: TimeoutActionName;
  remote_task_id?: string;
  remote_agent_name?: string;
  agent_chain?: string[];
  outcome_unknown?: true;
  replaces?: string;
  /**
   * An approval that needs a quorum (an approval policy's `require`): how many distinct people
   * must approve, the role they hold, whether the requester may not (`not_requester`), who the
   * requester is, and the votes so far for the arguments in force, oldest first. All absent for
   * an approval that one decision by anyone who may decide approvals settles.
   */
  required?: number;
  role?: string;
  not_requester?: true;
  requested_by?: string;
  votes?: VoteJson[];
  /** An approval policy's `escalate`: when a still pending approval escalates, and to which role. */
  escalates_at?: string;
  /** Once it escalated: when, and the role whose votes count from then on too. */
  escalated_at?: string;
  escalated_to?: string;
}

/** One approving vote of a quorum. */
interface VoteJson {
  voter: string;
  /** rest, web, a2a, mcp, cli. */
  via?: string;
  reason?: string;
  at: string;
}

/** What an approval (A, and P) shows of its quorum and escalation; all absent for an approval one decision settles. */
export type QuorumJson = Pick<
  ApprovalRecordJson,
  'required' | 'role' | 'not_requester' | 'requested_by' | 'votes' | 'escalates_at' | 'escalated_at' | 'escalated_to'
>;

/** The quorum part of an approval resource, with its escalation; empty without a quorum. */
export function quorumJson(approval: PendingApproval): QuorumJson {
  return { ...votingJson(approval), ...escalationJson(approval) };
}

function escalationJson(approval: PendingApproval): QuorumJson {
  if (approval.escalatedAt) return { escalated_at: isoTime(approval.escalatedAt), escalated_to: approval.escalationRole ?? '' };
  return approval.escalatesAt ? { escalates_at: isoTime(approval.escalatesAt) } : {};
}

function votingJson(approval: PendingApproval): QuorumJson {
  const quorum = approval.quorum;
  if (!quorum) return {};
  return {
    required: quorum.required,
    role: quorum.role || 'approve',
    ...(quorum.notRequester && { not_requester: true as const }),
    ...(quorum.requester && { requested_by: quorum.requester }),
    votes: approval.votes.map((vote) => ({
      voter: vote.by,
      ...(vote.via && { via: vote.via }),
      ...(vote.reason && { reason: vote.reason }),
      at: isoTime(vote.at),
    })),
  };
}

// The store always sets timestamps; an empty string keeps the field's type a string if a
// broken record ever lacks one, instead of failing the whole response.
function isoTime(date: Date | undefined): string {
  return date ? date.toISOString() : '';
}

/**
 * `input`: what a pending approval asks when it waits for an answer to an MCP
 * server's question; only a read of one approval knows it (it is in the run, which only the
 * orchestrator reads), so lists and webhooks show such an approval by its description alone.
 */
export function approvalRecordJson(approval: PendingApproval, input?: InputView): ApprovalRecordJson {
  const execution = executionName(approval.status);
  const onTimeout = approval.expiresAt ? timeoutActionName(approval.onTimeout) : undefined;
  return {
    uuid: approval.uuid,
    conversation_id: approval.conversationId,
    tool_name: approval.toolName,
    tool_args: jsonObjectOf(approval.toolArgsJson),
    description: approval.description,
    status: approvalStatusName(approval.status),
    ...(execution && { execution }),
    requested_at: isoTime(approval.createdAt),
    ...(approval.decidedAt && { decided_at: isoTime(approval.decidedAt) }),
    ...(approval.decidedBy && { decided_by: approval.decidedBy }),
    ...(approval.via && { via: approval.via }),
    ...(approval.reason && { reason: approval.reason }),
    ...(approval.editedArgsJson && { edited_args: jsonObjectOf(approval.editedArgsJson) }),
    ...(approval.expiresAt && { expires_at: isoTime(approval.expiresAt) }),
    ...(onTimeout && { on_timeout: onTimeout }),
    ...(approval.remoteTaskId && { remote_task_id: approval.remoteTaskId }),
    ...(approval.remoteAgentName && { remote_agent_name: approval.remoteAgentName }),
    ...(approval.agentChain?.length && { agent_chain: [...approval.agentChain] }),
    ...(approval.outcomeUnknown && { outcome_unknown: true as const }),
    ...(approval.outcomeUnknown && approval.replacesUuid && { replaces: approval.replacesUuid }),
    ...quorumJson(approval),
    ...(input && {
      kind: 'input' as const,
      input_request: { server: input.server, questions: [...input.questions], requested_schema: input.requestedSchema ?? {} },
    }),
  };
}
