import type { Generated } from 'kysely';
import type { ApprovalStatusName, ConversationStatusName } from '../records.js';
import type { ApprovalRow, AuditRow, EventRow, MessageRow, PushConfigRow } from '../rows.js';

/**
 * The tables the store's queries read and write, as both schemas hold them (sqlite/schema.ts,
 * postgres/schema.ts). Lease expiries are the one column whose type differs: SQLite keeps
 * epoch milliseconds, PostgreSQL a timestamptz; only the dialect's own expressions touch them.
 */
interface ConversationsTable {
  id: string;
  session_id: string;
  status: ConversationStatusName;
  pending_approval_uuid: string | null;
  message_count: number;
  created_at: string;
  updated_at: string;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  a2a_dialect: string | null;
  a2a_context_id: string | null;
  first_user_text: string | null;
  owner: string | null;
  running_turn_boot: string | null;
  running_turn_since: string | null;
  lease_owner: string | null;
  lease_node: string | null;
  lease_expires_at: unknown;
  lease_takeovers: Generated<number>;
}

interface RunsTable {
  conversation_id: string;
  state: Buffer | null;
  schema_version: number | null;
  revision: number;
  updated_at: string;
}

type ApprovalsTable = Required<Omit<ApprovalRow, 'status' | 'expires_at'>> & {
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

export interface StoreTables {
  conversations: ConversationsTable;
  runs: RunsTable;
  messages: MessageRow;
  approvals: ApprovalsTable;
  audit: Omit<AuditRow, 'id'> & { id: Generated<number> };
  events: Omit<EventRow, 'id'> & { id: Generated<number> };
  webhook_cursors: WebhookCursorsTable;
  push_configs: PushConfigRow;
  conversation_counts: { status: ConversationStatusName; count: number };
  conversation_counts_by_owner: { owner: string; status: ConversationStatusName; count: number };
  event_ids: { last_id: number };
}
