import pg from 'pg';
import { Backoff, reconnectSchedule, type BackoffPolicy } from '../../common/backoff.js';
import { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import type { CommittedEventsListener } from '../storage.js';
import { discard } from './connection-errors.js';
import { LIVE_EVENTS_CHANNEL, STORED_EVENTS_CHANNEL } from './statements.js';

/** Stored events read per query when the relay catches up. */
const CATCH_UP_PAGE_SIZE = 500;

/**
 * Hands every replica's committed events to this replica's listeners, in id order, each once. Ids are gap-free and in
 * commit order, so what follows the cursor is exactly what is missing: events that follow it directly are handed over
 * as they are (no query); anything else reads the table from the cursor. One step at a time: no id twice or out of order.
 */
export class OrderedEventDelivery {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private cursor: number,
    private readonly read: (afterId: number, limit: number) => Promise<ConversationEvent[]>,
    private readonly deliver: CommittedEventsListener,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** This replica committed `events` (consecutive ids), or NATS brought them; a gap before them is read from the table. */
  committed(events: readonly ConversationEvent[]): Promise<void> {
    return this.step(async () => {
      const last = events.at(-1)!.id;
      if (last <= this.cursor) return;
      if (events[0]!.id <= this.cursor + 1) {
        this.handOver(events.filter((event) => event.id > this.cursor));
        return;
      }
      await this.readUpTo(last);
    });
  }

  /** Some replica committed events up to `id` (NOTIFY), or the relay reconnected (`Infinity`: everything there is). */
  caughtUpTo(id: number): Promise<void> {
    return this.step(() => (id <= this.cursor ? Promise.resolve() : this.readUpTo(id)));
  }

  private async readUpTo(id: number): Promise<void> {
    while (this.cursor < id) {
      const page = await this.read(this.cursor, CATCH_UP_PAGE_SIZE);
      if (page.length === 0) return;
      this.handOver(page);
      if (page.length < CATCH_UP_PAGE_SIZE) return;
    }
  }

  private handOver(events: readonly ConversationEvent[]): void {
    if (events.length === 0) return;
    this.cursor = events.at(-1)!.id;
    this.deliver(events);
  }

  private step(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work).catch((error: unknown) => this.onError(error));
    this.chain = next;
    return next;
  }
}

/** The NOTIFY payload of a stored change: its last event id and its conversation. */
export function storedEventsPayload(lastId: number, conversationId: string): string {
  return `${lastId}:${conversationId}`;
}

/** NOTIFY payloads stay under 8000 bytes: a text delta goes in parts of 1000 code points (6 bytes each JSON-escaped). */
const TEXT_DELTA_PART = 1000;
export const MAX_NOTIFY_PAYLOAD = 7900;

/**
 * The payloads of a live-only event, naming this replica's boot (its own listener skips them). A tool call too large
 * crosses without its arguments and result (the stored messages carry both); one still too large is not sent.
 */
export function liveEventPayloads(bootId: string, event: ConversationEvent): string[] {
  const payload = (e: ConversationEvent) => JSON.stringify({ boot: bootId, event: ConversationEvent.toJSON(e) });
  if (event.textDelta) {
    const text = [...event.textDelta.text];
    const parts: string[] = [];
    for (let start = 0; start < text.length; start += TEXT_DELTA_PART) {
      parts.push(payload({ ...event, textDelta: { ...event.textDelta, text: text.slice(start, start + TEXT_DELTA_PART).join('') } }));
    }
    return parts.filter((part) => Buffer.byteLength(part) <= MAX_NOTIFY_PAYLOAD);
  }
  const whole = payload(event);
  if (Buffer.byteLength(whole) <= MAX_NOTIFY_PAYLOAD) return [whole];
  const slim = (call: ConversationEvent['toolCallStarted']) =>
    call && { ...call, arguments: undefined, result: undefined, providerMetadataJson: undefined };
  const trimmed = payload({ ...event, toolCallStarted: slim(event.toolCallStarted), toolCallFinished: slim(event.toolCallFinished) });
  return Buffer.byteLength(trimmed) <= MAX_NOTIFY_PAYLOAD ? [trimmed] : [];
}

/** The live-only event of a payload of liveEventPayloads; undefined when `ownBootId` sent it (it was delivered locally already). */
export function parseLiveEventPayload(payload: string, ownBootId: string): ConversationEvent | undefined {
  const { boot, event } = JSON.parse(payload) as { boot: string; event: unknown };
  return boot === ownBootId ? undefined : { ...ConversationEvent.fromJSON(event), id: 0 };
}

export interface EventListenerOptions {
  connection: pg.ClientConfig;
  bootId: string;
  onStoredEvents(lastId: number): void;
  onLiveEvent(event: ConversationEvent): void;
  /** LISTEN is (again) in place: whatever was committed meanwhile must be read. */
  onListening(): void;
  onError(error: unknown): void;
}

const RECONNECT: BackoffPolicy = reconnectSchedule(100, 5_000);

/**
 * The replica's own LISTEN connection (outside the pool: a LISTEN lives as long as its session), opened again with a
 * backoff when lost, at once when the database is back (`reconnectNow`); each time it listens, the replica reads what it missed.
 */
export class EventListener {
  private client: pg.Client | undefined;
  private closed = false;
  private readonly backoff = new Backoff(RECONNECT);
  private timer: NodeJS.Timeout | undefined;
  private connecting = false;

  constructor(private readonly options: EventListenerOptions) {}

  /** Resolves once LISTEN is in place the first time; rejects when that first attempt fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Ends the connection as a network failure would (tests of the reconnect). */
  dropConnection(): void {
    this.client?.emit('error', new Error('connection dropped on purpose'));
  }

  /** The database is back: a connection that is down is opened now. */
  reconnectNow(): void {
    if (this.closed || this.client !== undefined || this.connecting) return;
    clearTimeout(this.timer);
    this.reconnect(0);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.options.connection);
    client.on('notification', (message) => this.notified(message));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    await client.connect();
    try {
      await client.query(`LISTEN ${STORED_EVENTS_CHANNEL}`);
      await client.query(`LISTEN ${LIVE_EVENTS_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoff.reset();
    this.options.onListening();
  }

  private notified(message: pg.Notification): void {
    if (message.channel === STORED_EVENTS_CHANNEL) {
      const lastId = Number.parseInt(message.payload ?? '', 10);
      if (Number.isSafeInteger(lastId)) this.options.onStoredEvents(lastId);
      return;
    }
    if (message.channel !== LIVE_EVENTS_CHANNEL || !message.payload) return;
    try {
      const event = parseLiveEventPayload(message.payload, this.options.bootId);
      if (event) this.options.onLiveEvent(event);
    } catch (error) {
      this.options.onError(error);
    }
  }

  private lost(client: pg.Client, error: Error | undefined): void {
    if (this.client !== client) return;
    this.client = undefined;
    void discard(client);
    if (this.closed) return;
    if (error) this.options.onError(error);
    this.reconnect(this.backoff.next());
  }

  private reconnect(afterMs: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.connecting = true;
      this.connect().then(
        () => (this.connecting = false),
        (error: unknown) => {
          this.connecting = false;
          this.options.onError(error);
          this.reconnect(this.backoff.next());
        },
      );
    }, afterMs);
    this.timer.unref();
  }
}
