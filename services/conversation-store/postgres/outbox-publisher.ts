import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { Backoff, reconnectSchedule } from '../../common/backoff.js';
import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { discard, within } from './connection-errors.js';
import { storedEventMessage, type NatsEventNames } from './nats-subjects.js';
import { SQL } from './statements.js';

export interface OutboxPublisherOptions {
  js: JetStreamClient;
  manager: JetStreamManager;
  names: NatsEventNames;
  pool: pg.Pool;
  lockConnection: pg.ClientConfig;
  readEvents(afterId: number, limit: number): Promise<ConversationEvent[]>;
  /** Creates the stream or brings it to its settings (it may have been deleted meanwhile). */
  ensureStream(): Promise<void>;
  onError(what: string, error: unknown): void;
}

const PAGE_SIZE = 500;
/** How often the leader looks for events no wake-up told it of (a lost core NATS message). */
const PUBLISH_POLL_MS = 1_000;
/** How often a replica that does not lead tries to take the lead (the leader may have died). */
const LEADER_RETRY_MS = 500;
const RETRY_MAX_MS = 5_000;
/** How long the leader's lock connection may take to answer before the lead is given up. */
const LOCK_CHECK_MS = 2_000;

/** The advisory lock key text of the publisher of `stream` (hashtext of it): one leader per stream and database. */
export function publisherLockName(stream: string): string {
  return `asg-events-publisher:${stream}`;
}

/**
 * Publishes every row of the events table (the outbox: a row exists iff its transaction committed) to the JetStream
 * stream, in id order, each once. One replica leads, holding a session advisory lock that dies with its connection.
 * It goes on after the stream's last event, or the `event_publications` row when the stream has none (aged out), so a
 * leader that died before a publish or before saving the row loses nothing and repeats nothing. The event id is the
 * `Nats-Msg-Id` (a retried publish is dropped as a duplicate) and the previous id the expected last msgID, so a publish
 * that does not follow the previous event (two leaders after a split) is refused.
 */
export class OutboxPublisher {
  private lockClient: pg.Client | undefined;
  private leading = false;
  /** The id of the last event in the stream; undefined until read (again). */
  private lastPublished: number | undefined;
  /** Whether the stream's last message is the event `lastPublished` (so the next one may expect it). */
  private followsStream = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  /** After a failed pass: backing off (common/backoff.ts) from LEADER_RETRY_MS to RETRY_MAX_MS. */
  private readonly backoff = new Backoff(reconnectSchedule(LEADER_RETRY_MS, RETRY_MAX_MS));
  private retryMs = LEADER_RETRY_MS;

  constructor(private readonly options: OutboxPublisherOptions) {}

  start(): void {
    this.wake();
  }

  /** Whether this replica leads (tests). */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Some replica committed events: the leader publishes now; the others wait for their timer (no lock attempt per commit). */
  committed(): void {
    if (this.leading) this.wake();
  }

  /** Events may be waiting: publish them now (one pass at a time; a wake-up during one runs another). */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass().then((failed) => {
      this.running = undefined;
      if (this.closed) return;
      if (this.again && !failed) {
        this.again = false;
        this.wake();
        return;
      }
      this.again = false;
      // After a failure, backing off; a wake-up (NATS reconnected, a commit) cuts the wait short.
      this.timer = setTimeout(() => this.wake(), failed ? this.retryMs : this.leading ? PUBLISH_POLL_MS : LEADER_RETRY_MS);
      this.timer.unref();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.lockClient) await this.lostLock(this.lockClient);
  }

  /** One pass: take the lead if free (or make sure it is still held), publish what is pending; true when it failed. */
  private async pass(): Promise<boolean> {
    try {
      if (this.leading) await this.confirmLead();
      if (!this.leading && !(await this.takeLead())) return false;
      await this.publishPending();
      this.backoff.reset();
      return false;
    } catch (error) {
      if (this.closed) return false;
      this.options.onError('publishing stored events to NATS failed; retrying', error);
      // Read the stream again: whether the failed publish was stored is unknown.
      this.lastPublished = undefined;
      this.retryMs = this.backoff.next();
      return true;
    }
  }

  private async takeLead(): Promise<boolean> {
    if (this.lockClient === undefined) {
      const client = new pg.Client(this.options.lockConnection);
      client.on('error', () => void this.lostLock(client));
      client.on('end', () => void this.lostLock(client));
      await client.connect();
      this.lockClient = client;
    }
    const { rows } = await this.lockClient.query<{ locked: boolean }>(SQL.tryPublisherLock, [publisherLockName(this.options.names.stream)]);
    this.leading = rows[0]!.locked;
    if (this.leading) this.lastPublished = undefined;
    return this.leading;
  }

  /**
   * The lock lives as long as its session: a lock connection that does not answer within LOCK_CHECK_MS (the server may
   * have ended the session and another replica taken the lock) is given up, the lead first.
   */
  private async confirmLead(): Promise<void> {
    const client = this.lockClient;
    if (client === undefined) {
      this.leading = false;
      return;
    }
    try {
      await within(client.query('SELECT 1'), LOCK_CHECK_MS, `the publisher's lock connection did not answer within ${LOCK_CHECK_MS} ms`);
    } catch (error) {
      void this.lostLock(client);
      throw error;
    }
  }

  /** The lock's session ended or may have: this replica no longer leads, before anything else happens. */
  private async lostLock(client: pg.Client): Promise<void> {
    if (this.lockClient !== client) return;
    this.leading = false;
    this.lockClient = undefined;
    await discard(client);
  }

  private async publishPending(): Promise<void> {
    if (this.lastPublished === undefined) await this.findLastPublished();
    for (;;) {
      const page = await this.options.readEvents(this.lastPublished!, PAGE_SIZE);
      for (const event of page) {
        if (!this.leading || this.closed) return;
        await this.options.js.publish(this.options.names.storedSubject, storedEventMessage(event), {
          msgID: String(event.id),
          ...(this.followsStream ? { expect: { lastMsgID: String(this.lastPublished) } } : {}),
        });
        this.lastPublished = event.id;
        this.followsStream = true;
      }
      if (page.length > 0) await this.options.pool.query(SQL.savePublished, [this.options.names.stream, this.lastPublished]);
      if (page.length < PAGE_SIZE) return;
    }
  }

  /** The id to go on after: the stream's last event, or the saved row; the stream may have been deleted: made again first. */
  private async findLastPublished(): Promise<void> {
    await this.options.ensureStream();
    const last = await this.options.manager.streams.getMessage(this.options.names.stream, {
      last_by_subj: this.options.names.storedSubject,
    });
    const fromStream = last === null ? undefined : last.json<{ id: number }>().id;
    const { rows } = await this.options.pool.query<{ last_id: number }>(SQL.selectPublished, [this.options.names.stream]);
    const saved = rows[0]?.last_id;
    if (fromStream !== undefined && fromStream >= (saved ?? 0)) {
      this.lastPublished = fromStream;
      this.followsStream = true;
    } else {
      this.lastPublished = saved ?? 0;
      this.followsStream = false;
    }
  }
}
