import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  ConversationStatus,
  MessageRole,
  type AdvanceWebhookCursorRequest,
  type AppendMessagesRequest,
  type AuditEntry,
  type ClaimApprovalRequest,
  type ClaimWebhookCursorResponse,
  type Conversation,
  type ConversationEvent,
  type ConversationSummary,
  type CreateApprovalRequest,
  type CreateConversationRequest,
  type FinishApprovalExecutionRequest,
  type GetConversationRequest,
  type ListApprovalsRequest,
  type ListAuditRequest,
  type ListConversationsRequest,
  type ListPendingApprovalsRequest,
  type MarkApprovalInterruptedRequest,
  type Message,
  type NewMessage,
  type PendingApproval,
  type PushConfig,
  type RunLease,
  type StartTurnRequest,
  type TakenOverRun,
  type UpdateRunRequest,
} from '../../../gen/ts/asg/store/v1/store.js';
import { redactSecrets } from '../../common/secrets.js';
import { currentContext } from '../../common/context.js';
import {
  aborted,
  deadlineExceeded,
  failedPrecondition,
  internal,
  invalidArgument,
  notFound,
  ServiceError,
  unavailable,
} from '../../common/grpc/errors.js';
import {
  alsoRejected,
  appendedMessageRow,
  approvalExpiry,
  approvalPage,
  auditPage,
  byConversation,
  claimDecision,
  decisionAuditRow,
  endingOutcome,
  FIRST_APPROVAL,
  insertedApprovalRow,
  lostClaim,
  listedStatuses,
  interruptedApprovalProblem,
  newApprovalRow,
  replacedUuid,
  requireLease,
  summaryOf,
  takePage,
  waitingState,
  type ClaimDecision,
  type ConversationChange,
  type NewApprovalFields,
  type NewAuditRow,
} from '../changes.js';
import { storedId, storedIds } from '../ids.js';
import { decodeApprovalsPageToken, decodeAuditPageToken, decodePageToken, encodePageToken, type PageCursor } from '../page-token.js';
import {
  conversationStatus,
  isoTimestamp,
  timestampAfter,
  type ApprovalStatusName,
  type ConversationStatusName,
  type TurnOutcome,
} from '../records.js';
import {
  approvalFromRow,
  auditEntryFromRow,
  conversationFromRow,
  eventFromRow,
  eventPayload,
  messageFromRow,
  pushConfigOfRow,
  type PushConfigRow,
  type ApprovalRow,
  type AuditRow,
  type ConversationRow,
  type EventChange,
  type EventRow,
  type MessageRow,
} from '../rows.js';
import {
  historyOwnerKey,
  DEFAULT_PAGE_SIZE,
  INTERRUPTED_TURN_NOTE,
  MAX_PAGE_CONTENT_CHARS,
  MAX_PAGE_SIZE,
  MAX_PUSH_CONFIGS,
  type ApprovalClaim,
  type ApprovalPage,
  type AuditPage,
  type CommittedEventsListener,
  type ConversationPage,
  type ConversationStorage,
  type EventRange,
  type InterruptionMark,
  type LiveEventListener,
  type TurnStart,
  type AvailabilityListener,
} from '../storage.js';
import { DEFAULT_STALE_TURN_MS } from '../sqlite/driver.js';
import { DatabaseProbe } from './availability.js';
import { isConnectionError } from './connection-errors.js';
import { EventListener, liveEventPayloads, OrderedEventDelivery, storedEventsPayload } from './event-relay.js';
import { NatsEvents } from './nats-events.js';
import { connectionConfig, createPool, DEFAULT_POOL_LIMITS, redactedDatabaseUrl, type PostgresPoolLimits } from './pool.js';
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

/** A conversation row with whether its running mark belongs to a live replica (statements.ts). */
type PgConversationRow = ConversationRow & { running_turn_boot_live: boolean | null; watched_elsewhere: boolean };

interface PendingEvent {
  conversation_id: string;
  kind: EventRow['kind'];
  payload: string;
  created_at: string;
}

/** One write transaction: its connection, the events and count changes it records until COMMIT. */
interface WriteTx {
  client: pg.PoolClient;
  events: PendingEvent[];
  countDeltas: Map<ConversationStatusName, number>;
  /** The owners' count changes, by ownerCountKey. */
  ownerCountDeltas: Map<string, { owner: string; status: ConversationStatusName; delta: number }>;
}

const ownerCountKey = (owner: string, status: ConversationStatusName): string => JSON.stringify([owner, status]);

interface CountRow {
  status: ConversationStatusName;
  count: number;
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
 * The PostgreSQL driver: the SQLite driver's behaviour (sqlite/driver.ts), for several store
 * replicas sharing one database. How it stays correct under their concurrency:
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
export class PostgresConversationStorage implements ConversationStorage {
  private readonly now: () => number;
  private readonly staleTurnAfterMs: number;
  private readonly heartbeatMs: number;
  private readonly liveForMs: number;
  private readonly committedListeners = new Set<CommittedEventsListener>();
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
    readonly bootId: string,
    private readonly where: string,
    private readonly options: PostgresStorageOptions,
    private readonly listenConnection: pg.ClientConfig,
    private readonly probeConnection: pg.ClientConfig,
  ) {
    this.now = options.now ?? Date.now;
    this.staleTurnAfterMs = options.staleTurnAfterMs ?? DEFAULT_STALE_TURN_MS;
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
      (events) => {
        // The change is committed whatever a listener does: one that throws is its own problem, never the writer's or the other listeners'.
        for (const listener of this.committedListeners) {
          try {
            listener(events);
          } catch {
            // In-process fan-outs that do not throw.
          }
        }
      },
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

  async createConversation(request: CreateConversationRequest): Promise<Conversation> {
    return this.write(async (tx) => {
      const newest = await this.query<{ created_at: string }>(tx.client, 'newestCreatedAt', []);
      const createdAt = timestampAfter(newest[0]?.created_at, this.now());
      const id = randomUUID();
      const owner = request.owner ?? null;
      await this.query(tx.client, 'insertConversation', [
        id,
        request.sessionId,
        createdAt,
        request.a2aOrigin?.dialect ?? null,
        request.a2aOrigin?.contextId ?? null,
        owner,
      ]);
      this.countChange(tx, owner, 'active', 1);
      const messages = request.systemPrompt === '' ? [] : [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: request.systemPrompt }];
      this.recordEvent(tx, id, createdAt, { kind: 'status_changed', status: 'active' });
      await this.applyChange(tx, await this.requireConversation(tx.client, id), { messages }, createdAt);
      return this.readConversation(tx.client, await this.requireConversation(tx.client, id), true);
    });
  }

