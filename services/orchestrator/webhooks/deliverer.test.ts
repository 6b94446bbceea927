import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ConversationEvent,
  ConversationStatus,
  ConversationStoreServiceService,
  MessageRole,
} from '../../../gen/ts/asg/store/v1/store.js';
import { until } from '../../../test/support/until.js';
import { configSchema } from '../../common/config/schema.js';
import { configSlice } from '../../common/config/slices.js';
import { createPromiseClient } from '../../common/grpc/client.js';
import type { LogFields, Logger } from '../../common/log.js';
import { startConversationStore } from '../../conversation-store/index.js';
import { DEFAULT_DELIVERY, WebhookDeliverer, type OutboxTarget } from './deliverer.js';
import { a2aPushTarget } from './push.js';

/**
 * The deliverer's retries, over a real conversation store (SQLite) and a real HTTP receiver:
 * each POST is tried `maxAttempts` times with backoff, then given up on (logged) and the
 * cursor moves on; a stop cuts a wait between attempts at once.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Line {
  level: string;
  msg: string;
  fields: LogFields;
}

function recordingLogger(lines: Line[]): Logger {
  const write =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void lines.push({ level, msg, fields });
  const log: Logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: () => log };
  return log;
}

/** A receiver that answers each POST with `status(body)`, and records the bodies. */
async function startReceiver(status: (body: string) => number): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(status(body)).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

async function startStore() {
  const dataDir = mkdtempSync(join(tmpdir(), 'asg-deliverer-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
  const store = await startConversationStore({
    config: configSlice(configSchema.parse({ data_dir: dataDir }), 'conversationStore'),
    listen: '127.0.0.1:0',
    log: quiet,
  });
  cleanups.push(() => store.stop(Date.now() + 2_000));
  const client = createPromiseClient(ConversationStoreServiceService, store.address, 'test', 5_000);
  cleanups.push(() => client.close());
  return client;
}

/** A target that POSTs every stored event to `url`, as `<conversation id> <event id>`. */
function everyEvent(url: string): OutboxTarget {
  return {
    where: 'test',
    origin: new URL(url).origin,
    name: 'test-target',
    label: 'test events',
    posts: async (event) => [
      {
        id: `e${event.id}`,
        url,
        origin: new URL(url).origin,
        type: 'test',
        body: `${event.conversationId} ${event.id}`,
        headers: () => ({}),
      },
    ],
  };
}

async function startDeliverer(url: string, options: Partial<typeof DEFAULT_DELIVERY>) {
  const store = await startStore();
  const lines: Line[] = [];
  const deliverer = new WebhookDeliverer(
    everyEvent(url),
    { store },
    { owner: 'test-owner', node: 'test' },
    { ...DEFAULT_DELIVERY, claimEveryMs: 50, ...options },
    recordingLogger(lines),
  );
  deliverer.start();
  cleanups.push(() => deliverer.stop());
  // The cursor starts at the newest event when first claimed: events are made after that.
  await until('the cursor held', () => lines.some((line) => line.msg === 'delivering test events'));
  return { store, lines, deliverer };
}

describe('webhook delivery retries', () => {
  it('gives a POST up after maxAttempts attempts with backoff, and goes on with the next event', async () => {
    let failing = '';
    const receiver = await startReceiver((body) => (body.startsWith(`${failing} `) ? 500 : 200));
    const { store, lines } = await startDeliverer(receiver.url, { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 40 });
    failing = (await store.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'one' })).conversation!.id;
    const next = (await store.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'two' })).conversation!.id;
    await until('the next conversation delivered', () => receiver.bodies.some((body) => body.startsWith(`${next} `)));
    // Each event of the first conversation was tried three times, then given up on.
    const tries = new Map<string, number>();
    for (const body of receiver.bodies.filter((body) => body.startsWith(`${failing} `))) tries.set(body, (tries.get(body) ?? 0) + 1);
    expect(tries.size).toBeGreaterThan(0);
    expect([...tries.values()].every((count) => count === 3)).toBe(true);
    const givenUp = lines.filter((line) => line.level === 'error');
    expect(givenUp).toHaveLength(tries.size);
    expect(givenUp[0]).toEqual({
      level: 'error',
      msg: 'webhook delivery given up',
      fields: expect.objectContaining({ attempts: 3, error: 'the receiver answered HTTP 500' }),
    });
    const retries = lines.filter((line) => line.msg === 'webhook delivery failed; trying again');
    expect(retries.map((line) => line.fields.attempt)).toEqual([...tries.keys()].flatMap(() => [1, 2]));
    // Equal jitter: between half the schedule (20 ms, then 40 ms) and all of it.
    for (const line of retries) {
      const ceiling = line.fields.attempt === 1 ? 20 : 40;
      expect(Number(line.fields.retry_in_ms)).toBeGreaterThanOrEqual(ceiling / 2);
      expect(Number(line.fields.retry_in_ms)).toBeLessThanOrEqual(ceiling);
    }
  });

  it('is cut short by a stop during a wait, without another attempt', async () => {
    const receiver = await startReceiver(() => 503);
    const { store, lines, deliverer } = await startDeliverer(receiver.url, { maxAttempts: 5, baseDelayMs: 600_000, maxDelayMs: 600_000 });
    await store.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'one' });
    await until('a wait of ten minutes begun', () => lines.some((line) => line.msg === 'webhook delivery failed; trying again'));
    // A stop that waited for the wait would time this test out.
    await deliverer.stop();
    expect(receiver.bodies).toHaveLength(1);
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});

