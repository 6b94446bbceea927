import type { ClientBase } from 'pg';
import { migrationsOf } from '../sql/ddl.js';

/**
 * One migration per version (sql/ddl.ts). The first holds SQLite's schema 12 (4 here is its 13, 5 its 14, and so on) with
 * what several replicas need: `event_ids`, whose row lock, raised last before COMMIT, makes event ids gap-free and in
 * commit order; no count triggers (the driver changes counts under that lock, so no two transactions lock count rows in
 * opposite orders); `store_replicas`, the live boots, so a live replica's mark is not a crash's. Timestamps stay ISO text
 * as in SQLite; `approvals.position` orders approvals created in one transaction (SQLite's rowid).
 */
const MIGRATIONS = migrationsOf('postgres');

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
