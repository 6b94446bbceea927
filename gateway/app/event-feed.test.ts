import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  ConversationStatus,
  ConversationStoreServiceService,
  type ConversationEvent,
  type ListPendingApprovalsRequest,
  type ListPendingApprovalsResponse,
  type WatchEventsRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient } from '../../services/common/grpc/client.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { InProcessChannels } from '../../services/common/grpc/in-process.js';
import { createLogger } from '../../services/common/log.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { approvalRecord } from '../../test/support/store-records.js';
import { until } from '../../test/support/until.js';
import { createEventFeed, RESUME_AFTER_OPEN_MS, WATCH_STREAM_MS } from './event-feed.js';

const WATCH = '/asg.store.v1.ConversationStoreService/WatchEvents';
const event = (id: number): ConversationEvent => ({
  id,
  conversationId: 'c1',
  at: new Date(),
  statusChanged: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
});

async function collect<T>(iterable: AsyncIterable<T>, count: number): Promise<T[]> {
  const seen: T[] = [];
  for await (const value of iterable) {
    seen.push(value);
    if (seen.length === count) break;
  }
  return seen;
}

/** The signal of a watch nobody ends: the test leaves its loop instead. */
const open = () => new AbortController().signal;

const unusedList = async (): Promise<ListPendingApprovalsResponse> => {
  throw new Error('not called');
};

