/**
 * What a store replica does when PostgreSQL ends its connections (a restart, a failover,
 * pg_terminate_backend) or stops answering: every connection survives its backend's end
 * (an unhandled 'error' would end this test process), a write whose backend was ended inside
 * its transaction runs again on another connection and is stored once, the LISTEN connection
 * and the outbox publisher's lock are taken again, the readiness probe says unavailable when
 * the database refuses connections and available when it is back — and not for one ended
 * session — and the publisher that lost its lock never publishes beside the one that took it.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { ConversationStatus, MessageRole, type ConversationEvent, type NewMessage } from '../../gen/ts/asg/store/v1/store.js';
import { startCuttableProxy, type CuttableProxy } from '../../test/support/cuttable-proxy.js';
import { until } from '../../test/support/until.js';
import { EventFeed } from './event-feed.js';
import {
  LISTEN_APPLICATION_NAME,
  openPostgresStorage,
  POOL_APPLICATION_NAME,
  PROBE_APPLICATION_NAME,
  PUBLISHER_APPLICATION_NAME,
  type PostgresConversationStorage,
  type PostgresStorageOptions,
} from './postgres/driver.js';
import { natsEventNames } from './postgres/nats-subjects.js';
import { createTestDatabase, databaseUrl, dropTestDatabase, onTestServer, postgresOptions } from '../../test/support/storage-drivers.js';

const natsUrl = process.env.ASG_TEST_EVENTS_URL || 'nats://127.0.0.1:4222';

let database: string;
let url: string;
const opened: PostgresConversationStorage[] = [];
const feeds: EventFeed[] = [];
const proxies: CuttableProxy[] = [];
const clients: pg.Client[] = [];

async function replica(options: Partial<PostgresStorageOptions> = {}): Promise<PostgresConversationStorage> {
  const storage = await openPostgresStorage(postgresOptions(url, options));
  opened.push(storage);
  return storage;
}

async function client(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url });
  connection.on('error', () => undefined);
  await connection.connect();
  clients.push(connection);
  return connection;
}

function watchAll(storage: PostgresConversationStorage, afterId: number, into: ConversationEvent[]): void {
  const feed = new EventFeed(storage, { maxBacklog: 100_000 });
  feeds.push(feed);
  const controller = new AbortController();
  void (async () => {
    for await (const event of feed.watch({ conversationId: '', afterId }, controller.signal)) into.push(event);
  })().catch(() => undefined);
}

/** The backends of this test's database with `applicationName`, as pg_stat_activity shows them. */
async function backends(applicationName: string): Promise<{ pid: number; state: string; query: string }[]> {
  return onTestServer('SELECT pid, state, query FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [
    database,
    applicationName,
  ]);
}

