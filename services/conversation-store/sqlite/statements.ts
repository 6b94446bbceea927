import type { Database, Statement } from 'better-sqlite3';
import type { NewAuditRow } from '../changes.js';
import type { ApprovalStatusName, ConversationStatusName } from '../records.js';
import type { ApprovalRow, AuditRow, ConversationRow, EventRow, MessageRow, PushConfigRow } from '../rows.js';

/**
 * A conversation row with its run (schema 12): one primary-key lookup in `runs` per
 * conversation read, in the same statement, so reading a conversation or a page of them costs
 * no second query. A conversation whose run was never written has no row: revision 0.
 */
const CONVERSATION_WITH_RUN = `
  SELECT conversations.*, runs.state AS run_state, runs.schema_version AS run_schema_version,
         coalesce(runs.revision, 0) AS run_revision
  FROM conversations LEFT JOIN runs ON runs.conversation_id = conversations.id`;

/**
 * Every statement the driver runs, as text. Each is prepared once at open and reused, so
 * a request costs no SQL compilation; the test suite checks that none of them scans a
 * whole table (a request costs the same however many conversations there are).
 */
export const SQL = {
  insertConversation: `
    INSERT INTO conversations (id, session_id, status, pending_approval_uuid, message_count, created_at, updated_at,
                               a2a_dialect, a2a_context_id, owner)
    VALUES (@id, @session_id, 'active', NULL, 0, @created_at, @created_at, @a2a_dialect, @a2a_context_id, @owner)`,
  // Read to keep creation times strictly increasing; an index seek, not a scan.
  newestCreatedAt: `SELECT created_at FROM conversations ORDER BY created_at DESC, id DESC LIMIT 1`,
  selectConversation: `${CONVERSATION_WITH_RUN} WHERE conversations.id = ?`,
  // The whole mutable state at once: the driver decides it from the row it read in the
  // same transaction, so one statement serves every kind of change.
  updateConversation: `
    UPDATE conversations
    SET status = @status, pending_approval_uuid = @pending_approval_uuid,
        message_count = @message_count, updated_at = @updated_at,
        input_tokens = @input_tokens, output_tokens = @output_tokens
    WHERE id = @id`,
  firstPage: `${CONVERSATION_WITH_RUN} ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT ?`,
  pageAfter: `
    ${CONVERSATION_WITH_RUN}
    WHERE (conversations.created_at, conversations.id) < (@created_at, @id)
    ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT @limit`,
  // One owner's conversations (ListConversations with an owner): a walk of
  // conversations_by_owner from the cursor, stopping at the limit.
  ownerFirstPage: `
    ${CONVERSATION_WITH_RUN}
    WHERE conversations.owner = @owner
    ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT @limit`,
  ownerPageAfter: `
    ${CONVERSATION_WITH_RUN}
    WHERE conversations.owner = @owner AND (conversations.created_at, conversations.id) < (@created_at, @id)
    ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT @limit`,
  // A change of the conversation's run (store.proto, UpdateRun): the new bytes, or NULLs to
  // clear it, at the revision the driver computed from the row it read in this transaction.
  writeRun: `
    INSERT INTO runs (conversation_id, state, schema_version, revision, updated_at)
    VALUES (@conversation_id, @state, @schema_version, @revision, @updated_at)
    ON CONFLICT (conversation_id) DO UPDATE
    SET state = excluded.state, schema_version = excluded.schema_version, revision = excluded.revision, updated_at = excluded.updated_at`,
  selectCounts: `SELECT status, count FROM conversation_counts`,
  selectOwnerCounts: `SELECT status, count FROM conversation_counts_by_owner WHERE owner = ?`,

  insertMessage: `
    INSERT INTO messages (conversation_id, seq, id, role, content, tool_call, created_at, input_tokens, output_tokens, compaction, node)
    VALUES (@conversation_id, @seq, @id, @role, @content, @tool_call, @created_at, @input_tokens, @output_tokens, @compaction, @node)`,
  selectMessages: `SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq`,
  // A page of history (GetConversation with message_limit) walks the primary key from the
  // cursor's seq, newest first or oldest first, and stops at the limit; the newest page is
  // the page before seq message_count + 1. A cursor's seq comes from the unique id index.
  selectMessagesBefore: `
    SELECT * FROM messages
    WHERE conversation_id = @conversation_id AND seq < @seq
    ORDER BY seq DESC LIMIT @limit`,
  selectMessagesAfter: `
    SELECT * FROM messages
    WHERE conversation_id = @conversation_id AND seq > @seq
    ORDER BY seq LIMIT @limit`,
  selectMessagePosition: `SELECT conversation_id, seq FROM messages WHERE id = ?`,

  insertApproval: `
    INSERT INTO approvals (uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description,
                           remote_task_id, remote_agent_name, status, created_at, decided_at, updated_at, agent_chain,
                           outcome_unknown, replaces_uuid, expires_at, on_timeout)
    VALUES (@uuid, @conversation_id, @tool_call_id, @tool_name, @tool_args, @args_hash, @description,
            @remote_task_id, @remote_agent_name, 'pending', @created_at, NULL, @created_at, @agent_chain,
            @outcome_unknown, @replaces_uuid, @expires_at, @on_timeout)`,
  selectApproval: `SELECT * FROM approvals WHERE uuid = ?`,
  // A conversation's pending approvals, oldest first (rowid: approvals created in one
  // transaction share created_at and keep their insertion order).
  selectPendingApprovals: `
    SELECT * FROM approvals
    WHERE conversation_id = ? AND status = 'pending'
    ORDER BY created_at, rowid`,
  // The same for a whole page of conversations, in one query.
  selectPendingApprovalsOfConversations: `
    SELECT * FROM approvals
    WHERE conversation_id IN (SELECT value FROM json_each(?)) AND status = 'pending'
    ORDER BY conversation_id, created_at, rowid`,
  // The exactly-once claim: only the update that still sees 'pending' wins.
  // The decision keeps who made it, through which face, and an approval's edited arguments.
  // A claim on time (@on_time = 1) also needs the approval's expires_at not to have passed.
  claimApproval: `
    UPDATE approvals
    SET status = @status, decided_at = @now, updated_at = @now, reason = @reason,
        decided_by = @decided_by, via = @via, edited_args = @edited_args
    WHERE uuid = @uuid AND status = 'pending' AND (@on_time = 0 OR expires_at IS NULL OR expires_at > @now)
    RETURNING *`,
  moveApproval: `
    UPDATE approvals SET status = @to, updated_at = @now
    WHERE uuid = @uuid AND status = @from
    RETURNING *`,
  interruptApproval: `
    UPDATE approvals SET status = 'interrupted', updated_at = @now
    WHERE uuid = @uuid AND status IN ('approved', 'executing') AND updated_at <= @unchanged_since
    RETURNING *`,
  // UpdateRun's interrupted_approval: only an executing call of this conversation.
  interruptExecutingApproval: `
    UPDATE approvals SET status = 'interrupted', updated_at = @now
    WHERE uuid = @uuid AND conversation_id = @conversation_id AND status = 'executing'
    RETURNING *`,
  // Keyset pages over the partial index of pending approvals (schema 7), oldest first.
  pendingApprovalsFirstPage: `
    SELECT * FROM approvals WHERE status = 'pending'
    ORDER BY created_at, uuid LIMIT ?`,
  pendingApprovalsPageAfter: `
    SELECT * FROM approvals
    WHERE status = 'pending' AND (created_at, uuid) > (@created_at, @uuid)
    ORDER BY created_at, uuid LIMIT @limit`,
  selectUnfinishedApprovals: `
    SELECT * FROM approvals
    WHERE conversation_id = ? AND status IN ('approved', 'executing')
    ORDER BY created_at, uuid`,
  // ListApprovals, after a (created_at, uuid) cursor ('' before every row): one status
  // at a time over approvals_by_status, each walk stopping at the page's size (the driver merges
  // the statuses asked for); or the approvals of one conversation, through its index.
  approvalsOfStatusAfter: `
    SELECT * FROM approvals
    WHERE status = @status AND (created_at, uuid) > (@created_at, @uuid)
    ORDER BY created_at, uuid LIMIT @limit`,
  approvalsOfConversationAfter: `
    SELECT * FROM approvals
    WHERE conversation_id = @conversation_id AND status IN (SELECT value FROM json_each(@statuses))
      AND (created_at, uuid) > (@created_at, @uuid)
    ORDER BY created_at, uuid LIMIT @limit`,
  // ListDueApprovals: the partial index holds only pending approvals with an expiry,
  // named, since without statistics the planner would rather walk every pending approval by status.
  dueApprovals: `
    SELECT * FROM approvals INDEXED BY approvals_due
    WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= @now
    ORDER BY expires_at, uuid LIMIT @limit`,

  // The audit trail: appended, never changed; newest first, all kinds over the rowid
  // or one kind over audit_by_kind, before an id (a first page: before every id).
  insertAudit: `
    INSERT INTO audit (at, kind, actor, via, subject, detail_json)
    VALUES (@at, @kind, @actor, @via, @subject, @detail_json)
    RETURNING *`,
  auditBefore: `SELECT * FROM audit WHERE id < @before ORDER BY id DESC LIMIT @limit`,
  auditOfKindBefore: `SELECT * FROM audit WHERE kind = @kind AND id < @before ORDER BY id DESC LIMIT @limit`,

  // Webhook cursors. A claim takes the lease when it is free, expired, the caller's
  // own or an earlier boot's of the caller's node; an advance only while the caller holds it,
  // never moving the cursor back.
  selectWebhookCursor: `SELECT last_event_id FROM webhook_cursors WHERE endpoint = ?`,
  insertWebhookCursor: `
    INSERT INTO webhook_cursors (endpoint, last_event_id, lease_owner, lease_node, lease_expires_at)
    VALUES (@endpoint, @last_event_id, @owner, @node, @expires_at)`,
  claimWebhookCursor: `
    UPDATE webhook_cursors SET lease_owner = @owner, lease_node = @node, lease_expires_at = @expires_at
    WHERE endpoint = @endpoint
      AND (lease_owner IS NULL OR lease_expires_at <= @now OR lease_owner = @owner OR lease_node = @node)
    RETURNING last_event_id`,
  advanceWebhookCursor: `
    UPDATE webhook_cursors SET last_event_id = max(last_event_id, @last_event_id), lease_expires_at = @expires_at
    WHERE endpoint = @endpoint AND lease_owner = @owner`,

  insertEvent: `
    INSERT INTO events (conversation_id, kind, payload, created_at)
    VALUES (@conversation_id, @kind, @payload, @created_at)`,
  // Catch-up reads, a page at a time: a rowid range over every conversation, or the
  // (conversation_id, id) index for one.
  selectEventsAfter: `SELECT * FROM events WHERE id > @after_id ORDER BY id LIMIT @limit`,
  selectConversationEventsAfter: `
    SELECT * FROM events
    WHERE conversation_id = @conversation_id AND id > @after_id
    ORDER BY id LIMIT @limit`,
  // max() of the rowid is one seek to the last row of the table.
  latestEventId: `SELECT max(id) AS id FROM events`,

  upsertPushConfig: `
    INSERT INTO push_configs (conversation_id, id, url, token, dialect, created_at)
    VALUES (@conversation_id, @id, @url, @token, @dialect, @created_at)
    ON CONFLICT (conversation_id, id) DO UPDATE SET url = excluded.url, token = excluded.token, dialect = excluded.dialect`,
  selectPushConfig: `SELECT * FROM push_configs WHERE conversation_id = ? AND id = ?`,
  selectPushConfigs: `SELECT * FROM push_configs WHERE conversation_id = ? ORDER BY created_at, id`,
  countPushConfigs: `SELECT count(*) AS n FROM push_configs WHERE conversation_id = ?`,
  deletePushConfig: `DELETE FROM push_configs WHERE conversation_id = ? AND id = ?`,
  // REPLACE: the conversation's row is deleted and inserted anew, with the next \`recorded\`.
  upsertHistoryDigest: `INSERT OR REPLACE INTO history_digests (conversation_id, owner_key, digest) VALUES (?, ?, ?)`,
  // One seek of history_digests_by_digest.
  selectConversationByHistory: `
    SELECT conversation_id AS id FROM history_digests WHERE digest = ? AND owner_key = ? ORDER BY recorded DESC LIMIT 1`,

  // The running-turn mark (store.proto, StartTurn), apart from updateConversation: it changes
  // nothing a reader of the conversation sees.
  // The lease is part of the mark: set with it (NULLs for a mark without one) and
  // cleared with it.
  selectRunningTurn: `SELECT running_turn_boot, running_turn_since, lease_owner FROM conversations WHERE id = ?`,
  markTurnRunning: `
    UPDATE conversations
    SET running_turn_boot = @boot, running_turn_since = @since,
        lease_owner = @lease_owner, lease_node = @lease_node, lease_expires_at = @lease_expires_at, lease_takeovers = 0
    WHERE id = @id`,
  clearTurnRunning: `
    UPDATE conversations
    SET running_turn_boot = NULL, running_turn_since = NULL,
        lease_owner = NULL, lease_node = NULL, lease_expires_at = NULL, lease_takeovers = 0
    WHERE id = ? AND running_turn_boot IS NOT NULL`,
  // Through the partial index: only the conversations that have a mark are read. Marks with a
  // lease are not a crash's to note: orchestrators take them over.
  selectTurnsOfOtherBoots: `SELECT id FROM conversations WHERE running_turn_boot IS NOT NULL AND running_turn_boot <> ? AND lease_owner IS NULL`,

  // Runs with leases. Renewing and releasing change only a lease its owner holds on
  // a running turn; a release never makes a lease last longer than it would have.
  renewRunLease: `
    UPDATE conversations SET lease_expires_at = @expires_at
    WHERE id = @id AND lease_owner = @owner AND running_turn_boot IS NOT NULL`,
  releaseRunLease: `
    UPDATE conversations SET lease_expires_at = min(lease_expires_at, @now)
    WHERE id = @id AND lease_owner = @owner AND running_turn_boot IS NOT NULL`,
  // What TakeOverRuns may take, oldest expiry first, walking the partial index of leased marks
  // (schema 13): expired leases, and those a previous boot of the taker's node holds.
  // The taker's own leases only where it gave them up (@given_up, a JSON array of ids).
  selectTakeoverCandidates: `
    SELECT id, lease_owner FROM conversations
    WHERE lease_owner IS NOT NULL AND running_turn_boot IS NOT NULL
      AND ((lease_owner <> @owner AND (lease_expires_at <= @now OR lease_node = @node))
        OR (lease_owner = @owner AND id IN (SELECT value FROM json_each(@given_up))))
    ORDER BY lease_expires_at, id LIMIT @limit`,
  // The taken mark is fresh and this boot's: the run goes on as a running turn of the taker.
  takeOverRun: `
    UPDATE conversations
    SET lease_owner = @owner, lease_node = @node, lease_expires_at = @expires_at, lease_takeovers = lease_takeovers + 1,
        running_turn_boot = @boot, running_turn_since = @since
    WHERE id = @id
    RETURNING lease_takeovers`,
} as const;

