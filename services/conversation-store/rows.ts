import type * as pb from '../../gen/ts/asg/store/v1/store.js';
import {
  agentChainFromStored,
  approvalStatus,
  approvalTimeoutAction,
  conversationStatus,
  conversationTitle,
  messageRole,
  toolCallFromStored,
  type ApprovalStatusName,
  type ApprovalTimeoutActionName,
  type ConversationStatusName,
  type MessageRoleName,
  type TurnOutcome,
} from './records.js';

// Rows exactly as the store's statements read them from either database; JSON columns are still text here.

export interface ConversationRow {
  id: string;
  session_id: string;
  status: ConversationStatusName;
  pending_approval_uuid: string | null;
  message_count: number;
  created_at: string;
  updated_at: string;
  input_tokens: number;
  output_tokens: number;
  /** Both set for a conversation created over A2A, both NULL otherwise. */
  a2a_dialect: string | null;
  a2a_context_id: string | null;
  first_user_text: string | null;
  owner: string | null;
  /** The running turn's mark: the boot id of the store that set it, and since when. */
  running_turn_boot?: string | null;
  running_turn_since?: string | null;
  /** The running turn's lease, part of the mark; its expiry is the driver's own (schema.ts) and never leaves it. */
  lease_owner?: string | null;
  lease_node?: string | null;
  lease_takeovers?: number;
  /** Joined from `runs`: bytes and version both NULL while no run is stored; revision 0 before the first. */
  run_state: Buffer | null;
  run_schema_version: number | null;
  run_revision: number;
}

export interface MessageRow {
  conversation_id: string;
  seq: number;
  id: string;
  role: MessageRoleName;
  content: string;
  tool_call: string | null;
  created_at: string;
  input_tokens: number | null;
  output_tokens: number | null;
  compaction: string | null;
  node: string | null;
}

export interface ApprovalRow {
  uuid: string;
  conversation_id: string;
  tool_call_id: string;
  tool_name: string;
  tool_args: string;
  args_hash: string;
  description: string;
  remote_task_id: string | null;
  remote_agent_name: string | null;
  status: ApprovalStatusName;
  created_at: string;
  decided_at: string | null;
  updated_at: string;
  /** JSON array of agent names, nearest first; NULL when there are none. */
  agent_chain: string | null;
  // The optional columns are absent in event payloads written before them.
  reason?: string | null;
  /** SQLite reads 0/1, PostgreSQL a boolean. */
  outcome_unknown?: number | boolean | null;
  replaces_uuid?: string | null;
  decided_by?: string | null;
  via?: string | null;
  /** JSON text, the arguments an approval ran with instead of tool_args. */
  edited_args?: string | null;
  /** ISO text with milliseconds (PostgreSQL reads its timestamptz out as such). */
  expires_at?: string | null;
  on_timeout?: ApprovalTimeoutActionName | null;
  /** Since SQLite schema 19, PostgreSQL schema 10: the id of the decision whose claim won. */
  decision_id?: string | null;
  /** Since SQLite schema 20, PostgreSQL schema 11: the quorum it needs (NULL: one decision) and who asked for the call. */
  quorum_required?: number | null;
  quorum_role?: string | null;
  quorum_not_requester?: number | null;
  requested_by?: string | null;
  /** Read only (never a column): the votes, a JSON array of VoteRow, or NULL without any. */
  votes_json?: string | null;
  /** Since SQLite schema 21, PostgreSQL schema 12: when it escalates (ISO), to which role, and when it did. */
  escalates_at?: string | null;
  escalation_role?: string | null;
  escalated_at?: string | null;
}

/** One vote of a quorum, as stored in approval_votes. */
interface VoteRow {
  approval_uuid: string;
  voter: string;
  via: string | null;
  reason: string | null;
  at: string;
  args_hash: string;
}

/** The votes of a row, oldest first (a vote's time, then its voter: one order on every driver). */
function votesOfRow(row: ApprovalRow): pb.ApprovalVote[] {
  if (!row.votes_json) return [];
  const votes = (JSON.parse(row.votes_json) as Omit<VoteRow, 'approval_uuid'>[]).sort(
    (a, b) => a.at.localeCompare(b.at) || a.voter.localeCompare(b.voter),
  );
  return votes.map((vote) => ({
    by: vote.voter,
    via: vote.via ?? undefined,
    reason: vote.reason ?? undefined,
    at: new Date(vote.at),
    argsHash: vote.args_hash,
  }));
}

