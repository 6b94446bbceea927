/**
 * What the newest SQLite migrations added, undone, for the tests that take a database back to
 * an earlier schema version and open it again (sqlite/schema.ts). Newest first: a test going
 * further back runs this before its own undo of older migrations.
 */

/** Back to schema 12: what migration 13 added (issue 14: the running mark's lease, an approval's outcome_unknown and replaces_uuid). */
export const DROP_SCHEMA_13 = `
  DROP INDEX conversations_leased;
  ALTER TABLE conversations DROP COLUMN lease_owner;
  ALTER TABLE conversations DROP COLUMN lease_node;
  ALTER TABLE conversations DROP COLUMN lease_expires_at;
  ALTER TABLE conversations DROP COLUMN lease_takeovers;
  ALTER TABLE approvals DROP COLUMN outcome_unknown;
  ALTER TABLE approvals DROP COLUMN replaces_uuid;`;