export interface ConversationState {
  id: string;
  status: ConversationStatusName;
  pending_approval_uuid: string | null;
  message_count: number;
  updated_at: string;
  input_tokens: number;
  output_tokens: number;
}

/** A conversation's run as written: NULL state and schema version clear it. */
interface RunRow {
  conversation_id: string;
  state: Buffer | null;
  schema_version: number | null;
  revision: number;
  updated_at: string;
}

/** A conversation as inserted: the rest of its row starts at its defaults. */
type NewConversationRow = Pick<ConversationRow, 'id' | 'session_id' | 'created_at' | 'a2a_dialect' | 'a2a_context_id' | 'owner'>;

/** An approval as inserted: the store sets status, decided_at and updated_at itself; SQLite binds the flag as 0/1. */
type NewApprovalRow = Omit<
  ApprovalRow,
  'status' | 'decided_at' | 'updated_at' | 'outcome_unknown' | 'reason' | 'decided_by' | 'via' | 'edited_args'
> & {
  outcome_unknown: 0 | 1;
  expires_at: string | null;
  on_timeout: ApprovalRow['on_timeout'];
};

/** The columns a winning claim writes (changes.ts, ClaimDecision). */
interface ClaimRow {
  uuid: string;
  status: ApprovalStatusName;
  now: string;
  reason: string | null;
  decided_by: string;
  via: string | null;
  edited_args: string | null;
  on_time: 0 | 1;
}

