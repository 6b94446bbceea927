/**
 * Store replicas on one PostgreSQL database whose events cross through NATS
 * JetStream (events.url) instead of LISTEN/NOTIFY. Each test has its own database and its own
 * stream and subjects (events.prefix), deleted after it. What is checked: stored and live
 * events reach another replica's watchers with no NOTIFY sent; a rolled-back write publishes
 * nothing; an event whose writer stopped before publishing is published by another replica's
 * publisher, once; a lost publish-cursor row does not publish again; ids stay gap-free for a
 * watcher under 8 writers, also across a resume by after_id and a lost NATS connection.
 */
import { randomBytes } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { ConversationStatus, MessageRole, type ConversationEvent, type NewMessage } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { startCuttableProxy, type CuttableProxy } from '../../test/support/cuttable-proxy.js';
import { EventFeed } from './event-feed.js';
import { openPostgresStorage, type PostgresConversationStorage, type PostgresStorageOptions } from './postgres/driver.js';
import { natsEventNames } from './postgres/nats-subjects.js';
import { publisherLockName } from './postgres/outbox-publisher.js';
import { LIVE_EVENTS_CHANNEL, STORED_EVENTS_CHANNEL } from './postgres/statements.js';
import { createTestDatabase, databaseUrl, dropTestDatabase, postgresOptions } from '../../test/support/storage-drivers.js';

const natsUrl = process.env.ASG_TEST_EVENTS_URL || 'nats://127.0.0.1:4222';
const natsHostPort = new URL(natsUrl).host;

let database: string;
let url: string;
let prefix: string;
let nats: NatsConnection;
let manager: JetStreamManager;
const opened: PostgresConversationStorage[] = [];
const feeds: EventFeed[] = [];
const clients: pg.Client[] = [];
const proxies: CuttableProxy[] = [];

async function replica(options: Partial<PostgresStorageOptions> & { eventsUrl?: string } = {}): Promise<PostgresConversationStorage> {
  const { eventsUrl = natsUrl, ...rest } = options;
  const storage = await openPostgresStorage(postgresOptions(url, { events: { url: eventsUrl, prefix, maxAgeMs: 600_000 }, ...rest }));
  opened.push(storage);
  return storage;
}

function feedOf(storage: PostgresConversationStorage): EventFeed {
  const feed = new EventFeed(storage, { maxBacklog: 100_000 });
  feeds.push(feed);
  return feed;
}

async function client(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url });
  connection.on('error', () => undefined);
  await connection.connect();
  clients.push(connection);
  return connection;
}

beforeEach(async () => {
  database = await createTestDatabase();
  url = databaseUrl(database);
  prefix = `t${randomBytes(5).toString('hex')}`;
  nats = await connect({ servers: natsHostPort });
  manager = await jetstreamManager(nats);
});

afterEach(async () => {
  for (const feed of feeds.splice(0)) feed.close();
  for (const storage of opened.splice(0)) await storage.close();
  for (const connection of clients.splice(0)) await connection.end().catch(() => undefined);
  for (const proxy of proxies.splice(0)) await proxy.close();
  await manager.streams.delete(natsEventNames(prefix).stream).catch(() => undefined);
  await nats.close();
  await dropTestDatabase(database);
});

const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });
const append = (storage: PostgresConversationStorage, conversationId: string, messages: NewMessage[]) =>
  storage.appendMessages({
    conversationId,
    messages,
    status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
    returnConversation: false,
  });

/** Polls `check` until it holds, failing after `ms`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Watches `conversationId` ('' : all) on `feed` from `afterId`, collecting events until aborted. */
function watch(feed: EventFeed, conversationId: string, afterId: number, into: ConversationEvent[]): AbortController {
  const controller = new AbortController();
  void (async () => {
    for await (const event of feed.watch({ conversationId, afterId }, controller.signal)) into.push(event);
  })().catch(() => undefined);
  return controller;
}

