/**
 * Two full mesh processes (`bin/asg up`) on one PostgreSQL database whose events
 * cross through NATS JetStream (ASG_EVENTS_URL). An SSE reader on B gets the events of a turn
 * that runs on A, and after a reconnect with Last-Event-ID misses none; so does a tRPC
 * subscriber on B whose connection is cut; the stream holds every stored event once, in id
 * order. The mesh has its own stream (events.prefix), deleted after.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { natsEventNames } from '../../services/conversation-store/postgres/nats-subjects.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { join } from 'node:path';
import type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { startCuttableProxy } from '../support/cuttable-proxy.js';
import { post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { expectResumeMissesNone, openSse, storedSseEvents } from '../support/sse-reader.js';
import { logLines } from '../support/log-lines.js';
import { record, trpcClient, type Recording } from '../support/trpc-client.js';

const natsUrl = process.env.ASG_TEST_EVENTS_URL || 'nats://127.0.0.1:4222';
/** The NATS server here has no auth and takes any credentials: B's URL carries some, which must never be shown. */
const NATS_PASSWORD = 'nats-replica-secret-31d7';

let model: ScriptedModelServer;
let database: string;
let a: AgentProcess;
let b: AgentProcess;
const prefix = `e2e${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  database = await createTestDatabase();
  const resources = join(tempDir('asg-nats-replicas-'), 'resources.db');
  const withCredentials = new URL(natsUrl);
  withCredentials.username = 'asg';
  withCredentials.password = NATS_PASSWORD;
  const replica = (eventsUrl: string) =>
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { mcp_servers: [resourcesServer(resources)], events: { prefix } },
      env: { ASG_DATABASE_URL: databaseUrl(database), ASG_EVENTS_URL: eventsUrl },
    });
  a = await replica(natsUrl);
  b = await replica(withCredentials.toString());
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await model?.close();
  const nats = await connect({ servers: new URL(natsUrl).host });
  await (await jetstreamManager(nats)).streams.delete(natsEventNames(prefix).stream).catch(() => undefined);
  await nats.close();
  if (database) await dropTestDatabase(database);
});

describe('two mesh replicas whose events cross through NATS JetStream', () => {
  it('runs its store with NATS events, naming the server without its credentials', () => {
    for (const replica of [a, b]) {
      const listening = logLines(replica.output()).find((line) => line.msg === 'conversation store listening');
      expect(String(listening?.events)).toMatch(/NATS JetStream nats:\/\/(\*\*\*@)?127\.0\.0\.1:\d+/);
    }
    expect(b.output()).toContain('nats://***@');
    expect(b.output()).not.toContain(NATS_PASSWORD);
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
      await vi.waitFor(() => expect(storedSseEvents(first.events).some((entry) => entry.endsWith(':turn_ended'))).toBe(true), {
        timeout: 10_000,
      });
      first.close();
      const lastSeen = storedSseEvents(first.events).at(-1)!.split(':')[0]!;

      // While it is away, two more turns run on A.
      for (let turn = 0; turn < 2; turn++)
        expect((await post(`${a.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(() => expect(storedSseEvents(steady.events).filter((entry) => entry.endsWith(':turn_ended'))).toHaveLength(3), {
        timeout: 10_000,
      });

      expect(await expectResumeMissesNone(`${b.url}/conversations/${id}/events`, lastSeen, steady)).toBeGreaterThanOrEqual(6);
    } finally {
      steady.close();
      first.close();
    }

    // Every stored event of the database is in the stream once, in id order.
    const db = new pg.Client({ connectionString: databaseUrl(database) });
    await db.connect();
    const latest = Number((await db.query<{ id: string }>('SELECT last_id AS id FROM event_ids')).rows[0]!.id);
    await db.end();
    const nats = await connect({ servers: new URL(natsUrl).host });
    try {
      const manager = await jetstreamManager(nats);
      const { stream } = natsEventNames(prefix);
      await vi.waitFor(async () => expect((await manager.streams.info(stream)).state.messages).toBe(latest), { timeout: 10_000 });
      const ids: number[] = [];
      for (let seq = 1; seq <= latest; seq++) ids.push((await manager.streams.getMessage(stream, { seq }))!.json<{ id: number }>().id);
      expect(ids).toEqual(Array.from({ length: latest }, (_, index) => index + 1));
    } finally {
      await nats.close();
    }
  }, 60_000);

  it('delivers to tRPC subscribers on B the events of turns on A, and one whose connection was cut resumes with none missed', async () => {
    const storedOf = (recording: Recording<ConversationUpdate>) =>
      recording.items.filter((item) => item.id !== undefined).map((item) => `${item.id}:${item.data.kind}`);
    const turnsEnded = (recording: Recording<ConversationUpdate>) =>
      storedOf(recording).filter((entry) => entry.endsWith(':turn_ended')).length;
    const proxy = await startCuttableProxy(b.url);
    const id = (await post(`${a.url}/conversations`, {})).body.conversation.id as string;
    const steady = record<ConversationUpdate>((callbacks) =>
      trpcClient(b.url).conversation.events.subscribe({ conversationId: id }, callbacks),
    );
    const dropping = record<ConversationUpdate>((callbacks) =>
      trpcClient(proxy.url).conversation.events.subscribe({ conversationId: id }, callbacks),
    );
    try {
      await vi.waitFor(() => expect([steady.items[0]?.data.kind, dropping.items[0]?.data.kind]).toEqual(['snapshot', 'snapshot']), {
        timeout: 10_000,
      });
      expect((await post(`${a.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(() => expect(turnsEnded(dropping)).toBe(1), { timeout: 10_000 });
      await vi.waitFor(() => expect(storedOf(dropping)).toEqual(storedOf(steady)), { timeout: 10_000 });

      proxy.cut();
      expect((await post(`${a.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(() => expect(turnsEnded(steady)).toBe(2), { timeout: 10_000 });
      await vi.waitFor(() => expect(storedOf(dropping)).toEqual(storedOf(steady)), { timeout: 15_000 });
      expect(dropping.items.filter((item) => item.data.kind === 'snapshot')).toHaveLength(1);
      const ids = storedOf(steady).map((entry) => Number(entry.split(':')[0]));
      expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
    } finally {
      steady.stop();
      dropping.stop();
      await proxy.close();
    }
  }, 60_000);
});