  async getConversation(request: GetConversationRequest): Promise<Conversation> {
    return this.read(async (client) => {
      const row = await this.requireConversation(client, request.id);
      if (!request.includeMessages || !request.messageLimit) return this.readConversation(client, row, request.includeMessages);
      return this.readConversationPage(client, row, request);
    });
  }

  async listConversations(request: ListConversationsRequest): Promise<ConversationPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken);
    return this.read(async (client) => {
      const rows = await this.pageRows(client, request.owner, cursor, limit + 1);
      const page = rows.slice(0, limit);
      const pending = await this.pendingApprovalsOf(client, page);
      const last = page.at(-1);
      return {
        conversations: page.map((row) => this.conversationOf(row, [], pending.get(row.id) ?? [])),
        nextPageToken: rows.length > limit && last ? encodePageToken({ createdAt: last.created_at, id: last.id }) : '',
        summary: await this.summary(client, request.owner),
      };
    });
  }

  /** Newest first from the cursor: every conversation, or one owner's (through its index). */
  private async pageRows(
    client: pg.PoolClient,
    owner: string | undefined,
    cursor: PageCursor | undefined,
    limit: number,
  ): Promise<PgConversationRow[]> {
    const live = [this.bootId, this.liveForMs];
    // A cursor's id came back from the caller: one that is not a UUID starts before every row.
    const after = cursor && [cursor.createdAt, storedId(cursor.id) ?? '00000000-0000-0000-0000-000000000000'];
    if (owner === undefined) {
      return after
        ? this.query<PgConversationRow>(client, 'pageAfter', [...live, ...after, limit])
        : this.query<PgConversationRow>(client, 'firstPage', [...live, limit]);
    }
    return after
      ? this.query<PgConversationRow>(client, 'ownerPageAfter', [...live, owner, ...after, limit])
      : this.query<PgConversationRow>(client, 'ownerFirstPage', [...live, owner, limit]);
  }

  async startTurn(request: StartTurnRequest): Promise<TurnStart> {
    return this.write(async (tx) => {
      let conversation = await this.lockConversation(tx.client, request.conversationId);
      const unfinishedApprovals = (await this.query<ApprovalRow>(tx.client, 'selectUnfinishedApprovals', [conversation.id])).map(
        approvalFromRow,
      );
      const waiting = conversation.status === 'waiting_approval';
      // One active run per conversation: checked and marked under the conversation's row lock,
      // so of concurrent StartTurns on any replicas exactly one starts.
      const busy = !waiting && this.turnRunning(conversation);
      const started = !waiting && !busy && unfinishedApprovals.length === 0;
      if (started) {
        const messages = [...this.interruptedTurnNote(conversation), request.message!];
        await this.applyChange(tx, conversation, { messages, run: conversation.run_state === null ? undefined : null });
        await this.markTurnRunning(tx, conversation.id, request.lease);
        conversation = await this.requireConversation(tx.client, conversation.id);
      }
      return { started, busy, conversation: await this.readConversation(tx.client, conversation, true), unfinishedApprovals };
    });
  }

  async appendMessages(request: AppendMessagesRequest): Promise<Message[]> {
    return this.write(async (tx) => {
      const conversation = await this.lockConversation(tx.client, request.conversationId);
      requireLease(conversation, request.leaseOwner);
      const status =
        request.status === ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED
          ? conversation.status
          : conversationStatus.name(request.status);
      if (status !== conversation.status) {
        if (conversation.status === 'waiting_approval') {
          throw failedPrecondition(
            `conversation ${conversation.id} waits for approval ${conversation.pending_approval_uuid}; resolve it with ClaimApproval before changing the status`,
          );
        }
        if (status === 'waiting_approval') throw invalidArgument('status waiting_approval is set by CreateApproval, not AppendMessages');
      }
      const appended = await this.applyChange(tx, conversation, { messages: request.messages, status });
      if (request.endsTurn) await this.endTurn(tx, conversation.id, endingOutcome(false, request.messages));
      return appended;
    });
  }

  async createApproval(request: CreateApprovalRequest): Promise<PendingApproval> {
    return this.write(async (tx) => {
      const conversation = await this.lockConversation(tx.client, request.conversationId);
      if (conversation.status === 'waiting_approval') {
        throw failedPrecondition(`conversation ${conversation.id} already waits for approval ${conversation.pending_approval_uuid}`);
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      const uuid = randomUUID();
      const requested = await this.insertApproval(tx.client, conversation.id, { ...request, uuid }, at);
      await this.applyChange(
        tx,
        conversation,
        { messages: request.messages, status: 'waiting_approval', pendingApprovalUuid: uuid, requested: [requested] },
        at,
      );
      await this.endTurn(tx, conversation.id, 'paused');
      return approvalFromRow(await this.requireApproval(tx.client, uuid));
    });
  }

  async getApproval(uuid: string): Promise<PendingApproval> {
    return this.read(async (client) => approvalFromRow(await this.requireApproval(client, uuid)));
  }

  async claimApproval(request: ClaimApprovalRequest): Promise<ApprovalClaim> {
    const decision = claimDecision(request);
    return this.write(async (tx) => {
      const uuid = storedId(request.uuid);
      const found = uuid === undefined ? undefined : (await this.query<ApprovalRow>(tx.client, 'selectApproval', [uuid]))[0];
      if (!found) throw notFound(`approval ${request.uuid} not found`);
      // The conversation first (the lock order of every write), then the conditional claim.
      let conversation = await this.lockConversation(tx.client, found.conversation_id);
      const claimed = await this.decide(tx.client, found.uuid, decision);
      if (!claimed) return lostClaim(approvalFromRow(await this.requireApproval(tx.client, found.uuid)));
      const messages = [...request.messages];
      const resolved = [claimed];
      for (const other of request.approved ? [] : request.alsoReject) {
        const row = await this.requireApproval(tx.client, other.uuid);
        if (row.conversation_id !== claimed.conversation_id) {
          throw invalidArgument(`also_reject: approval ${row.uuid} belongs to another conversation than approval ${claimed.uuid}`);
        }
        const rejected = await this.decide(tx.client, row.uuid, alsoRejected(decision));
        if (rejected) {
          resolved.push(rejected);
          messages.push(...other.messages);
        }
      }
      conversation = await this.requireConversation(tx.client, conversation.id);
      if (request.expectedRunRevision !== undefined && conversation.run_revision !== request.expectedRunRevision) {
        // Thrown inside the transaction: the claim above is rolled back with it.
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRunRevision}: another request changed it; read it again and decide again`,
        );
      }
      const pending = await this.query<ApprovalRow>(tx.client, 'selectPendingApprovals', [conversation.id]);
      await this.applyChange(tx, conversation, {
        messages,
        ...waitingState(conversation.status, pending),
        run: request.clearRun ? null : undefined,
        resolved,
      });
      // Every decision it made is audited in its transaction: a lost claim decided nothing.
      for (const decided of resolved) await this.insertAudit(tx.client, decisionAuditRow(decided, decided.decided_at!));
      // Its lease, when the caller brings one, is the continued turn's (store.proto, ClaimApprovalRequest.lease).
      if (request.approved || request.continuesTurn) await this.markTurnRunning(tx, conversation.id, request.lease);
      return { claimed: true, approval: approvalFromRow(claimed) };
    });
  }

  async startApprovalExecution(uuid: string): Promise<PendingApproval> {
    return this.write(async (tx) =>
      approvalFromRow(await this.moveApproval(tx.client, uuid, 'approved', 'executing', 'only an approved call can start executing')),
    );
  }

  async finishApprovalExecution(request: FinishApprovalExecutionRequest): Promise<PendingApproval> {
    return this.write(async (tx) => {
      const finished = await this.moveApproval(
        tx.client,
        request.uuid,
        'executing',
        request.success ? 'done' : 'failed',
        'only an executing call can finish',
      );
      await this.applyChange(tx, await this.requireConversation(tx.client, finished.conversation_id), { messages: request.messages });
      return approvalFromRow(finished);
    });
  }

  async listPendingApprovals(request: ListPendingApprovalsRequest): Promise<{ approvals: PendingApproval[]; nextPageToken: string }> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken, 'ListPendingApprovals');
    return this.read(async (client) => {
      const rows = cursor
        ? await this.query<ApprovalRow>(client, 'pendingApprovalsPageAfter', [
            cursor.createdAt,
            storedId(cursor.id) ?? '00000000-0000-0000-0000-000000000000',
            limit + 1,
          ])
        : await this.query<ApprovalRow>(client, 'pendingApprovalsFirstPage', [limit + 1]);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        approvals: page.map(approvalFromRow),
        nextPageToken: rows.length > limit && last ? encodePageToken({ createdAt: last.created_at, id: last.uuid }) : '',
      };
    });
  }

  async listApprovals(request: ListApprovalsRequest): Promise<ApprovalPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? FIRST_APPROVAL : decodeApprovalsPageToken(request.pageToken);
    const statuses = listedStatuses(request.statuses);
    return this.read(async (client) => {
      if (request.conversationId === '') {
        return approvalPage(
          await this.query<ApprovalRow>(client, 'approvalsOfStatusesAfter', [statuses, cursor.createdAt, cursor.id, limit + 1]),
          limit,
        );
      }
      const conversationId = storedId(request.conversationId);
      if (conversationId === undefined) return approvalPage([], limit);
      return approvalPage(
        await this.query<ApprovalRow>(client, 'approvalsOfConversationAfter', [
          conversationId,
          statuses,
          cursor.createdAt,
          cursor.id,
          limit + 1,
        ]),
        limit,
      );
    });
  }

  async listDueApprovals(limit: number): Promise<PendingApproval[]> {
    const { rows } = await this.pool.query<ApprovalRow>({ name: 'dueApprovals', text: SQL.dueApprovals, values: [limit] }).catch(rethrow);
    return rows.map(approvalFromRow);
  }

  async appendAudit(entry: AuditEntry): Promise<AuditEntry> {
    const row: NewAuditRow = {
      at: isoTimestamp(this.now()),
      kind: entry.kind,
      actor: entry.actor,
      via: entry.via,
      subject: entry.subject,
      detail_json: entry.detailJson,
    };
    return this.write(async (tx) => auditEntryFromRow(await this.insertAudit(tx.client, row)));
  }

  async listAudit(request: ListAuditRequest): Promise<AuditPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const before = request.pageToken === '' ? Number.MAX_SAFE_INTEGER : decodeAuditPageToken(request.pageToken);
    return this.read(async (client) => {
      const rows =
        request.kinds.length === 0
          ? await this.query<AuditRow>(client, 'auditBefore', [before, limit + 1])
          : await this.query<AuditRow>(client, 'auditOfKindsBefore', [[...new Set(request.kinds)], before, limit + 1]);
      return auditPage(rows, limit);
    });
  }

  /** One statement (statements.ts, claimWebhookCursor): of replicas claiming at once, one holds the cursor. */
  async claimWebhookCursor(endpoint: string, lease: RunLease): Promise<ClaimWebhookCursorResponse> {
    const claimed = await this.pool
      .query<{ last_event_id: number }>({
        name: 'claimWebhookCursor',
        text: SQL.claimWebhookCursor,
        values: [endpoint, lease.owner, lease.node, lease.ttlMs],
      })
      .catch(rethrow);
    if (claimed.rows[0]) return { held: true, lastEventId: claimed.rows[0].last_event_id };
    const held = await this.pool
      .query<{ last_event_id: number }>({ name: 'selectWebhookCursor', text: SQL.selectWebhookCursor, values: [endpoint] })
      .catch(rethrow);
    return { held: false, lastEventId: held.rows[0]?.last_event_id ?? 0 };
  }

  async setPushConfig(config: PushConfig): Promise<PushConfig> {
    return this.write(async (tx) => {
      const conversation = await this.requireConversation(tx.client, config.conversationId);
      const [existing] = await this.query<PushConfigRow>(tx.client, 'selectPushConfig', [conversation.id, config.id]);
      if (!existing) {
        const [count] = await this.query<{ n: number }>(tx.client, 'countPushConfigs', [conversation.id]);
        if ((count?.n ?? 0) >= MAX_PUSH_CONFIGS)
          throw failedPrecondition(`task ${conversation.id} has ${MAX_PUSH_CONFIGS} push-notification configs already; delete one first`);
      }
      const createdAt = existing?.created_at ?? new Date().toISOString();
      const [row] = await this.query<PushConfigRow>(tx.client, 'upsertPushConfig', [
        conversation.id,
        config.id,
        config.url,
        config.token,
        config.dialect,
        createdAt,
      ]);
      return pushConfigOfRow(row!);
    });
  }

  async getPushConfig(conversationId: string, id: string): Promise<PushConfig | undefined> {
    const stored = storedId(conversationId);
    if (stored === undefined) return undefined;
    return this.read(async (client) => {
      const [row] = await this.query<PushConfigRow>(client, 'selectPushConfig', [stored, id]);
      return row && pushConfigOfRow(row);
    });
  }

  async listPushConfigs(conversationId: string): Promise<PushConfig[]> {
    const stored = storedId(conversationId);
    if (stored === undefined) return [];
    return this.read(async (client) => (await this.query<PushConfigRow>(client, 'selectPushConfigs', [stored])).map(pushConfigOfRow));
  }

  async deletePushConfig(conversationId: string, id: string): Promise<boolean> {
    const stored = storedId(conversationId);
    if (stored === undefined) return false;
    const { rowCount } = await this.pool
      .query({ name: 'deletePushConfig', text: SQL.deletePushConfig, values: [stored, id] })
      .catch(rethrow);
    return (rowCount ?? 0) > 0;
  }

  async recordHistoryDigest(conversationId: string, digest: string): Promise<void> {
    await this.write(async (tx) => {
      const conversation = await this.requireConversation(tx.client, conversationId);
      await this.query(tx.client, 'upsertHistoryDigest', [conversation.id, historyOwnerKey(conversation.owner ?? undefined), digest]);
    });
  }

  async findConversationByHistory(digest: string, owner: string | undefined): Promise<string | undefined> {
    return this.read(
      async (client) => (await this.query<{ id: string }>(client, 'selectConversationByHistory', [digest, historyOwnerKey(owner)]))[0]?.id,
    );
  }

  async advanceWebhookCursor(request: AdvanceWebhookCursorRequest): Promise<boolean> {
    const { rowCount } = await this.pool
      .query({
        name: 'advanceWebhookCursor',
        text: SQL.advanceWebhookCursor,
        values: [request.endpoint, request.owner, request.lastEventId, request.ttlMs],
      })
      .catch(rethrow);
    return (rowCount ?? 0) > 0;
  }

  async listUnfinishedApprovals(conversationId: string): Promise<PendingApproval[]> {
    return this.read(async (client) => {
      const conversation = await this.requireConversation(client, conversationId);
      return (await this.query<ApprovalRow>(client, 'selectUnfinishedApprovals', [conversation.id])).map(approvalFromRow);
    });
  }

  async markApprovalInterrupted(request: MarkApprovalInterruptedRequest): Promise<InterruptionMark> {
    return this.write(async (tx) => {
      const approval = await this.requireApproval(tx.client, request.uuid);
      await this.lockConversation(tx.client, approval.conversation_id);
      const now = this.now();
      const interrupted = (
        await this.query<ApprovalRow>(tx.client, 'interruptApproval', [
          approval.uuid,
          isoTimestamp(now),
          isoTimestamp(now - request.minAgeMs),
        ])
      )[0];
      if (!interrupted) return { marked: false, approval: approvalFromRow(await this.requireApproval(tx.client, approval.uuid)) };
      await this.applyChange(tx, await this.requireConversation(tx.client, interrupted.conversation_id), { messages: request.messages });
      return { marked: true, approval: approvalFromRow(interrupted) };
    });
  }

  async updateRun(request: UpdateRunRequest): Promise<number> {
    return this.write(async (tx) => {
      // Compare-and-set: the row lock makes the revision read here the latest one, and keeps it until COMMIT.
      const conversation = await this.lockConversation(tx.client, request.conversationId);
      requireLease(conversation, request.leaseOwner);
      if (conversation.run_revision !== request.expectedRevision) {
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRevision}: another request changed it; read it again and redo the change`,
        );
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      if (request.interruptedApproval !== undefined)
        await this.interruptExecuting(tx.client, conversation.id, request.interruptedApproval, at);
      const requested: ApprovalRow[] = [];
      for (const approval of request.approvals) {
        const uuid = storedId(approval.uuid);
        if (uuid === undefined) throw invalidArgument(`approvals: ${JSON.stringify(approval.uuid)} is not a UUID`);
        if ((await this.query(tx.client, 'selectApproval', [uuid])).length > 0)
          throw invalidArgument(`approvals: approval ${uuid} already exists`);
        requested.push(
          await this.insertApproval(
            tx.client,
            conversation.id,
            { ...approval, uuid, replacesUuid: replacedUuid(approval.replacesUuid) },
            at,
          ),
        );
      }
      const waiting = waitingState(
        conversation.status,
        await this.query<ApprovalRow>(tx.client, 'selectPendingApprovals', [conversation.id]),
      );
      await this.applyChange(
        tx,
        conversation,
        {
          messages: request.messages,
          ...waiting,
          run: request.run === undefined ? null : { state: request.run.state, schemaVersion: request.run.schemaVersion },
          requested,
        },
        at,
      );
      const paused = waiting.status === 'waiting_approval';
      if (request.run === undefined || paused) await this.endTurn(tx, conversation.id, endingOutcome(paused, request.messages));
      return conversation.run_revision + 1;
    });
  }

  async renewRunLease(conversationId: string, lease: RunLease): Promise<boolean> {
    return this.changeLease(conversationId, 'renewRunLease', [lease.owner, lease.ttlMs]);
  }

  async releaseRunLease(conversationId: string, owner: string): Promise<boolean> {
    return this.changeLease(conversationId, 'releaseRunLease', [owner]);
  }

  /**
   * One statement (statements.ts, takeOverRuns): of takers on several replicas at once, each
   * run goes to exactly one. The taken marks become live marks of this replica, so that no
   * sweep takes them for a crash's. No event: the turn goes on, only its owner changed.
   */
  async takeOverRuns(lease: RunLease, limit: number, givenUp: readonly string[] = []): Promise<TakenOverRun[]> {
    return this.write(async (tx) => {
      const rows = await this.query<{ id: string; previous_owner: string; previous_expiry: Date; takeovers: number }>(
        tx.client,
        'takeOverRuns',
        [lease.owner, lease.node, lease.ttlMs, limit, this.bootId, isoTimestamp(this.now()), storedIds(givenUp)],
      );
      // RETURNING keeps no order: the answer lists them oldest expiry first, as they were chosen.
      rows.sort((a, b) => a.previous_expiry.getTime() - b.previous_expiry.getTime() || a.id.localeCompare(b.id));
      return rows.map((row) => ({ conversationId: row.id, previousOwner: row.previous_owner, takeovers: row.takeovers }));
    });
  }

  /**
   * A renewal or release: one conditional UPDATE, which waits for a writer of the conversation
   * (a takeover, a turn's end) and then sees whether the caller still holds the lease. An
   * unknown conversation is looked up only when nothing changed.
   */
  private async changeLease(conversationId: string, statement: 'renewRunLease' | 'releaseRunLease', values: unknown[]): Promise<boolean> {
    const id = storedId(conversationId);
    if (id === undefined) throw notFound(`conversation ${conversationId} not found`);
    return this.write(async (tx) => {
      const { rowCount } = await tx.client.query({ name: statement, text: SQL[statement], values: [id, ...values] });
      if ((rowCount ?? 0) > 0) return true;
      if ((await this.query(tx.client, 'conversationExists', [id])).length === 0)
        throw notFound(`conversation ${conversationId} not found`);
      return false;
    });
  }

  async readEvents(range: EventRange): Promise<ConversationEvent[]> {
    if (range.conversationId === undefined) {
      return (
        await this.pool
          .query<EventRow>({ name: 'selectEventsAfter', text: SQL.selectEventsAfter, values: [range.afterId, range.limit] })
          .catch(rethrow)
      ).rows.map(eventFromRow);
    }
    const conversationId = storedId(range.conversationId);
    if (conversationId === undefined) return [];
    const { rows } = await this.pool
      .query<EventRow>({
        name: 'selectConversationEventsAfter',
        text: SQL.selectConversationEventsAfter,
        values: [conversationId, range.afterId, range.limit],
      })
      .catch(rethrow);
    return rows.map(eventFromRow);
  }

  async latestEventId(): Promise<number> {
    const { rows } = await this.pool.query<{ id: number }>(SQL.latestEventId).catch(rethrow);
    return rows[0]?.id ?? 0;
  }

  onEventsCommitted(listener: CommittedEventsListener): () => void {
    const subscription: CommittedEventsListener = (events) => listener(events);
    this.committedListeners.add(subscription);
    return () => this.committedListeners.delete(subscription);
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

  async noteInterruptedTurns(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string }>(SQL.selectTurnsOfDeadBoots, [this.bootId, this.liveForMs]).catch(rethrow);
    let noted = 0;
    // One transaction per conversation: replicas starting at once sweep the same marks, and the
    // row lock with a fresh read lets exactly one of them note each.
    for (const { id } of rows) {
      const wasNoted = await this.write(async (tx) => {
        const conversation = await this.lockConversation(tx.client, id);
        if (!conversation.running_turn_boot || conversation.running_turn_boot_live || conversation.lease_owner) return false;
        if (conversation.status === 'waiting_approval') return false;
        if ((await this.query(tx.client, 'selectUnfinishedApprovals', [id])).length > 0) return false;
        await this.applyChange(tx, conversation, { messages: this.interruptedTurnNote(conversation) });
        await this.endTurn(tx, id, 'interrupted');
        return true;
      });
      if (wasNoted) noted += 1;
    }
    return noted;
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
   * Whether the conversation has a turn running now: marked by a live replica, or with a lease
   * (an orchestrator owns it, whichever store replica marked it), and not stale.
   */
  private turnRunning(row: PgConversationRow): boolean {
    if (!row.running_turn_boot || !row.running_turn_since) return false;
    if (!row.running_turn_boot_live && !row.lease_owner) return false;
    return Date.parse(row.running_turn_since) > this.now() - this.staleTurnAfterMs;
  }

  private async markTurnRunning(tx: WriteTx, id: string, lease: RunLease | undefined): Promise<void> {
    const row = await this.requireConversation(tx.client, id);
    const running = this.turnRunning(row);
    // A mark replaced without its turn's last write: a turn a crash (or a stale orchestrator) cut off.
    if (row.running_turn_boot && !running) this.recordEvent(tx, id, row.updated_at, { kind: 'turn_ended', outcome: 'interrupted' });
    // The lease is the new turn's: a new owner, no takeovers yet; none clears an earlier one.
    await this.query(tx.client, 'markTurnRunning', [
      id,
      this.bootId,
      isoTimestamp(this.now()),
      lease?.owner ?? null,
      lease?.node ?? null,
      lease?.ttlMs ?? null,
    ]);
    if (!running) this.recordEvent(tx, id, row.updated_at, { kind: 'turn_started' });
  }

  private async endTurn(tx: WriteTx, id: string, outcome: TurnOutcome): Promise<void> {
    const { rowCount } = await tx.client.query({ name: 'clearTurnRunning', text: SQL.clearTurnRunning, values: [id] });
    if (rowCount === 0) return;
    this.recordEvent(tx, id, (await this.requireConversation(tx.client, id)).updated_at, { kind: 'turn_ended', outcome });
  }

  /** The conditional claim of one pending approval with a decision, under its conversation's lock; undefined when it is no longer pending. */
  private async decide(client: pg.PoolClient, uuid: string, decision: ClaimDecision): Promise<ApprovalRow | undefined> {
    const values = [
      uuid,
      decision.status,
      isoTimestamp(this.now()),
      decision.reason,
      decision.decided_by,
      decision.via,
      decision.edited_args,
      decision.on_time === 1,
    ];
    return (await this.query<ApprovalRow>(client, 'claimApproval', values))[0];
  }

  private async insertAudit(client: pg.PoolClient, row: NewAuditRow): Promise<AuditRow> {
    return (await this.query<AuditRow>(client, 'insertAudit', [row.at, row.kind, row.actor, row.via, row.subject, row.detail_json]))[0]!;
  }

  private conversationOf(row: PgConversationRow, messages: Message[], pending: readonly ApprovalRow[]): Conversation {
    return { ...conversationFromRow(row, messages, pending), turnRunning: this.turnRunning(row), watched: row.watched_elsewhere };
  }

  /** The note for a turn a dead boot left running (read from the locked row), or none; none for a mark with a lease (taken over instead). */
  private interruptedTurnNote(row: PgConversationRow): NewMessage[] {
    const dead = row.running_turn_boot && row.running_turn_boot !== this.bootId && !row.running_turn_boot_live && !row.lease_owner;
    return dead ? [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: INTERRUPTED_TURN_NOTE }] : [];
  }

  /**
   * One write transaction (READ COMMITTED; the locks above make it correct). Its events get
   * their ids, the counts their changes and the other replicas their NOTIFY as its last
   * statements, under the event_ids lock; once COMMIT succeeded the events go to the
   * listeners of this replica, in id order (OrderedEventDelivery), before the method returns.
   *
   * A transaction is committed only while its caller still waits: past the caller's deadline
   * (the database was slow, or away and back) it is rolled back, so that a caller told its
   * call did not finish in time does not find it done later (a claim that nobody carries out,
   * a turn started for a request that answered).
   */
  private async write<R>(body: (tx: WriteTx) => Promise<R>): Promise<R> {
    const deadline = currentContext()?.deadline;
    let events: ConversationEvent[] = [];
    const result = await this.transaction('BEGIN', 'write', async (client) => {
      const tx: WriteTx = { client, events: [], countDeltas: new Map(), ownerCountDeltas: new Map() };
      const written = await body(tx);
      events = await this.flush(tx);
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
  private read<R>(body: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    return this.transaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', 'read', body);
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
  private async flush(tx: WriteTx): Promise<ConversationEvent[]> {
    if (tx.events.length === 0 && tx.countDeltas.size === 0 && tx.ownerCountDeltas.size === 0) return [];
    let events: ConversationEvent[] = [];
    if (tx.events.length > 0) {
      const { rows } = await tx.client.query<{ last_id: number }>({
        name: 'allocateEventIds',
        text: SQL.allocateEventIds,
        values: [tx.events.length],
      });
      const first = rows[0]!.last_id - tx.events.length + 1;
      const stored: EventRow[] = tx.events.map((event, index) => ({ ...event, id: first + index }));
      await tx.client.query({
        name: 'insertEvents',
        text: SQL.insertEvents,
        values: [
          stored.map((e) => e.id),
          stored.map((e) => e.conversation_id),
          stored.map((e) => e.kind),
          stored.map((e) => e.payload),
          stored.map((e) => e.created_at),
        ],
      });
      const last = stored.at(-1)!;
      // With NATS the other replicas hear of it from the stream, which the outbox publisher fills from this table.
      if (!this.options.events)
        await tx.client.query('SELECT pg_notify($1, $2)', [STORED_EVENTS_CHANNEL, storedEventsPayload(last.id, last.conversation_id)]);
      events = stored.map(eventFromRow);
    }
    const deltas = [...tx.countDeltas].filter(([, delta]) => delta !== 0);
    if (deltas.length > 0) {
      await tx.client.query({
        name: 'changeCounts',
        text: SQL.changeCounts,
        values: [deltas.map(([status]) => status), deltas.map(([, delta]) => delta)],
      });
    }
    const ownerDeltas = [...tx.ownerCountDeltas.values()].filter(({ delta }) => delta !== 0);
    if (ownerDeltas.length > 0) {
      await tx.client.query({
        name: 'changeOwnerCounts',
        text: SQL.changeOwnerCounts,
        values: [ownerDeltas.map((d) => d.owner), ownerDeltas.map((d) => d.status), ownerDeltas.map((d) => d.delta)],
      });
    }
    return events;
  }

  private recordEvent(tx: WriteTx, conversationId: string, at: string, change: EventChange): void {
    tx.events.push({ conversation_id: conversationId, kind: change.kind, payload: eventPayload(change), created_at: at });
  }

  /** A change of the counts of every conversation, and of its owner's when it has one. */
  private countChange(tx: WriteTx, owner: string | null, status: ConversationStatusName, delta: number): void {
    tx.countDeltas.set(status, (tx.countDeltas.get(status) ?? 0) + delta);
    if (owner === null) return;
    const key = ownerCountKey(owner, status);
    const earlier = tx.ownerCountDeltas.get(key);
    tx.ownerCountDeltas.set(key, { owner, status, delta: (earlier?.delta ?? 0) + delta });
  }

  private async query<Row extends object = Record<string, unknown>>(
    client: pg.PoolClient,
    name: keyof typeof SQL,
    values: unknown[],
  ): Promise<Row[]> {
    return (await client.query<Row>({ name, text: SQL[name], values })).rows;
  }

  /** The conversation row, locked for this transaction, read after the lock (the latest version). */
  private async lockConversation(client: pg.PoolClient, id: string): Promise<PgConversationRow> {
    const stored = storedId(id);
    const locked = stored === undefined ? [] : await this.query(client, 'lockConversation', [stored]);
    if (locked.length === 0) throw notFound(`conversation ${id} not found`);
    return this.requireConversation(client, stored!);
  }

  private async requireConversation(client: pg.PoolClient, id: string): Promise<PgConversationRow> {
    const stored = storedId(id);
    const row =
      stored === undefined
        ? undefined
        : (await this.query<PgConversationRow>(client, 'selectConversation', [this.bootId, this.liveForMs, stored]))[0];
    if (!row) throw notFound(`conversation ${id} not found`);
    return row;
  }

  private async requireApproval(client: pg.PoolClient, uuid: string): Promise<ApprovalRow> {
    const stored = storedId(uuid);
    const row = stored === undefined ? undefined : (await this.query<ApprovalRow>(client, 'selectApproval', [stored]))[0];
    if (!row) throw notFound(`approval ${uuid} not found`);
    return row;
  }

  private async insertApproval(
    client: pg.PoolClient,
    conversationId: string,
    approval: NewApprovalFields,
    at: string,
  ): Promise<ApprovalRow> {
    const row = newApprovalRow(conversationId, approval, at);
    // The expiry is the database's now() plus the approval's time: one clock for every replica.
    const [inserted] = await this.query<{ expires_at: string | null }>(client, 'insertApproval', [
      row.uuid,
      row.conversation_id,
      row.tool_call_id,
      row.tool_name,
      row.tool_args,
      row.args_hash,
      row.description,
      row.remote_task_id,
      row.remote_agent_name,
      row.created_at,
      row.agent_chain,
      row.outcome_unknown,
      row.replaces_uuid,
      approvalExpiry(approval).inMs,
      row.on_timeout,
    ]);
    return insertedApprovalRow({ ...row, expires_at: inserted!.expires_at });
  }

  /** UpdateRun's interrupted_approval, as in the SQLite driver (interruptExecuting there), under the conversation's lock. */
  private async interruptExecuting(client: pg.PoolClient, conversationId: string, uuid: string, at: string): Promise<void> {
    const stored = storedId(uuid);
    if (stored !== undefined && (await this.query(client, 'interruptExecutingApproval', [stored, conversationId, at])).length > 0) return;
    const found = stored === undefined ? undefined : (await this.query<ApprovalRow>(client, 'selectApproval', [stored]))[0];
    throw failedPrecondition(interruptedApprovalProblem(conversationId, uuid, found));
  }

  /** A conditional status move under the conversation's lock; FAILED_PRECONDITION naming the status found otherwise. */
  private async moveApproval(
    client: pg.PoolClient,
    uuid: string,
    from: ApprovalStatusName,
    to: ApprovalStatusName,
    rule: string,
  ): Promise<ApprovalRow> {
    const approval = await this.requireApproval(client, uuid);
    await this.lockConversation(client, approval.conversation_id);
    const moved = (await this.query<ApprovalRow>(client, 'moveApproval', [approval.uuid, from, to, isoTimestamp(this.now())]))[0];
    if (moved) return moved;
    const current = await this.requireApproval(client, uuid);
    throw failedPrecondition(`approval ${current.uuid} is ${current.status}: ${rule}`);
  }

  /** As in the SQLite driver (applyChange there): messages at seq = message_count + 1…, the change's events in reading order. */
  private async applyChange(
    tx: WriteTx,
    conversation: PgConversationRow,
    change: ConversationChange,
    at = timestampAfter(conversation.updated_at, this.now()),
  ): Promise<Message[]> {
    const next = {
      status: change.status ?? conversation.status,
      pending_approval_uuid: change.pendingApprovalUuid !== undefined ? change.pendingApprovalUuid : conversation.pending_approval_uuid,
      message_count: conversation.message_count,
      input_tokens: conversation.input_tokens,
      output_tokens: conversation.output_tokens,
    };
    for (const approval of change.resolved ?? []) this.recordEvent(tx, conversation.id, at, { kind: 'approval_resolved', approval });
    const appended: MessageRow[] = [];
    for (const message of change.messages ?? []) {
      const row = appendedMessageRow(conversation.id, message, next, at);
      await this.query(tx.client, 'insertMessage', [
        row.conversation_id,
        row.seq,
        row.id,
        row.role,
        row.content,
        row.tool_call,
        row.created_at,
        row.input_tokens,
        row.output_tokens,
        row.compaction,
        row.node,
      ]);
      this.recordEvent(tx, conversation.id, at, { kind: 'message_added', message: row });
      appended.push(row);
    }
    for (const approval of change.requested ?? []) this.recordEvent(tx, conversation.id, at, { kind: 'approval_requested', approval });
    if (next.status !== conversation.status) {
      this.recordEvent(tx, conversation.id, at, { kind: 'status_changed', status: next.status });
      this.countChange(tx, conversation.owner, conversation.status, -1);
      this.countChange(tx, conversation.owner, next.status, 1);
    }
    if (change.run !== undefined) {
      await this.query(tx.client, 'writeRun', [
        conversation.id,
        change.run?.state ? Buffer.from(change.run.state) : null,
        change.run?.schemaVersion ?? null,
        conversation.run_revision + 1,
        at,
      ]);
    }
    const unchanged =
      appended.length === 0 &&
      next.status === conversation.status &&
      next.pending_approval_uuid === conversation.pending_approval_uuid &&
      change.run === undefined;
    if (!unchanged) {
      await this.query(tx.client, 'updateConversation', [
        conversation.id,
        next.status,
        next.pending_approval_uuid,
        next.message_count,
        at,
        next.input_tokens,
        next.output_tokens,
      ]);
    }
    return appended.map(messageFromRow);
  }

  private async readConversation(client: pg.PoolClient, row: PgConversationRow, includeMessages: boolean): Promise<Conversation> {
    const messages = includeMessages ? (await this.query<MessageRow>(client, 'selectMessages', [row.id])).map(messageFromRow) : [];
    const pending = row.status === 'waiting_approval' ? await this.query<ApprovalRow>(client, 'selectPendingApprovals', [row.id]) : [];
    return this.conversationOf(row, messages, pending);
  }

  /** As in the SQLite driver (readConversationPage there). */
  private async readConversationPage(
    client: pg.PoolClient,
    row: PgConversationRow,
    request: GetConversationRequest,
  ): Promise<Conversation> {
    const limit = request.messageLimit ?? 0;
    const after = request.afterMessageId ? await this.messageSeq(client, row, request.afterMessageId, 'after_message_id') : undefined;
    const before = request.beforeMessageId
      ? await this.messageSeq(client, row, request.beforeMessageId, 'before_message_id')
      : row.message_count + 1;
    const walk =
      after === undefined
        ? await this.query<MessageRow>(client, 'selectMessagesBefore', [row.id, before, limit + 1])
        : await this.query<MessageRow>(client, 'selectMessagesAfter', [row.id, after, limit + 1]);
    const { taken, moreOnWalk } = takePage(walk, limit, MAX_PAGE_CONTENT_CHARS);
    const messages = (after === undefined ? taken.reverse() : taken).map(messageFromRow);
    const pending = row.status === 'waiting_approval' ? await this.query<ApprovalRow>(client, 'selectPendingApprovals', [row.id]) : [];
    return {
      ...this.conversationOf(row, messages, pending),
      hasMoreBefore: after === undefined ? moreOnWalk : true,
      hasMoreAfter: after === undefined ? Boolean(request.beforeMessageId) : moreOnWalk,
    };
  }

  private async messageSeq(client: pg.PoolClient, row: PgConversationRow, messageId: string, field: string): Promise<number> {
    const stored = storedId(messageId);
    if (stored === undefined) throw invalidArgument(`${field}: not a message id; expected the id of a message of conversation ${row.id}`);
    const position = (await this.query<{ conversation_id: string; seq: number }>(client, 'selectMessagePosition', [stored]))[0];
    if (!position || position.conversation_id !== row.id)
      throw invalidArgument(`${field}: ${stored} is not a message of conversation ${row.id}`);
    return position.seq;
  }

  private async pendingApprovalsOf(client: pg.PoolClient, page: PgConversationRow[]): Promise<Map<string, ApprovalRow[]>> {
    const waiting = page.flatMap((row) => (row.status === 'waiting_approval' ? [row.id] : []));
    if (waiting.length === 0) return new Map();
    return byConversation(await this.query<ApprovalRow>(client, 'selectPendingApprovalsOfConversations', [waiting]));
  }

  /** The counts by status of every conversation, or of one owner's. */
  private async summary(client: pg.PoolClient, owner?: string): Promise<ConversationSummary> {
    const counts: Record<ConversationStatusName, number> = { active: 0, waiting_approval: 0, completed: 0 };
    const rows =
      owner === undefined
        ? await this.query<CountRow>(client, 'selectCounts', [])
        : await this.query<CountRow>(client, 'selectOwnerCounts', [owner]);
    for (const row of rows) counts[row.status] = row.count;
    return summaryOf(counts);
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

function rethrow(error: unknown): never {
  throw fail(error);
}
