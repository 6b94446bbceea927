import { TOKEN_PRINCIPAL_PREFIX } from '../../common/principal-id.js';

// The DDL that both schema histories (sqlite/schema.ts, postgres/schema.ts) run, written once: where the databases
// differ only in a type's name, `ColumnTypes` says it, so each released migration still runs the statements it ran.

/** SQLite's words for the types the two databases name differently. */
export const SQLITE_TYPES = {
  text: 'TEXT',
  integer: 'INTEGER',
  /** A count or an id that may pass 2^31 (SQLite's INTEGER has 64 bits). */
  bigint: 'INTEGER',
  /** A UUID (SQLite keeps it as text). */
  uuid: 'TEXT',
  bytes: 'BLOB',
  /** An id the database numbers. */
  autoKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  /** A lease's expiry: SQLite epoch ms, PostgreSQL a timestamptz of the database's clock, which every replica shares. */
  leaseExpiry: 'INTEGER',
  /** What follows a table whose primary key is its only lookup: SQLite stores it without a rowid. */
  keyedTable: ' WITHOUT ROWID',
};

export type ColumnTypes = typeof SQLITE_TYPES;

export const POSTGRES_TYPES: ColumnTypes = {
  text: 'text',
  integer: 'integer',
  bigint: 'bigint',
  uuid: 'uuid',
  bytes: 'bytea',
  autoKey: 'bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
  leaseExpiry: 'timestamptz',
  keyedTable: '',
};

/** Conversations, newest first by their index; `middle` lines follow pending_approval_uuid, `later` ones the rest. */
export const conversationsTable = (t: ColumnTypes, middle: string, later = '') => `
  CREATE TABLE conversations (
    id                    ${t.uuid} PRIMARY KEY,
    session_id            ${t.text} NOT NULL,
    status                ${t.text} NOT NULL CHECK (status IN ('active', 'waiting_approval', 'completed')),
    pending_approval_uuid ${t.uuid},${middle}
    message_count         ${t.integer} NOT NULL DEFAULT 0,
    created_at            ${t.text} NOT NULL,
    updated_at            ${t.text} NOT NULL${later}
  );
  CREATE INDEX conversations_newest_first ON conversations (created_at DESC, id DESC);`;

/** Appended only: a message is never updated or deleted on its own. `later` lines follow created_at. */
export const messagesTable = (t: ColumnTypes, later = '') => `
  CREATE TABLE messages (
    conversation_id ${t.uuid} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             ${t.integer} NOT NULL,
    id              ${t.uuid} NOT NULL,
    role            ${t.text} NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         ${t.text} NOT NULL,
    tool_call       ${t.text},
    created_at      ${t.text} NOT NULL,${later}
    PRIMARY KEY (conversation_id, seq)
  );`;

/** The statuses an approval had before it could expire (SQLite 14 and PostgreSQL 5 add 'expired'). */
export const APPROVAL_STATUSES = "'pending', 'approved', 'rejected', 'executing', 'done', 'failed', 'interrupted'";

/** The approvals table `name`: `afterKey` lines follow its key, `later` ones (each after a comma) its first columns. */
export const approvalsTable = (t: ColumnTypes, name: string, statuses: string, afterKey = '', later = '') => `
  CREATE TABLE ${name} (
    uuid              ${t.uuid} PRIMARY KEY,${afterKey}
    conversation_id   ${t.uuid} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    tool_call_id      ${t.text} NOT NULL,
    tool_name         ${t.text} NOT NULL,
    tool_args         ${t.text} NOT NULL,
    args_hash         ${t.text} NOT NULL,
    description       ${t.text} NOT NULL,
    remote_task_id    ${t.text},
    remote_agent_name ${t.text},
    status            ${t.text} NOT NULL
      CHECK (status IN (${statuses})),
    created_at        ${t.text} NOT NULL,
    decided_at        ${t.text},
    updated_at        ${t.text} NOT NULL${later}
  );`;

/** The summary's counts by status, one row each, changed in every transaction that changes a status. */
export const conversationCountsTable = (t: ColumnTypes) => `
  CREATE TABLE conversation_counts (
    status ${t.text} PRIMARY KEY,
    count  ${t.bigint} NOT NULL
  );
  INSERT INTO conversation_counts (status, count) VALUES ('active', 0), ('waiting_approval', 0), ('completed', 0);`;

