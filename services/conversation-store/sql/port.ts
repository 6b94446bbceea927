import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import type { ConversationStatusName } from '../records.js';
import { type EventChange, type EventRow, eventFromRow, eventPayload } from '../rows.js';
import type { QueryArgs, QueryName } from './queries.js';

/** What the store's rules ask of a database: its compiled statements, run in the driver's own transactions. */
export interface SqlStatements {
  /** The rows a statement returns. */
  all<Row>(query: QueryName, args: QueryArgs): Promise<Row[]>;
  /** The rows a statement changed. */
  run(query: QueryName, args: QueryArgs): Promise<number>;
}

/** A write transaction: its statements, and the events and count changes it records until COMMIT. */
export interface SqlWrite extends SqlStatements {
  readonly changes: ChangeLog;
}

/** A stored event before its id: the driver numbers it when the transaction ends. */
export type PendingEvent = Omit<EventRow, 'id'>;

/** A write's events, in order, and count changes (SQLite keeps counts by trigger; PostgreSQL applies them at the end). */
export class ChangeLog {
  readonly events: PendingEvent[] = [];
  readonly counts = new Map<ConversationStatusName, number>();
  readonly ownerCounts = new Map<string, { owner: string; status: ConversationStatusName; delta: number }>();

  event(conversationId: string, at: string, change: EventChange): void {
    this.events.push({ conversation_id: conversationId, kind: change.kind, payload: eventPayload(change), created_at: at });
  }

  /** A change of the counts of every conversation, and of its owner's when it has one. */
  count(owner: string | null, status: ConversationStatusName, delta: number): void {
    this.counts.set(status, (this.counts.get(status) ?? 0) + delta);
    if (owner === null) return;
    const key = JSON.stringify([owner, status]);
    this.ownerCounts.set(key, { owner, status, delta: (this.ownerCounts.get(key)?.delta ?? 0) + delta });
  }

  /** The events numbered from `firstId` on, as the listeners get them. */
  numbered(firstId: number): ConversationEvent[] {
    return this.events.map((event, index) => eventFromRow({ ...event, id: firstId + index }));
  }
}

/** Adds `listener` (wrapped: one listener subscribed twice is two subscriptions); returns the unsubscribe. */
export function subscribe<A extends unknown[]>(listeners: Set<(...args: A) => void>, listener: (...args: A) => void): () => void {
  const subscription = (...args: A) => listener(...args);
  listeners.add(subscription);
  return () => listeners.delete(subscription);
}

/** Calls each in-process listener; one that throws is its own problem, never the caller's (the change is committed). */
export function tellEach<A extends unknown[]>(listeners: Iterable<(...args: A) => void>, ...args: A): void {
  for (const listener of listeners) {
    try {
      listener(...args);
    } catch {
      // In-process fan-outs that do not throw: nothing useful to do.
    }
  }
}
