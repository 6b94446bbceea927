import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { currentContext } from '../../common/context.js';
import { aborted, deadlineExceeded, internal, ServiceError, unavailable } from '../../common/grpc/errors.js';
import { redactSecrets } from '../../common/secrets.js';
import type { QueryArgs } from '../sql/named-query.js';
import { ChangeLog, type PendingEvent, type SqlStatements, type SqlWrite } from '../sql/port.js';
import { QUERIES, type QueryName } from '../sql/queries.js';
import { SqlConversationStorage } from '../sql/storage.js';
import { type AvailabilityListener, DEFAULT_STALE_TURN_MS, type LiveEventListener } from '../storage.js';
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
  /** How often this replica tells the others it is alive (store_replicas); 3 missed beats and it counts as gone. */
  heartbeatMs?: number;
  /**
   * NATS JetStream for the events that cross replicas (config `events`); PostgreSQL
   * LISTEN/NOTIFY when absent. `prefix` names the stream and subjects (nats-subjects.ts).
   */
  events?: { url: string; prefix: string; maxAgeMs: number };
  /** Problems of the background work (heartbeat, LISTEN, live events) that no request sees. */
  onBackgroundError?: (what: string, error: unknown) => void;
}

/**
 * The application_name of each kind of connection a replica opens, as pg_stat_activity shows
 * them: the pool's, the LISTEN one (LISTEN/NOTIFY events), the outbox publisher's lock (NATS
 * events) and the readiness probe's.
 */
export const POOL_APPLICATION_NAME = 'asg-conversation-store';
export const LISTEN_APPLICATION_NAME = 'asg-conversation-store-listen';
export const PUBLISHER_APPLICATION_NAME = 'asg-conversation-store-publisher';
export const PROBE_APPLICATION_NAME = 'asg-conversation-store-probe';

const DEFAULT_HEARTBEAT_MS = 5_000;
/** Runs of one transaction at most when its connection is lost before COMMIT (transaction()). */
const TRANSACTION_ATTEMPTS = 3;
/** What a write whose connection was lost during its COMMIT says: it may have been stored. */
const OUTCOME_UNKNOWN =
  'the conversation store lost its database connection while committing; whether the change was stored is unknown: read it back before trying again';
/** Missed heartbeats after which a replica's running marks are read as a crash's. */
const HEARTBEATS_TO_DEATH = 3;
/** Rows of replicas unseen this long are deleted at a start (their marks read as dead without them). */
const FORGET_REPLICAS_AFTER_MS = 24 * 3_600_000;

