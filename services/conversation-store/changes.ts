import { randomUUID } from 'node:crypto';
import type { ConversationSummary, CreateApprovalRequest, NewApproval, NewMessage, Run } from '../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../common/call-hash.js';
import { aborted, invalidArgument } from '../common/grpc/errors.js';
import { storedId } from './ids.js';
import { messageRole, storedAgentChain, storedToolCall, type ConversationStatusName } from './records.js';
import type { ApprovalRow, MessageRow } from './rows.js';

/**
 * The store's rules that do not depend on the database: what a change does to a
 * conversation's row, the rows it inserts, and how a history page is cut. Both drivers
 * (sqlite/, postgres/) apply them, each in its own transactions, so that they cannot drift
 * apart; the conformance suites check the drivers against each other.
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
export function waitingState(current: ConversationStatusName, pending: readonly ApprovalRow[]): Pick<ConversationChange, 'status' | 'pendingApprovalUuid'> {
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

export type NewApprovalFields = Pick<CreateApprovalRequest, 'toolCallId' | 'toolName' | 'toolArgs' | 'description' | 'remoteTaskId' | 'remoteAgentName' | 'agentChain'> &
  Partial<Pick<NewApproval, 'outcomeUnknown' | 'replacesUuid'>> & { uuid: string };

/** The stored fields of a new approval: the arguments as proposed and their hash (DESIGN rule 4). */
export function newApprovalRow(conversationId: string, approval: NewApprovalFields, at: string) {
  const toolArgs = approval.toolArgs ?? {};
  return {
    uuid: approval.uuid,
    conversation_id: conversationId,
    tool_call_id: approval.toolCallId,
    tool_name: approval.toolName,
    tool_args: JSON.stringify(toolArgs),
    args_hash: callHash(approval.toolName, toolArgs),
    description: approval.description,
    remote_task_id: approval.remoteTaskId ?? null,
    remote_agent_name: approval.remoteAgentName ?? null,
    created_at: at,
    agent_chain: storedAgentChain(approval.agentChain),
    outcome_unknown: approval.outcomeUnknown === true,
    replaces_uuid: approval.replacesUuid ?? null,
  };
}

/** A new approval's row as its INSERT leaves it (pending, undecided). */
export function insertedApprovalRow(row: ReturnType<typeof newApprovalRow>): ApprovalRow {
  return { ...row, status: 'pending', decided_at: null, updated_at: row.created_at };
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
  return { total: counts.active + counts.waiting_approval + counts.completed, active: counts.active, waitingApproval: counts.waiting_approval, completed: counts.completed };
}

/** The lease columns of a conversation row that fencing reads (rows.ts). */
export interface LeaseMark {
  id: string;
  running_turn_boot?: string | null;
  lease_owner?: string | null;
}

/**
 * Fencing (issue 14, store.proto AppendMessagesRequest.lease_owner): a write that names a lease
 * owner is made only while that owner holds the lease of a running turn; ABORTED otherwise, so
 * that a replica that lost its run (taken over, or the turn ended) writes nothing more. Absent:
 * no check. Called before the write's first change, inside its transaction.
 */
export function requireLease(row: LeaseMark, leaseOwner: string | undefined): void {
  if (leaseOwner === undefined) return;
  if (row.running_turn_boot && row.lease_owner === leaseOwner) return;
  const why = !row.running_turn_boot ? 'the turn ended' : row.lease_owner ? 'the lease is held by another replica' : 'the running turn has no lease';
  throw aborted(`conversation ${row.id}: lease owner ${leaseOwner} does not hold its lease (${why}); nothing was written: the run is no longer this replica's`);
}

/** Why UpdateRun's interrupted_approval names no executing approval of the conversation (FAILED_PRECONDITION). */
export function interruptedApprovalProblem(conversationId: string, uuid: string, found: ApprovalRow | undefined): string {
  const rule = 'only an executing call of the conversation can be marked interrupted';
  if (!found) return `interrupted_approval: ${storedId(uuid) ?? JSON.stringify(uuid)} is not an approval of conversation ${conversationId}; ${rule}`;
  if (found.conversation_id !== conversationId) return `interrupted_approval: approval ${found.uuid} belongs to another conversation than ${conversationId}; ${rule}`;
  return `interrupted_approval: approval ${found.uuid} is ${found.status}; ${rule}`;
}

/** A new approval's replaces_uuid as stored (the lower-case form of a UUID); INVALID_ARGUMENT when it is none. */
export function replacedUuid(uuid: string | undefined): string | undefined {
  if (uuid === undefined) return undefined;
  const stored = storedId(uuid);
  if (stored === undefined) throw invalidArgument(`approvals: replaces_uuid ${JSON.stringify(uuid)} is not a UUID`);
  return stored;
}
