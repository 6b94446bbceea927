import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import type pg from 'pg';
import { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { natsServer } from '../events-url.js';
import { liveEventPayloads, parseLiveEventPayload } from './event-relay.js';
import { natsEventNames, streamConfig, type NatsEventNames, type StoredEventMessage } from './nats-subjects.js';
import { OutboxPublisher } from './outbox-publisher.js';

/** How long a consumer that ended or failed to start waits before the next one. */
const CONSUMER_RESTART_MS = 1_000;

export interface NatsEventsOptions {
  url: string;
  prefix: string;
  maxAgeMs: number;
  bootId: string;
  /** A connection to the store's database for the publisher's leader lock (a session of its own). */
  lockConnection: pg.ClientConfig;
  pool: pg.Pool;
  /** Stored events after `afterId`, in id order. */
  readEvents(afterId: number, limit: number): Promise<ConversationEvent[]>;
  /** A stored event from the stream (any replica's): hand it over in id order, reading any gap before it from the table. */
  onStoredEvent(event: ConversationEvent): void;
  /** Events up to `id` exist that this replica may not have handed over (`Infinity`: all there are). */
  onStoredEventsUpTo(id: number): void;
  onLiveEvent(event: ConversationEvent): void;
  onError(what: string, error: unknown): void;
}

/**
 * Cross-replica delivery of events through NATS (instead of PostgreSQL LISTEN/NOTIFY): the
 * stored events through a JetStream stream that the outbox publisher (outbox-publisher.ts)
 * fills from the events table, read by an ordered consumer of every replica; the live-only
 * events on a core NATS subject. The connection reconnects forever: while NATS is away the
 * store works as before, its own watchers hear its own commits, and the other replicas catch
 * up from the stream (or the table) once it is back.
 */
export class NatsEvents {
  readonly names: NatsEventNames;
  private connection: NatsConnection | undefined;
  private manager: JetStreamManager | undefined;
  /** A new consumer is on its way (one at a time: a reconnect and a lost consumer may both ask). */
  private restarting = false;
  private publisher: OutboxPublisher | undefined;
  private messages: ConsumerMessages | undefined;
  private readonly subscriptions: Subscription[] = [];
  private closed = false;
  /** Live events leave one at a time, so the other replicas get this one's deltas in order. */
  private liveChain: Promise<void> = Promise.resolve();

  constructor(private readonly options: NatsEventsOptions) {
    this.names = natsEventNames(options.prefix);
  }

  /** Connects, creates or updates the stream, starts the consumer, the live subscription and the publisher. Rejects when NATS cannot be reached. */
  async start(): Promise<void> {
    const server = natsServer(this.options.url);
    let connection: NatsConnection;
    try {
      connection = await connect({
        servers: server.server,
        user: server.user,
        pass: server.pass,
        token: server.token,
        name: `asg-conversation-store-${this.options.bootId}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
      });
    } catch (error) {
      throw new Error(`cannot connect to the events' NATS server ${server.redacted}: ${(error as Error).message}`);
    }
    this.connection = connection;
    const manager = await jetstreamManager(connection);
    this.manager = manager;
    await this.ensureStream(manager);
    await this.startConsumer();
    this.subscriptions.push(
      connection.subscribe(this.names.liveSubject, {
        callback: (error, message) => {
          if (error) return this.options.onError('the live events from NATS failed', error);
          try {
            const event = parseLiveEventPayload(message.string(), this.options.bootId);
            if (event) this.options.onLiveEvent(event);
          } catch (parseError) {
            this.options.onError('a live event from NATS could not be read', parseError);
          }
        },
      }),
    );
    this.publisher = new OutboxPublisher({
      js: jetstream(connection),
      manager,
      names: this.names,
      pool: this.options.pool,
      lockConnection: this.options.lockConnection,
      readEvents: this.options.readEvents,
      ensureStream: () => this.ensureStream(manager),
      onError: this.options.onError,
    });
    this.subscriptions.push(connection.subscribe(this.names.committedSubject, { callback: () => this.publisher?.committed() }));
    this.publisher.start();
    void this.watchStatus(connection);
  }

  /** This replica committed events: its publisher (if it leads) and the leading one elsewhere publish them. */
  committed(): void {
    if (this.closed) return;
    this.publisher?.committed();
    try {
      this.connection?.publish(this.names.committedSubject);
    } catch {
      // Closed or draining: the leader's poll publishes them anyway.
    }
  }

  shareLive(event: ConversationEvent): void {
    const payloads = liveEventPayloads(this.options.bootId, event);
    if (payloads.length === 0 || this.closed) return;
    this.liveChain = this.liveChain.then(() => {
      try {
        for (const payload of payloads) this.connection?.publish(this.names.liveSubject, payload);
      } catch (error) {
        this.options.onError('a live event could not be sent to the other store replicas', error);
      }
    });
  }

  /** The outbox publisher, for tests that check who leads. */
  get outboxPublisher(): OutboxPublisher | undefined {
    return this.publisher;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.publisher?.close();
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.messages?.stop();
    await this.liveChain;
    await this.connection?.close().catch(() => undefined);
  }

  private async ensureStream(manager: JetStreamManager): Promise<void> {
    const config = streamConfig(this.names, this.options.maxAgeMs);
    const existing = await manager.streams.info(this.names.stream).catch(() => undefined);
    if (existing === undefined) {
      try {
        await manager.streams.add(config);
        return;
      } catch {
        // Another replica created it first: bring it to this replica's settings below.
      }
    }
    await manager.streams.update(this.names.stream, config);
  }

  /**
   * An ordered consumer from the stream's next message on: whatever was committed before is
   * read from the table (onStoredEventsUpTo), so it starts after this replica's cursor in
   * effect. One that ends without being stopped (its stream was deleted and made again, the
   * server refused it) is replaced.
   */
  private async startConsumer(): Promise<void> {
    // The stream has the stored subject only: no filter (multiple filters need NATS 2.10).
    const consumer = await jetstream(this.connection!).consumers.get(this.names.stream, { deliver_policy: DeliverPolicy.New });
    const messages = await consumer.consume();
    this.messages = messages;
    void (async () => {
      // The server lost the consumer or its stream (deleted, a restart without its storage): a new one.
      for await (const status of messages.status()) {
        if (
          ['consumer_deleted', 'consumer_not_found', 'stream_not_found', 'heartbeats_missed'].includes(status.type) &&
          !this.closed &&
          this.messages === messages
        ) {
          this.options.onError('the consumer of stored events from NATS was lost; starting a new one', new Error(status.type));
          this.restartConsumer(CONSUMER_RESTART_MS);
        }
      }
    })().catch(() => undefined);
    void (async () => {
      for await (const message of messages) {
        try {
          const body = message.json<StoredEventMessage>();
          if (body.event === undefined) this.options.onStoredEventsUpTo(body.id);
          else this.options.onStoredEvent({ ...ConversationEvent.fromJSON(body.event), id: body.id });
        } catch (error) {
          this.options.onError('a stored event from NATS could not be read', error);
        }
      }
    })()
      .catch((error: unknown) => {
        if (!this.closed) this.options.onError('the consumer of stored events from NATS stopped', error);
      })
      .finally(() => {
        if (!this.closed && this.messages === messages) this.restartConsumer(CONSUMER_RESTART_MS);
      });
  }

  /**
   * A new consumer from the stream's next message on, then whatever was committed meanwhile
   * is read from the table (it has it all), so nothing falls between. Tried again until it
   * works or the replica stops.
   */
  private restartConsumer(afterMs: number): void {
    if (this.restarting) return;
    this.restarting = true;
    const old = this.messages;
    this.messages = undefined;
    old?.stop();
    const timer = setTimeout(() => {
      if (this.closed) return;
      // The stream may be gone too: made again first, as the publisher does.
      this.ensureStream(this.manager!)
        .then(() => this.startConsumer())
        .then(
          () => {
            this.restarting = false;
            this.options.onStoredEventsUpTo(Number.POSITIVE_INFINITY);
          },
          (error: unknown) => {
            this.restarting = false;
            this.options.onError('the consumer of stored events from NATS could not be started again; retrying', error);
            this.restartConsumer(CONSUMER_RESTART_MS);
          },
        );
    }, afterMs);
    timer.unref();
  }

  /**
   * After a reconnect: a new consumer (restartConsumer). The consumer of before the cut is not
   * trusted to resume: its pulls may have died with the connection.
   */
  private async watchStatus(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'reconnect' && !this.closed) {
        this.restartConsumer(0);
        this.publisher?.wake();
      }
      if (status.type === 'disconnect' && !this.closed)
        this.options.onError(
          'the NATS connection of the events was lost; reconnecting',
          new Error(`disconnected from ${natsServer(this.options.url).redacted}`),
        );
    }
  }
}
