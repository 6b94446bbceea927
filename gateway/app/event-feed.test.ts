import { describe, expect, it, vi } from 'vitest';
import { ConversationStatus, type ConversationEvent, type ListPendingApprovalsRequest, type ListPendingApprovalsResponse, type WatchEventsRequest } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { approvalRecord } from '../../test/support/store-records.js';
import { createEventFeed, RESUME_AFTER_OPEN_MS, WATCH_STREAM_MS } from './event-feed.js';

const WATCH = '/asg.store.v1.ConversationStoreService/WatchEvents';
const event = (id: number): ConversationEvent => ({ id, conversationId: 'c1', at: new Date(), statusChanged: ConversationStatus.CONVERSATION_STATUS_ACTIVE });

async function collect<T>(iterable: AsyncIterable<T>, count: number): Promise<T[]> {
  const seen: T[] = [];
  for await (const value of iterable) {
    seen.push(value);
    if (seen.length === count) break;
  }
  return seen;
}

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
    expect((await collect(feed.watch({ conversationId: 'c1', afterId: 4 }), 1)).map((e) => e.id)).toEqual([5]);
    await collect(feed.watch({ afterId: 0 }), 1);
    expect(calls).toEqual([
      [{ conversationId: 'c1', afterId: 4, storedOnly: false }, WATCH_STREAM_MS],
      [{ conversationId: '', afterId: 0, storedOnly: false }, WATCH_STREAM_MS],
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
    expect((await collect(feed.watch({ afterId: 1 }), 3)).map((e) => e.id)).toEqual([3, 0, 4]);
    expect(requests).toEqual([1, 3]);
  });

  it('fails with UNAVAILABLE when the store ends the stream, and passes other failures on', async () => {
    const ended = createEventFeed({ watchEvents: () => (async function* () {})(), listPendingApprovals: unusedList });
    await expect(collect(ended.watch({ afterId: 0 }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    const broken = createEventFeed({
      watchEvents: () =>
        (async function* () {
          throw new RpcError(GrpcStatus.UNIMPLEMENTED, 'unknown method', WATCH);
        })(),
      listPendingApprovals: unusedList,
    });
    await expect(collect(broken.watch({ afterId: 0 }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNIMPLEMENTED });
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
    expect((await collect(feed.watch({ afterId: 2 }), 3)).map((e) => e.id)).toEqual([3, 4, 5]);
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
      expect((await collect(feed.watch({ afterId: 7 }), 1)).map((e) => e.id)).toEqual([8]);
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
    await expect(collect(feed.watch({ afterId: 0 }), 1)).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(calls).toBe(1);
  });
});

describe('EventFeed.pendingApprovals', () => {
  it('reads every page of the store\'s pending approvals, oldest first', async () => {
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
