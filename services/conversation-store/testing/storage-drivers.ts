import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStorage, type PostgresConversationStorage, type PostgresStorageOptions } from '../postgres/driver.js';
import { DATABASE_FILE, openSqliteStorage } from '../sqlite/driver.js';
import type { ConversationStorage } from '../storage.js';

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
  countRows(table: 'messages' | 'events' | 'approvals' | 'conversations'): Promise<number>;
  /** The raw pending_approval_uuid column of a conversation. */
  pendingApprovalColumn(conversationId: string): Promise<string | null>;
  /** Runs SQL text written by a test (no input in it) on the current database, with no store open on it. */
  execute(sql: string): Promise<void>;
  /** Drops the current database (the stores opened on it are closed first by the caller). */
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
      return read<{ pending_approval_uuid: string | null }>('SELECT pending_approval_uuid FROM conversations WHERE id = ?', id).pending_approval_uuid;
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

/** Options for a PostgreSQL store of the tests: short heartbeats, so that replicas die fast. */
export function postgresOptions(url: string, options: OpenOptions & Partial<PostgresStorageOptions> = {}): PostgresStorageOptions {
  return { url, heartbeatMs: 200, ...options };
}

export function postgresDriver(): StorageDriver & { url(): string; openPostgres(options?: OpenOptions & Partial<PostgresStorageOptions>): Promise<PostgresConversationStorage> } {
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
  const openPostgres = (options: OpenOptions & Partial<PostgresStorageOptions> = {}) => openPostgresStorage(postgresOptions(url(), options));
  return {
    name: 'postgres',
    dataDir: undefined,
    url,
    openPostgres,
    async createDatabase() {
      database = await createTestDatabase();
    },
    open: openPostgres,
    async countRows(table) {
      return Number((await read<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
    },
    async pendingApprovalColumn(id) {
      return (await read<{ pending_approval_uuid: string | null }>('SELECT pending_approval_uuid FROM conversations WHERE id = $1', [id]))[0]!.pending_approval_uuid;
    },
    async execute(sql) {
      await read(sql);
    },
    async dropDatabase() {
      if (database) await dropTestDatabase(database);
      database = undefined;
    },
  };
}