/** A value as pg sends it: bytes as a Buffer, absent as NULL. */
function sent(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/**
 * Opens the store on a PostgreSQL database: connects, migrates under the advisory lock,
 * registers this replica and starts its LISTEN connection. Several replicas may open one
 * database at once. Fails with UNAVAILABLE when the database (or NATS) cannot be reached or
 * the connection was lost meanwhile — the caller tries again later (conversation-store
 * index.ts) — and with the database's own error otherwise (a refused login, a database that
 * does not exist, a schema newer than this build), which needs a person.
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
 * The PostgreSQL driver: the store's rules (sql/storage.ts) for several store replicas
 * sharing one database. How it stays correct under their concurrency:
 *
 * - every write of a conversation first locks its row (`SELECT … FOR UPDATE`) and then reads
 *   it afresh, so read-then-write decisions (message_count, status, run revision CAS, the
 *   running mark) are serialized per conversation; an approval's lifecycle moves are
 *   conditional `UPDATE … RETURNING`, taken after the lock of its conversation, so locks are
 *   always taken conversation first and no two writers wait on each other in a cycle;
 * - events get their ids at the end of the transaction from the `event_ids` counter row
 *   (gap-free and in commit order), with the per-status counts changed under that same lock
 *   and a NOTIFY that PostgreSQL delivers only if the transaction commits;
 * - a running mark counts as a live turn while its boot id is this replica's or a replica
 *   seen within HEARTBEATS_TO_DEATH heartbeats (store_replicas); only marks of dead boots are
 *   turns a crash cut off.
 */
export class PostgresConversationStorage extends SqlConversationStorage {
  private readonly heartbeatMs: number;
  private readonly liveForMs: number;
  private readonly liveListeners = new Set<LiveEventListener>();
  private delivery: OrderedEventDelivery | undefined;
  private listener: EventListener | undefined;
  private nats: NatsEvents | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private probe: DatabaseProbe | undefined;
  private readonly availabilityListeners = new Set<AvailabilityListener>();
  /** Live events leave one at a time, so the other replicas get this one's deltas in order. */
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

  /**
   * Registers the replica, starts its heartbeat and its LISTEN connection or NATS consumer
   * (before reading where the feed starts: nothing falls between).
   */
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

  /** The NATS side of the events (undefined on LISTEN/NOTIFY), for tests. */
  get natsEvents(): NatsEvents | undefined {
    return this.nats;
  }

  /** The LISTEN connection, for tests that drop it on purpose. */
  get eventListener(): EventListener | undefined {
    return this.listener;
  }

  shareLiveEvent(event: ConversationEvent): void {
    if (this.nats) {
      this.nats.shareLive(event);
      return;
    }
    const payloads = liveEventPayloads(this.bootId, event);
    if (payloads.length === 0 || this.closed) return;
    this.liveChain = this.liveChain.then(async () => {
      try {
        for (const payload of payloads) await this.pool.query('SELECT pg_notify($1, $2)', [LIVE_EVENTS_CHANNEL, payload]);
      } catch (error) {
        this.options.onBackgroundError?.('a live event could not be sent to the other store replicas', error);
      }
    });
  }

  shareWatch(conversationId: string, watched: boolean): void {
    if (this.closed) return;
    // In the live events' chain: a watch and its end reach the database in the order they happened.
    this.liveChain = this.liveChain.then(async () => {
      try {
        await this.pool.query(watched ? SQL.watch : SQL.unwatch, [conversationId, this.bootId]);
      } catch (error) {
        this.options.onBackgroundError?.('the watchers of this store replica could not be shared', error);
      }
    });
  }

  onLiveEvent(listener: LiveEventListener): () => void {
    const subscription: LiveEventListener = (event) => listener(event);
    this.liveListeners.add(subscription);
    return () => this.liveListeners.delete(subscription);
  }

  close(): Promise<void> {
    return (this.closed ??= (async () => {
      clearInterval(this.heartbeat);
      await this.probe?.close();
      await this.listener?.close();
      await this.nats?.close();
      await this.liveChain;
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
      // A replica that died leaves its turns marked; a live one notes them as the start-up
      // sweep does, once a replica could have been seen as gone (one query on a partial index).
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
   * The database stopped or started answering (DatabaseProbe). Back: the connections that
   * wait out a backoff (LISTEN, the outbox publisher) try now, and this replica beats at once
   * and sweeps for crashed turns only HEARTBEATS_TO_DEATH beats later, once every live
   * replica had the time to beat again (all of them looked dead while it was away).
   */
  private availabilityChanged(available: boolean, reason: string): void {
    if (this.closed) return;
    if (available) {
      this.listener?.reconnectNow();
      this.nats?.outboxPublisher?.wake();
      this.beats = 0;
      void this.beat();
    }
    for (const listener of this.availabilityListeners) {
      try {
        listener(available, reason);
      } catch {
        // In-process observers that do not throw.
      }
    }
  }

  private tellLive(event: ConversationEvent): void {
    for (const listener of this.liveListeners) {
      try {
        listener(event);
      } catch {
        // In-process fan-outs that do not throw.
      }
    }
  }

  /**
   * One write: the body, its events and counts flushed in the same transaction, and nothing
   * committed past the caller's deadline (a caller that gave up must not find its change made
   * later); committed events are then handed to the outbox and the in-process watchers.
   */
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

  /**
   * The store's statements on one connection, each a named statement (parsed and planned once
   * per connection). Every parameter is the caller's, but for what the conversation reads
   * ask of this replica (its boot, how long a replica counts as live).
   */
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
   * One transaction on a pooled connection. A connection lost before COMMIT was sent (its
   * backend terminated, the database restarting) took the transaction with it: nothing of it
   * happened, and it runs again from the start on another connection, up to
   * TRANSACTION_ATTEMPTS times, so that one ended session fails no request. A write whose
   * connection is lost while its COMMIT is on the way may or may not have been stored: it is
   * never run again, and the caller is told so. A connection that cannot be had at all (the
   * database is away) fails at once with UNAVAILABLE.
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
    let events: ConversationEvent[] = [];
    if (changes.events.length > 0) {
      const count = changes.events.length;
      const { rows } = await client.query<{ last_id: number }>({ name: 'allocateEventIds', text: SQL.allocateEventIds, values: [count] });
      const first = rows[0]!.last_id - count + 1;
      const column = <K extends keyof PendingEvent>(key: K) => changes.events.map((event) => event[key]);
      await client.query({
        name: 'insertEvents',
        text: SQL.insertEvents,
        values: [
          changes.events.map((_, index) => first + index),
          column('conversation_id'),
          column('kind'),
          column('payload'),
          column('created_at'),
        ],
      });
      const last = changes.events.at(-1)!;
      // With NATS the other replicas hear of it from the stream, which the outbox publisher fills from this table.
      if (!this.options.events)
        await client.query('SELECT pg_notify($1, $2)', [
          STORED_EVENTS_CHANNEL,
          storedEventsPayload(first + count - 1, last.conversation_id),
        ]);
      events = changes.numbered(first);
    }
    const deltas = [...changes.counts].filter(([, delta]) => delta !== 0);
    if (deltas.length > 0) {
      await client.query({
        name: 'changeCounts',
        text: SQL.changeCounts,
        values: [deltas.map(([status]) => status), deltas.map(([, delta]) => delta)],
      });
    }
    const ownerDeltas = [...changes.ownerCounts.values()].filter(({ delta }) => delta !== 0);
    if (ownerDeltas.length > 0) {
      await client.query({
        name: 'changeOwnerCounts',
        text: SQL.changeOwnerCounts,
        values: [ownerDeltas.map((d) => d.owner), ownerDeltas.map((d) => d.status), ownerDeltas.map((d) => d.delta)],
      });
    }
    return events;
  }
}

/**
 * A database error as the gRPC status a caller can act on; the store's own errors pass as
 * they are. Codes: https://www.postgresql.org/docs/15/errcodes-appendix.html
 */
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