/** The event log, written in the change's transaction; `id` orders events over all conversations. */
export const eventsTable = (t: ColumnTypes, id: string) => `
  CREATE TABLE events (
    id              ${id},
    conversation_id ${t.uuid} NOT NULL,
    kind            ${t.text} NOT NULL,
    payload         ${t.text} NOT NULL,
    created_at      ${t.text} NOT NULL
  );
  CREATE INDEX events_by_conversation ON events (conversation_id, id);`;

/** The run as opaque bytes with its schema_version, and a revision that is never reset. */
export const runsTable = (t: ColumnTypes) => `
  CREATE TABLE runs (
    conversation_id ${t.uuid} PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    state           ${t.bytes},
    schema_version  ${t.integer},
    revision        ${t.integer} NOT NULL,
    updated_at      ${t.text} NOT NULL,
    CHECK ((state IS NULL) = (schema_version IS NULL))
  );`;

/**
 * Approvals as audited resources (SQLite 14, PostgreSQL 5): their indexes by status and by expiry; the audit trail
 * (each database refuses its UPDATE and DELETE by triggers of its own); webhook cursors with the lease of the one
 * replica that delivers.
 */
export const auditedApprovals = (t: ColumnTypes) => `
  CREATE INDEX approvals_by_status ON approvals (status, created_at, uuid);
  CREATE INDEX approvals_due ON approvals (expires_at, uuid) WHERE status = 'pending' AND expires_at IS NOT NULL;

  CREATE TABLE audit (
    id          ${t.autoKey},
    at          ${t.text} NOT NULL,
    kind        ${t.text} NOT NULL,
    actor       ${t.text} NOT NULL,
    via         ${t.text} NOT NULL,
    subject     ${t.text} NOT NULL,
    detail_json ${t.text} NOT NULL
  );
  CREATE INDEX audit_by_kind ON audit (kind, id);

  CREATE TABLE webhook_cursors (
    endpoint         ${t.text} PRIMARY KEY,
    last_event_id    ${t.bigint} NOT NULL,
    lease_owner      ${t.text},
    lease_node       ${t.text},
    lease_expires_at ${t.leaseExpiry}
  );`;

/** A conversation's owner (NULL: none; it never changes), its index, and the counts by status of each owner. */
export const conversationOwners = (t: ColumnTypes) => `
  ALTER TABLE conversations ADD COLUMN owner ${t.text};
  CREATE INDEX conversations_by_owner ON conversations (owner, created_at DESC, id DESC) WHERE owner IS NOT NULL;
  CREATE TABLE conversation_counts_by_owner (
    owner  ${t.text} NOT NULL,
    status ${t.text} NOT NULL,
    count  ${t.bigint} NOT NULL,
    PRIMARY KEY (owner, status)
  )${t.keyedTable};`;

/** A2A push-notification configs per task (conversation); they go with their conversation. */
export const pushConfigsTable = (t: ColumnTypes) => `
  CREATE TABLE push_configs (
    conversation_id ${t.uuid} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    id              ${t.text} NOT NULL,
    url             ${t.text} NOT NULL,
    token           ${t.text} NOT NULL,
    dialect         ${t.text} NOT NULL,
    created_at      ${t.text} NOT NULL,
    PRIMARY KEY (conversation_id, id)
  )${t.keyedTable};`;

/**
 * Owners name their source: a bare owner becomes the token principal of its name. The counts move through a copy
 * (`temporary`: its CREATE words): renamed in place, one could meet another's old key (a JWT could be named "token:x").
 */
export const ownersAsPrincipals = (temporary: string) => `
  UPDATE conversations SET owner = '${TOKEN_PRINCIPAL_PREFIX}' || owner WHERE owner IS NOT NULL;
  CREATE ${temporary} AS SELECT '${TOKEN_PRINCIPAL_PREFIX}' || owner AS owner, status, count FROM conversation_counts_by_owner;
  DELETE FROM conversation_counts_by_owner;
  INSERT INTO conversation_counts_by_owner (owner, status, count) SELECT owner, status, count FROM renamed_owner_counts;`;

/**
 * Quorums (SQLite 20, PostgreSQL 11): what an approval needs (NULL required: one decision) and who asked for the call;
 * the votes for the arguments in force, one per voter (an edit deletes the others), found by their approval's key.
 */
