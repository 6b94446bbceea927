import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  openPostgresStorage,
  type PostgresConversationStorage,
  type PostgresStorageOptions,
} from '../../services/conversation-store/postgres/driver.js';
import { migrate } from '../../services/conversation-store/postgres/schema.js';
import { DATABASE_FILE, openSqliteStorage } from '../../services/conversation-store/sqlite/driver.js';
import type { ConversationStorage } from '../../services/conversation-store/storage.js';

/**
 * The storage drivers as the conformance suite (storage-conformance.ts) sees them: a fresh
 * database per test, stores opened on it (each a new boot, as after a restart), and the two
 * raw reads the suite checks beside the interface.
 */
export interface OpenOptions {
  now?: () => number;
  staleTurnAfterMs?: number;
}

export interface StorageDriver {
  name: 'sqlite' | 'postgres';
  /** A new, empty database for the next stores. */
  createDatabase(): Promise<void>;
  /** A store on the current database: a new boot of the store. */
  open(options?: OpenOptions): Promise<ConversationStorage>;
  /** Rows in a table of the current database. */
  countRows(table: 'messages' | 'events' | 'approvals' | 'conversations' | 'run_journals' | 'run_steps'): Promise<number>;
  /** The raw pending_approval_uuid column of a conversation. */
  pendingApprovalColumn(conversationId: string): Promise<string | null>;
  /** Runs SQL text written by a test (no input in it) on the current database, with no store open on it. */
  execute(sql: string): Promise<void>;
  /** Drops the current database (the stores opened on it are closed first by the caller); PostgreSQL's go in batches (dropTestDatabaseLater). */
  dropDatabase(): Promise<void>;
  /** The SQLite folder of the current database; undefined for PostgreSQL. */
  readonly dataDir: string | undefined;
}

