import type { ConversationEvent, PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { EventFeed, WatchRequest } from '../../gateway/app/event-feed.js';

/**
 * An in-memory stand-in for the store's event stream, with the contract of WatchEvents:
 * stored events get strictly increasing ids and are replayed after `afterId`, live ones
 * (id 0) reach only the watchers connected at that moment. For testing the gateway's
 * adapters without a store.
 */
export class FakeEventFeed implements EventFeed {
  readonly stored: ConversationEvent[] = [];
  /** What each watch asked for (its signal left out). */
  readonly watchRequests: Omit<WatchRequest, 'signal'>[] = [];
  pending: PendingApproval[] = [];
  /** How many watches are open right now. */
  openWatches = 0;
  private readonly watchers = new Set<(event: ConversationEvent) => void>();
  private lastId = 0;

  /** Stores an event (a new id) and hands it to every watcher. */
  store(event: Omit<ConversationEvent, 'id' | 'at'>): ConversationEvent {
    const stored: ConversationEvent = { ...event, id: ++this.lastId, at: new Date() };
    this.stored.push(stored);
    for (const deliver of this.watchers) deliver(stored);
    return stored;
  }

  /** Hands a live-only event (id 0) to the watchers connected now. */
  publish(event: Omit<ConversationEvent, 'id' | 'at'>): void {
    const live: ConversationEvent = { ...event, id: 0, at: new Date() };
    for (const deliver of this.watchers) deliver(live);
  }

  watch(request: WatchRequest): AsyncIterable<ConversationEvent> {
    const { signal: _signal, ...asked } = request;
    this.watchRequests.push(asked);
    const feed = this;
    return {
      async *[Symbol.asyncIterator]() {
        const matches = (event: ConversationEvent) => !request.conversationId || event.conversationId === request.conversationId;
        const queue: ConversationEvent[] = [];
        let wake: (() => void) | undefined;
        const deliver = (event: ConversationEvent) => {
          if (!matches(event)) return;
          queue.push(event);
          wake?.();
        };
        // Registered before the replay, like the store: nothing falls between the two.
        feed.watchers.add(deliver);
        feed.openWatches += 1;
        try {
          let lastReplayed = request.afterId;
          if (request.afterId > 0) {
            for (const event of feed.stored.filter((candidate) => candidate.id > request.afterId && matches(candidate))) {
              lastReplayed = event.id;
              yield event;
            }
          }
          for (;;) {
            while (queue.length > 0) {
              const event = queue.shift()!;
              if (event.id > 0 && event.id <= lastReplayed) continue;
              yield event;
            }
            // Like the real feed, a watch whose signal aborts ends at once, also while it waits.
            if (request.signal.aborted) return;
            await new Promise<void>((resolve) => {
              wake = resolve;
              request.signal.addEventListener('abort', () => resolve(), { once: true });
            });
            wake = undefined;
            if (request.signal.aborted) return;
          }
        } finally {
          feed.watchers.delete(deliver);
          feed.openWatches -= 1;
        }
      },
    };
  }

  async pendingApprovals(): Promise<PendingApproval[]> {
    return [...this.pending];
  }
}
