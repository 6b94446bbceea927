/**
 * Several store replicas on one PostgreSQL database. What only concurrency from
 * several processes shows: migrations run once, event ids stay gap-free and in commit order
 * for a watcher on another replica, an approval is claimed once, UpdateRun's compare-and-set
 * holds, live and stored events cross replicas (also after a lost LISTEN connection), and a
 * running mark of a live replica is not a crash's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ConversationStatus, MessageRole, type ConversationEvent, type NewMessage } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { EventFeed } from './event-feed.js';
import { openPostgresStorage, type PostgresConversationStorage } from './postgres/driver.js';
import { liveEventPayloads, MAX_NOTIFY_PAYLOAD } from './postgres/event-relay.js';
import { POSTGRES_SCHEMA_VERSION } from './postgres/schema.js';
import { INTERRUPTED_TURN_NOTE } from './storage.js';
import { createTestDatabase, databaseUrl, dropTestDatabase, postgresOptions } from '../../test/support/storage-drivers.js';

let database: string;
let url: string;
const opened: PostgresConversationStorage[] = [];
const feeds: EventFeed[] = [];

async function replica(options: Parameters<typeof postgresOptions>[1] = {}): Promise<PostgresConversationStorage> {
  const storage = await openPostgresStorage(postgresOptions(url, options));
  opened.push(storage);
  return storage;
}

function feedOf(storage: PostgresConversationStorage): EventFeed {
  const feed = new EventFeed(storage, { maxBacklog: 100_000 });
  feeds.push(feed);
  return feed;
}

beforeEach(async () => {
  database = await createTestDatabase();
  url = databaseUrl(database);
});

afterEach(async () => {
  for (const feed of feeds.splice(0)) feed.close();
  for (const storage of opened.splice(0)) await storage.close();
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

async function query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Polls `check` until it holds, failing after `ms`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Watches every conversation on `feed` from `afterId`, collecting events until aborted. */
function watchAll(feed: EventFeed, afterId: number, into: ConversationEvent[]): AbortController {
  const controller = new AbortController();
  void (async () => {
    for await (const event of feed.watch({ conversationId: '', afterId }, controller.signal)) into.push(event);
  })().catch(() => undefined);
  return controller;
}

