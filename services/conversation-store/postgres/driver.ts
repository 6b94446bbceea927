import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { currentContext } from '../../common/context.js';
import { aborted, deadlineExceeded, internal, ServiceError, unavailable } from '../../common/grpc/errors.js';
import { redactSecrets } from '../../common/secrets.js';
import { ChangeLog, type PendingEvent, type SqlStatements, type SqlWrite, tellEach } from '../sql/port.js';
import { QUERIES, type QueryArgs, type QueryName } from '../sql/queries.js';
import { SqlConversationStorage } from '../sql/storage.js';
import { type AvailabilityListener, DEFAULT_STALE_TURN_MS } from '../storage.js';
import { DatabaseProbe } from './availability.js';
import { isConnectionError } from './connection-errors.js';
import { EventListener, liveEventPayloads, OrderedEventDelivery, storedEventsPayload } from './event-relay.js';
import { NatsEvents } from './nats-events.js';
import { connectionConfig, createPool, DEFAULT_POOL_LIMITS, type PostgresPoolLimits, redactedDatabaseUrl } from './pool.js';
import { migrate } from './schema.js';
import { LIVE_EVENTS_CHANNEL, SQL, STORED_EVENTS_CHANNEL } from './statements.js';

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:port/database`; its password is never shown. */
  url: string;
  pool?: Partial<PostgresPoolLimits>;
  /** Epoch milliseconds; replaced in tests to age approvals and marks without waiting. */
  now?: () => number;
  /** A running mark older than this is stale (store.proto, StartTurn); DEFAULT_STALE_TURN_MS when absent. */
  staleTurnAfterMs?: number;
  /** How often this replica tells the others it is alive; HEARTBEATS_TO_DEATH missed beats and it counts as gone. */
  heartbeatMs?: number;
  /** NATS JetStream for the events that cross replicas (config `events`); LISTEN/NOTIFY when absent. */
  events?: { url: string; prefix: string; maxAgeMs: number };
  /** Problems of the background work (heartbeat, LISTEN, live events) that no request sees. */
  onBackgroundError?: (what: string, error: unknown) => void;
}

/** The application_name of each kind of connection a replica opens, as pg_stat_activity shows them. */
export const POOL_APPLICATION_NAME = 'asg-conversation-store';
export const LISTEN_APPLICATION_NAME = 'asg-conversation-store-listen';
export const PUBLISHER_APPLICATION_NAME = 'asg-conversation-store-publisher';
export const PROBE_APPLICATION_NAME = 'asg-conversation-store-probe';

const DEFAULT_HEARTBEAT_MS = 5_000;
/** Runs of one transaction at most when its connection is lost before COMMIT. */
const TRANSACTION_ATTEMPTS = 3;
/** What a write whose connection was lost during its COMMIT says: it may have been stored. */
const OUTCOME_UNKNOWN =
  'the conversation store lost its database connection while committing; whether the change was stored is unknown: read it back before trying again';
/** Missed heartbeats after which a replica's running marks are read as a crash's. */
const HEARTBEATS_TO_DEATH = 3;
/** Rows of replicas unseen this long are deleted at a start (their marks read as dead anyway). */
const FORGET_REPLICAS_AFTER_MS = 24 * 3_600_000;

/** A value as pg sends it: bytes as a Buffer, absent as NULL. */
function sent(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/**
 * Connects, migrates, registers this replica and starts its event delivery; several replicas may open one database at
 * once. UNAVAILABLE when the database or NATS cannot be reached (the caller tries again later), the database's own
 * error otherwise (a refused login, a newer schema), which needs a person.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresConversationStorage> {
  const where = redactedDatabaseUrl(options.url);
  const limits = { ...DEFAULT_POOL_LIMITS, ...options.pool };
  const bootId = randomUUID();
  const pool = createPool(options.url, limits, POOL_APPLICATION_NAME);
  // An idle pooled connection that the server ends must not crash the process; the next query gets a new one.
  pool.on('error', (error) => options.onBackgroundError?.('an idle database connection failed', error));
  try {
    const client = await pool.connect();
    try {
      await migrate(client, where);
    } finally {
      client.release();
    }
    const storage = new PostgresConversationStorage(
      pool,
      bootId,
      where,
      options,
      connectionConfig(options.url, limits, LISTEN_APPLICATION_NAME),
      connectionConfig(options.url, limits, PROBE_APPLICATION_NAME),
    );
    try {
      await storage.start();
    } catch (error) {
      // Its heartbeat and LISTEN connection stop, and its row goes; the pool ends below.
      await storage.close();
      throw error;
    }
    return storage;
  } catch (error) {
    if (!pool.ended) await pool.end().catch(() => undefined);
    if (error instanceof ServiceError) throw error;
    const message = redactSecrets((error as Error).message ?? String(error));
    if (isConnectionError(error)) throw unavailable(`cannot reach the conversation store's database ${where}: ${message}`);
    throw error;
  }
}

