/**
 * What the newest SQLite migrations added, undone, for the tests that take a database back to
 * an earlier schema version and open it again (services/conversation-store/sqlite/schema.ts). Newest first: a test going
 * further back runs this before its own undo of older migrations.
 */

/** Back to schema 23: what migration 24 added (the ended runs' index; PostgreSQL 15): the same statement on both. */
const DROP_JOURNAL_RETENTION = `
  DROP INDEX run_journals_ended;`;

/** Back to schema 22: what migrations 24 and 23 added (the ended runs' index, escalation; PostgreSQL 15 and 14): the same statements on both. */
const DROP_ESCALATIONS = `${DROP_JOURNAL_RETENTION}
  DROP INDEX approvals_escalation_due;
  ALTER TABLE approvals DROP COLUMN escalates_at;
  ALTER TABLE approvals DROP COLUMN escalation_role;
  ALTER TABLE approvals DROP COLUMN escalated_at;`;

/** Back to schema 21: what migration 22 added (the run journal). */
export const DROP_SCHEMA_22 = `
  DROP TABLE run_steps;
  DROP TABLE run_journals;`;

/** Back to schema 20: what migration 21 added (the data lifecycle), with the audit trail's first refusal of deletions. */
export const DROP_SCHEMA_21 = `
  DROP INDEX conversations_idle;
  DROP INDEX webhook_cursors_by_position;
  DROP TABLE background_leases;
  DROP TRIGGER audit_no_delete;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
  END;
  DROP TABLE audit_horizon;`;

/**
 * Back to schema 15: what migrations 24, 23, 22, 21, 20, 19, 18 and 16 added (the ended runs' index; escalation; the run journal; the data lifecycle;
 * quorums and votes; decision ids; history digests; A2A push-notification configs; 17 changed data only).
 */
const DROP_SCHEMA_16 = `${DROP_ESCALATIONS}${DROP_SCHEMA_22}${DROP_SCHEMA_21}
  DROP TABLE approval_votes;
  ALTER TABLE approvals DROP COLUMN quorum_required;
  ALTER TABLE approvals DROP COLUMN quorum_role;
  ALTER TABLE approvals DROP COLUMN quorum_not_requester;
  ALTER TABLE approvals DROP COLUMN requested_by;
  ALTER TABLE approvals DROP COLUMN decision_id;
  DROP TABLE history_digests;
  DROP TABLE push_configs;`;

/** Back to schema 14: what migrations 16 and 15 added (15: conversation owners, their index and counts). */
export const DROP_SCHEMA_15 = `${DROP_SCHEMA_16}

  DROP TRIGGER conversations_owner_count_insert;
  DROP TRIGGER conversations_owner_count_status;
  DROP TRIGGER conversations_owner_count_delete;
  DROP TABLE conversation_counts_by_owner;
  DROP INDEX conversations_by_owner;
  ALTER TABLE conversations DROP COLUMN owner;`;

/**
 * Back to schema 13: what migrations 15 and 14 added (decisions with identity, expiry, the
 * audit trail, webhook cursors). The status CHECK that allows 'expired' stays: migration 14
 * builds the table anew anyway.
 */
export const DROP_SCHEMA_14 = `${DROP_SCHEMA_15}
  DROP TABLE webhook_cursors;
  DROP TABLE audit;
  DROP INDEX approvals_due;
  DROP INDEX approvals_by_status;
  ALTER TABLE approvals DROP COLUMN decided_by;
  ALTER TABLE approvals DROP COLUMN via;
  ALTER TABLE approvals DROP COLUMN edited_args;
  ALTER TABLE approvals DROP COLUMN expires_at;
  ALTER TABLE approvals DROP COLUMN on_timeout;`;

/**
 * Back to schema 12: what migrations 14 and 13 added (13: the running mark's lease, an
 * approval's outcome_unknown and replaces_uuid).
 */
export const DROP_SCHEMA_13 = `${DROP_SCHEMA_14}
  DROP INDEX conversations_leased;
  ALTER TABLE conversations DROP COLUMN lease_owner;
  ALTER TABLE conversations DROP COLUMN lease_node;
  ALTER TABLE conversations DROP COLUMN lease_expires_at;
  ALTER TABLE conversations DROP COLUMN lease_takeovers;
  ALTER TABLE approvals DROP COLUMN outcome_unknown;
  ALTER TABLE approvals DROP COLUMN replaces_uuid;`;

/** The PostgreSQL schema back to 12: what its migration 13 added (the run journal, as SQLite's 22). */
export const DROP_POSTGRES_SCHEMA_13 = `
  DROP TABLE run_steps;
  DROP TABLE run_journals;`;

/** The PostgreSQL schema back to 11: what its migration 12 added (the data lifecycle, as SQLite's 21). */
export const DROP_POSTGRES_SCHEMA_12 = `
  DROP INDEX conversations_idle;
  DROP INDEX webhook_cursors_by_position;
  DROP TABLE background_leases;
  CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
  END $$;
  DROP TABLE audit_horizon;`;

/** The PostgreSQL schema back to 5: what its migrations 15 (the ended runs' index), 14 (escalation), 13 (the run journal), 12 (the data lifecycle), 11 (quorums and votes), 10, 9, 7 and 6 added (10: decision ids; 9: history digests; 7: push configs; 6: conversation owners, as SQLite's 15). */
export const DROP_POSTGRES_SCHEMA_6 = `${DROP_ESCALATIONS}${DROP_POSTGRES_SCHEMA_13}${DROP_POSTGRES_SCHEMA_12}
  DROP TABLE approval_votes;
  ALTER TABLE approvals DROP COLUMN quorum_required;
  ALTER TABLE approvals DROP COLUMN quorum_role;
  ALTER TABLE approvals DROP COLUMN quorum_not_requester;
  ALTER TABLE approvals DROP COLUMN requested_by;
  ALTER TABLE approvals DROP COLUMN decision_id;
  DROP TABLE history_digests;
  DROP TABLE push_configs;
  DROP TABLE conversation_counts_by_owner;
  DROP INDEX conversations_by_owner;
  ALTER TABLE conversations DROP COLUMN owner;`;

/** The PostgreSQL schema back to 4: what its migrations 6 and 5 added (as SQLite's 15 and 14). */
export const DROP_POSTGRES_SCHEMA_5 = `${DROP_POSTGRES_SCHEMA_6}
  DROP TABLE webhook_cursors;
  DROP TABLE audit;
  DROP FUNCTION audit_append_only();
  DROP INDEX approvals_due;
  DROP INDEX approvals_by_status;
  ALTER TABLE approvals DROP COLUMN decided_by, DROP COLUMN via, DROP COLUMN edited_args, DROP COLUMN expires_at, DROP COLUMN on_timeout;
  ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
  ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'approved', 'rejected', 'executing', 'done', 'failed', 'interrupted'));`;