export function sqliteDriver(): StorageDriver {
  let dir: string | undefined;
  const read = <T>(sql: string, ...params: unknown[]): T => {
    const db = new Database(join(dir!, DATABASE_FILE), { readonly: true });
    try {
      return db.prepare(sql).get(...params) as T;
    } finally {
      db.close();
    }
  };
  return {
    name: 'sqlite',
    get dataDir() {
      return dir;
    },
    async createDatabase() {
      dir = mkdtempSync(join(tmpdir(), 'asg-store-'));
    },
    async open(options = {}) {
      return openSqliteStorage({ dataDir: dir!, ...options });
    },
    async countRows(table) {
      return read<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).n;
    },
    async pendingApprovalColumn(id) {
      return read<{ pending_approval_uuid: string | null }>('SELECT pending_approval_uuid FROM conversations WHERE id = ?', id)
        .pending_approval_uuid;
    },
    async execute(sql) {
      const db = new Database(join(dir!, DATABASE_FILE));
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    async dropDatabase() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

/** The server the PostgreSQL tests create their databases on (test/support/requirements.ts sets it). */
export function testServerUrl(): string {
  return process.env.ASG_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** The URL of `database` on the test server. */
export function databaseUrl(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on the test server's maintenance database. */
export async function onTestServer<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** A new empty database `asg_test_<random>` on the test server; its name. */
export async function createTestDatabase(): Promise<string> {
  const name = `asg_test_${randomBytes(6).toString('hex')}`;
  // A name of [a-z0-9_] made here, never input: CREATE DATABASE takes no parameters.
  await onTestServer(`CREATE DATABASE ${name}`);
  return name;
}

export async function dropTestDatabase(name: string): Promise<void> {
  await onTestServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A new database `asg_test_<random>` that holds the current schema already: a copy of a
 * migrated template, made in a fraction of the time a migration takes. For tests of a store
 * on its schema; a test of migrating an empty database takes createTestDatabase().
 */
async function createMigratedTestDatabase(): Promise<string> {
  // Back-pressure: while a full batch of finished databases waits, the next test waits for it
  // to go, so the backlog a file's afterAll drains is one batch, however busy the machine.
  while (finished.length >= DROPS_AT_ONCE && dropping) await dropping;
  const source = await migratedTemplate();
  const name = `asg_test_${randomBytes(6).toString('hex')}`;
  await onTestServer(`CREATE DATABASE ${name} TEMPLATE ${source}`);
  return name;
}

/**
 * Databases a test is done with, dropped in the background while the next tests run: each
 * DROP DATABASE waits for a checkpoint (a flush and fsync of the whole server), and drops
 * waiting at once share one, so those that pile up during a batch go together in the next —
 * DROPS_AT_ONCE at most, each a connection of a server that other tests use too (two test
 * files at a time, a few pools each: far below the server's 100). On a machine whose CPUs are
 * busy a checkpoint takes seconds, and a file of a hundred short tests makes databases faster
 * than four at a time can drop them: its afterAll then waited minutes for the backlog.
 */
const DROPS_AT_ONCE = 16;
const finished: string[] = [];
let dropping: Promise<void> | undefined;
let dropFailure: unknown;

/** Drops `name` soon, with others; dropFinishedTestDatabases() waits for it. Only for a database no store uses any more. */
function dropTestDatabaseLater(name: string): void {
  finished.push(name);
  dropping ??= (async () => {
    while (finished.length > 0) {
      for (const result of await Promise.allSettled(finished.splice(0, DROPS_AT_ONCE).map((next) => dropTestDatabase(next)))) {
        if (result.status === 'rejected') dropFailure ??= result.reason;
      }
    }
    dropping = undefined;
  })();
}

/** Waits until every database handed to dropTestDatabaseLater() is dropped (a test file's afterAll), and fails as a drop failed. */
export async function dropFinishedTestDatabases(): Promise<void> {
  while (dropping) await dropping;
  const failure = dropFailure;
  dropFailure = undefined;
  if (failure !== undefined) throw failure;
}

let template: Promise<string> | undefined;

/**
 * The name of a template database migrated to this build's schema, made once for every test
 * process and test run that shares the schema: its name carries a hash of the schema's sources,
 * so a branch with another migration gets a template of its own. Made under another name and
 * renamed when complete, so a process never copies a half-migrated template; of two processes
 * making it at once, the second rename fails and that copy goes. Nobody may connect to it: a
 * database with a connection cannot be copied.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const hash = createHash('sha256');
    for (const file of ['postgres/schema.ts', 'sql/ddl.ts'])
      hash.update(readFileSync(fileURLToPath(new URL(`../../services/conversation-store/${file}`, import.meta.url))));
    const name = `asg_test_template_${hash.digest('hex').slice(0, 16)}`;
    if ((await onTestServer('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0) return name;
    const building = await createTestDatabase();
    try {
      const pool = new pg.Pool({ connectionString: databaseUrl(building), max: 1 });
      try {
        const client = await pool.connect();
        try {
          await migrate(client, building);
        } finally {
          client.release();
        }
      } finally {
        await pool.end();
      }
      await onTestServer(`ALTER DATABASE ${building} WITH ALLOW_CONNECTIONS false`);
      await onTestServer(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      await dropTestDatabase(building);
      // Made meanwhile by another process: that one serves.
      if ((error as { code?: string }).code !== DUPLICATE_DATABASE) throw error;
    }
    return name;
  })();
  return template;
}

/** PostgreSQL's SQLSTATE for "database already exists". */
const DUPLICATE_DATABASE = '42P04';

/** Options for a PostgreSQL store of the tests: short heartbeats, so that replicas die fast. */
export function postgresOptions(url: string, options: OpenOptions & Partial<PostgresStorageOptions> = {}): PostgresStorageOptions {
  return { url, heartbeatMs: 200, ...options };
}

export function postgresDriver(): StorageDriver & {
  url(): string;
  openPostgres(options?: OpenOptions & Partial<PostgresStorageOptions>): Promise<PostgresConversationStorage>;
} {
  let database: string | undefined;
  const url = () => databaseUrl(database!);
  const read = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      return (await client.query<T>(sql, values)).rows;
    } finally {
      await client.end();
    }
  };
  const openPostgres = (options: OpenOptions & Partial<PostgresStorageOptions> = {}) =>
    openPostgresStorage(postgresOptions(url(), options));
  return {
    name: 'postgres',
    dataDir: undefined,
    url,
    openPostgres,
    async createDatabase() {
      database = await createMigratedTestDatabase();
    },
    open: openPostgres,
    async countRows(table) {
      return Number((await read<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
    },
    async pendingApprovalColumn(id) {
      return (
        await read<{ pending_approval_uuid: string | null }>('SELECT pending_approval_uuid FROM conversations WHERE id = $1', [id])
      )[0]!.pending_approval_uuid;
    },
    async execute(sql) {
      await read(sql);
    },
    async dropDatabase() {
      if (database) dropTestDatabaseLater(database);
      database = undefined;
    },
  };
}
