/**
 * The event log: stored events written in the transaction of their change,
 * and the feed that replays them and streams them live (event-feed.ts).
 */
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type ConversationEvent,
  type NewApproval,
  type NewMessage,
} from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { EventFeed, type EventFeedOptions, type EventKind } from './event-feed.js';
import { DATABASE_FILE } from './sqlite/driver.js';
import type { ConversationStorage } from './storage.js';
import { DROP_SCHEMA_13 } from '../../test/support/sqlite-schema-undo.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';

const SESSION = 'a1b2c3d4';
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

let dir: string;
let storage: ConversationStorage;
let feed: EventFeed | undefined;

const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });

const newConversation = async (systemPrompt = '') => storage.createConversation({ sessionId: SESSION, systemPrompt });

const append = (conversationId: string, messages: NewMessage[], status = ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED) =>
  storage.appendMessages({ conversationId, messages, status, returnConversation: false });

const claim = (uuid: string, approved: boolean, messages: NewMessage[] = [], alsoReject: { uuid: string; messages: NewMessage[] }[] = []) =>
  storage.claimApproval({ uuid, approved, messages, clearRun: !approved, alsoReject });

const newApproval = (uuid: string, toolCallId: string): NewApproval => ({
  uuid,
  toolCallId,
  toolName: 'delete_file',
  toolArgsJson: JSON.stringify({ path: `/tmp/${toolCallId}` }),
  description: `Delete /tmp/${toolCallId}`,
  agentChain: [],
});

/** The kind of an event and what it says, compactly. */
function describeEvent(event: ConversationEvent): string {
  if (event.messageAdded) return `message_added ${event.messageAdded.content}`;
  if (event.approvalRequested)
    return `approval_requested ${event.approvalRequested.toolCallId} ${ApprovalStatus[event.approvalRequested.status]}`;
  if (event.approvalResolved)
    return `approval_resolved ${event.approvalResolved.toolCallId} ${ApprovalStatus[event.approvalResolved.status]}`;
  if (event.statusChanged !== undefined) return `status_changed ${ConversationStatus[event.statusChanged]}`;
  if (event.textDelta) return `text_delta ${event.textDelta.text}`;
  if (event.toolCallStarted) return `tool_call_started ${event.toolCallStarted.name}`;
  if (event.toolCallFinished) return `tool_call_finished ${event.toolCallFinished.name}`;
  if (event.turnStarted) return 'turn_started';
  if (event.turnEnded) return 'turn_ended';
  if (event.conversationDeleted) return 'conversation_deleted';
  return 'unknown';
}

const allEvents = (conversationId?: string) => storage.readEvents({ conversationId, afterId: 0, limit: 100_000 });

/** A turn of a conversation: its user message, its answer, and the write that ends it. */
async function turn(conversationId: string, text: string): Promise<void> {
  await storage.startTurn({ conversationId, message: user(text) });
  await storage.appendMessages({
    conversationId,
    messages: [assistant(`re: ${text}`)],
    status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
    returnConversation: false,
    endsTurn: true,
  });
}

/** What each turn_ended says of push-notification configs, in order. */
const pushConfigFlags = (events: readonly ConversationEvent[]) =>
  events.flatMap((event) => (event.turnEnded ? [event.turnEnded.hasPushConfigs] : []));

/** Records what each commit hands to the listeners. */
function committed(): ConversationEvent[][] {
  const batches: ConversationEvent[][] = [];
  storage.onEventsCommitted((events) => batches.push([...events]));
  return batches;
}

/**
 * The event tests, run against each driver (sqlite-storage.test.ts, postgres-storage.test.ts).
 * Tests of the SQLite file itself are skipped on PostgreSQL.
 */
