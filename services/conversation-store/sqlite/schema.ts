import type { Database } from 'better-sqlite3';
import { TOKEN_PRINCIPAL_PREFIX } from '../../common/principal-id.js';
import { FIRST_USER_TEXT_LENGTH } from '../records.js';

/**
 * The schema, one migration per version. A released migration is never edited: a change
 * is a new entry at the end, applied at open to databases that are behind.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE conversations (
    id                    TEXT PRIMARY KEY,
    session_id            TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'waiting_approval', 'completed')),
    pending_approval_uuid TEXT,
    pipeline_state        TEXT,
    message_count         INTEGER NOT NULL DEFAULT 0,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
  );
  CREATE INDEX conversations_newest_first ON conversations (created_at DESC, id DESC);

  -- Appended only: a message is never updated or deleted on its own.
  CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    id              TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT NOT NULL,
    tool_call       TEXT,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  );

  CREATE TABLE approvals (
    uuid              TEXT PRIMARY KEY,
    conversation_id   TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    tool_call_id      TEXT NOT NULL,
    tool_name         TEXT NOT NULL,
    tool_args         TEXT NOT NULL,
    args_hash         TEXT NOT NULL,
    description       TEXT NOT NULL,
    remote_task_id    TEXT,
    remote_agent_name TEXT,
    status            TEXT NOT NULL
      CHECK (status IN ('pending', 'approved', 'rejected', 'executing', 'done', 'failed', 'interrupted')),
    created_at        TEXT NOT NULL,
    decided_at        TEXT,
    updated_at        TEXT NOT NULL
  );
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status);

  -- The summary of ListConversations reads these three rows instead of counting
  -- conversations (no operation scans them all); the triggers keep them exact in every transaction.
  CREATE TABLE conversation_counts (
    status TEXT PRIMARY KEY,
    count  INTEGER NOT NULL
  );
  INSERT INTO conversation_counts (status, count) VALUES ('active', 0), ('waiting_approval', 0), ('completed', 0);

  CREATE TRIGGER conversations_count_insert AFTER INSERT ON conversations
  BEGIN
    UPDATE conversation_counts SET count = count + 1 WHERE status = NEW.status;
  END;
  CREATE TRIGGER conversations_count_status AFTER UPDATE OF status ON conversations
  WHEN OLD.status IS NOT NEW.status
  BEGIN
    UPDATE conversation_counts SET count = count - 1 WHERE status = OLD.status;
    UPDATE conversation_counts SET count = count + 1 WHERE status = NEW.status;
  END;
  CREATE TRIGGER conversations_count_delete AFTER DELETE ON conversations
  BEGIN
    UPDATE conversation_counts SET count = count - 1 WHERE status = OLD.status;
  END;
  `,
  // 2: token usage per model step (on its first message) and its running sum per conversation;
  // the record of a history compaction (JSON) on the message that announces it.
  `
  ALTER TABLE messages ADD COLUMN compaction TEXT;
  ALTER TABLE messages ADD COLUMN input_tokens INTEGER;
  ALTER TABLE messages ADD COLUMN output_tokens INTEGER;
  ALTER TABLE conversations ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE conversations ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
  `,
  // 3: the agent-tree node that produced a message (orchestrated mode).
  `
  ALTER TABLE messages ADD COLUMN node TEXT;
  `,
  // 4: the pipeline state's revision, raised by every change of it and never reset, so a
  // write computed from an older state is refused (several branches resume at once); a
  // conversation may wait for several approvals: pending_approval_uuid is the oldest.
  `
  ALTER TABLE conversations ADD COLUMN pipeline_revision INTEGER NOT NULL DEFAULT 0;
  `,
  // 5: how a conversation created over A2A is answered (both set or both NULL), and the
  // agents a proxy approval is held by, nearest first (a JSON array; NULL reads as none).
  `
  ALTER TABLE conversations ADD COLUMN a2a_dialect TEXT;
  ALTER TABLE conversations ADD COLUMN a2a_context_id TEXT;
  ALTER TABLE approvals ADD COLUMN agent_chain TEXT;
  `,
  // 6: the event log (WatchEvents). One row per stored event, written in the transaction of
  // the change it describes; the id orders events over all conversations, and the index
  // serves a catch-up of one conversation without reading the others' events.
  `
  CREATE TABLE events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    kind            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    created_at      TEXT NOT NULL
  );
  CREATE INDEX events_by_conversation ON events (conversation_id, id);
  `,
  // 7: every pending approval of every conversation, oldest first, without scanning the
  // approvals that were decided long ago (ListPendingApprovals; the web chat's pending panel).
  `
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';
  `,
  // 8: lists are summaries. The start of the first user message, kept on the
  // conversation row by a trigger in the transaction that appends it, so that a list reads
  // its title without reading messages (the words are cut at read time, records.ts
  // conversationTitle); filled once here for the conversations that have one. And message ids
  // by id: a history page named by a message id (?before= / ?after=) finds its seq by one seek.
  `
  ALTER TABLE conversations ADD COLUMN first_user_text TEXT;
  UPDATE conversations SET first_user_text = (
    SELECT substr(content, 1, ${FIRST_USER_TEXT_LENGTH}) FROM messages
    WHERE messages.conversation_id = conversations.id AND messages.role = 'user'
    ORDER BY seq LIMIT 1
  );
  CREATE TRIGGER conversations_first_user_text AFTER INSERT ON messages
  WHEN NEW.role = 'user'
  BEGIN
    UPDATE conversations SET first_user_text = substr(NEW.content, 1, ${FIRST_USER_TEXT_LENGTH})
    WHERE id = NEW.conversation_id AND first_user_text IS NULL;
  END;
  CREATE UNIQUE INDEX messages_by_id ON messages (id);
  `,
  // 9: the turn in progress, marked with the boot id of the store process that
  // started it and cleared by the write that ends it (store.proto, StartTurn). A mark of an
  // earlier boot is a turn a crash cut off; the partial index finds those at start without
  // reading the other conversations.
  `
  ALTER TABLE conversations ADD COLUMN running_turn_boot TEXT;
  CREATE INDEX conversations_running_turn ON conversations (running_turn_boot) WHERE running_turn_boot IS NOT NULL;
  `,
  // 10: the reason given with a decision (a rejection's "value too large").
  `
  ALTER TABLE approvals ADD COLUMN reason TEXT;
  `,
  // 11: when the running mark was set, so that a mark older than the stale limit
  // (a turn whose orchestrator died) does not keep the conversation busy for ever. Marks
  // written before it have none: they count as stale.
  `
  ALTER TABLE conversations ADD COLUMN running_turn_since TEXT;
  `,
  // 12: the run as a value. A conversation's current run is the orchestrator's
  // bytes, kept opaquely with the orchestrator's number for their format (schema_version) and
  // the revision every change raises (compare-and-set, never reset); a row whose state is
  // NULL keeps the revision of a run that was cleared. A row exists once the conversation's
  // run was first written: none reads as revision 0 without a run. The pipeline states of
  // earlier releases move here byte for byte as schema version 0 (the orchestrator reads 0
  // as their JSON; the store never does), and the columns that held them go.
  `
  CREATE TABLE runs (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    state           BLOB,
    schema_version  INTEGER,
    revision        INTEGER NOT NULL,
    updated_at      TEXT NOT NULL,
    CHECK ((state IS NULL) = (schema_version IS NULL))
  );
  INSERT INTO runs (conversation_id, state, schema_version, revision, updated_at)
  SELECT id, CAST(pipeline_state AS BLOB), CASE WHEN pipeline_state IS NULL THEN NULL ELSE 0 END, pipeline_revision, updated_at
  FROM conversations
  WHERE pipeline_state IS NOT NULL OR pipeline_revision <> 0;
  ALTER TABLE conversations DROP COLUMN pipeline_state;
  ALTER TABLE conversations DROP COLUMN pipeline_revision;
  `,
  // 13: runs with leases. The running mark may carry the lease of the orchestrator
  // replica that owns the turn: its owner (one boot of a replica), its node (the replica across
  // restarts), when it expires (epoch milliseconds of the store's clock) and how often the turn
  // was taken over; all cleared with the mark. The partial index holds only the marks with a
  // lease, so TakeOverRuns finds the expired ones, oldest first, without reading the other
  // conversations. An approval may ask again for a call whose outcome is unknown (0/1), naming
  // the interrupted approval it replaces.
  `
  ALTER TABLE conversations ADD COLUMN lease_owner TEXT;
  ALTER TABLE conversations ADD COLUMN lease_node TEXT;
  ALTER TABLE conversations ADD COLUMN lease_expires_at INTEGER;
  ALTER TABLE conversations ADD COLUMN lease_takeovers INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX conversations_leased ON conversations (lease_expires_at, id) WHERE lease_owner IS NOT NULL;
  ALTER TABLE approvals ADD COLUMN outcome_unknown INTEGER NOT NULL DEFAULT 0 CHECK (outcome_unknown IN (0, 1));
  ALTER TABLE approvals ADD COLUMN replaces_uuid TEXT;
  `,
  // 14: approvals as audited resources.
  // - An approval may expire: 'expired' joins the statuses. SQLite cannot change a CHECK
  //   constraint, so the table is built anew with the rows copied over, rowids included (they
  //   order the approvals created in one transaction), and its indexes made again.
  // - A decision keeps who decided and through which face, and an approval the arguments it ran
  //   with when they were edited (JSON); an approval may expire at expires_at (ISO text of the
  //   store's clock, as every time here) deciding on_timeout.
  // - approvals_by_status: ListApprovals, one status at a time, oldest first; approvals_due:
  //   ListDueApprovals, only the pending approvals that have an expiry, oldest expiry first.
  // - audit: the append-only trail (decisions, authentication failures, configuration loads);
  //   the triggers refuse any UPDATE or DELETE of an entry. audit_by_kind lists one kind newest first.
  // - webhook_cursors: per webhook endpoint, the last event handed to it and the lease of the one
  //   replica that delivers to it (expiry in epoch milliseconds of the store's clock, as runs').
  `
  CREATE TABLE approvals_14 (
    uuid              TEXT PRIMARY KEY,
    conversation_id   TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    tool_call_id      TEXT NOT NULL,
    tool_name         TEXT NOT NULL,
    tool_args         TEXT NOT NULL,
    args_hash         TEXT NOT NULL,
    description       TEXT NOT NULL,
    remote_task_id    TEXT,
    remote_agent_name TEXT,
    status            TEXT NOT NULL
      CHECK (status IN ('pending', 'approved', 'rejected', 'executing', 'done', 'failed', 'interrupted', 'expired')),
    created_at        TEXT NOT NULL,
    decided_at        TEXT,
    updated_at        TEXT NOT NULL,
    agent_chain       TEXT,
    reason            TEXT,
    outcome_unknown   INTEGER NOT NULL DEFAULT 0 CHECK (outcome_unknown IN (0, 1)),
    replaces_uuid     TEXT,
    decided_by        TEXT,
    via               TEXT,
    edited_args       TEXT,
    expires_at        TEXT,
    on_timeout        TEXT CHECK (on_timeout IN ('reject', 'approve'))
  );
  INSERT INTO approvals_14 (rowid, uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description,
                            remote_task_id, remote_agent_name, status, created_at, decided_at, updated_at, agent_chain,
                            reason, outcome_unknown, replaces_uuid)
  SELECT rowid, uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description,
         remote_task_id, remote_agent_name, status, created_at, decided_at, updated_at, agent_chain,
         reason, outcome_unknown, replaces_uuid
  FROM approvals;
  DROP TABLE approvals;
  ALTER TABLE approvals_14 RENAME TO approvals;
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status);
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';
  CREATE INDEX approvals_by_status ON approvals (status, created_at, uuid);
  CREATE INDEX approvals_due ON approvals (expires_at, uuid) WHERE status = 'pending' AND expires_at IS NOT NULL;

  CREATE TABLE audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    actor       TEXT NOT NULL,
    via         TEXT NOT NULL,
    subject     TEXT NOT NULL,
    detail_json TEXT NOT NULL
  );
  CREATE INDEX audit_by_kind ON audit (kind, id);
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;

  CREATE TABLE webhook_cursors (
    endpoint         TEXT PRIMARY KEY,
    last_event_id    INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_node       TEXT,
    lease_expires_at INTEGER
  );
  `,
  // 15: who a conversation belongs to — the principal that created it with gateway
  // authentication on; NULL for the others (created without it, or before this migration), which
  // keep no owner. conversations_by_owner serves one owner's list, newest first, without reading
  // the others' conversations (only rows with an owner are in it); the owner's status counts
  // are kept by triggers in every transaction, as conversation_counts are for everyone. An
  // owner never changes, so the status trigger moves one count within one owner.
  `
  ALTER TABLE conversations ADD COLUMN owner TEXT;
  CREATE INDEX conversations_by_owner ON conversations (owner, created_at DESC, id DESC) WHERE owner IS NOT NULL;
  CREATE TABLE conversation_counts_by_owner (
    owner  TEXT NOT NULL,
    status TEXT NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (owner, status)
  ) WITHOUT ROWID;
  CREATE TRIGGER conversations_owner_count_insert AFTER INSERT ON conversations
  WHEN NEW.owner IS NOT NULL
  BEGIN
    INSERT INTO conversation_counts_by_owner (owner, status, count) VALUES (NEW.owner, NEW.status, 1)
    ON CONFLICT (owner, status) DO UPDATE SET count = count + 1;
  END;
  CREATE TRIGGER conversations_owner_count_status AFTER UPDATE OF status ON conversations
  WHEN NEW.owner IS NOT NULL AND OLD.status IS NOT NEW.status
  BEGIN
    UPDATE conversation_counts_by_owner SET count = count - 1 WHERE owner = OLD.owner AND status = OLD.status;
    INSERT INTO conversation_counts_by_owner (owner, status, count) VALUES (NEW.owner, NEW.status, 1)
    ON CONFLICT (owner, status) DO UPDATE SET count = count + 1;
  END;
  CREATE TRIGGER conversations_owner_count_delete AFTER DELETE ON conversations
  WHEN OLD.owner IS NOT NULL
  BEGIN
    UPDATE conversation_counts_by_owner SET count = count - 1 WHERE owner = OLD.owner AND status = OLD.status;
  END;
  `,
  // 16: A2A push-notification configs, per task (conversation), read at each turn's
  // end by the deliverer; they go with their conversation.
  `
  CREATE TABLE push_configs (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    id              TEXT NOT NULL,
    url             TEXT NOT NULL,
    token           TEXT NOT NULL,
    dialect         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (conversation_id, id)
  ) WITHOUT ROWID;
  `,
  // 17: owners name their source (services/common/principal-id.ts), so that an API token and a
  // JWT of one name are two principals. Until now an owner was a bare name, and whatever a JWT
  // of that name created was the token's as well: every bare owner becomes the token principal
  // of its name (a JWT that should keep them is mapped to it by auth.jwt.token_principals). The
  // counts move with their owners (through a copy: renamed in place, one could meet another's
  // old key — a JWT could be named "token:x"); no trigger fires, since no status changes.
  `
  UPDATE conversations SET owner = '${TOKEN_PRINCIPAL_PREFIX}' || owner WHERE owner IS NOT NULL;
  CREATE TEMP TABLE renamed_owner_counts AS SELECT '${TOKEN_PRINCIPAL_PREFIX}' || owner AS owner, status, count FROM conversation_counts_by_owner;
  DELETE FROM conversation_counts_by_owner;
  INSERT INTO conversation_counts_by_owner (owner, status, count) SELECT owner, status, count FROM renamed_owner_counts;
  DROP TABLE renamed_owner_counts;
  `,
  // 18: the digest of the history a chat client was last shown of a conversation (store.proto
  // RecordHistoryDigest), one per conversation; found by digest and owner through its index, the
  // latest recorded first: a recording replaces the row, and \`recorded\` only grows. The owner is
  // the conversation's (which never changes; '' for none: an owner is never blank), kept here so
  // that a lookup reads one owner's entries only, whoever else has the same history.
  `
  CREATE TABLE history_digests (
    recorded        INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    owner_key       TEXT NOT NULL,
    digest          TEXT NOT NULL
  );
  CREATE INDEX history_digests_by_digest ON history_digests (digest, owner_key, recorded DESC);
  `,
  // 19: the id of the decision that claimed an approval (store.proto ClaimApprovalRequest.decision_id).
  `
  ALTER TABLE approvals ADD COLUMN decision_id TEXT;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Connection settings: WAL lets readers go on while one writer commits; NORMAL sync is
 * durable across process crashes in WAL mode (only an OS crash may lose the last commits);
 * the busy timeout makes a second process wait for the write lock instead of failing.
 */
export function configureConnection(db: Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
}

/** Brings the schema to SCHEMA_VERSION; refuses a database written by a newer build. */
export function migrate(db: Database, file: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const upgrade = db.transaction(() => {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(`${file} has schema version ${current}, newer than this build knows (${SCHEMA_VERSION}); run a newer build`);
    }
    for (const migration of MIGRATIONS.slice(current)) db.exec(migration);
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SCHEMA_VERSION);
    else db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION);
  });
  // IMMEDIATE: two processes opening a new file at once must not both migrate it.
  upgrade.immediate();
}
