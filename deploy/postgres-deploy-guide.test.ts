/**
 * docs/deploy.md, run as written where it can run here: the SQL of its PostgreSQL section on a
 * test server (the owner and app roles, the database, the GRANTs), its `asg migrate` command as
 * the owner, and the conversation store (`asg serve conversation-store`) as the app role, which
 * has DML rights only: it starts on the migrated schema, writes and reads, and refused to start
 * before the migration with a message that says to run `asg migrate`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ConversationStoreServiceService, ConversationStatus, MessageRole } from '../gen/ts/asg/store/v1/store.js';
import { createPromiseClient } from '../services/common/grpc/client.js';
import { POSTGRES_SCHEMA_VERSION } from '../services/conversation-store/postgres/schema.js';
import { databaseUrl, onTestServer } from '../test/support/storage-drivers.js';
import { ASG, spawnProcess, tempDir } from '../test/support/agent-process.js';
import { logLineWhere } from '../test/support/log-lines.js';
import { freePort } from '../test/support/ports.js';

const guide = readFileSync(join(import.meta.dirname, '..', 'docs', 'deploy.md'), 'utf8');

/** The guide's fenced code blocks of one language, in order. */
function blocks(language: string): string[] {
  return [...guide.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1]!);
}

/** A block's statements, one per `;`, without the comment lines (CREATE DATABASE runs in no transaction: one at a time). */
function statements(block: string): string[] {
  return block
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}

const suffix = randomBytes(4).toString('hex');
/** The guide's names, made unique on the shared test server. */
const NAMES: [RegExp, string][] = [
  [/\basg_owner\b/g, `asg_guide_owner_${suffix}`],
  [/\basg_app\b/g, `asg_guide_app_${suffix}`],
  [/\bDATABASE asg\b/g, `DATABASE asg_guide_${suffix}`],
];
const owner = `asg_guide_owner_${suffix}`;
const app = `asg_guide_app_${suffix}`;
const database = `asg_guide_${suffix}`;
const rename = (text: string) => NAMES.reduce((renamed, [pattern, name]) => renamed.replace(pattern, name), text);

/** A URL of the guide's, pointed at the test server and database, its role renamed; its password kept (the guide's SQL set it). */
function onTestDatabase(guideUrl: string): string {
  const url = new URL(rename(guideUrl));
  const server = new URL(databaseUrl(database));
  url.host = server.host;
  url.pathname = server.pathname;
  return url.toString();
}

/** The guide's password of each of its roles (set by its SQL, so the test passes on a server that checks passwords too). */
const PASSWORDS: Record<string, string> = { [`asg_guide_owner_${suffix}`]: 'OWNER_PASSWORD', [`asg_guide_app_${suffix}`]: 'APP_PASSWORD' };

async function inDatabase<T extends pg.QueryResultRow>(role: string, sql: string): Promise<T[]> {
  const url = new URL(databaseUrl(database));
  url.username = role;
  url.password = PASSWORDS[role]!;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** `bin/asg` with arguments and environment, to its exit; its output. */
async function asg(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const { ASG_DATABASE_URL: _inherited, ...rest } = process.env;
  const run = spawnProcess(process.execPath, [ASG, ...args], { ...rest, LOG_FORMAT: 'json', ...env });
  const code = await run.exited;
  return { code, output: run.output() };
}

const [serverBlock, databaseBlock] = blocks('sql');
const ownerUrl = /^ASG_DATABASE_URL='([^']+)' asg migrate$/m.exec(guide)?.[1];
const appUrl = /^(postgres:\/\/asg_app:\S+)\s+# ASG_DATABASE_URL: the store$/m.exec(guide)?.[1];

beforeAll(async () => {
  for (const statement of statements(rename(serverBlock!))) await onTestServer(statement);
});

afterAll(async () => {
  await onTestServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  for (const role of [app, owner]) await onTestServer(`DROP ROLE IF EXISTS ${role}`);
});

