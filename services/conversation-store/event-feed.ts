import type { ConversationEvent } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, ServiceError, unavailable } from '../common/grpc/errors.js';
import type { ConversationStorage } from './storage.js';

/** The watch key of a watcher of every conversation. */
const EVERY_CONVERSATION = '';

/** The kinds of ConversationEvent by their field names in store.proto's `kind`, each with the property it sets here. */
export const EVENT_KINDS = {
  message_added: 'messageAdded',
  approval_requested: 'approvalRequested',
  approval_resolved: 'approvalResolved',
  approval_escalated: 'approvalEscalated',
  status_changed: 'statusChanged',
  turn_started: 'turnStarted',
  turn_ended: 'turnEnded',
  conversation_deleted: 'conversationDeleted',
  tool_call_started: 'toolCallStarted',
  tool_call_finished: 'toolCallFinished',
  text_delta: 'textDelta',
} as const satisfies Record<string, keyof ConversationEvent>;

export type EventKind = keyof typeof EVENT_KINDS;

/** The most kinds one watch names (WatchEventsRequest.kinds). */
export const MAX_WATCH_KINDS = 16;

export interface EventFeedOptions {
  /** Events a watcher may fall behind by before it is ended with RESOURCE_EXHAUSTED. */
  maxBacklog?: number;
  /** Stored events read per catch-up query. */
  catchUpPageSize?: number;
}

const DEFAULT_MAX_BACKLOG = 1000;
const DEFAULT_CATCH_UP_PAGE_SIZE = 500;

export interface WatchRequest {
  /** Empty: every conversation. */
  conversationId: string;
  /** Replay stored events after this id first; 0: live events only. */
  afterId: number;
  /** Stored events only (an outbox): no live-only events, and the watch makes nothing "watched". */
  storedOnly?: boolean;
  /** Only events of these kinds; absent or empty: every kind. */
  kinds?: readonly EventKind[];
}

/**
 * The kinds a watch is sent; undefined for every kind. A watch of one conversation also gets its
 * conversation_deleted whatever it asked for: the watch ends with it (server.ts), and its caller learns why.
 */
function kindsSent(request: WatchRequest): EventKind[] | undefined {
  if (!request.kinds?.length) return undefined;
  const kinds = new Set(request.kinds);
  if (request.conversationId !== EVERY_CONVERSATION) kinds.add('conversation_deleted');
  return [...kinds];
}

type Ending = 'fell-behind' | 'closing';

/** The watchers of a set that see live events too: they make their conversations "watched". */
const liveWatchers = (set: Set<Watcher> | undefined): number => [...(set ?? [])].filter((watcher) => !watcher.storedOnly).length;

/**
 * One watcher's events not yet handed to it; at `maxBacklog` it is ended and reconnects with the last id it got. Events
 * it does not want (live-only ones of a stored-only watch, kinds it did not ask for) are left out here, before they are
 * queued: they take no room in its backlog and are never copied or sent.
 */
class Watcher {
  private queue: ConversationEvent[] = [];
  private wake: (() => void) | undefined;
  /** The properties of the kinds it wants; undefined: every kind. */
  private readonly properties: (keyof ConversationEvent)[] | undefined;
  ending: Ending | undefined;

  constructor(
    readonly key: string,
    private readonly maxBacklog: number,
    readonly storedOnly = false,
    kinds?: readonly EventKind[],
  ) {
    this.properties = kinds?.map((kind) => EVENT_KINDS[kind]);
  }

  /** False when this event put the watcher over its backlog: it is ended and must be dropped. */
  push(event: ConversationEvent): boolean {
    if (this.ending) return false;
    if (this.storedOnly && event.id === 0) return true;
    if (this.properties && !this.properties.some((property) => event[property] !== undefined)) return true;
    if (this.queue.length >= this.maxBacklog) {
      this.end('fell-behind');
      return false;
    }
    this.queue.push(event);
    this.wake?.();
    return true;
  }

  end(ending: Ending): void {
    this.ending ??= ending;
    this.queue = [];
    this.wake?.();
  }

  /** Stored events up to `id` are replayed by the catch-up: they need no room in the backlog. */
  discardStoredUpTo(id: number): void {
    this.queue = this.queue.filter((event) => event.id === 0 || event.id > id);
  }

  /** The next event; undefined when the watch is over (cancelled, or ended: see `ending`). */
  async next(signal: AbortSignal): Promise<ConversationEvent | undefined> {
    while (this.queue.length === 0 && !this.ending && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          this.wake = undefined;
          resolve();
        };
        this.wake = wake;
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    if (this.ending || signal.aborted) return undefined;
    return this.queue.shift();
  }
}

/**
 * The live side of WatchEvents and PublishEvent: committed and live-only events go to the watchers of their
 * conversation and of every one. Nothing is kept here: a reconnecting watcher catches up from the database.
 */
export class EventFeed {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly maxBacklog: number;
  private readonly catchUpPageSize: number;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeLive: () => void;
  private closed = false;

