import { TOKEN_PRINCIPAL_PREFIX } from '../../common/principal-id.js';
import { FIRST_USER_TEXT_LENGTH } from '../records.js';

// Both schema histories in one list (sqlite/schema.ts and postgres/schema.ts run them), each migration beside its
// counterpart, the DDL they share written once: where the databases differ only in a type's name, `ColumnTypes` says
// it, so each released migration still runs the statements it ran.

/** SQLite's words for the types the two databases name differently. */
const SQLITE_TYPES = {
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

type ColumnTypes = typeof SQLITE_TYPES;

const POSTGRES_TYPES: ColumnTypes = {
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
const conversationsTable = (t: ColumnTypes, middle: string, later = '') => `
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
const messagesTable = (t: ColumnTypes, later = '') => `
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
const APPROVAL_STATUSES = "'pending', 'approved', 'rejected', 'executing', 'done', 'failed', 'interrupted'";

/** The approvals table `name`: `afterKey` lines follow its key, `later` ones (each after a comma) its first columns. */
const approvalsTable = (t: ColumnTypes, name: string, statuses: string, afterKey = '', later = '') => `
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
const conversationCountsTable = (t: ColumnTypes) => `
  CREATE TABLE conversation_counts (
    status ${t.text} PRIMARY KEY,
    count  ${t.bigint} NOT NULL
  );
  INSERT INTO conversation_counts (status, count) VALUES ('active', 0), ('waiting_approval', 0), ('completed', 0);`;

/** The event log, written in the change's transaction; `id` orders events over all conversations. */
const eventsTable = (t: ColumnTypes, id: string) => `
  CREATE TABLE events (
    id              ${id},
    conversation_id ${t.uuid} NOT NULL,
    kind            ${t.text} NOT NULL,
    payload         ${t.text} NOT NULL,
    created_at      ${t.text} NOT NULL
  );
  CREATE INDEX events_by_conversation ON events (conversation_id, id);`;

/** The run as opaque bytes with its schema_version, and a revision that is never reset. */
const runsTable = (t: ColumnTypes) => `
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
const auditedApprovals = (t: ColumnTypes) => `
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
const conversationOwners = (t: ColumnTypes) => `
  ALTER TABLE conversations ADD COLUMN owner ${t.text};
  CREATE INDEX conversations_by_owner ON conversations (owner, created_at DESC, id DESC) WHERE owner IS NOT NULL;
  CREATE TABLE conversation_counts_by_owner (
    owner  ${t.text} NOT NULL,
    status ${t.text} NOT NULL,
    count  ${t.bigint} NOT NULL,
    PRIMARY KEY (owner, status)
  )${t.keyedTable};`;

/**
 * Owners name their source: a bare owner becomes the token principal of its name. The counts move through a copy
 * (`temporary`: its CREATE words): renamed in place, one could meet another's old key (a JWT could be named "token:x").
 */
const ownersAsPrincipals = (temporary: string) => `
  UPDATE conversations SET owner = '${TOKEN_PRINCIPAL_PREFIX}' || owner WHERE owner IS NOT NULL;
  CREATE ${temporary} AS SELECT '${TOKEN_PRINCIPAL_PREFIX}' || owner AS owner, status, count FROM conversation_counts_by_owner;
  DELETE FROM conversation_counts_by_owner;
  INSERT INTO conversation_counts_by_owner (owner, status, count) SELECT owner, status, count FROM renamed_owner_counts;`;

/**
 * The data lifecycle: conversations by their last change (retention walks the least recently changed first), the
 * outbox cursors by position (a prune finds those behind it), the leases of background work done by one replica at a time, and the audit horizon: the audit trail refuses every change
 * but the deletion of entries older than `before`, which only audit retention sets, inside its own transaction.
 */
const dataLifecycle = (t: ColumnTypes) => `
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

/** A migration of either schema or both, in the order each runs them; a database without one skips it. */
interface Migration {
  sqlite?: string;
  postgres?: string;
}

const S = SQLITE_TYPES;
const P = POSTGRES_TYPES;
const sqlite = (ddl: string): Migration => ({ sqlite: ddl });
const postgres = (ddl: string): Migration => ({ postgres: ddl });
/** One migration of both databases, in each one's type names. */
const both = (ddl: (t: ColumnTypes) => string): Migration => ({ sqlite: ddl(S), postgres: ddl(P) });

/** A released migration is never edited: a change is a new entry at the end. */
const MIGRATIONS: readonly Migration[] = [
  // SQLite 1: conversations, messages and approvals, and the counts by status that triggers keep.
  sqlite(`${conversationsTable(
    S,
    `
    pipeline_state        TEXT,`,
  )}
  ${messagesTable(S)}

  ${approvalsTable(S, 'approvals', APPROVAL_STATUSES)}
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status);

  -- The summary of ListConversations reads these three rows instead of counting
  -- conversations (no operation scans them all); the triggers keep them exact in every transaction.
  ${conversationCountsTable(S)}

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
  `),
  // SQLite 2: token usage per model step and its running sum per conversation; a history compaction's record (JSON).
  sqlite(`
  ALTER TABLE messages ADD COLUMN compaction TEXT;
  ALTER TABLE messages ADD COLUMN input_tokens INTEGER;
  ALTER TABLE messages ADD COLUMN output_tokens INTEGER;
  ALTER TABLE conversations ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE conversations ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
  `),
  // SQLite 3: the agent-tree node that produced a message (orchestrated mode).
  sqlite(`
  ALTER TABLE messages ADD COLUMN node TEXT;
  `),
  // SQLite 4: the pipeline state's revision, raised by every change and never reset: a write from an older state is refused.
  sqlite(`
  ALTER TABLE conversations ADD COLUMN pipeline_revision INTEGER NOT NULL DEFAULT 0;
  `),
  // SQLite 5: how a conversation created over A2A is answered (both set or both NULL); a proxy approval's agents (JSON array).
  sqlite(`
  ALTER TABLE conversations ADD COLUMN a2a_dialect TEXT;
  ALTER TABLE conversations ADD COLUMN a2a_context_id TEXT;
  ALTER TABLE approvals ADD COLUMN agent_chain TEXT;
  `),
  // SQLite 6: the event log (WatchEvents), written in the change's transaction; the id orders events over all conversations.
  sqlite(eventsTable(S, S.autoKey)),
  // SQLite 7: every pending approval, oldest first, without scanning the decided ones (ListPendingApprovals).
  sqlite(`
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';
  `),
  // SQLite 8: the first user text, kept by a trigger so a list reads titles without messages; message ids by id for history pages.
  sqlite(`
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
  `),
  // SQLite 9: the running turn's mark (the boot id of the store that started it); the partial index finds a crash's marks at start.
  sqlite(`
  ALTER TABLE conversations ADD COLUMN running_turn_boot TEXT;
  CREATE INDEX conversations_running_turn ON conversations (running_turn_boot) WHERE running_turn_boot IS NOT NULL;
  `),
  // SQLite 10: the reason given with a decision.
  sqlite(`
  ALTER TABLE approvals ADD COLUMN reason TEXT;
  `),
  // SQLite 11: when the running mark was set, so a stale mark stops keeping the conversation busy (marks without one are stale).
  sqlite(`
  ALTER TABLE conversations ADD COLUMN running_turn_since TEXT;
  `),
  // SQLite 12: the run as opaque bytes with its schema_version and a revision never reset; pipeline states move here as version 0.
  sqlite(`${runsTable(S)}
  INSERT INTO runs (conversation_id, state, schema_version, revision, updated_at)
  SELECT id, CAST(pipeline_state AS BLOB), CASE WHEN pipeline_state IS NULL THEN NULL ELSE 0 END, pipeline_revision, updated_at
  FROM conversations
  WHERE pipeline_state IS NOT NULL OR pipeline_revision <> 0;
  ALTER TABLE conversations DROP COLUMN pipeline_state;
  ALTER TABLE conversations DROP COLUMN pipeline_revision;
  `),
  // PostgreSQL 1: SQLite's schema 12 and what several replicas need (postgres/schema.ts says what).
  postgres(`${conversationsTable(
    P,
    '',
    `,
    input_tokens          bigint NOT NULL DEFAULT 0,
    output_tokens         bigint NOT NULL DEFAULT 0,
    a2a_dialect           text,
    a2a_context_id        text,
    first_user_text       text,
    running_turn_boot     text,
    running_turn_since    text`,
  )}
  CREATE INDEX conversations_running_turn ON conversations (running_turn_boot) WHERE running_turn_boot IS NOT NULL;

  ${messagesTable(
    P,
    `
    input_tokens    bigint,
    output_tokens   bigint,
    compaction      text,
    node            text,`,
  )}
  CREATE UNIQUE INDEX messages_by_id ON messages (id);

  ${approvalsTable(
    P,
    'approvals',
    APPROVAL_STATUSES,
    `
    position          bigint GENERATED ALWAYS AS IDENTITY,`,
    `,
    agent_chain       text,
    reason            text`,
  )}
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status, created_at, position);
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';

  ${conversationCountsTable(P)}

  CREATE FUNCTION conversations_first_user_text() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE conversations SET first_user_text = substr(NEW.content, 1, ${FIRST_USER_TEXT_LENGTH})
    WHERE id = NEW.conversation_id AND first_user_text IS NULL;
    RETURN NULL;
  END $$;
  CREATE TRIGGER conversations_first_user_text AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.role = 'user') EXECUTE FUNCTION conversations_first_user_text();

  ${eventsTable(P, 'bigint PRIMARY KEY')}

  CREATE TABLE event_ids (
    single  boolean PRIMARY KEY DEFAULT true CHECK (single),
    last_id bigint NOT NULL
  );
  INSERT INTO event_ids (single, last_id) VALUES (true, 0);

  ${runsTable(P)}

  CREATE TABLE store_replicas (
    boot_id    text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
  );
  `),
  // PostgreSQL 2: which replicas have watchers of which conversation ('': every one), for `watched`; they go with their replica.
  postgres(`
  CREATE TABLE store_watches (
    conversation_id text NOT NULL,
    boot_id         text NOT NULL REFERENCES store_replicas (boot_id) ON DELETE CASCADE,
    PRIMARY KEY (conversation_id, boot_id)
  );
  `),
  // PostgreSQL 3: with NATS, the last event id the outbox publisher published to each stream, for when the stream holds none.
  postgres(`
  CREATE TABLE event_publications (
    stream  text PRIMARY KEY,
    last_id bigint NOT NULL
  );
  `),
  // SQLite 13, PostgreSQL 4: runs with leases (owner, node, expiry, takeovers), cleared with the mark; approvals that ask
  // again. SQLite's expiry is epoch ms; PostgreSQL's a timestamptz of the database's now(), the clock every replica shares
  // (TakeOverRuns locks candidates FOR UPDATE SKIP LOCKED so that takers never get the same run).
  {
    sqlite: `
  ALTER TABLE conversations ADD COLUMN lease_owner TEXT;
  ALTER TABLE conversations ADD COLUMN lease_node TEXT;
  ALTER TABLE conversations ADD COLUMN lease_expires_at INTEGER;
  ALTER TABLE conversations ADD COLUMN lease_takeovers INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX conversations_leased ON conversations (lease_expires_at, id) WHERE lease_owner IS NOT NULL;
  ALTER TABLE approvals ADD COLUMN outcome_unknown INTEGER NOT NULL DEFAULT 0 CHECK (outcome_unknown IN (0, 1));
  ALTER TABLE approvals ADD COLUMN replaces_uuid TEXT;
  `,
    postgres: `
  ALTER TABLE conversations
    ADD COLUMN lease_owner      text,
    ADD COLUMN lease_node       text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN lease_takeovers  integer NOT NULL DEFAULT 0;
  CREATE INDEX conversations_leased ON conversations (lease_expires_at, id) WHERE lease_owner IS NOT NULL;
  ALTER TABLE approvals
    ADD COLUMN outcome_unknown boolean NOT NULL DEFAULT false,
    ADD COLUMN replaces_uuid   uuid;
  `,
  },
  // SQLite 14, PostgreSQL 5: approvals as audited resources: 'expired' joins the statuses (SQLite cannot change a CHECK:
  // the table is rebuilt, rowids kept, as they order approvals of one transaction), who decided, edited args, expiry
  // (PostgreSQL: a timestamptz of the database's now()); the append-only audit trail (PostgreSQL's ids from an identity:
  // concurrent entries may commit out of id order; a trigger refuses UPDATE, DELETE and TRUNCATE) and webhook cursors.
  {
    sqlite: `
  ${approvalsTable(
    S,
    'approvals_14',
    `${APPROVAL_STATUSES}, 'expired'`,
    '',
    `,
    agent_chain       TEXT,
    reason            TEXT,
    outcome_unknown   INTEGER NOT NULL DEFAULT 0 CHECK (outcome_unknown IN (0, 1)),
    replaces_uuid     TEXT,
    decided_by        TEXT,
    via               TEXT,
    edited_args       TEXT,
    expires_at        TEXT,
    on_timeout        TEXT CHECK (on_timeout IN ('reject', 'approve'))`,
  )}
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
  ${auditedApprovals(S)}
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  `,
    postgres: `
  ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
  ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN (${APPROVAL_STATUSES}, 'expired'));
  ALTER TABLE approvals
    ADD COLUMN decided_by  text,
    ADD COLUMN via         text,
    ADD COLUMN edited_args text,
    ADD COLUMN expires_at  timestamptz,
    ADD COLUMN on_timeout  text CHECK (on_timeout IN ('reject', 'approve'));
  ${auditedApprovals(P)}
  CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
  END $$;
  CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION audit_append_only();
  CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
  FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `,
  },
  // SQLite 15, PostgreSQL 6: a conversation's owner (NULL: none; it never changes), its index and per-owner status counts,
  // kept by triggers on SQLite; PostgreSQL's driver changes them under the event_ids lock.
  {
    sqlite: `${conversationOwners(S)}
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
    postgres: conversationOwners(P),
  },
  // SQLite 16, PostgreSQL 7: A2A push-notification configs per task (conversation); they go with their conversation.
  both(
    (t) => `
  CREATE TABLE push_configs (
    conversation_id ${t.uuid} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    id              ${t.text} NOT NULL,
    url             ${t.text} NOT NULL,
    token           ${t.text} NOT NULL,
    dialect         ${t.text} NOT NULL,
    created_at      ${t.text} NOT NULL,
    PRIMARY KEY (conversation_id, id)
  )${t.keyedTable};`,
  ),
  // SQLite 17, PostgreSQL 8: owners name their source (ownersAsPrincipals).
  {
    sqlite: `${ownersAsPrincipals('TEMP TABLE renamed_owner_counts')}
  DROP TABLE renamed_owner_counts;
  `,
    postgres: ownersAsPrincipals('TEMP TABLE renamed_owner_counts ON COMMIT DROP'),
  },
  // SQLite 18, PostgreSQL 9: the digest of the history a chat client was last shown, one per conversation, found by digest
  // and owner ('' for none), the latest first: a recording replaces the row and `recorded` only grows.
  {
    sqlite: `
  CREATE TABLE history_digests (
    recorded        INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    owner_key       TEXT NOT NULL,
    digest          TEXT NOT NULL
  );
  CREATE INDEX history_digests_by_digest ON history_digests (digest, owner_key, recorded DESC);
  `,
    postgres: `
  CREATE TABLE history_digests (
    conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    owner_key       text NOT NULL,
    digest          text NOT NULL,
    recorded        bigserial NOT NULL
  );
  CREATE INDEX history_digests_by_digest ON history_digests (digest, owner_key, recorded DESC);
  `,
  },
  // SQLite 19, PostgreSQL 10: the id of the decision that claimed an approval (store.proto ClaimApprovalRequest.decision_id).
  both(
    (t) => `
  ALTER TABLE approvals ADD COLUMN decision_id ${t.text};
  `,
  ),
  // SQLite 20, PostgreSQL 11: quorums of approvers: what an approval needs (NULL required: one decision) and who asked for
  // the call; the votes for the arguments in force, one per voter (an edit deletes the others), found by their approval's key.
  both(
    (t) => `
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
  )${t.keyedTable};`,
  ),
  // SQLite 21, PostgreSQL 12: the data lifecycle (dataLifecycle): the audit trail allows deleting entries older than the
  // horizon only.
  {
    sqlite: `${dataLifecycle(S)}
  DROP TRIGGER audit_no_delete;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  WHEN OLD.at >= coalesce((SELECT before FROM audit_horizon), '')
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  `,
    postgres: `${dataLifecycle(P)}
  CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      IF OLD.at < coalesce((SELECT before FROM audit_horizon), '') THEN
        RETURN OLD;
      END IF;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only';
  END $$;
  `,
  },
  // SQLite 22, PostgreSQL 13: the run journal: one row per run, found by its conversation newest first, with its status,
  // its step count (the next step's index) and the format of its steps; its steps keyed by run and index. Both go with
  // their conversation.
  both(
    (t) => `
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
  )${t.keyedTable};`,
  ),
  // SQLite 23, PostgreSQL 14: escalation: when a pending approval escalates and to which role (ISO text on the store's
  // clock), and when it did; the pending, not yet escalated ones found by due time through a partial index.
  both(
    (t) => `
  ALTER TABLE approvals ADD COLUMN escalates_at ${t.text};
  ALTER TABLE approvals ADD COLUMN escalation_role ${t.text};
  ALTER TABLE approvals ADD COLUMN escalated_at ${t.text};
  CREATE INDEX approvals_escalation_due ON approvals (escalates_at, uuid)
    WHERE status = 'pending' AND escalates_at IS NOT NULL AND escalated_at IS NULL;`,
  ),
  // SQLite 24, PostgreSQL 15: journal retention: the runs that ended, by when they ended, so that a prune of those ended
  // before runs.keep seeks its batch instead of reading every run; a run not ended is never in it.
  both(
    () => `
  CREATE INDEX run_journals_ended ON run_journals (ended_at, run_id) WHERE ended_at IS NOT NULL;`,
  ),
  // SQLite 25, PostgreSQL 16: forks: where each step of journal format 2 stands in its conversation (the seq of the last
  // message before it) and the seq of the user message that started each run; NULL in runs of format 1.
  both(
    (t) => `
  ALTER TABLE run_steps ADD COLUMN message_seq ${t.integer};
  ALTER TABLE run_journals ADD COLUMN message_seq ${t.integer};`,
  ),
];

/** The migrations of one database, in order: version N is the N-th. */
export const migrationsOf = (database: 'sqlite' | 'postgres'): string[] => MIGRATIONS.flatMap((migration) => migration[database] ?? []);
