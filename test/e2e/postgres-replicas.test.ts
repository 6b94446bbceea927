/**
 * Two full mesh processes (`bin/asg up`) on one PostgreSQL database are replicas of
 * every service. A conversation created on one is read on the other; twenty concurrent
 * decisions of one approval spread over both are claimed once (one 200, nineteen 409) and the
 * tool runs once, on a resources database both share; an SSE reader on B gets the events of a
 * turn that runs on A, and after a reconnect with Last-Event-ID misses none.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { logLines } from '../support/log-lines.js';
import { expectResumeMissesNone, openSse, storedSseEvents } from '../support/sse-reader.js';

let model: ScriptedModelServer;
let database: string;
let a: AgentProcess;
let b: AgentProcess;
/** The resources MCP server's database, one file for both replicas' tool calls. */
let resources: string;
/** Trust auth takes any password: B's URL carries one, which must never be shown. */
const PASSWORD = 'replica-password-7c41e9';

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  database = await createTestDatabase();
  resources = join(tempDir('asg-replicas-'), 'resources.db');
  const replica = (url: string) =>
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { mcp_servers: [resourcesServer(resources)] },
      env: { ASG_DATABASE_URL: url },
    });
  const withPassword = new URL(databaseUrl(database));
  withPassword.password = PASSWORD;
  // One after the other: the second also finds the schema the first one's migration made.
  a = await replica(databaseUrl(database));
  b = await replica(withPassword.toString());
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('two mesh replicas on one PostgreSQL database', () => {
  it('runs its store on the database of ASG_DATABASE_URL, naming it without the password', async () => {
    for (const replica of [a, b]) {
      const listening = logLines(replica.output()).find((line) => line.msg === 'conversation store listening');
      expect(String(listening?.database)).toMatch(new RegExp(`^postgres://postgres(:\\*\\*\\*)?@127\\.0\\.0\\.1:\\d+/${database}`));
    }
    expect(b.output()).toContain('postgres:***@');
    expect(b.output()).not.toContain(PASSWORD);
  });

  it('reads on one replica the conversation created on the other', async () => {
    const created = await post(`${a.url}/conversations`, { message: 'list resources' });
    expect(created.status).toBe(201);
    const id = created.body.conversation.id as string;
    const read = await get(`${b.url}/conversations/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.conversation.messages.map((message: { content: string }) => message.content)).toEqual(
      created.body.conversation.messages.map((message: { content: string }) => message.content),
    );
  });

  it('claims one approval once when twenty decisions race over both replicas: one 200, nineteen 409, the tool runs once', async () => {
    const created = await post(`${a.url}/conversations`, { message: 'add resource replicated-once with value 9' });
    expect(created.body.result.waiting_approval).toBe(true);
    const uuid = created.body.result.approval.uuid as string;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => post(`${(index % 2 === 0 ? a : b).url}/approvals/${uuid}`, { approved: true })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(19);
    expect(resourceNames(resources).filter((name) => name === 'replicated-once')).toHaveLength(1);
  });

  it('streams to an SSE reader on B the events of a turn that runs on A, and a reconnect with Last-Event-ID misses none', async () => {
    const created = await post(`${a.url}/conversations`, {});
    const id = created.body.conversation.id as string;
    const steady = await openSse(`${b.url}/conversations/${id}/events`);
    const first = await openSse(`${b.url}/conversations/${id}/events`);
    try {
      await vi.waitFor(() => expect([steady.events[0]?.event, first.events[0]?.event]).toEqual(['snapshot', 'snapshot']), {
        timeout: 10_000,
      });
      expect((await post(`${a.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(
        () =>
          expect(
            first.events.some((event) => event.event === 'message_added' && JSON.parse(event.data).message.content.startsWith('Done.')),
          ).toBe(true),
        { timeout: 10_000 },
      );
      await vi.waitFor(() => expect(storedSseEvents(first.events).some((entry) => entry.endsWith(':turn_ended'))).toBe(true), {
        timeout: 10_000,
      });
      first.close();
      const lastSeen = storedSseEvents(first.events).at(-1)!.split(':')[0]!;

      // While it is away, a turn on A stops for an approval that B decides.
      const stop = await post(`${a.url}/conversations/${id}/messages`, { message: 'add resource replica-sse with value 7' });
      expect((await post(`${b.url}/approvals/${stop.body.result.approval.uuid}`, { approved: true })).status).toBe(200);
      await vi.waitFor(() => expect(steady.events.some((event) => event.event === 'approval_resolved')).toBe(true), { timeout: 10_000 });
      await vi.waitFor(() => expect(storedSseEvents(steady.events).at(-1)).toMatch(/:turn_ended$/), { timeout: 10_000 });

      expect(await expectResumeMissesNone(`${b.url}/conversations/${id}/events`, lastSeen, steady)).toBeGreaterThanOrEqual(4);
    } finally {
      steady.close();
      first.close();
    }
  }, 60_000);
});
