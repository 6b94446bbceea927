import type { ClientBase } from 'pg';
import { FIRST_USER_TEXT_LENGTH } from '../records.js';
import * as ddl from '../sql/ddl.js';

const T = ddl.POSTGRES_TYPES;

/**
 * One migration per version; a released one is never edited. It holds SQLite's schema 12 (4 here is its 13, 5 its 14,
 * 6 its 15, 7 its 16, 8 its 17, 9 its 18) with what several replicas need: `event_ids`, whose row lock, raised last
 * before COMMIT, makes event ids gap-free and in commit order; no count triggers (the driver changes counts under that
 * lock, so no two transactions lock count rows in opposite orders); `store_replicas`, the live boots, so a live
 * replica's mark is not a crash's. Timestamps stay ISO text as in SQLite; `approvals.position` orders approvals created
 * in one transaction (SQLite's rowid).
 */
const MIGRATIONS: readonly string[] = [
  `${ddl.conversationsTable(
    T,
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

  ${ddl.messagesTable(
    T,
    `
    input_tokens    bigint,
    output_tokens   bigint,
    compaction      text,
    node            text,`,
  )}
  CREATE UNIQUE INDEX messages_by_id ON messages (id);

  ${ddl.approvalsTable(
    T,
    'approvals',
    ddl.APPROVAL_STATUSES,
    `
    position          bigint GENERATED ALWAYS AS IDENTITY,`,
    `,
    agent_chain       text,
    reason            text`,
  )}
  CREATE INDEX approvals_by_conversation_status ON approvals (conversation_id, status, created_at, position);
  CREATE INDEX approvals_pending ON approvals (created_at, uuid) WHERE status = 'pending';

  ${ddl.conversationCountsTable(T)}

  CREATE FUNCTION conversations_first_user_text() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE conversations SET first_user_text = substr(NEW.content, 1, ${FIRST_USER_TEXT_LENGTH})
    WHERE id = NEW.conversation_id AND first_user_text IS NULL;
    RETURN NULL;
  END $$;
  CREATE TRIGGER conversations_first_user_text AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.role = 'user') EXECUTE FUNCTION conversations_first_user_text();

  ${ddl.eventsTable(T, 'bigint PRIMARY KEY')}

  CREATE TABLE event_ids (
    single  boolean PRIMARY KEY DEFAULT true CHECK (single),
    last_id bigint NOT NULL
  );
  INSERT INTO event_ids (single, last_id) VALUES (true, 0);

  ${ddl.runsTable(T)}

  CREATE TABLE store_replicas (
    boot_id    text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
  );
  `,
  // 2: which replicas have watchers of which conversation ('': every one), for `watched`; they go with their replica.
  `
  CREATE TABLE store_watches (
    conversation_id text NOT NULL,
    boot_id         text NOT NULL REFERENCES store_replicas (boot_id) ON DELETE CASCADE,
    PRIMARY KEY (conversation_id, boot_id)
  );
  `,
  // 3: with NATS, the last event id the outbox publisher published to each stream, for when the stream holds none.
  `
  CREATE TABLE event_publications (
    stream  text PRIMARY KEY,
    last_id bigint NOT NULL
  );
  `,
  // 4: runs with leases, as SQLite 13, but expiring at a timestamptz of the database's now(), the clock every replica
  // shares; TakeOverRuns locks candidates FOR UPDATE SKIP LOCKED so that takers never get the same run.
  `
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
  // 5: approvals as audited resources, as SQLite 14, but expiries are timestamptz of the database's now(); audit ids from
  // an identity (concurrent entries may commit out of id order); a trigger refuses UPDATE, DELETE and TRUNCATE of the trail.
  `
  ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
  ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN (${ddl.APPROVAL_STATUSES}, 'expired'));
  ALTER TABLE approvals
    ADD COLUMN decided_by  text,
    ADD COLUMN via         text,
    ADD COLUMN edited_args text,
    ADD COLUMN expires_at  timestamptz,
    ADD COLUMN on_timeout  text CHECK (on_timeout IN ('reject', 'approve'));
  ${ddl.auditedApprovals(T)}
  CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
  END $$;
  CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION audit_append_only();
  CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
  FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `,
  // 6: conversation owners, as SQLite 15, with no trigger: the driver changes the owners' counts under the event_ids lock.
  ddl.conversationOwners(T),
  // 7: A2A push-notification configs, as SQLite schema 16.
  ddl.pushConfigsTable(T),
  // 8: owners name their source, as SQLite schema 17: a bare owner becomes the token principal of its name.
  ddl.ownersAsPrincipals('TEMP TABLE renamed_owner_counts ON COMMIT DROP'),
  // 9: the digest of the history a chat client was last shown of a conversation, as SQLite schema 18.
  `
  CREATE TABLE history_digests (
    conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    owner_key       text NOT NULL,
    digest          text NOT NULL,
    recorded        bigserial NOT NULL
  );
  CREATE INDEX history_digests_by_digest ON history_digests (digest, owner_key, recorded DESC);
  `,
  // 10: the id of the decision that claimed an approval, as SQLite schema 19.
  `
  ALTER TABLE approvals ADD COLUMN decision_id text;
  `,
  // 11: quorums of approvers, as SQLite schema 20.
  ddl.approvalQuorums(T),
  // 12: the data lifecycle, as SQLite schema 21.
  `${ddl.dataLifecycle(T)}
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
  // 13: the run journal, as SQLite schema 22.
  ddl.runJournal(T),
  // 14: escalation of pending approvals, as SQLite schema 23.
  ddl.approvalEscalations(T),
  // 15: the ended runs by their end, as SQLite schema 24.
  ddl.runJournalRetention(),
  // 16: each step's place in its conversation, as SQLite schema 25.
  ddl.runMessageSeqs(T),
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** The migrations' advisory lock ("asg-mig"): of replicas opening one empty database at once, one migrates. */
const MIGRATION_LOCK_KEY = 0x6173_672d_6d69_67n;