/** The quorum of a row; absent for an approval that one decision decides. */
function quorumOfRow(row: ApprovalRow): pb.ApprovalQuorum | undefined {
  if (!row.quorum_required) return undefined;
  return {
    required: row.quorum_required,
    role: row.quorum_role ?? '',
    notRequester: Boolean(row.quorum_not_requester),
    requester: row.requested_by ?? undefined,
  };
}

export interface AuditRow {
  id: number;
  at: string;
  kind: string;
  actor: string;
  via: string;
  subject: string;
  /** A JSON object, as text. */
  detail_json: string;
}

/** A row whose columns map one to one onto a record's fields (snake_case to camelCase), `dates` as Dates, NULL absent. */
function recordOf<T>(row: object, dates: readonly string[]): T {
  const fields = Object.entries(row).map(([column, value]) => [
    column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()),
    value === null ? undefined : dates.includes(column) ? new Date(value as string) : value,
  ]);
  return Object.fromEntries(fields) as T;
}

export const auditEntryFromRow = (row: AuditRow): pb.AuditEntry => recordOf(row, ['at']);

export function messageFromRow(row: MessageRow): pb.Message {
  return {
    id: row.id,
    role: messageRole.value(row.role),
    content: row.content,
    toolCall: row.tool_call === null ? undefined : toolCallFromStored(JSON.parse(row.tool_call)),
    createdAt: new Date(row.created_at),
    seq: row.seq,
    usage: row.input_tokens === null ? undefined : { inputTokens: row.input_tokens, outputTokens: row.output_tokens ?? 0 },
    compaction: row.compaction === null ? undefined : (JSON.parse(row.compaction) as pb.Compaction),
    node: row.node ?? undefined,
  };
}

const APPROVAL_DATES = ['created_at', 'decided_at', 'updated_at', 'expires_at', 'escalates_at', 'escalated_at'];

export function approvalFromRow(row: ApprovalRow): pb.PendingApproval {
  // The columns that are no field of the same name: decoded below, or read into the quorum and the votes.
  const { tool_args, status, agent_chain, outcome_unknown, edited_args, on_timeout, votes_json, ...fields } = row;
  const { quorum_required, quorum_role, quorum_not_requester, requested_by, ...named } = fields;
  return {
    ...recordOf<pb.PendingApproval>(named, APPROVAL_DATES),
    // The stored text, never decoded here: whatever was stored reads back (store.proto says why text).
    toolArgsJson: tool_args,
    status: approvalStatus.value(status),
    agentChain: agentChainFromStored(agent_chain),
    // Absent rather than false on the approvals that ask for the first time: most of them.
    outcomeUnknown: outcome_unknown ? true : undefined,
    editedArgsJson: edited_args || undefined,
    onTimeout: on_timeout ? approvalTimeoutAction.value(on_timeout) : undefined,
    quorum: quorumOfRow(row),
    votes: votesOfRow(row),
  };
}

/** The stored run as the orchestrator wrote it, bytes untouched; absent while none is stored. */
function runFromRow(row: ConversationRow): pb.Run | undefined {
  if (row.run_state === null) return undefined;
  return { state: row.run_state, schemaVersion: row.run_schema_version ?? 0, revision: row.run_revision };
}

/** `pending`: the conversation's pending approvals, oldest first, read only while it waits. */
export function conversationFromRow(row: ConversationRow, messages: pb.Message[], pending: readonly ApprovalRow[]): pb.Conversation {
  const pendingApprovals = pending.map(approvalFromRow);
  return {
    id: row.id,
    sessionId: row.session_id,
    status: conversationStatus.value(row.status),
    messages,
    pendingApproval: pendingApprovals[0],
    pendingApprovals,
    run: runFromRow(row),
    runRevision: row.run_revision,
    watched: false,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    messageCount: row.message_count,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    a2aOrigin: row.a2a_dialect === null ? undefined : { dialect: row.a2a_dialect, contextId: row.a2a_context_id ?? '' },
    title: conversationTitle(row.first_user_text),
    ...(row.owner !== null && { owner: row.owner }),
    hasMoreBefore: false,
    hasMoreAfter: false,
  };
}

/** Live-only kinds are never stored. */
type StoredEventKind =
  | 'message_added'
  | 'approval_requested'
  | 'approval_resolved'
  | 'approval_escalated'
  | 'status_changed'
  | 'turn_started'
  | 'turn_ended'
  | 'conversation_deleted';

export interface EventRow {
  /** Strictly increasing over all conversations, never reused. */
  id: number;
  conversation_id: string;
  kind: StoredEventKind;
  /** JSON: see `eventPayload`. */
  payload: string;
  created_at: string;
}

