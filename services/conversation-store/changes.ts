import { randomUUID } from 'node:crypto';
import type * as pb from '../../gen/ts/asg/store/v1/store.js';
import { ApprovalStatus, ApprovalTimeoutAction, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../common/call-hash.js';
import { jsonObjectOf } from '../common/json-value.js';
import { aborted, invalidArgument } from '../common/grpc/errors.js';
import { FIRST_UUID, storedId } from './ids.js';
import { encodeApprovalsPageToken, encodeAuditPageToken, type PageCursor } from './page-token.js';
import {
  approvalStatus,
  messageRole,
  storedAgentChain,
  storedToolCall,
  isoTimestamp,
  type ApprovalStatusName,
  type ConversationStatusName,
  type TurnOutcome,
} from './records.js';
import { approvalFromRow, auditEntryFromRow, type ApprovalRow, type AuditRow, type ConversationRow, type MessageRow } from './rows.js';
import type { ApprovalClaim, ApprovalPage, AuditPage } from './storage.js';

// The store's rules that do not depend on the database, as pure functions sql/storage.ts applies in its transactions.

/** What one transaction changes on a conversation row; absent fields stay as they are. */
export interface ConversationChange {
  messages?: pb.NewMessage[];
  status?: ConversationStatusName;
  pendingApprovalUuid?: string | null;
  /** The conversation's new run, or null to clear it; either raises the run's revision. */
  run?: Pick<pb.Run, 'state' | 'schemaVersion'> | null;
  /** Approvals this change moved out of pending (claimed already), for their events. */
  resolved?: ApprovalRow[];
  /** Approvals this change created (inserted already), for their events. */
  requested?: ApprovalRow[];
}

/** The waiting state that follows from a conversation's pending approvals, oldest first. */
export function waitingState(
  current: ConversationStatusName,
  pending: readonly ApprovalRow[],
): Pick<ConversationChange, 'status' | 'pendingApprovalUuid'> {
  if (pending.length > 0) return { status: 'waiting_approval', pendingApprovalUuid: pending[0]!.uuid };
  return { status: current === 'waiting_approval' ? 'active' : current, pendingApprovalUuid: null };
}

/** The counters of a conversation row that appending messages moves. */
export interface RunningCounts {
  message_count: number;
  input_tokens: number;
  output_tokens: number;
}

/** The row of a message appended at `at`, numbered after `counts`, which it advances (usage is a running sum). */
export function appendedMessageRow(conversationId: string, message: pb.NewMessage, counts: RunningCounts, at: string): MessageRow {
  counts.message_count += 1;
  counts.input_tokens += message.usage?.inputTokens ?? 0;
  counts.output_tokens += message.usage?.outputTokens ?? 0;
  return {
    conversation_id: conversationId,
    seq: counts.message_count,
    id: randomUUID(),
    role: messageRole.name(message.role),
    content: message.content,
    tool_call: message.toolCall ? JSON.stringify(storedToolCall(message.toolCall)) : null,
    created_at: at,
    input_tokens: message.usage ? message.usage.inputTokens : null,
    output_tokens: message.usage ? message.usage.outputTokens : null,
    compaction: message.compaction ? JSON.stringify(message.compaction) : null,
    node: message.node ?? null,
  };
}

export type NewApprovalFields = Pick<
  pb.CreateApprovalRequest,
  'toolCallId' | 'toolName' | 'toolArgsJson' | 'description' | 'remoteTaskId' | 'remoteAgentName' | 'agentChain'
> &
  Partial<Pick<pb.NewApproval, 'outcomeUnknown' | 'replacesUuid' | 'expiresInMs' | 'onTimeout' | 'quorum' | 'escalation'>> & {
    uuid: string;
  };

/** How long from its creation a new approval waits (null: it never expires). */
export const expiresInMs = (approval: Pick<NewApprovalFields, 'expiresInMs'>): number | null =>
  (approval.expiresInMs ?? 0) > 0 ? approval.expiresInMs! : null;

/**
 * A new approval's row as its INSERT leaves it, but for an expiry the database may set on its own clock: the arguments
 * as proposed and their hash (the approved call is the stored call); an expiry decides reject unless approve is asked.
 */
export function newApprovalRow(conversationId: string, approval: NewApprovalFields, at: string): ApprovalRow {
  const inMs = expiresInMs(approval);
  return {
    uuid: approval.uuid,
    conversation_id: conversationId,
    tool_call_id: approval.toolCallId,
    tool_name: approval.toolName,
    // The text as the caller sent it (checked at the service's edge), so that it reads back as written.
    tool_args: approval.toolArgsJson,
    args_hash: callHash(approval.toolName, jsonObjectOf(approval.toolArgsJson)),
    description: approval.description,
    remote_task_id: approval.remoteTaskId ?? null,
    remote_agent_name: approval.remoteAgentName ?? null,
    created_at: at,
    agent_chain: storedAgentChain(approval.agentChain),
    outcome_unknown: approval.outcomeUnknown === true,
    replaces_uuid: approval.replacesUuid ?? null,
    expires_at: inMs === null ? null : isoTimestamp(Date.parse(at) + inMs),
    on_timeout: inMs === null ? null : approval.onTimeout === ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE ? 'approve' : 'reject',
    status: 'pending',
    decided_at: null,
    updated_at: at,
    reason: null,
    decided_by: null,
    via: null,
    edited_args: null,
    decision_id: null,
    quorum_required: approval.quorum?.required ?? null,
    quorum_role: approval.quorum?.role || null,
    quorum_not_requester: approval.quorum ? Number(approval.quorum.notRequester) : null,
    requested_by: approval.quorum?.requester ?? null,
    votes_json: null,
    escalates_at: approval.escalation ? new Date(Date.parse(at) + Number(approval.escalation.afterMs)).toISOString() : null,
    escalation_role: approval.escalation?.toRole ?? null,
    escalated_at: null,
  };
}

/** Who decided when the caller did not say: a gateway without auth. */
const ANONYMOUS = 'anonymous';

/** What a winning claim writes on the approval it decides, in the claim statement's terms. */
export interface ClaimDecision {
  status: ApprovalStatusName;
  reason: string | null;
  decided_by: string;
  via: string | null;
  edited_args: string | null;
  decision_id: string | null;
  /** 1: the claim wins only before expires_at (a human's); 0: while still pending (the expiry's own, and also_reject's). */
  on_time: 0 | 1;
}

/** The face of an approval's expiry (orchestrator expiry loop): the only decision the deadline does not refuse. */
export const EXPIRY_VIA = 'timeout';

/** A ClaimApproval's decision; INVALID_ARGUMENT for edited arguments on a rejection, or an approving expiry. */
export function claimDecision(request: pb.ClaimApprovalRequest): ClaimDecision {
  if (request.editedArgsJson !== undefined && !request.approved)
    throw invalidArgument('edited_args_json: only an approval runs the call with edited arguments');
  if (request.expired && request.approved)
    throw invalidArgument('expired: an expiry that approves is an approval (decided_by "timeout"), not expired');
  return {
    status: request.approved ? 'approved' : request.expired ? 'expired' : 'rejected',
    reason: request.reason ?? null,
    decided_by: request.decidedBy ?? ANONYMOUS,
    via: request.via ?? null,
    edited_args: request.editedArgsJson ?? null,
    decision_id: request.decisionId ?? null,
    // The deadline is the deadline: after expires_at only the expiry decides.
    on_time: request.via === EXPIRY_VIA ? 0 : 1,
  };
}

/** A claim that decided nothing: another came first, or (still pending) it came after expires_at. */
export function lostClaim(approval: ApprovalClaim['approval']): ApprovalClaim {
  return { claimed: false, approval, ...(approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING && { tooLate: true }) };
}

/** An approval also_reject rejects, whatever its own expiry: the rejection that cancels it was on time. */
export function alsoRejected(decision: ClaimDecision): ClaimDecision {
  return { ...decision, status: 'rejected', edited_args: null, on_time: 0 };
}

/** An audit entry as inserted: the store numbers it. */
export type NewAuditRow = Omit<AuditRow, 'id'>;

/** An audit entry about an approval: its conversation and tool lead its details. */
function approvalAuditRow(approval: ApprovalRow, at: string, kind: string, actor: string, via: string, detail: object): NewAuditRow {
  const details = { conversation_id: approval.conversation_id, tool_name: approval.tool_name, ...detail };
  return { at, kind, actor, via, subject: approval.uuid, detail_json: JSON.stringify(details) };
}

/** The audit entry of one decision a claim made (approval.decided or approval.expired). */
export function decisionAuditRow(decided: ApprovalRow, at: string): NewAuditRow {
  const { status, reason } = decided;
  const detail = { approved: status === 'approved', status, ...(reason ? { reason } : {}), edited: Boolean(decided.edited_args) };
  const kind = status === 'expired' ? 'approval.expired' : 'approval.decided';
  return approvalAuditRow(decided, at, kind, decided.decided_by ?? ANONYMOUS, decided.via ?? '', detail);
}

/**
 * A policy's decision on a call as the approval its event shows (it has no approval record): a fresh uuid, the call,
 * decided by "policy:<rule>" via "policy" at `at`.
 */
export function policyDecisionRow(decision: pb.PolicyDecision, at: string): ApprovalRow {
  const rule = `policy:${decision.rule}`;
  return {
    ...newApprovalRow(
      decision.conversationId,
      {
        uuid: randomUUID(),
        toolCallId: decision.toolCallId,
        toolName: decision.toolName,
        toolArgsJson: decision.toolArgsJson,
        description: `${decision.toolName} ${decision.approved ? 'approved' : 'rejected'} by ${rule}`,
        agentChain: [],
      },
      at,
    ),
    status: decision.approved ? 'approved' : 'rejected',
    decided_at: at,
    decided_by: rule,
    via: 'policy',
    reason: decision.reason ?? null,
  };
}

/** The audit entry of an approval's escalation: by the store's clock ("escalation"), to its role. */
export function escalationAuditRow(approval: ApprovalRow, at: string): NewAuditRow {
  const detail = { to_role: approval.escalation_role, escalates_at: approval.escalates_at };
  return approvalAuditRow(approval, at, 'approval.escalated', 'escalation', 'escalation', detail);
}

/**
 * The audit entry of one vote of a quorum (approval.voted: its count after it, and whether it edited the arguments), or
 * of a vote refused to the requester (approval.vote_refused).
 */
export function voteAuditRow(
  approval: ApprovalRow,
  vote: ClaimDecision,
  at: string,
  outcome: { refused: true } | { votes: number; required: number; edited: boolean },
): NewAuditRow {
  const refused = 'refused' in outcome;
  const detail = { ...(refused ? { refused: 'not_requester' } : outcome), ...(vote.reason ? { reason: vote.reason } : {}) };
  return approvalAuditRow(approval, at, refused ? 'approval.vote_refused' : 'approval.voted', vote.decided_by, vote.via ?? '', detail);
}

/** How the write that ends a turn ended it: paused (waiting), answered (an assistant message), else failed. */
export function endingOutcome(waiting: boolean, messages: readonly pb.NewMessage[]): TurnOutcome {
  if (waiting) return 'paused';
  return messages.some((message) => message.role === MessageRole.MESSAGE_ROLE_ASSISTANT) ? 'answered' : 'failed';
}

/** A history page out of a walk of `limit + 1` rows: at most `limit` messages and `maxChars` of text, at least one. */
export function takePage(walk: readonly MessageRow[], limit: number, maxChars: number): { taken: MessageRow[]; moreOnWalk: boolean } {
  const taken: MessageRow[] = [];
  let chars = 0;
  for (const message of walk.slice(0, limit)) {
    chars += message.content.length + (message.tool_call?.length ?? 0);
    if (taken.length > 0 && chars > maxChars) break;
    taken.push(message);
  }
  return { taken, moreOnWalk: walk.length > taken.length };
}

/** Pending approvals (oldest first) grouped by conversation. */
export function byConversation(approvals: readonly ApprovalRow[]): Map<string, ApprovalRow[]> {
  const grouped = new Map<string, ApprovalRow[]>();
  for (const approval of approvals) grouped.set(approval.conversation_id, [...(grouped.get(approval.conversation_id) ?? []), approval]);
  return grouped;
}

export function summaryOf(counts: Readonly<Record<ConversationStatusName, number>>): pb.ConversationSummary {
  return {
    total: counts.active + counts.waiting_approval + counts.completed,
    active: counts.active,
    waitingApproval: counts.waiting_approval,
    completed: counts.completed,
  };
}

/**
 * Fencing: a write naming a lease owner is made only while that owner holds the lease of a running turn; ABORTED
 * otherwise, so a replica that lost its run writes nothing more. Called before the write's first change.
 */
export function requireLease(row: Pick<ConversationRow, 'id' | 'running_turn_boot' | 'lease_owner'>, leaseOwner: string | undefined): void {
  if (leaseOwner === undefined) return;
  if (row.running_turn_boot && row.lease_owner === leaseOwner) return;
  const why = !row.running_turn_boot
    ? 'the turn ended'
    : row.lease_owner
      ? 'the lease is held by another replica'
      : 'the running turn has no lease';
  throw aborted(
    `conversation ${row.id}: lease owner ${leaseOwner} does not hold its lease (${why}); nothing was written: the run is no longer this replica's`,
  );
}

/** Why UpdateRun's interrupted_approval names no executing approval of the conversation (FAILED_PRECONDITION). */
export function interruptedApprovalProblem(conversationId: string, uuid: string, found: ApprovalRow | undefined): string {
  const rule = 'only an executing call of the conversation can be marked interrupted';
  if (!found)
    return `interrupted_approval: ${storedId(uuid) ?? JSON.stringify(uuid)} is not an approval of conversation ${conversationId}; ${rule}`;
  if (found.conversation_id !== conversationId)
    return `interrupted_approval: approval ${found.uuid} belongs to another conversation than ${conversationId}; ${rule}`;
  return `interrupted_approval: approval ${found.uuid} is ${found.status}; ${rule}`;
}

/** A new approval's replaces_uuid as stored (the lower-case form of a UUID); INVALID_ARGUMENT when it is none. */
export function replacedUuid(uuid: string | undefined): string | undefined {
  if (uuid === undefined) return undefined;
  const stored = storedId(uuid);
  if (stored === undefined) throw invalidArgument(`approvals: replaces_uuid ${JSON.stringify(uuid)} is not a UUID`);
  return stored;
}

/** ListApprovals' first page starts before every (created_at, uuid): '' sorts before any time. */
export const FIRST_APPROVAL: PageCursor = { createdAt: '', id: FIRST_UUID };

/** The statuses a ListApprovals asks for, as stored, each once; none means every status. */
export function listedStatuses(statuses: readonly ApprovalStatus[]): ApprovalStatusName[] {
  if (statuses.length === 0) return [...approvalStatus.names];
  const names = new Set<ApprovalStatusName>();
  for (const status of statuses) {
    const name = approvalStatus.find(status);
    if (name === undefined)
      throw invalidArgument(`statuses: ${String(status)} is not an approval status (${approvalStatus.names.join(', ')})`);
    names.add(name);
  }
  return [...names];
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Walks each in `order` and stopped at `limit`, merged: the first `limit` rows of them all. */
const merged = <Row>(walks: readonly Row[][], limit: number, order: (a: Row, b: Row) => number) => walks.flat().sort(order).slice(0, limit);

/** Walks of approvals, each oldest first: (created_at, uuid). */
export const oldestFirst = (walks: readonly ApprovalRow[][], limit: number) =>
  merged(walks, limit, (a, b) => compare(a.created_at, b.created_at) || compare(a.uuid, b.uuid));

/** Walks of the audit trail, each newest first. */
export const newestFirst = (walks: readonly AuditRow[][], limit: number) => merged(walks, limit, (a, b) => b.id - a.id);

/** A page out of a walk of `limit + 1` rows (the extra row says another page follows), with the token after its last row. */
export function pageOf<Row>(
  rows: readonly Row[],
  limit: number,
  tokenAfter: (last: Row) => string,
): { page: Row[]; nextPageToken: string } {
  const page = rows.slice(0, limit);
  return { page, nextPageToken: rows.length > limit && page.length > 0 ? tokenAfter(page.at(-1)!) : '' };
}

/** A page of approvals, oldest first. */
export function approvalPage(rows: readonly ApprovalRow[], limit: number, encode = encodeApprovalsPageToken): ApprovalPage {
  const { page, nextPageToken } = pageOf(rows, limit, (last) => encode({ createdAt: last.created_at, id: last.uuid }));
  return { approvals: page.map(approvalFromRow), nextPageToken };
}

/** A page of the audit trail, newest first. */
export function auditPage(rows: readonly AuditRow[], limit: number): AuditPage {
  const { page, nextPageToken } = pageOf(rows, limit, (last) => encodeAuditPageToken(last.id));
  return { entries: page.map(auditEntryFromRow), nextPageToken };
}