describe('A2A push outbox', () => {
  type Store = Awaited<ReturnType<typeof startStore>>;

  /** A turn of a conversation: its user message, then the answer that ends it. */
  async function turn(store: Store, conversationId: string, text: string): Promise<void> {
    await store.startTurn({ conversationId, message: { role: MessageRole.MESSAGE_ROLE_USER, content: text } });
    await store.appendMessages({
      conversationId,
      messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: `re: ${text}` }],
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
      endsTurn: true,
    });
  }

  const create = async (store: Store) => (await store.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' })).conversation!.id;

  /** The push outbox over `store`, holding its cursor; `store` may be one that notes what the outbox asks of it. */
  async function startPushOutbox(store: Store) {
    const lines: Line[] = [];
    const deliverer = new WebhookDeliverer(
      a2aPushTarget({ store }, true),
      { store },
      { owner: 'test-owner', node: 'test' },
      { ...DEFAULT_DELIVERY, claimEveryMs: 50 },
      recordingLogger(lines),
    );
    deliverer.start();
    cleanups.push(() => deliverer.stop());
    await until('the cursor held', () => lines.some((line) => line.msg === 'delivering A2A push notifications'));
    return deliverer;
  }

  it('is sent the turn ends alone, and reads the push configs only of a task that had one when its turn ended', async () => {
    const receiver = await startReceiver(() => 200);
    const store = await startStore();
    // The real store client, noting what the outbox was sent and whose push configs it read.
    const sent: ConversationEvent[] = [];
    const listed: string[] = [];
    const observed: Store = {
      ...store,
      watchEvents: (request, opts) => ({
        async *[Symbol.asyncIterator]() {
          for await (const response of store.watchEvents(request, opts)) {
            if (response.event) sent.push(response.event);
            yield response;
          }
        },
      }),
      listPushConfigs: (request, opts) => {
        listed.push(request.conversationId);
        return store.listPushConfigs(request, opts);
      },
    };
    // A new cursor starts at the newest event: made before it, so that it starts at a stored one.
    const quiet = await create(store);
    await startPushOutbox(observed);

    const pushed = await create(store);
    await store.setPushConfig({
      config: { conversationId: pushed, id: 'cfg', url: receiver.url, token: 'tok', dialect: 'v1.0', createdAt: undefined },
    });
    await turn(store, quiet, 'no config');
    await turn(store, quiet, 'still none');
    await turn(store, pushed, 'with a config');
    // Delivered in order: once the last turn's notification is taken, the two before it were handled.
    await until('the notification delivered', () => receiver.bodies.length === 1);
    expect(JSON.parse(receiver.bodies[0]!)).toMatchObject({ task: { id: pushed, status: { state: 'TASK_STATE_COMPLETED' } } });
    expect(sent.map((event) => [event.conversationId, event.turnEnded?.hasPushConfigs])).toEqual([
      [quiet, false],
      [quiet, false],
      [pushed, true],
    ]);
    expect(listed).toEqual([pushed]);
  });

  it('moves a new cursor of an empty outbox to the first stored event, of any kind: a turn that ends while no replica delivers is not missed', async () => {
    const receiver = await startReceiver(() => 200);
    const store = await startStore();
    // Started on an empty database: its cursor is 0, which would ask the store for live events only.
    const first = await startPushOutbox(store);
    const pushed = await create(store);
    await until('the cursor moved to the first stored event', async () => {
      const { lastEventId } = await store.claimWebhookCursor({
        endpoint: 'a2a-push',
        lease: { owner: 'test-owner', node: 'test', ttlMs: 30_000 },
      });
      return lastEventId > 0;
    });
    await first.stop();
    await store.setPushConfig({
      config: { conversationId: pushed, id: 'cfg', url: receiver.url, token: '', dialect: 'v1.0', createdAt: undefined },
    });
    await turn(store, pushed, 'while nobody delivers');
    await startPushOutbox(store);
    await until('the notification delivered', () => receiver.bodies.length === 1);
    expect(JSON.parse(receiver.bodies[0]!)).toMatchObject({ task: { id: pushed } });
  });
});