  constructor(
    private readonly storage: ConversationStorage,
    options: EventFeedOptions = {},
  ) {
    this.maxBacklog = options.maxBacklog ?? DEFAULT_MAX_BACKLOG;
    this.catchUpPageSize = options.catchUpPageSize ?? DEFAULT_CATCH_UP_PAGE_SIZE;
    this.unsubscribe = storage.onEventsCommitted((events) => {
      for (const event of events) this.deliver(event);
    });
    // Live-only events published on the other store replicas (PostgreSQL); none on SQLite.
    this.unsubscribeLive = storage.onLiveEvent((event) => this.deliver({ ...event, id: 0 }));
  }

  /** Watchers now subscribed (of one conversation or of all). */
  get watcherCount(): number {
    let count = 0;
    for (const set of this.watchers.values()) count += set.size;
    return count;
  }

  /** Whether a watcher of this conversation, or of every conversation, is subscribed now. */
  isWatched(conversationId: string): boolean {
    return liveWatchers(this.watchers.get(conversationId)) > 0 || liveWatchers(this.watchers.get(EVERY_CONVERSATION)) > 0;
  }

  /** PublishEvent: hands a live-only event to the current watchers; its id is always 0. */
  publish(event: ConversationEvent): void {
    const live = { ...event, id: 0 };
    this.deliver(live);
    this.storage.shareLiveEvent(live);
  }

  /**
   * The stored events after `afterId`, then every event as it comes. It subscribes before the catch-up and drops queued
   * events the catch-up replayed: no gap, no duplicate. RESOURCE_EXHAUSTED when it falls behind, UNAVAILABLE when the
   * store stops, both naming the after_id to reconnect with.
   */
  async *watch(request: WatchRequest, signal: AbortSignal): AsyncGenerator<ConversationEvent> {
    if (this.closed) throw stopping(request.afterId);
    const kinds = kindsSent(request);
    const watcher = new Watcher(request.conversationId, this.maxBacklog, request.storedOnly === true, kinds);
    this.subscribe(watcher);
    try {
      const conversationId = request.conversationId === EVERY_CONVERSATION ? undefined : request.conversationId;
      // Everything after this is queued: SQLite subscribes and reads before any commit of this process; PostgreSQL
      // hands an event over only after its commit, so one this read does not see comes after the subscription.
      const newest = await this.storage.latestEventId();
      // What it reconnects with: the last stored event it was sent (the catch-up reads only the kinds it wants, so it
      // passes the others again, unsent); an after_id past the newest (another database's) starts at the newest.
      let lastId = request.afterId > 0 ? Math.min(request.afterId, newest) : newest;
      if (lastId < newest) {
        for (;;) {
          const page = await this.storage.readEvents({ conversationId, afterId: lastId, limit: this.catchUpPageSize, kinds });
          for (const event of page) {
            if (signal.aborted) return;
            if (watcher.ending) throw endingError(watcher.ending, lastId, this.maxBacklog);
            yield event;
            lastId = event.id;
          }
          watcher.discardStoredUpTo(lastId);
          if (page.length < this.catchUpPageSize) break;
        }
      }
      for (;;) {
        const event = await watcher.next(signal);
        if (signal.aborted) return;
        if (watcher.ending) throw endingError(watcher.ending, lastId, this.maxBacklog);
        if (!event) return;
        if (event.id !== 0 && event.id <= lastId) continue;
        yield event;
        if (event.id !== 0) lastId = event.id;
      }
    } finally {
      this.unsubscribeWatcher(watcher);
    }
  }

  /** Ends every watcher (UNAVAILABLE: reconnect) and refuses new ones; the store is stopping. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.unsubscribeLive();
    for (const set of this.watchers.values()) for (const watcher of set) watcher.end('closing');
    this.watchers.clear();
  }

  private deliver(event: ConversationEvent): void {
    const keys = event.conversationId === EVERY_CONVERSATION ? [EVERY_CONVERSATION] : [event.conversationId, EVERY_CONVERSATION];
    for (const key of keys) {
      const set = this.watchers.get(key);
      if (!set) continue;
      for (const watcher of set) {
        // One that fell behind is dropped at once: its backlog is freed now.
        if (!watcher.push(event)) this.unsubscribeWatcher(watcher);
      }
    }
  }

  private subscribe(watcher: Watcher): void {
    const set = this.watchers.get(watcher.key) ?? new Set<Watcher>();
    set.add(watcher);
    this.watchers.set(watcher.key, set);
    // The other replicas answer `watched` for this key from now on; a stored-only watch does not count.
    if (!watcher.storedOnly && liveWatchers(set) === 1) this.storage.shareWatch(watcher.key, true);
  }

  private unsubscribeWatcher(watcher: Watcher): void {
    const set = this.watchers.get(watcher.key);
    if (!set?.delete(watcher)) return;
    if (set.size === 0) this.watchers.delete(watcher.key);
    if (!watcher.storedOnly && liveWatchers(set) === 0 && !this.closed) this.storage.shareWatch(watcher.key, false);
  }
}

function stopping(afterId: number): ServiceError {
  return unavailable(`the conversation store is stopping; watch again with after_id ${afterId} once it is back`);
}

function endingError(ending: Ending, lastId: number, maxBacklog: number): ServiceError {
  if (ending === 'closing') return stopping(lastId);
  return new ServiceError(
    GrpcStatus.RESOURCE_EXHAUSTED,
    `this watcher fell more than ${maxBacklog} events behind and was ended; watch again with after_id ${lastId} (the last stored event it got) to catch up from the stored events`,
  );
}