/** What a stored event says, as the driver hands it over inside the change's transaction. */
export type EventChange =
  | { kind: 'message_added'; message: MessageRow }
  | { kind: 'approval_requested' | 'approval_resolved' | 'approval_escalated'; approval: ApprovalRow }
  | { kind: 'status_changed'; status: ConversationStatusName }
  | { kind: 'turn_started' | 'conversation_deleted' }
  | { kind: 'turn_ended'; outcome: TurnOutcome; hasPushConfigs: boolean };

// Columns that hold JSON text in their own table; in a payload they are nested as JSON values.
const MESSAGE_JSON_COLUMNS = ['tool_call', 'compaction'] as const;
const APPROVAL_JSON_COLUMNS = ['tool_args', 'agent_chain', 'edited_args'] as const;

/** A row as a payload: without the event's own conversation id, its JSON columns nested. */
function payloadOfRow(row: object, jsonColumns: readonly string[]): string {
  const { conversation_id: _conversationId, ...fields } = row as Record<string, unknown>;
  for (const column of jsonColumns) {
    if (typeof fields[column] === 'string') fields[column] = JSON.parse(fields[column] as string);
  }
  return JSON.stringify(fields);
}

function rowOfPayload<Row>(payload: string, conversationId: string, jsonColumns: readonly string[]): Row {
  const fields = JSON.parse(payload) as Record<string, unknown>;
  for (const column of jsonColumns) {
    if (fields[column] !== null && fields[column] !== undefined) fields[column] = JSON.stringify(fields[column]);
  }
  return { ...fields, conversation_id: conversationId } as Row;
}

/** An event's payload: a snapshot at the change, so a replay shows an approval as requested even after its decision. */
export function eventPayload(change: EventChange): string {
  switch (change.kind) {
    case 'message_added':
      return payloadOfRow(change.message, MESSAGE_JSON_COLUMNS);
    case 'approval_requested':
    case 'approval_resolved':
    case 'approval_escalated':
      // One payload whatever the driver read the flag as (SQLite 0/1, PostgreSQL a boolean).
      return payloadOfRow({ ...change.approval, outcome_unknown: Boolean(change.approval.outcome_unknown) }, APPROVAL_JSON_COLUMNS);
    case 'status_changed':
      return JSON.stringify({ status: change.status });
    case 'turn_started':
    case 'conversation_deleted':
      return '{}';
    case 'turn_ended':
      return JSON.stringify({ outcome: change.outcome, has_push_configs: change.hasPushConfigs });
  }
}

export function eventFromRow(row: EventRow): pb.ConversationEvent {
  const event: pb.ConversationEvent = { id: row.id, conversationId: row.conversation_id, at: new Date(row.created_at) };
  switch (row.kind) {
    case 'message_added':
      return { ...event, messageAdded: messageFromRow(rowOfPayload<MessageRow>(row.payload, row.conversation_id, MESSAGE_JSON_COLUMNS)) };
    case 'approval_requested':
    case 'approval_resolved':
    case 'approval_escalated': {
      const approval = approvalFromRow(rowOfPayload<ApprovalRow>(row.payload, row.conversation_id, APPROVAL_JSON_COLUMNS));
      if (row.kind === 'approval_requested') return { ...event, approvalRequested: approval };
      return row.kind === 'approval_resolved' ? { ...event, approvalResolved: approval } : { ...event, approvalEscalated: approval };
    }
    case 'status_changed':
      return { ...event, statusChanged: conversationStatus.value((JSON.parse(row.payload) as { status: string }).status) };
    case 'turn_started':
      return { ...event, turnStarted: {} };
    case 'turn_ended': {
      // Events of earlier releases say nothing of how the turn ended ('{}'), or of push configs ('{"outcome":…}').
      const ended = JSON.parse(row.payload) as { outcome?: string; has_push_configs?: boolean };
      return { ...event, turnEnded: { outcome: ended.outcome, hasPushConfigs: ended.has_push_configs } };
    }
    case 'conversation_deleted':
      return { ...event, conversationDeleted: {} };
    default:
      throw new Error(`stored event kind "${String(row.kind)}" is not one this build knows`);
  }
}

/** A row of push_configs, the same in SQLite and PostgreSQL. */
export interface PushConfigRow {
  conversation_id: string;
  id: string;
  url: string;
  token: string;
  dialect: string;
  created_at: string;
}

export const pushConfigOfRow = (row: PushConfigRow): pb.PushConfig => recordOf(row, ['created_at']);