export const approvalQuorums = (t: ColumnTypes) => `
  ALTER TABLE approvals ADD COLUMN quorum_required ${t.integer};
  ALTER TABLE approvals ADD COLUMN quorum_role ${t.text};
  ALTER TABLE approvals ADD COLUMN quorum_not_requester ${t.integer};
  ALTER TABLE approvals ADD COLUMN requested_by ${t.text};
  CREATE TABLE approval_votes (
    approval_uuid ${t.uuid} NOT NULL REFERENCES approvals (uuid) ON DELETE CASCADE,
    voter         ${t.text} NOT NULL,
    via           ${t.text},
    reason        ${t.text},
    at            ${t.text} NOT NULL,
    args_hash     ${t.text} NOT NULL,
    PRIMARY KEY (approval_uuid, voter)
  )${t.keyedTable};`;

/**
 * The data lifecycle: conversations by their last change (retention walks the least recently changed first), the
 * outbox cursors by position (a prune finds those behind it), the leases of background work done by one replica at a time, and the audit horizon: the audit trail refuses every change
 * but the deletion of entries older than `before`, which only audit retention sets, inside its own transaction.
 */
export const dataLifecycle = (t: ColumnTypes) => `
  CREATE INDEX conversations_idle ON conversations (updated_at, id);
  CREATE INDEX webhook_cursors_by_position ON webhook_cursors (last_event_id);
  CREATE TABLE background_leases (
    name       ${t.text} PRIMARY KEY,
    owner      ${t.text} NOT NULL,
    node       ${t.text} NOT NULL,
    expires_at ${t.leaseExpiry} NOT NULL
  );
  CREATE TABLE audit_horizon (
    single ${t.integer} PRIMARY KEY CHECK (single = 1),
    before ${t.text}
  );
  INSERT INTO audit_horizon (single, before) VALUES (1, NULL);`;

/**
 * The run journal (SQLite 22, PostgreSQL 13): one row per run, found by its conversation newest first, with its status,
 * its step count (the next step's index) and the format of its steps; its steps keyed by run and index. Both go with
 * their conversation.
 */
export const runJournal = (t: ColumnTypes) => `
  CREATE TABLE run_journals (
    run_id          ${t.uuid} PRIMARY KEY,
    conversation_id ${t.uuid} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    journal_version ${t.integer} NOT NULL,
    status          ${t.text} NOT NULL
      CHECK (status IN ('running', 'waiting_approval', 'completed', 'cancelled', 'interrupted')),
    started_at      ${t.text} NOT NULL,
    ended_at        ${t.text},
    step_count      ${t.integer} NOT NULL
  );
  CREATE INDEX run_journals_by_conversation ON run_journals (conversation_id, started_at DESC, run_id DESC);
  CREATE TABLE run_steps (
    run_id      ${t.uuid} NOT NULL REFERENCES run_journals (run_id) ON DELETE CASCADE,
    idx         ${t.integer} NOT NULL,
    kind        ${t.text} NOT NULL,
    node        ${t.text} NOT NULL,
    started_at  ${t.text} NOT NULL,
    duration_ms ${t.bigint} NOT NULL,
    body        ${t.text} NOT NULL,
    PRIMARY KEY (run_id, idx)
  )${t.keyedTable};`;

/**
 * Escalation (SQLite 23, PostgreSQL 14): when a pending approval escalates and to which role (ISO text on the store's
 * clock), and when it did; the pending, not yet escalated ones found by due time through a partial index.
 */
export const approvalEscalations = (t: ColumnTypes) => `
  ALTER TABLE approvals ADD COLUMN escalates_at ${t.text};
  ALTER TABLE approvals ADD COLUMN escalation_role ${t.text};
  ALTER TABLE approvals ADD COLUMN escalated_at ${t.text};
  CREATE INDEX approvals_escalation_due ON approvals (escalates_at, uuid)
    WHERE status = 'pending' AND escalates_at IS NOT NULL AND escalated_at IS NULL;`;

/**
 * Journal retention (SQLite 24, PostgreSQL 15): the runs that ended, by when they ended, so that a prune of those ended
 * before runs.keep seeks its batch instead of reading every run; a run not ended is never in it.
 */
export const runJournalRetention = () => `
  CREATE INDEX run_journals_ended ON run_journals (ended_at, run_id) WHERE ended_at IS NOT NULL;`;

/**
 * Forks (SQLite 25, PostgreSQL 16): where each step of journal format 2 stands in its conversation (the seq of the
 * last message before it) and the seq of the user message that started each run; NULL in runs of format 1.
 */
export const runMessageSeqs = (t: ColumnTypes) => `
  ALTER TABLE run_steps ADD COLUMN message_seq ${t.integer};
  ALTER TABLE run_journals ADD COLUMN message_seq ${t.integer};`;
