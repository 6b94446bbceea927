import { randomUUID } from 'node:crypto';
import {
  ApprovalStatus,
  ApprovalTimeoutAction,
  MessageRole,
  type ClaimApprovalRequest,
  type ConversationSummary,
  type CreateApprovalRequest,
  type NewApproval,
  type NewMessage,
  type Run,
} from '../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../common/call-hash.js';
import { jsonObjectOf } from '../common/json-value.js';
import { aborted, invalidArgument } from '../common/grpc/errors.js';
import { storedId } from './ids.js';
import { encodeApprovalsPageToken, encodeAuditPageToken, type PageCursor } from './page-token.js';
import {
  approvalStatus,
  messageRole,
  storedAgentChain,
  storedToolCall,
  type ApprovalStatusName,
  type ApprovalTimeoutActionName,
  type ConversationStatusName,
  type TurnOutcome,
} from './records.js';
import { approvalFromRow, auditEntryFromRow, type ApprovalRow, type AuditRow, type MessageRow } from './rows.js';
import type { ApprovalClaim, ApprovalPage, AuditPage } from './storage.js';

/**
 * The store's rules that do not depend on the database: what a change does to a
 * conversation's row, the rows it inserts, and how a history page is cut, as pure functions
 * that the store's one implementation (sql/storage.ts) applies in its transactions.
 */

