import { nanos } from '@nats-io/transport-node';
import { StorageType, type StreamConfig } from '@nats-io/jetstream';
import { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';

/** Where the events of one deployment go on a NATS server (config `events.prefix`). */
export interface NatsEventNames {
  stream: string;
  /** Every stored event, in id order, one message each (`Nats-Msg-Id`: the event id). */
  storedSubject: string;
  liveSubject: string;
  /** "Some replica committed events": wakes the publisher. */
  committedSubject: string;
}

export function natsEventNames(prefix: string): NatsEventNames {
  return {
    stream: `${prefix.toUpperCase().replace(/-/g, '_')}_EVENTS`,
    storedSubject: `${prefix}.events.stored`,
    liveSubject: `${prefix}.events.live`,
    committedSubject: `${prefix}.events.committed`,
  };
}

/** JetStream drops a msgID it saw within this window: a publish retried after a lost ack is stored once. */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

/** The stream's settings; created or brought to these at every start (idempotent). */
export function streamConfig(names: NatsEventNames, maxAgeMs: number): Partial<StreamConfig> & { name: string } {
  return {
    name: names.stream,
    subjects: [names.storedSubject],
    // File storage: a NATS restart keeps the recent events, so that watchers cut off by it resume from NATS.
    storage: StorageType.File,
    max_age: nanos(maxAgeMs),
    duplicate_window: nanos(Math.min(DUPLICATE_WINDOW_MS, maxAgeMs)),
  };
}

/** The body of a stored event's message: the event, or only its id when the event is too large to carry. */
export interface StoredEventMessage {
  id: number;
  event?: unknown;
}

/** Events larger than this cross as their id alone; the receiving replica reads them from the events table. */
const MAX_EVENT_BYTES = 256 * 1024;

export function storedEventMessage(event: ConversationEvent): string {
  const whole = JSON.stringify({ id: event.id, event: ConversationEvent.toJSON(event) } satisfies StoredEventMessage);
  return Buffer.byteLength(whole) <= MAX_EVENT_BYTES ? whole : JSON.stringify({ id: event.id } satisfies StoredEventMessage);
}
