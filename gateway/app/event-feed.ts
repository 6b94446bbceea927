import type { ConversationEvent, PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, isCode, unavailable } from '../../services/common/grpc/errors.js';
import type { ConversationStoreClient } from './backends.js';

/**
 * The store's event stream (WatchEvents) as the gateway's faces use it. A watch is one
 * long-lived gRPC stream; every gRPC call here has a deadline, so a watch
 * that outlives its stream's deadline opens the next stream after the last stored event it
 * passed on: the caller sees one unbroken sequence. The same holds when the stream's
 * connection is cut under it — the store ends every connection at `grpc.max_connection_age`
 * (services/common/grpc/server.ts), a store replica stops in a rolling update — as long as the
 * stream was established: it passed an event on, or stayed open for `RESUME_AFTER_OPEN_MS`.
 */

/** The deadline of one WatchEvents stream; a watch renews it transparently. */
export const WATCH_STREAM_MS = 60 * 60_000;

/**
 * A stream cut (UNAVAILABLE) after this long open is resumed even if it had nothing to pass
 * on: it was established, and it was its connection that ended. Longer than a call waits for
 * a peer to come back (client.ts, RECONNECT_WAIT_MS), so a store that cannot be reached is
 * never retried in a loop: its failure reaches the caller, which reconnects with its last id.
 */
export const RESUME_AFTER_OPEN_MS = 10_000;

/** ListConversations' largest page: the fewest round trips when looking for waiting conversations. */
const PENDING_PAGE_SIZE = 500;

export interface WatchRequest {
  /** Empty or absent: every conversation. */
  conversationId?: string;
  /** Replays the stored events with a greater id first; 0 replays none (live events only). */
  afterId: number;
  /**
   * The watch's lifetime (app/abortable.ts, watchLifetime): when it aborts, the store stream
   * is cancelled at once and the iteration ends quietly, also while it waits for an event.
   */
  signal: AbortSignal;
}

export interface EventFeed {
  /**
   * Stored events after `afterId`, then live ones as they happen, until the request's signal
   * aborts (or the loop is left). Fails with UNAVAILABLE when the store cannot be watched (it
   * is down, or stopped and came back on no replica): clients reconnect with the last id they saw.
   */
  watch(request: WatchRequest): AsyncIterable<ConversationEvent>;
  /** Every approval that is pending now, oldest conversation last. */
  pendingApprovals(): Promise<PendingApproval[]>;
  /** Store streams open now: one per subscription of any face (the `asg_gateway_event_watches` gauge). */
  readonly openWatches: number;
}

export function createEventFeed(store: Pick<ConversationStoreClient, 'watchEvents' | 'listPendingApprovals'>): EventFeed {
  let openWatches = 0;
  return {
    get openWatches() {
      return openWatches;
    },
    watch: ({ conversationId = '', afterId, signal }) => ({
      async *[Symbol.asyncIterator]() {
        let resumeAfter = afterId;
        openWatches += 1;
        try {
          for (;;) {
            if (signal.aborted) return;
            const opened = Date.now();
            let passedOn = false;
            try {
              for await (const { event } of store.watchEvents(
                { conversationId, afterId: resumeAfter, storedOnly: false, kinds: [] },
                { timeoutMs: WATCH_STREAM_MS, signal },
              )) {
                if (!event) continue;
                if (event.id > 0) resumeAfter = event.id;
                passedOn = true;
                yield event;
                // Nothing follows a deletion: the watch of that one conversation ends with it.
                if (conversationId !== '' && event.conversationDeleted) return;
              }
            } catch (error) {
              // Cancelled by the watch's own signal: the watcher went away, nobody hears a failure.
              if (signal.aborted) return;
              // The stream's own deadline, not a failure. Renewing after the last stored event
              // loses nothing; a watch that has seen none yet (afterId 0) may miss what happens
              // in the moment between the two streams, once an hour at most.
              if (isCode(error, GrpcStatus.DEADLINE_EXCEEDED)) continue;
              // A cut connection under an established stream: the same renewal, on a new
              // connection (to another replica, if the channel has several).
              if (isCode(error, GrpcStatus.UNAVAILABLE) && (passedOn || Date.now() - opened >= RESUME_AFTER_OPEN_MS)) continue;
              throw error;
            }
            if (signal.aborted) return;
            throw unavailable('the conversation store ended the event stream; reconnect with the last event id');
          }
        } finally {
          openWatches -= 1;
        }
      },
    }),

    async pendingApprovals() {
      // Read through the store's index of pending approvals, a page at a time: what waits
      // for a human is few, whatever the number of conversations.
      const approvals: PendingApproval[] = [];
      let pageToken = '';
      do {
        const page = await store.listPendingApprovals({ pageSize: PENDING_PAGE_SIZE, pageToken });
        approvals.push(...page.approvals);
        pageToken = page.nextPageToken;
      } while (pageToken !== '');
      return approvals;
    },
  };
}