/**
 * The store's rules for several replicas sharing one database. Every write of a conversation locks its row first
 * (FOR UPDATE) and reads it afresh; approvals move by conditional updates after that lock, so no two writers wait in a
 * cycle. Events get their ids last, from the `event_ids` row (gap-free, in commit order), with the counts changed under
 * that lock and a NOTIFY delivered only on commit. A mark is live while its boot is this replica or one seen lately.
 */
export class PostgresConversationStorage extends SqlConversationStorage {
  private readonly heartbeatMs: number;
  private readonly liveForMs: number;
  private delivery: OrderedEventDelivery | undefined;
  private listener: EventListener | undefined;
  private nats: NatsEvents | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private probe: DatabaseProbe | undefined;
  private readonly availabilityListeners = new Set<AvailabilityListener>();
  private liveChain: Promise<void> = Promise.resolve();
  private closed: Promise<void> | undefined;
  private beats = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** This replica's boot: its running marks, its row in store_replicas, the origin of its live events. */
    bootId: string,
    private readonly where: string,
    private readonly options: PostgresStorageOptions,
    private readonly listenConnection: pg.ClientConfig,
    private readonly probeConnection: pg.ClientConfig,
  ) {
    super({ bootId, now: options.now ?? Date.now, staleTurnAfterMs: options.staleTurnAfterMs ?? DEFAULT_STALE_TURN_MS, locksRows: true });
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.liveForMs = this.heartbeatMs * HEARTBEATS_TO_DEATH;
  }

  /** Registers the replica, starts its heartbeat and its LISTEN or NATS consumer before reading where the feed starts. */
  async start(): Promise<void> {
    await this.pool.query(SQL.forgetReplicas, [FORGET_REPLICAS_AFTER_MS]);
    await this.pool.query(SQL.registerReplica, [this.bootId]);
    this.heartbeat = setInterval(() => void this.beat(), this.heartbeatMs);
    this.heartbeat.unref();
    if (this.options.events) await this.startNats(this.options.events);
    else await this.startListener();
    this.probe = new DatabaseProbe({
      connection: this.probeConnection,
      onChange: (available, reason) => this.availabilityChanged(available, reason),
    });
    this.probe.start();
    this.delivery = new OrderedEventDelivery(
      await this.latestEventId(),
      (afterId, limit) => this.readEvents({ afterId, limit }),
      (events) => this.tellCommitted(events),
      (error) => this.options.onBackgroundError?.('reading committed events for the live feed failed', error),
    );
  }

  private async startListener(): Promise<void> {
    this.listener = new EventListener({
      connection: this.listenConnection,
      bootId: this.bootId,
      onStoredEvents: (lastId) => void this.delivery?.caughtUpTo(lastId),
      onLiveEvent: (event) => this.tellLive(event),
      onListening: () => void this.delivery?.caughtUpTo(Number.POSITIVE_INFINITY),
      onError: (error) => this.options.onBackgroundError?.('the LISTEN connection of live events failed; reconnecting', error),
    });
    await this.listener.start();
  }

  /** NATS in place of LISTEN/NOTIFY: stored events through JetStream (the outbox publisher), live ones on core NATS. */
  private async startNats(events: NonNullable<PostgresStorageOptions['events']>): Promise<void> {
    this.nats = new NatsEvents({
      ...events,
      bootId: this.bootId,
      lockConnection: { ...this.listenConnection, application_name: PUBLISHER_APPLICATION_NAME },
      pool: this.pool,
      readEvents: (afterId, limit) => this.readEvents({ afterId, limit }),
      onStoredEvent: (event) => void this.delivery?.committed([event]),
      onStoredEventsUpTo: (id) => void this.delivery?.caughtUpTo(id),
      onLiveEvent: (event) => this.tellLive(event),
      onError: (what, error) => this.options.onBackgroundError?.(what, error),
    });
    try {
      await this.nats.start();
    } catch (error) {
      throw unavailable(redactSecrets((error as Error).message));
    }
  }

  /** For tests. */
  get natsEvents(): NatsEvents | undefined {
    return this.nats;
  }

  /** For tests that drop it on purpose. */
  get eventListener(): EventListener | undefined {
    return this.listener;
  }

  override shareLiveEvent(event: ConversationEvent): void {
    const payloads = liveEventPayloads(this.bootId, event);
    if (payloads.length === 0) return;
    this.inOrder('a live event could not be sent to the other store replicas', async () => {
      for (const payload of payloads) {
        if (this.nats) this.nats.publishLive(payload);
        else await this.pool.query('SELECT pg_notify($1, $2)', [LIVE_EVENTS_CHANNEL, payload]);
      }
    });
  }

  override shareWatch(conversationId: string, watched: boolean): void {
    this.inOrder('the watchers of this store replica could not be shared', () =>
      this.pool.query(watched ? SQL.watch : SQL.unwatch, [conversationId, this.bootId]),
    );
  }

  /** Live events and watches leave one at a time: the other replicas get them in the order they happened. */
  private inOrder(what: string, work: () => Promise<unknown>): void {
    if (this.closed) return;
    this.liveChain = this.liveChain.then(work).then(
      () => undefined,
      (error: unknown) => this.options.onBackgroundError?.(what, error),
    );
  }

  close(): Promise<void> {
    return (this.closed ??= (async () => {
      clearInterval(this.heartbeat);
      await this.probe?.close();
      await this.listener?.close();
      await this.liveChain;
      await this.nats?.close();
      // Gone now: this replica's marks are a crash's from here on, as after a restart of the SQLite store.
      await this.pool.query(SQL.unregisterReplica, [this.bootId]).catch(() => undefined);
      await this.pool.end();
    })());
  }

  private async beat(): Promise<void> {
    // While the database is away the probe has said so; it beats again as soon as it is back.
    if (this.probe?.available === false) return;
    try {
      const { rowCount } = await this.pool.query(SQL.heartbeat, [this.bootId]);
      // Forgotten while this process was paused: it is alive again.
      if (rowCount === 0) await this.pool.query(SQL.registerReplica, [this.bootId]);
      // A dead replica's turns stay marked: a live one notes them once a replica could have been seen as gone.
      this.beats += 1;
      if (this.beats % HEARTBEATS_TO_DEATH === 0 && !this.closed) await this.noteInterruptedTurns();
    } catch (error) {
      if (!this.closed) this.options.onBackgroundError?.('the store replica heartbeat failed', error);
    }
  }

  onAvailability(listener: AvailabilityListener): () => void {
    this.availabilityListeners.add(listener);
    return () => this.availabilityListeners.delete(listener);
  }

  /**
   * Back: the connections waiting out a backoff try now; this replica beats at once and sweeps for crashed turns only
   * HEARTBEATS_TO_DEATH beats later, once every live replica could beat again (all looked dead meanwhile).
   */
  private availabilityChanged(available: boolean, reason: string): void {
    if (this.closed) return;
    if (available) {
      this.listener?.reconnectNow();
      this.nats?.outboxPublisher?.wake();
      this.beats = 0;
      void this.beat();
    }
    tellEach(this.availabilityListeners, available, reason);
  }

  private tellLive(event: ConversationEvent): void {
    tellEach(this.liveListeners, event);
  }

  /** One write, its events and counts flushed in it; nothing committed past the caller's deadline (it gave up). */
  protected async write<R>(body: (tx: SqlWrite) => Promise<R>): Promise<R> {
    const deadline = currentContext()?.deadline;
    let events: ConversationEvent[] = [];
    const result = await this.transaction('BEGIN', 'write', async (client) => {
      const changes = new ChangeLog();
      const written = await body({ ...this.statementsOn(client), changes });
      events = await this.flush(client, changes);
      if (deadline !== undefined && Date.now() >= deadline) {
        throw deadlineExceeded(
          `the conversation store's database took longer than its caller waits; the change was rolled back: nothing was written`,
        );
      }
      return written;
    });
    if (events.length > 0) {
      // The outbox publisher (the leader, on this replica or another) publishes them from the table.
      this.nats?.committed();
      await this.delivery?.committed(events);
    }
    return result;
  }

  /** Every statement of the body sees one snapshot (REPEATABLE READ, read only). */
  protected read<R>(body: (tx: SqlStatements) => Promise<R>): Promise<R> {
    return this.transaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', 'read', (client) => body(this.statementsOn(client)));
  }

  /** Named statements (planned once per connection); the conversation reads also get this replica's boot and liveness. */
  private statementsOn(client: pg.PoolClient): SqlStatements {
    const values = (query: QueryName, args: QueryArgs) => {
      const { name, sql, parameters } = QUERIES.postgres[query];
      const given: QueryArgs = { boot: this.bootId, live_for_ms: this.liveForMs, ...args };
      return { name, text: sql, values: parameters.map((parameter) => sent(given[parameter])) };
    };
    return {
      all: async <Row>(query: QueryName, args: QueryArgs) => (await client.query(values(query, args))).rows as Row[],
      run: async (query: QueryName, args: QueryArgs) => (await client.query(values(query, args))).rowCount ?? 0,
    };
  }

  /**
   * One transaction on a pooled connection. One whose connection is lost before COMMIT did not happen: it runs again on
   * another, up to TRANSACTION_ATTEMPTS times. A write lost during its COMMIT may have been stored: never run again, the
   * caller is told. No connection at all (the database is away): UNAVAILABLE at once.
   */
  private async transaction<R>(begin: string, kind: 'read' | 'write', body: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt += 1) {
      const client = await this.connect();
      let broken: Error | undefined;
      let committing = false;
      try {
        await client.query(begin);
        try {
          const result = await body(client);
          committing = true;
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
          throw error;
        }
      } catch (error) {
        const lost = isConnectionError(error);
        if (lost && committing && kind === 'write') throw unavailable(`${OUTCOME_UNKNOWN}: ${(error as Error).message}`);
        if (!lost || attempt >= TRANSACTION_ATTEMPTS) throw fail(error);
        broken ??= error as Error;
      } finally {
        client.release(broken);
      }
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw unavailable(`the conversation store cannot get a connection to its database ${this.where}: ${(error as Error).message}`);
    }
  }

  /** The end of a write transaction: ids for its events, its count changes, its NOTIFY. */
  private async flush(client: pg.PoolClient, changes: ChangeLog): Promise<ConversationEvent[]> {
    const query = (name: keyof typeof SQL, values: unknown[]) => client.query({ name, text: SQL[name], values });
    let events: ConversationEvent[] = [];
    const count = changes.events.length;
    if (count > 0) {
      const first = (await query('allocateEventIds', [count])).rows[0]!.last_id - count + 1;
      const column = <K extends keyof PendingEvent>(key: K) => changes.events.map((event) => event[key]);
      const ids = changes.events.map((_, index) => first + index);
      await query('insertEvents', [ids, column('conversation_id'), column('kind'), column('payload'), column('created_at')]);
      // With NATS the other replicas hear of it from the stream, which the outbox publisher fills from this table.
      const notice = storedEventsPayload(first + count - 1, changes.events.at(-1)!.conversation_id);
      if (!this.options.events) await client.query('SELECT pg_notify($1, $2)', [STORED_EVENTS_CHANNEL, notice]);
      events = changes.numbered(first);
    }
    const deltas = [...changes.counts].filter(([, delta]) => delta !== 0);
    if (deltas.length > 0) await query('changeCounts', [deltas.map(([status]) => status), deltas.map(([, delta]) => delta)]);
    const owners = [...changes.ownerCounts.values()].filter(({ delta }) => delta !== 0);
    if (owners.length > 0)
      await query('changeOwnerCounts', [owners.map((d) => d.owner), owners.map((d) => d.status), owners.map((d) => d.delta)]);
    return events;
  }
}

/** A database error as the gRPC status a caller can act on (codes: PostgreSQL's errcodes appendix). */
function fail(error: unknown): Error {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message ?? String(error);
  if (code === '57014')
    return deadlineExceeded(`a database statement of the conversation store ran past its statement_timeout: ${message}`);
  if (code === '40P01' || code === '40001')
    return aborted(`the conversation store's database refused the change under concurrency (${message}); try it again`);
  if (isConnectionError(error)) return unavailable(`the conversation store's database is not available: ${message}`);
  if (error instanceof Error) return internal(`the conversation store's database failed: ${message}`);
  return internal(String(error));
}