/** The event ids of the stream's messages, in stream order. */
async function streamIds(): Promise<number[]> {
  const { stream, storedSubject } = natsEventNames(prefix);
  const info = await manager.streams.info(stream);
  const ids: number[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const message = await manager.streams.getMessage(stream, { seq });
    if (message?.subject === storedSubject) ids.push(message.json<{ id: number }>().id);
  }
  return ids;
}

const oneToN = (n: number) => Array.from({ length: n }, (_, index) => index + 1);

describe('PostgreSQL store replicas with events through NATS JetStream', () => {
  it("hands replica A's stored and live events to watchers on replica B through NATS, with no NOTIFY sent", async () => {
    const notifications: string[] = [];
    const listening = await client();
    listening.on('notification', (message) => notifications.push(message.channel));
    await listening.query(`LISTEN ${STORED_EVENTS_CHANNEL}`);
    await listening.query(`LISTEN ${LIVE_EVENTS_CHANNEL}`);

    const [a, b] = [await replica(), await replica()];
    // No LISTEN connection on either: nothing but NATS can carry A's events to B.
    expect(a.eventListener).toBeUndefined();
    expect(b.eventListener).toBeUndefined();
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const feed = feedOf(b);
    const seen: ConversationEvent[] = [];
    watch(feed, id, 0, seen);
    await until(() => feed.watcherCount === 1, 'the watcher');

    await append(a, id, [user('hello from a')]);
    await until(() => seen.some((event) => event.messageAdded?.content === 'hello from a'), 'the stored event from a');
    feedOf(a).publish({ id: 0, conversationId: id, at: new Date(), textDelta: { text: 'streaming…' } });
    await until(() => seen.some((event) => event.textDelta?.text === 'streaming…'), 'the live event from a');

    const latest = await a.latestEventId();
    await until(async () => (await streamIds()).length === latest, 'every stored event in the stream');
    expect(await streamIds()).toEqual(oneToN(latest));
    expect(notifications).toEqual([]);
    // What crossed is what the table holds, field for field.
    const crossed = seen.filter((event) => event.id !== 0);
    const fromTable = (await b.readEvents({ afterId: crossed[0]!.id - 1, limit: 100 })).filter((event) => event.conversationId === id);
    expect(crossed).toEqual(fromTable);
  });

  it('publishes nothing for a write that rolled back, and leaves no gap after it', async () => {
    const [a, b] = [await replica(), await replica()];
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const seen: ConversationEvent[] = [];
    watch(feedOf(b), '', await b.latestEventId(), seen);
    // The database refuses the events of one message at the end of its transaction: the write fails and rolls back whole.
    const db = await client();
    await db.query(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused on purpose'; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.payload LIKE '%boom%') EXECUTE FUNCTION refuse_boom();`);
    await expect(append(a, id, [user('boom')])).rejects.toThrow();
    await append(a, id, [user('after')]);
    await until(() => seen.some((event) => event.messageAdded?.content === 'after'), 'the event after the rolled-back write');

    const latest = await a.latestEventId();
    await until(async () => (await streamIds()).length === latest, 'every stored event in the stream');
    expect(await streamIds()).toEqual(oneToN(latest));
    expect(seen.some((event) => event.messageAdded?.content === 'boom')).toBe(false);
    const watchedIds = seen.map((event) => event.id);
    expect(watchedIds).toEqual(Array.from({ length: watchedIds.length }, (_, index) => watchedIds[0]! + index));
    expect((await a.getConversation({ id, includeMessages: true })).messages.map((message) => message.content)).toEqual(['after']);
  });

  it("publishes the events of a replica that stopped between commit and publish from another replica's publisher, each once, in order", async () => {
    // A publisher that took the lead and died before publishing anything: it holds the lock until its session ends.
    const deadLeader = await client();
    await deadLeader.query('SELECT pg_advisory_lock(hashtext($1))', [publisherLockName(natsEventNames(prefix).stream)]);
    const a = await replica();
    const b = await replica();
    expect(a.natsEvents!.outboxPublisher!.isLeader).toBe(false);
    const feed = feedOf(b);
    const seen: ConversationEvent[] = [];
    watch(feed, '', 0, seen);
    await until(() => feed.watcherCount === 1, 'the watcher');

    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    for (let index = 0; index < 5; index++) await append(a, id, [user(`m${index}`)]);
    const latest = await a.latestEventId();
    // A stops after its commits, before any publisher ran: nothing is in the stream yet.
    await a.close();
    expect(await streamIds()).toEqual([]);

    // The dead leader's session ends (PostgreSQL releases its lock): B's publisher takes over and publishes A's events.
    await deadLeader.end();
    await until(() => seen.at(-1)?.id === latest, "A's events at the watcher on B");
    expect(b.natsEvents!.outboxPublisher!.isLeader).toBe(true);
    expect(seen.map((event) => event.id)).toEqual(oneToN(latest));
    expect(await streamIds()).toEqual(oneToN(latest));

    // B dies after publishing but before its cursor row was saved (simulated: the row is lost);
    // C leads next and goes on after the stream's last event instead of publishing again.
    await (await client()).query('DELETE FROM event_publications');
    await b.close();
    const c = await replica();
    await until(() => c.natsEvents!.outboxPublisher!.isLeader, 'C leading');
    await append(c, id, [user('from c')]);
    await until(async () => (await streamIds()).length === latest + 1, "C's event in the stream");
    expect(await streamIds()).toEqual(oneToN(latest + 1));
  });

  it('stores a republished event once and refuses one that does not follow the last (what a second, stale leader would send)', async () => {
    const a = await replica();
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    await append(a, id, [user('one')]);
    const latest = await a.latestEventId();
    await until(async () => (await streamIds()).length === latest, 'every stored event in the stream');
    const { storedSubject } = natsEventNames(prefix);
    const js = jetstream(nats);
    const [last] = await a.readEvents({ afterId: latest - 1, limit: 1 });
    const body = JSON.stringify({ id: last!.id });
    // The same event again (a publish retried after a lost ack): JetStream answers duplicate and stores nothing.
    expect((await js.publish(storedSubject, body, { msgID: String(latest) })).duplicate).toBe(true);
    // An event that claims to follow one that is not the stream's last: refused.
    await expect(
      js.publish(storedSubject, JSON.stringify({ id: latest + 1 }), {
        msgID: String(latest + 1),
        expect: { lastMsgID: String(latest - 1) },
      }),
    ).rejects.toThrow(/wrong last msg ID/i);
    expect(await streamIds()).toEqual(oneToN(latest));
  });

  it('keeps event ids gap-free under 8 concurrent writers for a watcher on another replica that resumes by after_id and loses its NATS connection', async () => {
    const writers = await Promise.all(Array.from({ length: 8 }, () => replica()));
    const proxy = await startCuttableProxy(natsUrl);
    proxies.push(proxy);
    const watcherStore = await replica({ eventsUrl: `nats://${new URL(proxy.url).host}` });
    const feed = feedOf(watcherStore);
    await watcherStore.createConversation({ sessionId: 's', systemPrompt: '' });
    const start = await watcherStore.latestEventId();
    const seen: ConversationEvent[] = [];
    let watcher = watch(feed, '', start, seen);
    const conversations = await Promise.all(writers.map((writer) => writer.createConversation({ sessionId: 's', systemPrompt: '' })));
    const ROUNDS = 25;
    const writing = Promise.all(
      writers.map(async (writer, index) => {
        for (let round = 0; round < ROUNDS; round++)
          await append(writer, conversations[index]!.id, [user(`w${index} r${round}`), assistant('ok')]);
      }),
    );
    // Midway the watcher drops and resumes from the last id it got; later the watcher's replica loses NATS for a moment.
    await until(() => seen.length > 100, 'the first hundred events');
    watcher.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    watcher = watch(feed, '', seen.at(-1)!.id, seen);
    await until(() => seen.length > 200, 'two hundred events');
    proxy.cut();
    await writing;
    const newest = await watcherStore.latestEventId();
    await until(() => seen.at(-1)?.id === newest, 'the newest event');
    watcher.abort();

    expect(seen.map((event) => event.id)).toEqual(Array.from({ length: newest - start }, (_, index) => start + index + 1));
    expect(newest - start).toBe(8 * (1 + ROUNDS * 2));
    await until(async () => (await streamIds()).length === newest, 'every stored event in the stream');
    expect(await streamIds()).toEqual(oneToN(newest));
  });

  it('keeps writing while NATS is away, and the watchers on the other replica catch up once it is back', async () => {
    const gate = await startGate(natsHostPort);
    const [a, b] = [await replica({ eventsUrl: `nats://${gate.address}` }), await replica({ eventsUrl: `nats://${gate.address}` })];
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const seen: ConversationEvent[] = [];
    watch(feedOf(b), id, 0, seen);
    await append(a, id, [user('before')]);
    await until(() => seen.some((event) => event.messageAdded?.content === 'before'), 'the event before the outage');

    await gate.down();
    // Writes do not wait on NATS: each of these commits while no replica reaches it.
    for (let index = 0; index < 5; index++) await append(a, id, [user(`during ${index}`)]);
    await gate.up();
    await until(
      () => seen.filter((event) => event.messageAdded?.content.startsWith('during')).length === 5,
      'the events written while NATS was away',
    );
    const latest = await a.latestEventId();
    await until(() => seen.at(-1)?.id === latest, 'the newest event');
    const ids = seen.map((event) => event.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => ids[0]! + index));
    await until(async () => (await streamIds()).length === latest, 'every stored event in the stream');
    expect(await streamIds()).toEqual(oneToN(latest));
    await gate.close();
  });

  it('makes the stream again when it was deleted under the running replicas, and their watchers go on', async () => {
    const [a, b] = [await replica(), await replica()];
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const seen: ConversationEvent[] = [];
    watch(feedOf(b), id, 0, seen);
    await append(a, id, [user('before')]);
    await until(() => seen.some((event) => event.messageAdded?.content === 'before'), 'the event before the deletion');
    await manager.streams.delete(natsEventNames(prefix).stream);
    for (let index = 0; index < 3; index++) await append(a, id, [user(`after ${index}`)]);
    // Noticing the deletion takes the consumer's missed heartbeats, then a resubscribe with
    // backoff: seconds, and more on a loaded machine.
    await until(
      () => seen.filter((event) => event.messageAdded?.content.startsWith('after')).length === 3,
      'the events after the deletion',
      45_000,
    );
    const latest = await a.latestEventId();
    await until(() => seen.at(-1)?.id === latest, 'the newest event');
    const ids = seen.map((event) => event.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => ids[0]! + index));
    // The new stream starts after the saved cursor: nothing is published twice.
    await until(async () => (await streamIds()).length > 0, 'the stream made again');
    const again = await streamIds();
    expect(again).toEqual(Array.from({ length: again.length }, (_, index) => latest - again.length + 1 + index));
  });

  it('fails to start with UNAVAILABLE when NATS cannot be reached, without showing its credentials', async () => {
    const error = await replica({ eventsUrl: 'nats://asg-user:nats-secret-password@127.0.0.1:1' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(String((error as Error).message)).toContain('nats://***@127.0.0.1:1');
    expect(String((error as Error).message)).not.toContain('nats-secret-password');
  });
});

/**
 * A TCP relay to NATS that can be taken down (connections cut, new ones refused) and brought
 * back on the same port: NATS away from every replica that connects through it.
 */
async function startGate(target: string): Promise<{ address: string; down(): Promise<void>; up(): Promise<void>; close(): Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const open = new Set<Socket>();
  let server: Server | undefined;
  let gatePort = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = new Socket();
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.on('close', () => open.delete(socket));
          socket.on('error', () => undefined);
        }
        upstream.connect(port, host);
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      next.once('error', reject);
      next.listen(gatePort, '127.0.0.1', () => {
        gatePort = (next.address() as { port: number }).port;
        server = next;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return { address: `127.0.0.1:${gatePort}`, down, up: listen, close: down };
}
