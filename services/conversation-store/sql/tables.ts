import type { Generated } from 'kysely';
import type { ApprovalStatusName, ConversationStatusName } from '../records.js';
import type { ApprovalRow, AuditRow, ConversationRow, EventRow, MessageRow, PushConfigRow, VoteRow } from '../rows.js';

/** The tables as both schemas hold them; only expiries differ (SQLite epoch ms or ISO text, PostgreSQL timestamptz). */
type ConversationsTable = Omit<Required<ConversationRow>, 'input_tokens' | 'output_tokens' | 'lease_takeovers' | `run_${string}`> & {
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  lease_expires_at: unknown;
  lease_takeovers: Generated<number>;
};

interface RunsTable {
  conversation_id: string;
  state: Buffer | null;
  schema_version: number | null;
  revision: number;
  updated_at: string;
}

type ApprovalsTable = Required<Omit<ApprovalRow, 'status' | 'expires_at' | 'votes_json'>> & {
  status: ApprovalStatusName;
  expires_at: unknown;
  position: Generated<number>;
  rowid: Generated<number>;
};

interface WebhookCursorsTable {
  endpoint: string;
  last_event_id: number;
  lease_owner: string | null;
  lease_node: string | null;
  lease_expires_at: unknown;
}

/** A run as its journal keeps it (ddl.ts runJournal). */
export interface RunJournalRow {
  run_id: string;
  conversation_id: string;
  journal_version: number;
  status: string;
  started_at: string;
  ended_at: string | null;
  step_count: number;
  /** The run's user message; NULL in runs of journal format 1. */
  message_seq: number | string | null;
}

export interface RunStepRow {
  run_id: string;
  idx: number;
  kind: string;
  node: string;
  started_at: string;
  duration_ms: number | string;
  body: string;
  /** The seq of the last message before the step; NULL in steps of journal format 1. */
  message_seq: number | string | null;
}

export interface StoreTables {
  conversations: ConversationsTable;
  runs: RunsTable;
  messages: MessageRow;
  approvals: ApprovalsTable;
  approval_votes: VoteRow;
  audit: Omit<AuditRow, 'id'> & { id: Generated<number> };
  events: Omit<EventRow, 'id'> & { id: Generated<number> };
  webhook_cursors: WebhookCursorsTable;
  push_configs: PushConfigRow;
  conversation_counts: { status: ConversationStatusName; count: number };
  conversation_counts_by_owner: { owner: string; status: ConversationStatusName; count: number };
  event_ids: { last_id: number };
  /** PostgreSQL only (NATS): the last event id published to each stream. */
  event_publications: { stream: string; last_id: number };
  background_leases: { name: string; owner: string; node: string; expires_at: unknown };
  /** One row: audit entries older than `before` may be deleted (NULL: none). */
  audit_horizon: { single: number; before: string | null };
  run_journals: RunJournalRow;
  run_steps: RunStepRow;
  history_digests: { conversation_id: string; owner_key: string; digest: string; recorded: Generated<number> };
}
