/**
 * The schema changed by its owner alone: `asg migrate` (migrateDatabase) as the role that owns
 * the schema, and the store replicas as a role with DML rights only, which start on a current
 * schema without a single DDL statement and refuse one behind their build with a message that
 * says what to run.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { MessageRole, ConversationStatus } from '../../gen/ts/asg/store/v1/store.js';
import { openPostgresStorage } from './postgres/driver.js';
import { migrateDatabase } from './postgres/migrate-database.js';
import { POSTGRES_SCHEMA_VERSION } from './postgres/schema.js';
import { createTestDatabase, databaseUrl, dropTestDatabase, onTestServer, postgresOptions } from '../../test/support/storage-drivers.js';

let database: string;
let owner: string;
let app: string;
/** The roles' password, in their URLs: it must never be shown. */
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

/** The test database's URL as `role`. */
function urlAs(role: string): string {
  const url = new URL(databaseUrl(database));
  url.username = role;
  url.password = PASSWORD;
  return url.toString();
}

async function as<T extends pg.QueryResultRow>(role: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: urlAs(role) });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

beforeEach(async () => {
  database = await createTestDatabase();
  const suffix = randomBytes(4).toString('hex');
  owner = `asg_test_owner_${suffix}`;
  app = `asg_test_app_${suffix}`;
  // Names of [a-z0-9_] made here, never input.
  await onTestServer(`CREATE ROLE ${owner} LOGIN PASSWORD '${PASSWORD}'`);
  await onTestServer(`CREATE ROLE ${app} LOGIN PASSWORD '${PASSWORD}'`);
  // The database's owner owns its public schema too (PostgreSQL 15: pg_database_owner); the
  // app role may use it and read and write rows, never change it.
  await onTestServer(`ALTER DATABASE ${database} OWNER TO ${owner}`);
  const grants = [
    `REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
    `GRANT USAGE ON SCHEMA public TO ${app}`,
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${app}`,
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${app}`,
  ];
  for (const grant of grants) await as(owner, grant);
});

afterEach(async () => {
  await dropTestDatabase(database);
  for (const role of [app, owner]) await onTestServer(`DROP ROLE IF EXISTS ${role}`);
});

describe('migrations by the schema’s owner, the store on DML rights', () => {
  it('a store whose role may not change the schema refuses an empty database, saying to run `asg migrate`, without the password', async () => {
    const refused = await openPostgresStorage(postgresOptions(urlAs(app))).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toContain(
      `has schema version 0 and this build needs ${POSTGRES_SCHEMA_VERSION}, but its role may not change the schema`,
    );
    expect(refused).toContain('run `asg migrate` with the URL of a role that owns the schema first');
    expect(refused).not.toContain(PASSWORD);
    // Nothing was created.
    expect(await as(owner, "SELECT to_regclass('schema_version')::text AS t")).toEqual([{ t: null }]);
  });

  it('migrates once as the owner; then the store runs as the DML role: it writes, reads, and changes no schema', async () => {
    const first = await migrateDatabase(urlAs(owner));
    expect(first).toMatchObject({ from: 0, to: POSTGRES_SCHEMA_VERSION });
    expect(first.where).not.toContain(PASSWORD);
    expect(await migrateDatabase(urlAs(owner))).toMatchObject({ from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION });

    // The app role cannot create anything: whatever it does below is DML.
    await expect(as(app, 'CREATE TABLE sneaky (id int)')).rejects.toThrow(/permission denied for schema public/);
    const storage = await openPostgresStorage(postgresOptions(urlAs(app)));
    try {
      const created = await storage.createConversation({ sessionId: 's', systemPrompt: 'hi' });
      await storage.appendMessages({
        conversationId: created.id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content: 'hello' }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages.map((message) => message.content)).toEqual(['hi', 'hello']);
    } finally {
      await storage.close();
    }
    // Every table is the owner's still.
    const owners = await as<{ owner: string }>(owner, "SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'");
    expect(owners).toEqual([{ owner }]);
  });

  it('refuses a database whose schema is newer than this build, changing nothing', async () => {
    await migrateDatabase(urlAs(owner));
    await as(owner, `UPDATE schema_version SET version = ${POSTGRES_SCHEMA_VERSION + 1}`);
    await expect(migrateDatabase(urlAs(owner))).rejects.toThrow(
      `has schema version ${POSTGRES_SCHEMA_VERSION + 1}, newer than this build knows (${POSTGRES_SCHEMA_VERSION}); run a newer build`,
    );
    await expect(openPostgresStorage(postgresOptions(urlAs(app)))).rejects.toThrow(/newer than this build knows/);
  });

  it('says which database it cannot reach, without the password', async () => {
    const url = new URL(urlAs(owner));
    url.port = '1';
    const error = await migrateDatabase(url.toString(), 2_000).then(
      () => undefined,
      (failure: Error) => failure.message,
    );
    expect(error).toMatch(/^cannot connect to postgres:\/\/asg_test_owner_[0-9a-f]+:\*\*\*@127\.0\.0\.1:1\//);
    expect(error).not.toContain(PASSWORD);
  });
});