/** insufficient_privilege */
const INSUFFICIENT_PRIVILEGE = '42501';

export interface MigrateOutcome {
  from: number;
  to: number;
}

/** The schema version, read without DDL (a role with DML rights only may read it); 0 without `schema_version`. */
async function schemaVersion(client: ClientBase): Promise<number> {
  const { rows: exists } = await client.query<{ table: string | null }>("SELECT to_regclass('schema_version')::text AS table");
  if (exists[0]?.table == null) return 0;
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_version');
  return rows[0]?.version ?? 0;
}

/**
 * Brings the schema to POSTGRES_SCHEMA_VERSION in one transaction under the advisory lock; refuses a newer one. A
 * current schema is left alone without DDL or lock, so the runtime role needs DML rights only (`asg migrate` runs first
 * with the owner's role); a role without the rights is told to run it.
 */
export async function migrate(client: ClientBase, where: string): Promise<MigrateOutcome> {
  const found = await schemaVersion(client);
  if (found === POSTGRES_SCHEMA_VERSION) return { from: found, to: found };
  if (found > POSTGRES_SCHEMA_VERSION) throw newerSchema(where, found);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_version');
    const current = rows[0]?.version ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) throw newerSchema(where, current);
    for (const migration of MIGRATIONS.slice(current)) await client.query(migration);
    if (rows.length === 0) await client.query('INSERT INTO schema_version (version) VALUES ($1)', [POSTGRES_SCHEMA_VERSION]);
    else if (current !== POSTGRES_SCHEMA_VERSION) await client.query('UPDATE schema_version SET version = $1', [POSTGRES_SCHEMA_VERSION]);
    await client.query('COMMIT');
    return { from: current, to: POSTGRES_SCHEMA_VERSION };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) {
      throw new Error(
        `${where} has schema version ${found} and this build needs ${POSTGRES_SCHEMA_VERSION}, but its role may not change the schema (${(error as Error).message}): ` +
          'run `asg migrate` with the URL of a role that owns the schema first (docs/deploy.md)',
      );
    }
    throw error;
  }
}

function newerSchema(where: string, version: number): Error {
  return new Error(`${where} has schema version ${version}, newer than this build knows (${POSTGRES_SCHEMA_VERSION}); run a newer build`);
}
