import type { Database } from 'better-sqlite3';
import { FIRST_USER_TEXT_LENGTH } from '../records.js';
import * as ddl from '../sql/ddl.js';

const T = ddl.SQLITE_TYPES;

/** One migration per version. A released migration is never edited: a change is a new entry at the end. */
const MIGRATIONS: readonly string[] = [
  `${ddl.conversationsTable(
    T,
    `
    pipeline_state        TEXT,`,
  )}
  ${ddl.messagesTable(T)}

  ${ddl.approvalsTable(T, 'approvals', ddl.APPROVAL_STATUSES)}
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status);

  -- The summary of ListConversations reads these three rows instead of counting
  -- conversations (no operation scans them all); the triggers keep them exact in every transaction.
  ${ddl.conversationCountsTable(T)}

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
  // 2: token usage per model step and its running sum per conversation; a history compaction's record (JSON).
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
  // 4: the pipeline state's revision, raised by every change and never reset: a write from an older state is refused.
  `
  ALTER TABLE conversations ADD COLUMN pipeline_revision INTEGER NOT NULL DEFAULT 0;
  `,
  // 5: how a conversation created over A2A is answered (both set or both NULL); a proxy approval's agents (JSON array).
  `
  ALTER TABLE conversations ADD COLUMN a2a_dialect TEXT;
  ALTER TABLE conversations ADD COLUMN a2a_context_id TEXT;
  ALTER TABLE approvals ADD COLUMN agent_chain TEXT;
  `,
  // 6: the event log (WatchEvents), written in the change's transaction; the id orders events over all conversations.
  ddl.eventsTable(T, T.autoKey),
  // 7: every pending approval, oldest first, without scanning the decided ones (ListPendingApprovals).
  `
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';
  `,
  // 8: the first user text, kept by a trigger so a list reads titles without messages; message ids by id for history pages.
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
  // 9: the running turn's mark (the boot id of the store that started it); the partial index finds a crash's marks at start.
  `
  ALTER TABLE conversations ADD COLUMN running_turn_boot TEXT;
  CREATE INDEX conversations_running_turn ON conversations (running_turn_boot) WHERE running_turn_boot IS NOT NULL;
  `,
  // 10: the reason given with a decision.
  `
  ALTER TABLE approvals ADD COLUMN reason TEXT;
  `,
  // 11: when the running mark was set, so a stale mark stops keeping the conversation busy (marks without one are stale).
  `
  ALTER TABLE conversations ADD COLUMN running_turn_since TEXT;
  `,
  // 12: the run as opaque bytes with its schema_version and a revision never reset; pipeline states move here as version 0.
  `${ddl.runsTable(T)}
  INSERT INTO runs (conversation_id, state, schema_version, revision, updated_at)
  SELECT id, CAST(pipeline_state AS BLOB), CASE WHEN pipeline_state IS NULL THEN NULL ELSE 0 END, pipeline_revision, updated_at
  FROM conversations
  WHERE pipeline_state IS NOT NULL OR pipeline_revision <> 0;
  ALTER TABLE conversations DROP COLUMN pipeline_state;
  ALTER TABLE conversations DROP COLUMN pipeline_revision;
  `,
  // 13: runs with leases (owner, node, expiry in epoch ms, takeovers), cleared with the mark; approvals that ask again.
  `
  ALTER TABLE conversations ADD COLUMN lease_owner TEXT;
  ALTER TABLE conversations ADD COLUMN lease_node TEXT;
  ALTER TABLE conversations ADD COLUMN lease_expires_at INTEGER;
  ALTER TABLE conversations ADD COLUMN lease_takeovers INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX conversations_leased ON conversations (lease_expires_at, id) WHERE lease_owner IS NOT NULL;
  ALTER TABLE approvals ADD COLUMN outcome_unknown INTEGER NOT NULL DEFAULT 0 CHECK (outcome_unknown IN (0, 1));
  ALTER TABLE approvals ADD COLUMN replaces_uuid TEXT;
  `,
  // 14: approvals as audited resources: 'expired' joins the statuses (SQLite cannot change a CHECK: the table is rebuilt,
  // rowids kept, as they order approvals of one transaction), who decided, edited args, expiry; the append-only audit trail
  // and webhook cursors (auditedApprovals).
  `
  ${ddl.approvalsTable(
    T,
    'approvals_14',
    `${ddl.APPROVAL_STATUSES}, 'expired'`,
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
  ${ddl.auditedApprovals(T)}
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  `,
  // 15: a conversation's owner (NULL: none), its index and per-owner status counts kept by triggers; an owner never changes.
  `${ddl.conversationOwners(T)}
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
  // 16: A2A push-notification configs (pushConfigsTable).
  ddl.pushConfigsTable(T),
  // 17: owners name their source (ownersAsPrincipals).
  `${ddl.ownersAsPrincipals('TEMP TABLE renamed_owner_counts')}
  DROP TABLE renamed_owner_counts;
  `,
  // 18: the digest of the history a chat client was last shown, one per conversation, found by digest and owner ('' for
  // none), the latest first: a recording replaces the row and `recorded` only grows.
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
  // 20: quorums of approvers: what an approval needs and its votes (approvalQuorums).
  ddl.approvalQuorums(T),
  // 21: the data lifecycle (dataLifecycle): the audit trail allows deleting entries older than the horizon only.
  `${ddl.dataLifecycle(T)}
  DROP TRIGGER audit_no_delete;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  WHEN OLD.at >= coalesce((SELECT before FROM audit_horizon), '')
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  `,
  // 22: the run journal: runs and their steps (runJournal).
  ddl.runJournal(T),
  // 23: escalation of pending approvals (approvalEscalations).
  ddl.approvalEscalations(T),
  // 24: the ended runs by their end, for journal retention (runJournalRetention).
  ddl.runJournalRetention(),
  // 25: each step's place in its conversation, and each run's user message (runMessageSeqs).
  ddl.runMessageSeqs(T),
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** WAL: readers go on while one writer commits; NORMAL sync survives process crashes; a second process waits for the lock. */
export function configureConnection(db: Database): void {
  // Before WAL, which writes the header of a new file: only then does a new file take it without a VACUUM.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
}

/** SQLite's auto_vacuum value for INCREMENTAL. */
const INCREMENTAL_VACUUM = 2;

/**
 * Pages freed by deletions go back to the file system only with incremental auto-vacuum, which an existing file takes
 * on by one VACUUM: run once, at the first open by a build that prunes (it rewrites the file, so it takes a while on a
 * large one and needs as much free disk again), never after.
 */
export function switchToIncrementalVacuum(db: Database): void {
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL_VACUUM) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  try {
    db.exec('VACUUM');
  } catch {
    // Another process reads the file now (SQLITE_BUSY): the file works as it is, and the next open switches it.
  }
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