describe('EventFeed.watch', () => {
  it('asks for one conversation or all, after the given id, with a long stream deadline', async () => {
    const calls: [WatchEventsRequest, number | undefined][] = [];
    const feed = createEventFeed({
      watchEvents: (request, opts) => {
        calls.push([request, opts?.timeoutMs]);
        return (async function* () {
          yield { event: event(request.afterId + 1) };
        })();
      },
      listPendingApprovals: unusedList,
    });
    expect((await collect(feed.watch({ conversationId: 'c1', afterId: 4, signal: open() }), 1)).map((e) => e.id)).toEqual([5]);
    await collect(feed.watch({ afterId: 0, signal: open() }), 1);
    expect(calls).toEqual([
      [{ conversationId: 'c1', afterId: 4, storedOnly: false, kinds: [] }, WATCH_STREAM_MS],
      [{ conversationId: '', afterId: 0, storedOnly: false, kinds: [] }, WATCH_STREAM_MS],
    ]);
  });

  it('renews a stream whose deadline passed after the last stored event, skipping live ones', async () => {
    const requests: number[] = [];
    const feed = createEventFeed({
      watchEvents: (request) => {
        requests.push(request.afterId);
        return (async function* () {
          if (requests.length === 1) {
            yield { event: event(3) };
            yield { event: { ...event(0), statusChanged: undefined, textDelta: { text: 'hi' } } };
            throw new RpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded', WATCH);
          }
          yield { event: event(4) };
        })();
      },
      listPendingApprovals: unusedList,
    });
    expect((await collect(feed.watch({ afterId: 1, signal: open() }), 3)).map((e) => e.id)).toEqual([3, 0, 4]);
    expect(requests).toEqual([1, 3]);
  });

  it('fails with UNAVAILABLE when the store ends the stream, and passes other failures on', async () => {
    const ended = createEventFeed({ watchEvents: () => (async function* () {})(), listPendingApprovals: unusedList });
    await expect(collect(ended.watch({ afterId: 0, signal: open() }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    const broken = createEventFeed({
      watchEvents: () =>
        (async function* () {
          throw new RpcError(GrpcStatus.UNIMPLEMENTED, 'unknown method', WATCH);
        })(),
      listPendingApprovals: unusedList,
    });
    await expect(collect(broken.watch({ afterId: 0, signal: open() }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNIMPLEMENTED });
  });

  it('resumes a stream whose connection was cut after it passed events on, after the last one', async () => {
    const requests: number[] = [];
    const feed = createEventFeed({
      watchEvents: (request) => {
        requests.push(request.afterId);
        return (async function* () {
          yield { event: event(request.afterId + 1) };
          // What grpc-js reports when a server's max_connection_age grace ends a connection.
          throw new RpcError(GrpcStatus.UNAVAILABLE, 'Connection dropped', WATCH);
        })();
      },
      listPendingApprovals: unusedList,
    });
    expect((await collect(feed.watch({ afterId: 2, signal: open() }), 3)).map((e) => e.id)).toEqual([3, 4, 5]);
    expect(requests).toEqual([2, 3, 4]);
  });

  it('resumes an idle stream cut after it stayed open RESUME_AFTER_OPEN_MS, though it passed nothing on', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const requests: number[] = [];
      const feed = createEventFeed({
        watchEvents: (request) => {
          requests.push(request.afterId);
          return (async function* () {
            if (requests.length === 1) {
              // Open, quiet, long enough to count as established; then its connection ages out.
              vi.setSystemTime(Date.now() + RESUME_AFTER_OPEN_MS);
              throw new RpcError(GrpcStatus.UNAVAILABLE, 'Connection dropped', WATCH);
            }
            yield { event: event(8) };
          })();
        },
        listPendingApprovals: unusedList,
      });
      expect((await collect(feed.watch({ afterId: 7, signal: open() }), 1)).map((e) => e.id)).toEqual([8]);
      expect(requests).toEqual([7, 7]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('passes on UNAVAILABLE from a stream that was cut before it was established (the store is unreachable)', async () => {
    let calls = 0;
    const feed = createEventFeed({
      watchEvents: () => {
        calls += 1;
        return (async function* () {
          throw new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', WATCH);
        })();
      },
      listPendingApprovals: unusedList,
    });
    await expect(collect(feed.watch({ afterId: 0, signal: open() }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(calls).toBe(1);
  });
});

describe('EventFeed.pendingApprovals', () => {
  it("reads every page of the store's pending approvals, oldest first", async () => {
    const pages: Record<string, ListPendingApprovalsResponse> = {
      '': { approvals: [approvalRecord({ uuid: 'u1' }), approvalRecord({ uuid: 'u2' })], nextPageToken: 'p2' },
      p2: { approvals: [approvalRecord({ uuid: 'u3' })], nextPageToken: '' },
    };
    const asked: ListPendingApprovalsRequest[] = [];
    const feed = createEventFeed({
      watchEvents: () => (async function* () {})(),
      listPendingApprovals: async (request) => {
        asked.push(request);
        return pages[request.pageToken]!;
      },
    });
    expect((await feed.pendingApprovals()).map((approval) => approval.uuid)).toEqual(['u1', 'u2', 'u3']);
    expect(asked.map((request) => request.pageToken)).toEqual(['', 'p2']);
  });
});

describe('EventFeed.watch against a real store: a watch whose signal aborts releases its stream at once', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'asg-feed-cancel-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // Over a gRPC channel (services in separate processes) and in-process (`asg up`).
  for (const transport of ['grpc', 'in-process'] as const) {
    it(`${transport}: the store's watcher is gone and the loop ends quietly, with no event to wake it`, async () => {
      const channels = transport === 'in-process' ? new InProcessChannels() : undefined;
      const config = configSchema.parse({ data_dir: join(dataDir, transport) });
      const store = await startConversationStore({
        config: configSlice(config, 'conversationStore'),
        listen: '127.0.0.1:0',
        log: createLogger('feed-cancel-test'),
        ...(channels && { inProcess: channels }),
      });
      const client = createPromiseClient(
        ConversationStoreServiceService,
        store.address,
        'gateway',
        10_000,
        {},
        channels ? { inProcess: channels } : {},
      );
      try {
        const feed = createEventFeed(client);
        const { conversation } = await client.createConversation({ sessionId: '0badcafe', systemPrompt: '' });
        const id = conversation!.id;
        const watched = async () => (await client.getConversation({ id, includeMessages: false })).conversation!.watched;
        const lifetime = new AbortController();
        const seen: ConversationEvent[] = [];
        const reading = (async () => {
          for await (const event of feed.watch({ conversationId: id, afterId: 0, signal: lifetime.signal })) seen.push(event);
        })();
        await until('the store to count the watch', watched);
        expect(feed.openWatches).toBe(1);

        lifetime.abort();
        // Nothing happens on the conversation: only the cancellation can end the stream.
        await reading;
        expect(seen).toEqual([]);
        expect(feed.openWatches).toBe(0);
        await until('the store to drop its watcher', async () => !(await watched()));
      } finally {
        client.close();
        await store.stop(Date.now() + 1000);
      }
    }, 20_000);
  }
});