describe('PostgreSQL store replicas', () => {
  it('migrates an empty database once when three replicas open it at once', async () => {
    const stores = await Promise.all([replica(), replica(), replica()]);
    expect(await query('SELECT version FROM schema_version')).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    expect(await query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'conversations'")).toEqual([{ n: 1 }]);
    expect(await query('SELECT count(*)::int AS n FROM store_replicas')).toEqual([{ n: 3 }]);
    // Each works on the one schema: what one writes, the others read.
    const created = await stores[0]!.createConversation({ sessionId: 's', systemPrompt: 'hi' });
    for (const store of stores) expect((await store.getConversation({ id: created.id, includeMessages: true })).messages).toHaveLength(1);
  });

  it('keeps event ids gap-free and in commit order under 8 concurrent writers, for a watcher on another replica that resumes by after_id', async () => {
    const writers = await Promise.all(Array.from({ length: 8 }, () => replica()));
    const watcherStore = await replica();
    const feed = feedOf(watcherStore);
    // An event to resume after: after_id 0 would mean live events only.
    await watcherStore.createConversation({ sessionId: 's', systemPrompt: '' });
    const start = await watcherStore.latestEventId();
    const seen: ConversationEvent[] = [];
    let watch = watchAll(feed, start, seen);
    const conversations = await Promise.all(writers.map((writer) => writer.createConversation({ sessionId: 's', systemPrompt: '' })));
    const ROUNDS = 25;
    const writing = Promise.all(
      writers.map(async (writer, index) => {
        for (let round = 0; round < ROUNDS; round++)
          await append(writer, conversations[index]!.id, [user(`w${index} r${round}`), assistant('ok')]);
      }),
    );
    // Midway the watcher drops and resumes from the last id it got.
    await until(() => seen.length > 100, 'the first hundred events');
    watch.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const resumeAfter = seen.at(-1)!.id;
    watch = watchAll(feed, resumeAfter, seen);
    await writing;
    const newest = await watcherStore.latestEventId();
    await until(() => seen.at(-1)?.id === newest, 'the newest event');
    watch.abort();

    const ids = seen.map((event) => event.id);
    const expected = Array.from({ length: newest - start }, (_, index) => start + index + 1);
    expect(ids).toEqual(expected);
    // 8 × (1 status + 25 × 2 messages) events, and the table's ids are 1…n with no hole.
    expect(newest - start).toBe(8 * (1 + ROUNDS * 2));
    expect(await query('SELECT count(*)::int AS n, min(id)::int AS min, max(id)::int AS max FROM events')).toEqual([
      { n: newest, min: 1, max: newest },
    ]);
  });

  it('lets exactly one of two replicas claim an approval, every time', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    for (let round = 0; round < 10; round++) {
      const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
      const approval = await a.createApproval({
        conversationId: id,
        toolCallId: 'c',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'd',
        messages: [],
        agentChain: [],
      });
      const claims = await Promise.all(
        [a, b, a, b].map((store, index) =>
          store.claimApproval({
            uuid: approval.uuid,
            approved: index % 2 === 0,
            messages: [assistant(`by ${index}`)],
            clearRun: false,
            alsoReject: [],
          }),
        ),
      );
      expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
      const conversation = await b.getConversation({ id, includeMessages: true });
      // Only the winner's message was appended.
      expect(conversation.messages.filter((message) => message.content.startsWith('by '))).toHaveLength(1);
      expect(conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    }
  });

  it('lets exactly one of three replicas expire an approval, and audits it once', async () => {
    const stores = await Promise.all([replica(), replica(), replica()]);
    for (let round = 0; round < 10; round++) {
      const { id } = await stores[0]!.createConversation({ sessionId: 's', systemPrompt: '' });
      const approval = await stores[0]!.createApproval({
        conversationId: id,
        toolCallId: 'c',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'd',
        messages: [],
        agentChain: [],
      });
      const claims = await Promise.all(
        stores.flatMap((store) =>
          [0, 1].map(() =>
            store.claimApproval({
              uuid: approval.uuid,
              approved: false,
              expired: true,
              decidedBy: 'timeout',
              via: 'timeout',
              messages: [assistant('expired')],
              clearRun: false,
              alsoReject: [],
            }),
          ),
        ),
      );
      expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
      const audited = (await stores[1]!.listAudit({ kinds: ['approval.expired'], pageSize: 500, pageToken: '' })).entries.filter(
        (entry) => entry.subject === approval.uuid,
      );
      expect(audited).toHaveLength(1);
      expect((await stores[2]!.getConversation({ id, includeMessages: true })).messages.map((message) => message.content)).toEqual([
        'expired',
      ]);
    }
  });

  it("gives a webhook endpoint's cursor to one of three replicas, and to exactly one other once the holder's lease expired", async () => {
    const stores = await Promise.all([replica(), replica(), replica()]);
    const lease = (index: number, ttlMs = 60_000) => ({ owner: `replica-${index}`, node: `node-${index}`, ttlMs });
    for (let round = 0; round < 5; round++) {
      const endpoint = `hook-${round}`;
      // Of three claiming at once, one holds it (a long lease: however slow the machine, the
      // others' claims land while it is held).
      const race = await Promise.all(stores.map((store, index) => store.claimWebhookCursor(`${endpoint}-race`, lease(index))));
      expect(race.filter((answer) => answer.held)).toHaveLength(1);
      // A holder whose lease is a few milliseconds: it dies without advancing.
      const gone = round % stores.length;
      expect((await stores[gone]!.claimWebhookCursor(endpoint, lease(gone, 5))).held).toBe(true);
      const rest = stores.map((store, index) => ({ store, index })).filter(({ index }) => index !== gone);
      let taken: number[] = [];
      await until(async () => {
        const answers = await Promise.all(rest.map(({ store, index }) => store.claimWebhookCursor(endpoint, lease(index))));
        taken = rest.filter((_, position) => answers[position]!.held).map(({ index }) => index);
        return taken.length > 0;
      }, 'the expired cursor taken over');
      expect(taken).toHaveLength(1);
      // The new holder advances it; the one that is gone no longer can.
      expect(
        await stores[taken[0]!]!.advanceWebhookCursor({ endpoint, owner: `replica-${taken[0]}`, lastEventId: 10, ttlMs: 60_000 }),
      ).toBe(true);
      expect(await stores[gone]!.advanceWebhookCursor({ endpoint, owner: `replica-${gone}`, lastEventId: 20, ttlMs: 60_000 })).toBe(false);
      const other = rest.find(({ index }) => index !== taken[0])!;
      expect(await other.store.claimWebhookCursor(endpoint, lease(other.index))).toEqual({ held: false, lastEventId: 10 });
    }
  });

  it("holds UpdateRun's compare-and-set across replicas: of two writes at one revision, one wins and one is ABORTED", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    for (let round = 0; round < 10; round++) {
      const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
      const write = (store: PostgresConversationStorage, text: string) =>
        store.updateRun({
          conversationId: id,
          expectedRevision: 0,
          messages: [assistant(text)],
          approvals: [],
          run: { state: Buffer.from(text), schemaVersion: 1, revision: 0 },
          returnConversation: false,
        });
      const results = await Promise.allSettled([write(a, 'from a'), write(b, 'from b')]);
      const won = results.filter((result) => result.status === 'fulfilled');
      const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost[0]!.reason).toMatchObject({ code: GrpcStatus.ABORTED });
      const conversation = await b.getConversation({ id, includeMessages: true });
      expect(conversation.runRevision).toBe(1);
      expect(conversation.messages.map((message) => message.content)).toEqual([Buffer.from(conversation.run!.state).toString()]);
    }
  });

  it("hands another replica's stored and live events to this replica's watchers, and catches up after a lost LISTEN connection", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const feed = feedOf(b);
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const seen: ConversationEvent[] = [];
    const controller = new AbortController();
    void (async () => {
      for await (const event of feed.watch({ conversationId: id, afterId: 0 }, controller.signal)) seen.push(event);
    })().catch(() => undefined);
    await until(() => feed.watcherCount === 1, 'the watcher');
    await new Promise((resolve) => setTimeout(resolve, 50));

    await append(a, id, [user('hello from a')]);
    await until(() => seen.some((event) => event.messageAdded?.content === 'hello from a'), 'the stored event from a');
    feedOf(a).publish({ id: 0, conversationId: id, at: new Date(), textDelta: { text: 'streaming…' } });
    await until(() => seen.some((event) => event.textDelta?.text === 'streaming…'), 'the live event from a');

    // B's LISTEN connection drops; what A commits meanwhile still reaches B's watcher, in order.
    b.eventListener!.dropConnection();
    for (let index = 0; index < 5; index++) await append(a, id, [user(`while down ${index}`)]);
    await until(
      () => seen.filter((event) => event.messageAdded?.content.startsWith('while down')).length === 5,
      'the events written while B was not listening',
    );
    controller.abort();
    const stored = seen.filter((event) => event.id !== 0).map((event) => event.id);
    expect(stored).toEqual([...stored].sort((x, y) => x - y));
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored.at(-1)! - stored[0]! + 1).toBe(stored.length);
  });

  it('answers watched on every replica while one of them has a watcher of the conversation, or of all', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const feed = feedOf(b);
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    const watchedOnA = async () => (await a.getConversation({ id, includeMessages: false })).watched;
    expect(await watchedOnA()).toBe(false);
    for (const conversationId of [id, '']) {
      const controller = new AbortController();
      void (async () => {
        for await (const _event of feed.watch({ conversationId, afterId: 0 }, controller.signal));
      })().catch(() => undefined);
      await until(watchedOnA, `watched on A (watching "${conversationId}" on B)`);
      expect((await a.listConversations({ pageSize: 10, pageToken: '' })).conversations[0]?.watched).toBe(true);
      controller.abort();
      await until(async () => !(await watchedOnA()), 'not watched once the watcher left');
    }
  });

  it('cuts a text delta too large for one NOTIFY into parts that each fit, in order', () => {
    const text = 'é'.repeat(2_500) + '\u0001'.repeat(1_500);
    const payloads = liveEventPayloads('boot', { id: 0, conversationId: 'c', at: new Date(0), textDelta: { text } });
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_NOTIFY_PAYLOAD);
    expect(
      payloads.map((payload) => (JSON.parse(payload) as { event: { textDelta: { text: string } } }).event.textDelta.text).join(''),
    ).toBe(text);
  });

  it("counts another live replica's running turn as busy, and only a gone replica's mark as a turn a crash cut off", async () => {
    // No beat-driven sweep within the test: the sweeps counted here are the ones it calls (on a loaded
    // machine, B's own periodic sweep could otherwise note A's turn first).
    const quiet = { heartbeatMs: 600_000 };
    const [a, b] = await Promise.all([replica(quiet), replica(quiet)]);
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    expect((await a.startTurn({ conversationId: id, message: user('first') })).started).toBe(true);
    // B sees A's turn running: busy, and its start-up sweep leaves the mark alone.
    expect(await b.startTurn({ conversationId: id, message: user('second') })).toMatchObject({ started: false, busy: true });
    expect((await b.getConversation({ id, includeMessages: false })).turnRunning).toBe(true);
    expect(await b.noteInterruptedTurns()).toBe(0);
    // A stops without ending the turn: its mark is a crash's now.
    await a.close();
    const c = await replica(quiet);
    expect(await c.noteInterruptedTurns()).toBe(1);
    const messages = (await b.getConversation({ id, includeMessages: true })).messages.map((message) => message.content);
    expect(messages).toEqual(['first', INTERRUPTED_TURN_NOTE]);
    expect((await b.startTurn({ conversationId: id, message: user('again') })).started).toBe(true);
  });

  it('reads a replica that stopped beating as gone, without a clean stop', async () => {
    const a = await replica({ heartbeatMs: 100 });
    const b = await replica({ heartbeatMs: 100 });
    const { id } = await a.createConversation({ sessionId: 's', systemPrompt: '' });
    await a.startTurn({ conversationId: id, message: user('first') });
    expect((await b.getConversation({ id, includeMessages: false })).turnRunning).toBe(true);
    // A hangs (its heartbeat stops) without unregistering: after three missed beats its mark is dead.
    // The beat stops first: one that fired after the update would make A live again (a flake on a loaded machine).
    (a as unknown as { heartbeat: NodeJS.Timeout }).heartbeat.close();
    await query(`UPDATE store_replicas SET last_seen = now() - interval '1 second' WHERE boot_id = '${a.bootId}'`);
    expect((await b.getConversation({ id, includeMessages: false })).turnRunning).toBe(false);
    // B's heartbeat sweeps it: the conversation says so before anyone writes to it.
    await until(
      async () =>
        (await b.getConversation({ id, includeMessages: true })).messages.some((message) => message.content === INTERRUPTED_TURN_NOTE),
      'the sweep',
    );
    const started = await b.startTurn({ conversationId: id, message: user('again') });
    expect(started.started).toBe(true);
    expect(started.conversation.messages.map((message) => message.content)).toEqual(['first', INTERRUPTED_TURN_NOTE, 'again']);
  });
});