/** What one transaction changes on a conversation row; absent fields stay as they are. */
export interface ConversationChange {
  messages?: NewMessage[];
  status?: ConversationStatusName;
  pendingApprovalUuid?: string | null;
  /** The conversation's new run, or null to clear it; either raises the run's revision. */
  run?: Pick<Run, 'state' | 'schemaVersion'> | null;
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

/**
 * The row of a message appended at `at`, numbered after `counts`, which it advances: the
 * conversation's usage is a running sum kept in the same transaction, so reading it never sums
 * messages.
 */
export function appendedMessageRow(conversationId: string, message: NewMessage, counts: RunningCounts, at: string): MessageRow {
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
  CreateApprovalRequest,
  'toolCallId' | 'toolName' | 'toolArgsJson' | 'description' | 'remoteTaskId' | 'remoteAgentName' | 'agentChain'
> &
  Partial<Pick<NewApproval, 'outcomeUnknown' | 'replacesUuid' | 'expiresInMs' | 'onTimeout'>> & { uuid: string };

/**
 * A new approval's expiry (store.proto NewApproval.expires_in_ms): how long from now
 * (the driver's clock: SQLite the store's, PostgreSQL the database's) and what it decides, reject
 * unless approve is asked for; none (nulls) when it waits for a human forever.
 */
export function approvalExpiry(approval: Pick<NewApprovalFields, 'expiresInMs' | 'onTimeout'>): {
  inMs: number | null;
  onTimeout: ApprovalTimeoutActionName | null;
} {
  const inMs = approval.expiresInMs ?? 0;
  if (inMs <= 0) return { inMs: null, onTimeout: null };
  return { inMs, onTimeout: approval.onTimeout === ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE ? 'approve' : 'reject' };
}

/**
 * The stored fields of a new approval: the arguments as proposed and their hash (the approved call is the stored call).
 * `expiresAt` is the driver's (approvalExpiry says when one is due): SQLite computes it before
 * the INSERT, PostgreSQL in it; null for none.
 */
export function newApprovalRow(conversationId: string, approval: NewApprovalFields, at: string, expiresAt: string | null = null) {
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
    expires_at: expiresAt,
    on_timeout: approvalExpiry(approval).onTimeout,
  };
}

/** A new approval's row as its INSERT leaves it (pending, undecided). */
export function insertedApprovalRow(row: ReturnType<typeof newApprovalRow>): ApprovalRow {
  return {
    ...row,
    status: 'pending',
    decided_at: null,
    updated_at: row.created_at,
    reason: null,
    decided_by: null,
    via: null,
    edited_args: null,
    decision_id: null,
  };
}

/** Who decided when the caller did not say (store.proto, PendingApproval.decided_by): a gateway without auth. */
const ANONYMOUS = 'anonymous';

/** What a winning claim writes on the approval it decides, in the claim statement's terms. */
export interface ClaimDecision {
  status: ApprovalStatusName;
  reason: string | null;
  decided_by: string;
  via: string | null;
  /** JSON text; only on an approval. */
  edited_args: string | null;
  decision_id: string | null;
  /**
   * 1: the claim wins only before the approval's expires_at (a human's); 0: whenever it is
   * still pending (the expiry's own, via "timeout", and the approvals a rejection cancels with it).
   */
  on_time: 0 | 1;
}

/** The face of an approval's expiry (orchestrator expiry loop): the only decision the deadline does not refuse. */
const EXPIRY_VIA = 'timeout';

/**
 * The decision a ClaimApproval makes (store.proto, ClaimApprovalRequest): approved, expired (an
 * expiry that rejects) or rejected, with who decided, through which face, why, and the edited
 * arguments of an approval. INVALID_ARGUMENT for edited arguments on a rejection, or an
 * approving expiry (an expiry that approves is an approval by "timeout").
 */
export function claimDecision(request: ClaimApprovalRequest): ClaimDecision {
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

/**
 * A claim that decided nothing: another decision came first, or — the approval still pending —
 * its expires_at had passed and the claim was not the expiry's (too late).
 */
export function lostClaim(approval: ApprovalClaim['approval']): ApprovalClaim {
  return { claimed: false, approval, ...(approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING && { tooLate: true }) };
}

/** An approval that also_reject rejects with a claim: the claim's identity and reason, nothing edited. */
export function alsoRejected(decision: ClaimDecision): ClaimDecision {
  // Cancelled with the run whatever their own expiry: the rejection that cancels them was on time.
  return { ...decision, status: 'rejected', edited_args: null, on_time: 0 };
}

/** An audit entry as inserted: the store numbers it. */
export type NewAuditRow = Omit<AuditRow, 'id'>;

/**
 * The audit entry of one decision a claim made (approval.decided, or approval.expired), appended
 * in the claim's transaction: who, through which face, which approval, and what was decided.
 */
export function decisionAuditRow(decided: ApprovalRow, at: string): NewAuditRow {
  const detail = {
    conversation_id: decided.conversation_id,
    tool_name: decided.tool_name,
    approved: decided.status === 'approved',
    status: decided.status,
    ...(decided.reason ? { reason: decided.reason } : {}),
    edited: Boolean(decided.edited_args),
  };
  return {
    at,
    kind: decided.status === 'expired' ? 'approval.expired' : 'approval.decided',
    actor: decided.decided_by ?? ANONYMOUS,
    via: decided.via ?? '',
    subject: decided.uuid,
    detail_json: JSON.stringify(detail),
  };
}

/**
 * How the write that ends a turn ended it (store.proto, TurnEnded.outcome): paused when the
 * conversation waits for approvals after it, answered when it appended an assistant message,
 * failed otherwise (the orchestrator's endTurn after a failure appends nothing). Interrupted
 * turns are the callers' to name.
 */
export function endingOutcome(waiting: boolean, messages: readonly NewMessage[]): TurnOutcome {
  if (waiting) return 'paused';
  return messages.some((message) => message.role === MessageRole.MESSAGE_ROLE_ASSISTANT) ? 'answered' : 'failed';
}

/**
 * The messages of a history page out of a walk of at most `limit + 1` rows in the page's
 * direction: at most `limit` messages and `maxChars` of text, at least one. `moreOnWalk` says a
 * row was left over in the walk's direction.
 */
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

/** The list summary from the per-status counts. */
export function summaryOf(counts: Readonly<Record<ConversationStatusName, number>>): ConversationSummary {
  return {
    total: counts.active + counts.waiting_approval + counts.completed,
    active: counts.active,
    waitingApproval: counts.waiting_approval,
    completed: counts.completed,
  };
}

/** The lease columns of a conversation row that fencing reads (rows.ts). */
export interface LeaseMark {
  id: string;
  running_turn_boot?: string | null;
  lease_owner?: string | null;
}

/**
 * Fencing (store.proto AppendMessagesRequest.lease_owner): a write that names a lease
 * owner is made only while that owner holds the lease of a running turn; ABORTED otherwise, so
 * that a replica that lost its run (taken over, or the turn ended) writes nothing more. Absent:
 * no check. Called before the write's first change, inside its transaction.
 */
export function requireLease(row: LeaseMark, leaseOwner: string | undefined): void {
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
export const FIRST_APPROVAL: PageCursor = { createdAt: '', id: '00000000-0000-0000-0000-000000000000' };

/** Every status an approval can have, as stored. */
const APPROVAL_STATUSES: readonly ApprovalStatusName[] = [
  'pending',
  'approved',
  'rejected',
  'executing',
  'done',
  'failed',
  'interrupted',
  'expired',
];

/**
 * The statuses a ListApprovals asks for, as stored, each once; none means every status.
 * INVALID_ARGUMENT for unspecified or a number that is no status (the edge checks it too).
 */
export function listedStatuses(statuses: readonly ApprovalStatus[]): ApprovalStatusName[] {
  if (statuses.length === 0) return [...APPROVAL_STATUSES];
  const names = new Set<ApprovalStatusName>();
  for (const status of statuses) {
    const name = APPROVAL_STATUSES.find((candidate) => approvalStatus.value(candidate) === status);
    if (name === undefined)
      throw invalidArgument(
        `statuses: ${String(status)} is not an approval status (pending, approved, rejected, executing, done, failed, interrupted, expired)`,
      );
    names.add(name);
  }
  return [...names];
}

/**
 * Walks that are each in (created_at, uuid) order, merged into one: the first `limit` rows of
 * them all. Each walk stopped at `limit` itself, so the merge reads no more than it returns
 * per status.
 */
export function oldestFirst(walks: readonly ApprovalRow[][], limit: number): ApprovalRow[] {
  const key = (row: ApprovalRow) => [row.created_at, row.uuid] as const;
  return walks
    .flat()
    .sort((a, b) => {
      const [at, au] = key(a);
      const [bt, bu] = key(b);
      return at < bt ? -1 : at > bt ? 1 : au < bu ? -1 : au > bu ? 1 : 0;
    })
    .slice(0, limit);
}

/** Walks of the audit trail that are each newest first, merged: the first `limit` entries. */
export function newestFirst(walks: readonly AuditRow[][], limit: number): AuditRow[] {
  return walks
    .flat()
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

/** A page of approvals from a walk of `limit + 1` rows: the extra row says another page follows. */
export function approvalPage(rows: readonly ApprovalRow[], limit: number): ApprovalPage {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    approvals: page.map(approvalFromRow),
    nextPageToken: rows.length > limit && last ? encodeApprovalsPageToken({ createdAt: last.created_at, id: last.uuid }) : '',
  };
}

/** A page of the audit trail from a walk of `limit + 1` entries, newest first. */
export function auditPage(rows: readonly AuditRow[], limit: number): AuditPage {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { entries: page.map(auditEntryFromRow), nextPageToken: rows.length > limit && last ? encodeAuditPageToken(last.id) : '' };
}