async function terminate(pids: number[]): Promise<void> {
  await onTestServer('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
}

beforeEach(async () => {
  database = await createTestDatabase();
  url = databaseUrl(database);
});

afterEach(async () => {
  for (const feed of feeds.splice(0)) feed.close();
  for (const storage of opened.splice(0)) await storage.close();
  for (const connection of clients.splice(0)) await connection.end().catch(() => undefined);
  for (const proxy of proxies.splice(0)) await proxy.close();
  await dropTestDatabase(database);
});

const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const append = (storage: PostgresConversationStorage, conversationId: string, messages: NewMessage[]) =>
  storage.appendMessages({
    conversationId,
    messages,
    status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
    returnConversation: false,
  });

describe('a PostgreSQL store replica whose connections are ended', () => {
  it('runs a write whose backend was ended inside its transaction again on another connection, and stores it once', async () => {
    const storage = await replica();
    const { id } = await storage.createConversation({ sessionId: 's', systemPrompt: '' });
    // The test holds the conversation's row lock: the write waits inside its transaction, on a backend of its own.
    const holder = await client();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [id]);
    const writing = append(storage, id, [user('written once')]);
    const waiting = await until('the write waiting for the row lock', async () => {
      const rows = await onTestServer<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND wait_event_type = 'Lock'",
        [database, POOL_APPLICATION_NAME],
      );
      return rows[0]?.pid;
    });
    await terminate([waiting]);
    await holder.query('COMMIT');
    await writing;
    const messages = (await storage.getConversation({ id, includeMessages: true })).messages.map((message) => message.content);
    expect(messages).toEqual(['written once']);
  });

  it('takes LISTEN again after its backend was ended: what another replica commits meanwhile still arrives, in order', async () => {
    const [a, b] = [await replica(), await replica()];
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const seen: ConversationEvent[] = [];
    watchAll(b, await b.latestEventId(), seen);
    const listening = await backends(LISTEN_APPLICATION_NAME);
    expect(listening).toHaveLength(2);
    await terminate(listening.map(({ pid }) => pid));
    for (let index = 0; index < 5; index++) await append(a, id, [user(`after ${index}`)]);
    await until(
      'the events committed after the LISTEN backends ended',
      () => seen.filter((event) => event.messageAdded?.content.startsWith('after')).length === 5,
    );
    await until(
      'LISTEN in place again on both replicas',
      async () => (await backends(LISTEN_APPLICATION_NAME)).filter(({ query }) => query.startsWith('LISTEN')).length === 2,
    );
    const ids = seen.map((event) => event.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => ids[0]! + index));
  });

  it('stays available when only its probe connection is ended, and says unavailable within a probe when the database refuses connections, then available again', async () => {
    const proxy = await startCuttableProxy(url);
    proxies.push(proxy);
    const proxied = new URL(url);
    proxied.port = new URL(proxy.url).port;
    const storage = await replica({ url: proxied.toString() });
    const changes: boolean[] = [];
    storage.onAvailability((available) => changes.push(available));

    const [probe] = await until('the probe connection', async () =>
      (await backends(PROBE_APPLICATION_NAME)).length === 1 ? backends(PROBE_APPLICATION_NAME) : undefined,
    );
    await terminate([probe!.pid]);
    // A new probe connection has answered a probe: the ended session was not taken for the database going away.
    await until('a new probe connection that answered', async () =>
      (await backends(PROBE_APPLICATION_NAME)).some(({ pid, state }) => pid !== probe!.pid && state === 'idle'),
    );
    expect(changes).toEqual([]);

    proxy.refuse(true);
    await until('unavailable', () => changes.at(-1) === false, 5_000);
    const { id } = await storage
      .createConversation({ sessionId: 's', systemPrompt: '' })
      .catch((error: unknown) => ({ id: (error as { code?: number }).code }));
    expect(id).toBe(14); // UNAVAILABLE, never a hang or an unhandled error
    proxy.refuse(false);
    await until('available again', () => changes.at(-1) === true, 5_000);
    await storage.createConversation({ sessionId: 's', systemPrompt: '' });
    expect(changes).toEqual([false, true]);
  });
});

describe('the outbox publisher of a replica whose lock connection is ended (NATS events)', () => {
  let prefix: string;
  let nats: NatsConnection;
  let manager: JetStreamManager;

  beforeEach(async () => {
    prefix = `t${randomBytes(5).toString('hex')}`;
    nats = await connect({ servers: new URL(natsUrl).host });
    manager = await jetstreamManager(nats);
  });

  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
    await manager?.streams.delete(natsEventNames(prefix).stream).catch(() => undefined);
    await nats?.close();
  });

  it('stops leading as its lock session ends, one replica leads again, never two at once, and the stream holds each event once, in order', async () => {
    const events = { url: natsUrl, prefix, maxAgeMs: 600_000 };
    const replicas = [await replica({ events }), await replica({ events })];
    const leaders = () => replicas.filter((storage) => storage.natsEvents!.outboxPublisher!.isLeader).length;
    const { id } = await replicas[0]!.createConversation({ sessionId: 's', systemPrompt: '' });
    await until('a leader', () => leaders() === 1);
    for (let round = 0; round < 3; round++) {
      const writing = (async () => {
        for (let index = 0; index < 10; index++) await append(replicas[index % 2]!, id, [user(`r${round} m${index}`)]);
      })();
      await terminate((await backends(PUBLISHER_APPLICATION_NAME)).map(({ pid }) => pid));
      await until('a leader again', () => {
        expect(leaders()).toBeLessThanOrEqual(1);
        return leaders() === 1;
      });
      await writing;
    }
    const latest = await replicas[0]!.latestEventId();
    const { stream, storedSubject } = natsEventNames(prefix);
    await until('every stored event in the stream', async () => {
      expect(leaders()).toBeLessThanOrEqual(1);
      return (await manager.streams.info(stream)).state.messages === latest;
    });
    const last = await manager.streams.getMessage(stream, { last_by_subj: storedSubject });
    expect(last!.json<{ id: number }>().id).toBe(latest);
  });
});