describe('docs/deploy.md on a PostgreSQL server', () => {
  it('names the roles, the database, the GRANTs, the migrate command and the store’s URL', () => {
    expect(blocks('sql')).toHaveLength(2);
    expect(serverBlock).toMatch(/CREATE DATABASE asg OWNER asg_owner;/);
    // The passwords its SQL sets are the ones its URLs carry.
    expect(serverBlock).toContain("CREATE ROLE asg_owner LOGIN PASSWORD 'OWNER_PASSWORD';");
    expect(serverBlock).toContain("CREATE ROLE asg_app LOGIN PASSWORD 'APP_PASSWORD';");
    expect(databaseBlock).toMatch(/GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO asg_app;/);
    expect(ownerUrl).toMatch(/^postgres:\/\/asg_owner:/);
    expect(appUrl).toMatch(/^postgres:\/\/asg_app:APP_PASSWORD@/);
    expect(ownerUrl).toMatch(/^postgres:\/\/asg_owner:OWNER_PASSWORD@/);
  });

  it('runs its GRANTs as the owner; migrates as the owner with `asg migrate`; the store runs as the app role with DML rights only', async () => {
    for (const statement of statements(rename(databaseBlock!))) await inDatabase(owner, statement);
    // The app role can change nothing in the schema.
    await expect(inDatabase(app, 'CREATE TABLE sneaky (id int)')).rejects.toThrow(/permission denied for schema public/);

    const dir = tempDir();
    const config = join(dir, 'agent.yaml');
    writeFileSync(config, `data_dir: ${JSON.stringify(join(dir, 'data'))}\n`);
    const serve = async () => {
      const port = await freePort();
      const store = spawnProcess(
        process.execPath,
        [ASG, 'serve', 'conversation-store', '--config', config, '--host', '127.0.0.1', '--port', String(port)],
        {
          ...process.env,
          ASG_DATABASE_URL: onTestDatabase(appUrl!),
          ASG_METRICS_PORT: '0',
          LOG_FORMAT: 'json',
        },
      );
      return { store, port };
    };

    // Before the migration the store refuses, and says what to run.
    const early = await serve();
    expect(await early.store.exited).toBe(1);
    expect(early.store.output()).toContain('run `asg migrate` with the URL of a role that owns the schema first');
    expect(early.store.output()).not.toContain('APP_PASSWORD');

    // `asg migrate` as the guide writes it, as the owner: once, then nothing to do.
    const migrated = await asg(['migrate'], { ASG_DATABASE_URL: onTestDatabase(ownerUrl!) });
    expect(migrated.code).toBe(0);
    expect(migrated.output).toContain(`: schema version 0 → ${POSTGRES_SCHEMA_VERSION}\n`);
    expect(migrated.output).not.toContain('OWNER_PASSWORD');
    const again = await asg(['migrate'], { ASG_DATABASE_URL: onTestDatabase(ownerUrl!) });
    expect(again).toMatchObject({
      code: 0,
      output: expect.stringContaining(`is at schema version ${POSTGRES_SCHEMA_VERSION} already: nothing to do`),
    });

    // The store as the app role: it starts, writes and reads.
    const { store, port } = await serve();
    const client = createPromiseClient(ConversationStoreServiceService, `127.0.0.1:${port}`, 'deploy-guide-test', 10_000);
    try {
      await store.waitForLine(
        logLineWhere((line) => line.msg === 'service up'),
        30_000,
      );
      const { conversation } = await client.createConversation({ sessionId: '0badcafe', systemPrompt: 'hi' });
      await client.appendMessages({
        conversationId: conversation!.id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content: 'hello' }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
      const { conversation: read } = await client.getConversation({ id: conversation!.id, includeMessages: true });
      expect(read!.messages.map((message) => message.content)).toEqual(['hi', 'hello']);
    } finally {
      client.close();
      expect(await store.stop()).toBe(0);
    }
    // Every table is the owner's: the store created none.
    expect(await inDatabase(owner, "SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ owner }]);
  });

  it('`asg migrate` without a database says so and exits 2', async () => {
    const refused = await asg(['migrate'], {});
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('asg migrate: no PostgreSQL database named: set ASG_DATABASE_URL');
  });
});
