import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import type pg from 'pg';
import { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { natsServer } from '../events-url.js';
import { parseLiveEventPayload } from './event-relay.js';
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
  readEvents(afterId: number, limit: number): Promise<ConversationEvent[]>;
  /** A stored event from the stream: handed over in id order, any gap before it read from the table. */
  onStoredEvent(event: ConversationEvent): void;
  /** Events up to `id` exist that this replica may not have handed over (`Infinity`: all there are). */
  onStoredEventsUpTo(id: number): void;
  onLiveEvent(event: ConversationEvent): void;
  onError(what: string, error: unknown): void;
}

/**
 * Events across replicas through NATS instead of LISTEN/NOTIFY: stored ones through a JetStream stream the outbox
 * publisher fills from the events table, read by an ordered consumer on every replica; live-only ones on a core subject.
 * It reconnects forever: meanwhile the store works, and the other replicas catch up from the stream or table after.
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

  constructor(private readonly options: NatsEventsOptions) {
    this.names = natsEventNames(options.prefix);
  }

  /** Connects, creates or updates the stream, starts the consumer, the live subscription and the publisher. Rejects when NATS cannot be reached. */
  async start(): Promise<void> {
    const server = natsServer(this.options.url);
    const { server: servers, user, pass, token } = server;
    const name = `asg-conversation-store-${this.options.bootId}`;
    const connection = await connect({ servers, user, pass, token, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 }).catch(
      (error: Error) => {
        throw new Error(`cannot connect to the events' NATS server ${server.redacted}: ${error.message}`);
      },
    );
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
    const ensureStream = () => this.ensureStream(manager);
    this.publisher = new OutboxPublisher({ ...this.options, js: jetstream(connection), manager, names: this.names, ensureStream });
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

  /** One payload of liveEventPayloads, for the other replicas. */
  publishLive(payload: string): void {
    if (!this.closed) this.connection?.publish(this.names.liveSubject, payload);
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

  /** An ordered consumer from the stream's next message on (what came before is read from the table); replaced when it ends. */
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

  /** A new consumer, then what was committed meanwhile is read from the table: nothing falls between. Retried until it works. */
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

  /** After a reconnect, a new consumer: the old one's pulls may have died with the connection. */
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