export function eventsConformance(driver: StorageDriver): void {
  /** A test of the SQLite database file itself. */
  const sqliteIt: typeof it = driver.name === 'sqlite' ? it : (it.skip as typeof it);

  beforeEach(async () => {
    await driver.createDatabase();
    dir = driver.dataDir ?? '';
    storage = await driver.open();
  });

  afterEach(async () => {
    feed?.close();
    feed = undefined;
    await storage.close();
    await driver.dropDatabase();
  });

  describe('stored events', () => {
    it('writes the events of every kind of change in its transaction, in the order a reader expects', async () => {
      const batches = committed();
      const { id } = await newConversation('be brief');
      await append(id, [user('hello'), assistant('hi')], ConversationStatus.CONVERSATION_STATUS_COMPLETED);
      await append(id, [user('again')], ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete_file',
        toolArgsJson: JSON.stringify({ path: '/tmp/c1' }),
        description: 'Delete /tmp/c1',
        agentChain: [],
        messages: [assistant('calling c1')],
      });
      await claim(approval.uuid, true);
      await storage.startApprovalExecution(approval.uuid);
      await storage.finishApprovalExecution({
        uuid: approval.uuid,
        success: true,
        messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'c1 done' }],
      });
      const { runRevision } = await storage.getConversation({ id, includeMessages: false });
      await storage.updateRun({
        conversationId: id,
        messages: [assistant('calling c2 and c3')],
        approvals: [newApproval(A, 'c2'), newApproval(B, 'c3')],
        expectedRevision: runRevision,
        returnConversation: false,
      });
      // A claim that keeps the conversation waiting (B is still pending) changes no status.
      await claim(A, false, [assistant('c2 cancelled')], [{ uuid: B, messages: [assistant('c3 cancelled')] }]);

      expect(batches.map((batch) => batch.map(describeEvent))).toEqual([
        ['status_changed CONVERSATION_STATUS_ACTIVE', 'message_added be brief'],
        ['message_added hello', 'message_added hi', 'status_changed CONVERSATION_STATUS_COMPLETED'],
        ['message_added again', 'status_changed CONVERSATION_STATUS_ACTIVE'],
        [
          'message_added calling c1',
          'approval_requested c1 APPROVAL_STATUS_PENDING',
          'status_changed CONVERSATION_STATUS_WAITING_APPROVAL',
        ],
        // Approved: the call and its continuation are a running turn until a write ends it.
        ['approval_resolved c1 APPROVAL_STATUS_APPROVED', 'status_changed CONVERSATION_STATUS_ACTIVE', 'turn_started'],
        ['message_added c1 done'],
        [
          'message_added calling c2 and c3',
          'approval_requested c2 APPROVAL_STATUS_PENDING',
          'approval_requested c3 APPROVAL_STATUS_PENDING',
          'status_changed CONVERSATION_STATUS_WAITING_APPROVAL',
          'turn_ended',
        ],
        [
          'approval_resolved c2 APPROVAL_STATUS_REJECTED',
          'approval_resolved c3 APPROVAL_STATUS_REJECTED',
          'message_added c2 cancelled',
          'message_added c3 cancelled',
          'status_changed CONVERSATION_STATUS_ACTIVE',
        ],
      ]);
      // Starting an approved call changes no message, approval request or status: no batch for it.
      const live = batches.flat();
      // What the listeners got is exactly what is stored, ids strictly increasing.
      expect(await allEvents(id)).toEqual(live);
      expect(live.every((event, index) => index === 0 || event.id > live[index - 1]!.id)).toBe(true);
      expect(live.every((event) => event.conversationId === id && event.at instanceof Date)).toBe(true);
    });

    it('stamps each event with its change and snapshots what it is about at that moment', async () => {
      const { id } = await newConversation();
      const [message] = await append(id, [
        {
          ...assistant('tagged'),
          node: 'writer',
          usage: { inputTokens: 3, outputTokens: 4 },
          toolCall: { id: 'c', name: 't', argumentsJson: JSON.stringify({ a: [1, { b: true }] }) },
        },
      ]);
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete_file',
        toolArgsJson: JSON.stringify({ path: '/tmp/c1', options: { force: true } }),
        description: 'Delete /tmp/c1',
        agentChain: ['peer', 'peer-of-peer'],
        remoteTaskId: 'task-1',
        remoteAgentName: 'peer',
        messages: [],
      });
      await claim(approval.uuid, true);

      const events = await allEvents(id);
      const added = events.find((event) => event.messageAdded)!;
      // The message exactly as the store returns it; the event's time is the change's.
      expect(added.messageAdded).toEqual(message);
      expect(added.at).toEqual(message!.createdAt);
      // The request shows the approval as it was created, although it is approved now.
      const requested = events.find((event) => event.approvalRequested)!.approvalRequested!;
      expect(requested).toEqual({ ...approval, status: ApprovalStatus.APPROVAL_STATUS_PENDING });
      const resolved = events.find((event) => event.approvalResolved)!.approvalResolved!;
      expect(resolved).toEqual(await storage.getApproval(approval.uuid));
    });

    it('writes no event for a change that was refused or rolled back, and tells no listener', async () => {
      const { id } = await newConversation();
      const other = await newConversation();
      await storage.updateRun({
        conversationId: id,
        messages: [],
        approvals: [newApproval(A, 'c1')],
        expectedRevision: 0,
        returnConversation: false,
      });
      await storage.updateRun({
        conversationId: other.id,
        messages: [],
        approvals: [newApproval(B, 'c2')],
        expectedRevision: 0,
        returnConversation: false,
      });
      const before = await allEvents();
      const batches = committed();

      // Refused before anything was written.
      await expect(
        storage.updateRun({ conversationId: id, messages: [user('x')], approvals: [], expectedRevision: 0, returnConversation: false }),
      ).rejects.toMatchObject({
        code: GrpcStatus.ABORTED,
      });
      // Refused after the claim and its event were written: all of it is rolled back.
      await expect(claim(A, false, [assistant('cancelled')], [{ uuid: B, messages: [] }])).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
      await expect(append(id, [user('x')], ConversationStatus.CONVERSATION_STATUS_COMPLETED)).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
      });

      expect(await allEvents()).toEqual(before);
      expect(batches).toEqual([]);
      expect((await storage.getApproval(A)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    });

    sqliteIt('tells the listeners only once the change is committed: another connection already sees it and its events', async () => {
      const { id } = await newConversation();
      const reader = new Database(join(dir, DATABASE_FILE), { readonly: true });
      const seen: { messages: number; events: number; notified: number }[] = [];
      storage.onEventsCommitted((events) => {
        seen.push({
          messages: (reader.prepare('SELECT count(*) AS n FROM messages WHERE conversation_id = ?').get(id) as { n: number }).n,
          events: (reader.prepare('SELECT count(*) AS n FROM events WHERE conversation_id = ?').get(id) as { n: number }).n,
          notified: events.length,
        });
      });
      try {
        await append(id, [user('one'), user('two')]);
      } finally {
        reader.close();
      }
      // The conversation's status event, then the two messages and their two events.
      expect(seen).toEqual([{ messages: 2, events: 3, notified: 2 }]);
    });

    it('keeps a listener that throws from failing the change it was told about', async () => {
      const { id } = await newConversation();
      storage.onEventsCommitted(() => {
        throw new Error('a broken listener');
      });
      const batches = committed();
      await expect(append(id, [user('still stored')])).resolves.toHaveLength(1);
      expect(batches.flat().map(describeEvent)).toEqual(['message_added still stored']);
    });

    it('reads the events after an id of one conversation or of all, a page at a time', async () => {
      const first = await newConversation();
      const second = await newConversation();
      await append(first.id, [user('f1')]);
      await append(second.id, [user('s1')]);
      await append(first.id, [user('f2')]);
      const all = await allEvents();
      expect(all.map(describeEvent)).toEqual([
        'status_changed CONVERSATION_STATUS_ACTIVE',
        'status_changed CONVERSATION_STATUS_ACTIVE',
        'message_added f1',
        'message_added s1',
        'message_added f2',
      ]);
      expect(await storage.latestEventId()).toBe(all.at(-1)!.id);
      expect(await storage.readEvents({ afterId: all[1]!.id, limit: 2 })).toEqual(all.slice(2, 4));
      expect((await storage.readEvents({ conversationId: first.id, afterId: all[0]!.id, limit: 10 })).map(describeEvent)).toEqual([
        'message_added f1',
        'message_added f2',
      ]);
      // Unknown and malformed ids have no events (WatchEvents answers NOT_FOUND before it reads).
      expect(await storage.readEvents({ conversationId: '00000000-0000-4000-8000-000000000000', afterId: 0, limit: 10 })).toEqual([]);
      expect(await storage.readEvents({ conversationId: 'nope', afterId: 0, limit: 10 })).toEqual([]);
    });

    it('says in each turn_ended whether the conversation had a push-notification config when the turn ended', async () => {
      const batches = committed();
      const { id } = await newConversation();
      const other = await newConversation();
      await turn(id, 'no config yet');
      await storage.setPushConfig({
        conversationId: id,
        id: 'cfg',
        url: 'https://hooks.example.com/a',
        token: '',
        dialect: 'v1.0',
        createdAt: undefined,
      });
      await turn(id, 'one config');
      // Another conversation's config is not this one's.
      await turn(other.id, 'none of its own');
      expect(await storage.deletePushConfig(id, 'cfg')).toBe(true);
      await turn(id, 'none any more');
      expect(pushConfigFlags(batches.flat())).toEqual([false, true, false, false]);
      // A replay says what the listeners were told.
      expect(pushConfigFlags(await allEvents())).toEqual([false, true, false, false]);
    });

    sqliteIt('reads a turn_ended of an earlier release, which says nothing of push configs, as not knowing', async () => {
      const { id } = await newConversation();
      await turn(id, 'then');
      await turn(id, 'and before that');
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      const ended = db.prepare("SELECT id FROM events WHERE kind = 'turn_ended' ORDER BY id").all() as { id: number }[];
      db.prepare('UPDATE events SET payload = ? WHERE id = ?').run('{"outcome":"answered"}', ended[0]!.id);
      db.prepare('UPDATE events SET payload = ? WHERE id = ?').run('{}', ended[1]!.id);
      db.close();
      storage = await driver.open();
      expect((await allEvents(id)).flatMap((event) => (event.turnEnded ? [event.turnEnded] : []))).toEqual([
        { outcome: 'answered', hasPushConfigs: undefined },
        { outcome: undefined, hasPushConfigs: undefined },
      ]);
    });

    sqliteIt('migrates a version-5 database: its event log starts empty, and the next change is logged', async () => {
      const { id } = await newConversation();
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      // Back to schema 5: migrations 13 (leases), 12 (the runs table: its columns back on the conversation) to 6 undone, newest first.
      db.exec(DROP_SCHEMA_13);
      db.exec(
        'ALTER TABLE conversations ADD COLUMN pipeline_state TEXT; ALTER TABLE conversations ADD COLUMN pipeline_revision INTEGER NOT NULL DEFAULT 0; DROP TABLE runs',
      );
      db.exec(
        'ALTER TABLE conversations DROP COLUMN running_turn_since; ALTER TABLE approvals DROP COLUMN reason; DROP INDEX conversations_running_turn; ALTER TABLE conversations DROP COLUMN running_turn_boot; DROP TRIGGER conversations_first_user_text; DROP INDEX messages_by_id; ALTER TABLE conversations DROP COLUMN first_user_text; DROP INDEX approvals_pending; DROP TABLE events',
      );
      db.prepare('UPDATE schema_version SET version = 5').run();
      db.close();
      storage = await driver.open();
      expect(await storage.latestEventId()).toBe(0);
      await append(id, [user('after the upgrade')]);
      expect((await allEvents()).map((event) => [event.id, describeEvent(event)])).toEqual([[1, 'message_added after the upgrade']]);
    });
  });

  /** A watch of the feed read by hand, subscribed at once: `next()` reads one result, `take(n)` n events. */
  function watch(conversationId: string, afterId: number, kinds?: EventKind[]) {
    const controller = new AbortController();
    const events = feed!.watch({ conversationId, afterId, kinds }, controller.signal);
    // The generator subscribes on its first read, so that read starts now. A test that never
    // reads it must not turn the watch's end into an unhandled rejection.
    let first: Promise<IteratorResult<ConversationEvent>> | undefined = events.next();
    first.catch(() => undefined);
    const next = (): Promise<IteratorResult<ConversationEvent>> => {
      const result = first ?? events.next();
      first = undefined;
      return result;
    };
    return {
      controller,
      next,
      async take(count: number): Promise<ConversationEvent[]> {
        const taken: ConversationEvent[] = [];
        while (taken.length < count) {
          const { value, done } = await Promise.race([
            next(),
            // A gap shows as an event that never comes: fail with what was missing, not a test timeout.
            // The bound is far above a delivery on a loaded machine (NOTIFY, the relay, the feed: seconds at worst).
            new Promise<never>((_, reject) =>
              setTimeout(() => reject(new Error(`no event ${taken.length + 1} of ${count} within 20 s`)), 20_000).unref(),
            ),
          ]);
          if (done) throw new Error(`the watch ended after ${taken.length} of ${count} events`);
          taken.push(value);
        }
        return taken;
      },
    };
  }

  const startFeed = (options: EventFeedOptions = {}) => {
    feed = new EventFeed(storage, options);
    return feed;
  };

  /** Resolves when `promise` settles within a few turns of the event loop, else says it is still pending. */
  async function settledSoon<T>(promise: Promise<T>): Promise<'pending' | { value: T }> {
    let result: 'pending' | { value: T } = 'pending';
    void promise.then((value) => (result = { value }));
    for (let turn = 0; turn < 5; turn++) await nextTurn();
    return result;
  }

  describe('watching events', () => {
    it('replays the stored events after an id, then streams new ones as they commit, with no gap or duplicate under concurrent appends', async () => {
      startFeed({ catchUpPageSize: 7 });
      const { id } = await newConversation();
      const other = await newConversation();
      for (let index = 0; index < 40; index++) await append(id, [user(`before ${index}`)]);
      const from = (await allEvents(id))[10]!.id;

      // Appends to both conversations go on while the watcher catches up, a page at a time.
      const writer = (async () => {
        for (let index = 0; index < 150; index++) {
          await append(index % 3 === 0 ? other.id : id, [user(`during ${index}`)]);
          await nextTurn();
        }
      })();
      const watcher = watch(id, from);
      // 30 stored after `from`, and 100 of the 150 appends are to this conversation. The catch-up
      // (7 events a page, 1 event per turn of the event loop) outruns the appends (2 per 3 turns)
      // only after about 12 pages, so its last, short page is read while appends go on.
      const expectedCount = 30 + 100;
      const received: ConversationEvent[] = [];
      while (received.length < expectedCount) {
        received.push(...(await watcher.take(1)));
        // A slow reader: appends commit between any two events it reads, also within a catch-up page.
        await nextTurn();
      }
      await writer;

      const stored = (await allEvents(id)).filter((event) => event.id > from);
      expect(received.map((event) => event.id)).toEqual(stored.map((event) => event.id));
      expect(received).toEqual(stored);
      // Nothing more is queued: no duplicate comes later.
      expect(await settledSoon(watcher.next())).toBe('pending');
      watcher.controller.abort();
    });

    it('sends a watch that names kinds those alone, in id order, in its replay (a page at a time) and live', async () => {
      startFeed({ catchUpPageSize: 2 });
      const { id } = await newConversation();
      const other = await newConversation();
      const from = await storage.latestEventId();
      await turn(id, 'one');
      await turn(other.id, 'two');
      await turn(id, 'three');
      const kinds: EventKind[] = ['message_added', 'turn_ended'];
      const own = watch(id, from, kinds);
      const every = watch('', from, kinds);
      const ended = watch('', from, ['turn_ended']);
      // Replayed: three turns, stored before the watches; live: two more.
      const replayed = await own.take(6);
      await turn(id, 'four');
      await turn(other.id, 'five');
      const wanted = (event: ConversationEvent) => event.id > from && (event.messageAdded !== undefined || event.turnEnded !== undefined);
      const stored = await allEvents();
      expect([...replayed, ...(await own.take(3))]).toEqual(stored.filter((event) => wanted(event) && event.conversationId === id));
      expect(await every.take(15)).toEqual(stored.filter(wanted));
      expect((await ended.take(5)).map((event) => [event.conversationId, describeEvent(event)])).toEqual(
        [id, other.id, id, id, other.id].map((conversation) => [conversation, 'turn_ended']),
      );
      expect(replayed.map(describeEvent)).toEqual([
        'message_added one',
        'message_added re: one',
        'turn_ended',
        'message_added three',
        'message_added re: three',
        'turn_ended',
      ]);
      // Nothing else was queued for them: the status changes and turn starts never come.
      for (const watcher of [own, every, ended]) {
        expect(await settledSoon(watcher.next())).toBe('pending');
        watcher.controller.abort();
      }
    });

    it('sends a watch of one conversation that names kinds its conversation_deleted too (it ends with it); a watch of all only what it named', async () => {
      startFeed();
      const { id } = await newConversation();
      const later = await newConversation();
      const from = await storage.latestEventId();
      const own = watch(id, from, ['turn_ended']);
      const every = watch('', from, ['turn_ended']);
      await turn(id, 'last words');
      await storage.deleteConversation({ id, actor: 'tester', via: 'test' });
      await turn(later.id, 'still here');
      expect((await own.take(2)).map(describeEvent)).toEqual(['turn_ended', 'conversation_deleted']);
      expect((await every.take(2)).map((event) => [event.conversationId, describeEvent(event)])).toEqual([
        [id, 'turn_ended'],
        [later.id, 'turn_ended'],
      ]);
      for (const watcher of [own, every]) watcher.controller.abort();
    });

    it('watches every conversation with an empty id, in id order', async () => {
      startFeed();
      const first = await newConversation();
      const second = await newConversation();
      const from = await storage.latestEventId();
      await append(first.id, [user('f1')]);
      const watcher = watch('', from);
      await append(second.id, [user('s1')]);
      const third = await newConversation('system of the third');
      await append(first.id, [user('f2')]);
      const events = await watcher.take(5);
      expect(events.map((event) => [event.conversationId, describeEvent(event)])).toEqual([
        [first.id, 'message_added f1'],
        [second.id, 'message_added s1'],
        [third.id, 'status_changed CONVERSATION_STATUS_ACTIVE'],
        [third.id, 'message_added system of the third'],
        [first.id, 'message_added f2'],
      ]);
      watcher.controller.abort();
    });

    it('with after_id 0 streams live events only', async () => {
      startFeed();
      const { id } = await newConversation('old news');
      await append(id, [user('also old')]);
      const watcher = watch(id, 0);
      const next = watcher.take(1);
      expect(await settledSoon(next)).toBe('pending');
      await append(id, [user('new')]);
      expect((await next).map(describeEvent)).toEqual(['message_added new']);
      watcher.controller.abort();
    });

    it('reads an after_id past the newest event as the newest: the next events still come', async () => {
      startFeed();
      const { id } = await newConversation();
      const watcher = watch(id, (await storage.latestEventId()) + 1000);
      const next = watcher.take(1);
      await nextTurn();
      await append(id, [user('new')]);
      expect((await next).map(describeEvent)).toEqual(['message_added new']);
      watcher.controller.abort();
    });

    it('hands published events to the watchers of their conversation and of all, with id 0, and stores none', async () => {
      startFeed();
      const { id } = await newConversation();
      const other = await newConversation();
      const own = watch(id, 0);
      const every = watch('', 0);
      const elsewhere = watch(other.id, 0);
      const storedBefore = await storage.latestEventId();

      feed!.publish({ id: 12345, conversationId: id, at: new Date(), textDelta: { text: 'Hel', node: 'writer' } });
      feed!.publish({
        id: 0,
        conversationId: id,
        at: new Date(),
        toolCallStarted: { id: 'c1', name: 'resources_list', argumentsJson: '{}' },
      });

      for (const watcher of [own, every]) {
        const events = await watcher.take(2);
        expect(events.map((event) => [event.id, describeEvent(event)])).toEqual([
          [0, 'text_delta Hel'],
          [0, 'tool_call_started resources_list'],
        ]);
        expect(events[0]!.textDelta).toEqual({ text: 'Hel', node: 'writer' });
      }
      expect(await settledSoon(elsewhere.next())).toBe('pending');
      expect(await storage.latestEventId()).toBe(storedBefore);
      for (const watcher of [own, every, elsewhere]) watcher.controller.abort();
    });

    it('ends a watcher that falls too far behind with RESOURCE_EXHAUSTED and the id to reconnect with, freeing it at once', async () => {
      startFeed({ maxBacklog: 5 });
      const { id } = await newConversation();
      const watcher = watch(id, 0);
      const first = watcher.take(1);
      await append(id, [user('m0')]);
      const [delivered] = await first;
      expect(feed!.watcherCount).toBe(1);

      // The watcher reads nothing while six more events commit.
      for (let index = 1; index <= 6; index++) await append(id, [user(`m${index}`)]);
      expect(feed!.watcherCount).toBe(0);
      const failure = await watcher.next().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ServiceError);
      expect(failure).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED });
      expect((failure as Error).message).toContain(`after_id ${delivered!.id}`);
      expect((failure as Error).message).toMatch(/more than 5 events behind/);

      // Reconnecting with that id misses nothing.
      const again = watch(id, delivered!.id);
      expect((await again.take(6)).map(describeEvent)).toEqual([1, 2, 3, 4, 5, 6].map((index) => `message_added m${index}`));
      again.controller.abort();
    });

    it('names the newest stored event as the reconnect point of a live-only watcher that fell behind before it got any', async () => {
      startFeed({ maxBacklog: 2 });
      const { id } = await newConversation();
      const newest = await storage.latestEventId();
      const watcher = watch(id, 0);
      const delta = (text: string) => feed!.publish({ id: 0, conversationId: id, at: new Date(), textDelta: { text } });
      const pending = watcher.next();
      delta('t0');
      expect((await pending).value?.textDelta?.text).toBe('t0');
      // Live-only events cannot be replayed; the stored ones after the newest at the start can.
      for (const text of ['t1', 't2', 't3']) delta(text);
      await expect(watcher.next()).rejects.toThrow(`after_id ${newest}`);
    });

    it('frees the subscription when the watcher cancels, also while it waits for an event', async () => {
      startFeed();
      const { id } = await newConversation();
      const watcher = watch(id, 0);
      const waiting = watcher.next();
      expect(await settledSoon(waiting)).toBe('pending');
      expect(feed!.watcherCount).toBe(1);
      watcher.controller.abort();
      expect(await waiting).toEqual({ done: true, value: undefined });
      expect(feed!.watcherCount).toBe(0);
      // Events after the cancellation go nowhere.
      await append(id, [user('after')]);
      expect(feed!.watcherCount).toBe(0);
    });

    it('ends every watcher with UNAVAILABLE when the store stops, and refuses new ones', async () => {
      startFeed();
      const { id } = await newConversation();
      const watcher = watch(id, 0);
      const waiting = watcher.next();
      await nextTurn();
      feed!.close();
      await expect(waiting).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
      expect(feed!.watcherCount).toBe(0);
      await expect(watch(id, 0).next()).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    });
  });
}
