import type { Database } from 'better-sqlite3';
import { migrationsOf } from '../sql/ddl.js';

/** One migration per version (sql/ddl.ts). */
const MIGRATIONS = migrationsOf('sqlite');

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