/** A cursor of ListApprovals: after (created_at, uuid), at most `limit` rows. */
interface ApprovalsAfter {
  created_at: string;
  uuid: string;
  limit: number;
}

/** A webhook cursor's lease as a claim sets it; the expiry in epoch milliseconds of the store's clock. */
interface WebhookLease {
  endpoint: string;
  owner: string;
  node: string;
  expires_at: number;
}

/** A running mark as set, with its lease or NULLs. */
interface TurnMark {
  id: string;
  boot: string;
  since: string;
  lease_owner: string | null;
  lease_node: string | null;
  /** Epoch milliseconds of the store's clock. */
  lease_expires_at: number | null;
}

export interface Statements {
  insertConversation: Statement<[NewConversationRow]>;
  newestCreatedAt: Statement<[], { created_at: string }>;
  selectConversation: Statement<[string], ConversationRow>;
  updateConversation: Statement<[ConversationState]>;
  writeRun: Statement<[RunRow]>;
  firstPage: Statement<[number], ConversationRow>;
  pageAfter: Statement<[{ created_at: string; id: string; limit: number }], ConversationRow>;
  ownerFirstPage: Statement<[{ owner: string; limit: number }], ConversationRow>;
  ownerPageAfter: Statement<[{ owner: string; created_at: string; id: string; limit: number }], ConversationRow>;
  selectCounts: Statement<[], { status: ConversationStatusName; count: number }>;
  selectOwnerCounts: Statement<[string], { status: ConversationStatusName; count: number }>;
  insertMessage: Statement<[MessageRow]>;
  selectMessages: Statement<[string], MessageRow>;
  selectMessagesBefore: Statement<[{ conversation_id: string; seq: number; limit: number }], MessageRow>;
  selectMessagesAfter: Statement<[{ conversation_id: string; seq: number; limit: number }], MessageRow>;
  selectMessagePosition: Statement<[string], { conversation_id: string; seq: number }>;
  insertApproval: Statement<[NewApprovalRow]>;
  selectApproval: Statement<[string], ApprovalRow>;
  selectPendingApprovals: Statement<[string], ApprovalRow>;
  selectPendingApprovalsOfConversations: Statement<[string], ApprovalRow>;
  claimApproval: Statement<[ClaimRow], ApprovalRow>;
  moveApproval: Statement<[{ uuid: string; from: ApprovalStatusName; to: ApprovalStatusName; now: string }], ApprovalRow>;
  interruptApproval: Statement<[{ uuid: string; now: string; unchanged_since: string }], ApprovalRow>;
  interruptExecutingApproval: Statement<[{ uuid: string; conversation_id: string; now: string }], ApprovalRow>;
  selectUnfinishedApprovals: Statement<[string], ApprovalRow>;
  pendingApprovalsFirstPage: Statement<[number], ApprovalRow>;
  pendingApprovalsPageAfter: Statement<[{ created_at: string; uuid: string; limit: number }], ApprovalRow>;
  approvalsOfStatusAfter: Statement<[ApprovalsAfter & { status: ApprovalStatusName }], ApprovalRow>;
  approvalsOfConversationAfter: Statement<[ApprovalsAfter & { conversation_id: string; statuses: string }], ApprovalRow>;
  dueApprovals: Statement<[{ now: string; limit: number }], ApprovalRow>;
  insertAudit: Statement<[NewAuditRow], AuditRow>;
  auditBefore: Statement<[{ before: number; limit: number }], AuditRow>;
  auditOfKindBefore: Statement<[{ kind: string; before: number; limit: number }], AuditRow>;
  selectWebhookCursor: Statement<[string], { last_event_id: number }>;
  insertWebhookCursor: Statement<[WebhookLease & { last_event_id: number }]>;
  claimWebhookCursor: Statement<[WebhookLease & { now: number }], { last_event_id: number }>;
  advanceWebhookCursor: Statement<[{ endpoint: string; owner: string; last_event_id: number; expires_at: number }]>;
  insertEvent: Statement<[Omit<EventRow, 'id'>]>;
  selectEventsAfter: Statement<[{ after_id: number; limit: number }], EventRow>;
  selectConversationEventsAfter: Statement<[{ conversation_id: string; after_id: number; limit: number }], EventRow>;
  latestEventId: Statement<[], { id: number | null }>;
  upsertPushConfig: Statement<[PushConfigRow]>;
  selectPushConfig: Statement<[string, string], PushConfigRow>;
  selectPushConfigs: Statement<[string], PushConfigRow>;
  countPushConfigs: Statement<[string], { n: number }>;
  deletePushConfig: Statement<[string, string]>;
  upsertHistoryDigest: Statement<[string, string, string]>;
  selectConversationByHistory: Statement<[string, string], { id: string }>;
  selectRunningTurn: Statement<
    [string],
    { running_turn_boot: string | null; running_turn_since: string | null; lease_owner: string | null }
  >;
  markTurnRunning: Statement<[TurnMark]>;
  clearTurnRunning: Statement<[string]>;
  selectTurnsOfOtherBoots: Statement<[string], { id: string }>;
  renewRunLease: Statement<[{ id: string; owner: string; expires_at: number }]>;
  releaseRunLease: Statement<[{ id: string; owner: string; now: number }]>;
  selectTakeoverCandidates: Statement<
    [{ owner: string; node: string; now: number; limit: number; given_up: string }],
    { id: string; lease_owner: string }
  >;
  takeOverRun: Statement<
    [{ id: string; owner: string; node: string; expires_at: number; boot: string; since: string }],
    { lease_takeovers: number }
  >;
}

export function prepareStatements(db: Database): Statements {
  const prepared: Record<string, Statement> = {};
  for (const [name, sql] of Object.entries(SQL)) prepared[name] = db.prepare(sql);
  return prepared as unknown as Statements;
}
