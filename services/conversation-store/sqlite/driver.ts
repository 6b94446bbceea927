import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { eventFromRow } from '../rows.js';
import { ChangeLog, type SqlStatements, type SqlWrite } from '../sql/port.js';
import { QUERIES, type QueryArgs, type QueryName } from '../sql/queries.js';
import { SqlConversationStorage } from '../sql/storage.js';
import { DEFAULT_STALE_TURN_MS } from '../storage.js';
import { configureConnection, migrate, switchToIncrementalVacuum } from './schema.js';

export const DATABASE_FILE = 'conversations.db';

export interface SqliteStorageOptions {
  /** The folder of `conversations.db`; created when missing. */
  dataDir: string;
  /** Epoch milliseconds; replaced in tests to age approvals without waiting. */
  now?: () => number;
  /** A running mark older than this is stale; DEFAULT_STALE_TURN_MS when absent. */
  staleTurnAfterMs?: number;
}

/** Opens (creating and migrating when needed) `<dataDir>/conversations.db`. */
export function openSqliteStorage(options: SqliteStorageOptions): SqliteConversationStorage {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, DATABASE_FILE);
  const db = new Database(file);
  try {
    configureConnection(db);
    migrate(db, file);
    switchToIncrementalVacuum(db);
    return new SqliteConversationStorage(db, options.now ?? Date.now, options.staleTurnAfterMs ?? DEFAULT_STALE_TURN_MS);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The end of the SQLite transactions this process queued so far: the next one starts after it. */
let transactions: Promise<unknown> = Promise.resolve();

/** A value as better-sqlite3 binds it: flags as 0/1, lists as JSON text (json_each), bytes as a Buffer. */
function bound(args: QueryArgs): QueryArgs {
  const values: QueryArgs = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) values[name] = null;
    else if (typeof value === 'boolean') values[name] = value ? 1 : 0;
    else if (Array.isArray(value)) values[name] = JSON.stringify(value);
    else if (value instanceof Uint8Array && !Buffer.isBuffer(value))
      values[name] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else values[name] = value;
  }
  return values;
}

/**
 * The store's rules on one SQLite file, statements prepared once. One transaction at a time in this process, and BEGIN
 * IMMEDIATE takes the write lock before a write reads, so no read-then-write is overtaken, not even by another process.
 * A write's events are numbered by AUTOINCREMENT and handed to the listeners after COMMIT, before the next transaction:
 * the store is one process on SQLite, so that is the whole live feed. Triggers keep the counts.
 */
export class SqliteConversationStorage extends SqlConversationStorage {
  private readonly prepared: Record<QueryName, Database.Statement>;
  private readonly insertEvent: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly beginImmediate: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly statements: SqlStatements = {
    all: async <Row>(query: QueryName, args: QueryArgs) => this.prepared[query].all(bound(args)) as Row[],
    run: async (query: QueryName, args: QueryArgs) => this.prepared[query].run(bound(args)).changes,
  };

  constructor(
    private readonly db: Database.Database,
    now: () => number,
    staleTurnAfterMs: number = DEFAULT_STALE_TURN_MS,
  ) {
    // One process per file: a mark of another boot was left by a process that is gone.
    super({ bootId: randomUUID(), now, staleTurnAfterMs, locksRows: false });
    this.prepared = Object.fromEntries(Object.entries(QUERIES.sqlite).map(([name, query]) => [name, db.prepare(query.sql)])) as Record<
      QueryName,
      Database.Statement
    >;
    this.insertEvent = db.prepare(
      'INSERT INTO events (conversation_id, kind, payload, created_at) VALUES (@conversation_id, @kind, @payload, @created_at)',
    );
    this.begin = db.prepare('BEGIN');
    this.beginImmediate = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** After the transactions queued before it in this process: better-sqlite3 waits for a lock by blocking the thread. */
  private exclusive<R>(body: () => Promise<R>): Promise<R> {
    const run = transactions.then(body);
    transactions = run.catch(() => undefined);
    return run;
  }

  private async transaction<R>(begin: Database.Statement, body: () => Promise<R>): Promise<R> {
    begin.run();
    try {
      const result = await body();
      this.commit.run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      throw error;
    }
  }

  protected read<R>(body: (tx: SqlStatements) => Promise<R>): Promise<R> {
    return this.exclusive(() => this.transaction(this.begin, () => body(this.statements)));
  }

  protected write<R>(body: (tx: SqlWrite) => Promise<R>): Promise<R> {
    return this.exclusive(async () => {
      const changes = new ChangeLog();
      let events: ConversationEvent[] = [];
      const result = await this.transaction(this.beginImmediate, async () => {
        const written = await body({ ...this.statements, changes });
        events = changes.events.map((event) => eventFromRow({ ...event, id: Number(this.insertEvent.run(event).lastInsertRowid) }));
        return written;
      });
      if (events.length > 0) this.tellCommitted(events);
      return result;
    });
  }

  /** Incremental auto-vacuum: the free pages go back to the file system, between transactions. */
  protected override reclaimSpace(): Promise<void> {
    return this.exclusive(async () => void this.db.pragma('incremental_vacuum'));
  }

  async close(): Promise<void> {
    await transactions;
    if (this.db.open) this.db.close();
  }
}
