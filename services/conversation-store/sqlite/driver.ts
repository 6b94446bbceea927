import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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
import { aborted, failedPrecondition, internal, invalidArgument, notFound } from '../../common/grpc/errors.js';
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
  newestFirst,
  oldestFirst,
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
  historyOwnerKey,
  DEFAULT_PAGE_SIZE,
  DEFAULT_STALE_TURN_MS,
  MAX_PAGE_CONTENT_CHARS,
  INTERRUPTED_TURN_NOTE,
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
} from '../storage.js';
import {
  approvalFromRow,
  auditEntryFromRow,
  conversationFromRow,
  eventFromRow,
  eventPayload,
  messageFromRow,
  pushConfigOfRow,
  type ApprovalRow,
  type PushConfigRow,
  type ConversationRow,
  type EventChange,
  type MessageRow,
} from '../rows.js';
import { configureConnection, migrate } from './schema.js';
import { prepareStatements, type ConversationState, type Statements } from './statements.js';

export const DATABASE_FILE = 'conversations.db';

export interface SqliteStorageOptions {
  /** The folder of `conversations.db`; created when missing. */
  dataDir: string;
  /** Epoch milliseconds; replaced in tests to age approvals without waiting. */
  now?: () => number;
  /**
   * A running mark older than this is stale: the turn no longer counts as running (store.proto,
   * StartTurn). chat.turn_timeout plus a margin; DEFAULT_STALE_TURN_MS when absent.
   */
  staleTurnAfterMs?: number;
}

export { DEFAULT_STALE_TURN_MS } from '../storage.js';

/** Opens (creating and migrating when needed) `<dataDir>/conversations.db`. */
export function openSqliteStorage(options: SqliteStorageOptions): SqliteConversationStorage {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, DATABASE_FILE);
  const db = new Database(file);
  try {
    configureConnection(db);
    migrate(db, file);
    return new SqliteConversationStorage(db, options.now ?? Date.now, options.staleTurnAfterMs ?? DEFAULT_STALE_TURN_MS);
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The embedded driver. better-sqlite3 is synchronous, so each method runs its whole
 * transaction without yielding to other requests of this process; the SQL itself (the
 * conditional updates, BEGIN IMMEDIATE) is what keeps it correct when another process
 * shares the file.
 *
 * Events: each write transaction inserts the events of its change into `events` and, after
 * COMMIT, hands them to the `onEventsCommitted` listeners, synchronously. That in-process
 * notification is the live feed of WatchEvents: the store runs as one process on SQLite, so
 * every commit passes through here. (A second process writing the same file would commit
 * events that this one's watchers only see by reconnecting; the PostgreSQL driver will
 * need LISTEN/NOTIFY for its live feed.) Since a commit and its notification happen in one
 * synchronous stretch, no read of this process can see a change whose listeners have not
 * been called yet.
 */
export class SqliteConversationStorage implements ConversationStorage {
  private readonly sql: Statements;
  private readonly transaction: Database.Transaction<(body: () => unknown) => unknown>;
  private readonly listeners = new Set<CommittedEventsListener>();
  /** The events of the write transaction in progress; undefined outside one. */
  private transactionEvents: ConversationEvent[] | undefined;
  /**
   * Marks the turns this store object starts (store.proto, StartTurn). The store is one
   * process per database file, so a mark with another boot id was left by a process that is
   * gone: nothing will finish that turn.
   */
  private readonly bootId = randomUUID();

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    private readonly staleTurnAfterMs: number = DEFAULT_STALE_TURN_MS,
  ) {
    this.sql = prepareStatements(db);
    // One transaction function for every body, created once: better-sqlite3 runs the body
    // between BEGIN and COMMIT (ROLLBACK when it throws) with statements it prepared once.
    this.transaction = db.transaction((body: () => unknown) => body());
  }

  async createConversation(request: CreateConversationRequest): Promise<Conversation> {
    return this.write(() => {
      const createdAt = timestampAfter(this.sql.newestCreatedAt.get()?.created_at, this.now());
      const id = randomUUID();
      this.sql.insertConversation.run({
        id,
        session_id: request.sessionId,
        created_at: createdAt,
        a2a_dialect: request.a2aOrigin?.dialect ?? null,
        a2a_context_id: request.a2aOrigin?.contextId ?? null,
        owner: request.owner ?? null,
      });
      const messages = request.systemPrompt === '' ? [] : [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: request.systemPrompt }];
      // A new conversation's status goes from none to active: the event that makes it known
      // to watchers of every conversation, also when it has no first message.
      this.recordEvent(id, createdAt, { kind: 'status_changed', status: 'active' });
      // The conversation row and its first message share one timestamp: it is one change.
      this.applyChange(this.requireConversation(id), { messages }, createdAt);
      return this.readConversation(this.requireConversation(id), true);
    });
  }

  async getConversation(request: GetConversationRequest): Promise<Conversation> {
    return this.read(() => {
      const row = this.requireConversation(request.id);
      if (!request.includeMessages || !request.messageLimit) return this.readConversation(row, request.includeMessages);
      return this.readConversationPage(row, request);
    });
  }

  async listConversations(request: ListConversationsRequest): Promise<ConversationPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken);
    return this.read(() => {
      // One row more than asked tells whether another page follows.
      const rows = this.pageRows(request.owner, cursor, limit + 1);
      const page = rows.slice(0, limit);
      // Summaries: the row has the counts and the title; no message is read.
      const pending = this.pendingApprovalsOf(page);
      const last = page.at(-1);
      return {
        conversations: page.map((row) => this.conversationOf(row, [], pending.get(row.id) ?? [])),
        nextPageToken: rows.length > limit && last ? encodePageToken({ createdAt: last.created_at, id: last.id }) : '',
        summary: this.summary(request.owner),
      };
    });
  }

  /** Newest first from the cursor: every conversation, or one owner's (through its index). */
  private pageRows(owner: string | undefined, cursor: PageCursor | undefined, limit: number): ConversationRow[] {
    if (owner === undefined) {
      return cursor ? this.sql.pageAfter.all({ created_at: cursor.createdAt, id: cursor.id, limit }) : this.sql.firstPage.all(limit);
    }
    return cursor
      ? this.sql.ownerPageAfter.all({ owner, created_at: cursor.createdAt, id: cursor.id, limit })
      : this.sql.ownerFirstPage.all({ owner, limit });
  }

  async startTurn(request: StartTurnRequest): Promise<TurnStart> {
    return this.write(() => {
      let conversation = this.requireConversation(request.conversationId);
      const unfinishedApprovals = this.sql.selectUnfinishedApprovals.all(conversation.id).map(approvalFromRow);
      const waiting = conversation.status === 'waiting_approval';
      // One active run per conversation: checked and marked in this one
      // transaction (BEGIN IMMEDIATE), so of two concurrent StartTurns exactly one starts.
      // A waiting conversation keeps its own answer (the pending approval).
      const busy = !waiting && this.turnRunning(conversation);
      const started = !waiting && !busy && unfinishedApprovals.length === 0;
      if (started) {
        // A new turn is a new run: a run that an earlier turn left behind (a crash cut it off
        // after its approvals were resolved) must not steer this one.
        const messages = [...this.interruptedTurnNote(conversation.id), request.message!];
        this.applyChange(conversation, { messages, run: conversation.run_state === null ? undefined : null });
        this.markTurnRunning(conversation.id, request.lease);
        conversation = this.requireConversation(conversation.id);
      }
      return { started, busy, conversation: this.readConversation(conversation, true), unfinishedApprovals };
    });
  }

  async appendMessages(request: AppendMessagesRequest): Promise<Message[]> {
    return this.write(() => {
      const conversation = this.requireConversation(request.conversationId);
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
      const appended = this.applyChange(conversation, { messages: request.messages, status });
      if (request.endsTurn) this.endTurn(conversation.id, endingOutcome(false, request.messages));
      return appended;
    });
  }

  async createApproval(request: CreateApprovalRequest): Promise<PendingApproval> {
    return this.write(() => {
      const conversation = this.requireConversation(request.conversationId);
      if (conversation.status === 'waiting_approval') {
        throw failedPrecondition(`conversation ${conversation.id} already waits for approval ${conversation.pending_approval_uuid}`);
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      const uuid = randomUUID();
      const requested = this.insertApproval(conversation.id, { ...request, uuid }, at);
      this.applyChange(
        conversation,
        { messages: request.messages, status: 'waiting_approval', pendingApprovalUuid: uuid, requested: [requested] },
        at,
      );
      // A turn that stops for an approval is over; the approval's continuation is marked when it is approved.
      this.endTurn(conversation.id, 'paused');
      return approvalFromRow(this.requireApproval(uuid));
    });
  }

  async getApproval(uuid: string): Promise<PendingApproval> {
    return this.read(() => approvalFromRow(this.requireApproval(uuid)));
  }

  async claimApproval(request: ClaimApprovalRequest): Promise<ApprovalClaim> {
    const decision = claimDecision(request);
    return this.write(() => {
      const uuid = storedId(request.uuid);
      const claimed = uuid === undefined ? undefined : this.decide(uuid, decision);
      if (!claimed) return lostClaim(approvalFromRow(this.requireApproval(request.uuid)));
      const messages = [...request.messages];
      const resolved = [claimed];
      for (const other of request.approved ? [] : request.alsoReject) {
        const row = this.requireApproval(other.uuid);
        if (row.conversation_id !== claimed.conversation_id) {
          throw invalidArgument(`also_reject: approval ${row.uuid} belongs to another conversation than approval ${claimed.uuid}`);
        }
        const rejected = this.decide(row.uuid, alsoRejected(decision));
        if (rejected) {
          resolved.push(rejected);
          messages.push(...other.messages);
        }
      }
      const conversation = this.requireConversation(claimed.conversation_id);
      if (request.expectedRunRevision !== undefined && conversation.run_revision !== request.expectedRunRevision) {
        // Thrown inside the transaction: the claim above is rolled back with it.
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRunRevision}: another request changed it; read it again and decide again`,
        );
      }
      this.applyChange(conversation, {
        messages,
        ...waitingState(conversation.status, this.sql.selectPendingApprovals.all(conversation.id)),
        run: request.clearRun ? null : undefined,
        resolved,
      });
      // Every decision it made is audited in its transaction: a lost claim decided nothing.
      for (const decided of resolved) this.sql.insertAudit.run(decisionAuditRow(decided, decided.decided_at!));
      // Approved, the call runs and the turn goes on (so does a rejection in simple mode: the
      // model is told of the "no"): a crash from here on cuts a turn off too.
      // Its lease, when the caller brings one, is the continued turn's (store.proto, ClaimApprovalRequest.lease).
      if (request.approved || request.continuesTurn) this.markTurnRunning(conversation.id, request.lease);
      return { claimed: true, approval: approvalFromRow(claimed) };
    });
  }

  async startApprovalExecution(uuid: string): Promise<PendingApproval> {
    return this.write(() => approvalFromRow(this.moveApproval(uuid, 'approved', 'executing', 'only an approved call can start executing')));
  }

  async finishApprovalExecution(request: FinishApprovalExecutionRequest): Promise<PendingApproval> {
    return this.write(() => {
      const finished = this.moveApproval(
        request.uuid,
        'executing',
        request.success ? 'done' : 'failed',
        'only an executing call can finish',
      );
      this.applyChange(this.requireConversation(finished.conversation_id), { messages: request.messages });
      return approvalFromRow(finished);
    });
  }

  async listPendingApprovals(request: ListPendingApprovalsRequest): Promise<{ approvals: PendingApproval[]; nextPageToken: string }> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken, 'ListPendingApprovals');
    return this.read(() => {
      // One row more than asked tells whether another page follows.
      const rows = cursor
        ? this.sql.pendingApprovalsPageAfter.all({ created_at: cursor.createdAt, uuid: cursor.id, limit: limit + 1 })
        : this.sql.pendingApprovalsFirstPage.all(limit + 1);
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
    const after = { created_at: cursor.createdAt, uuid: cursor.id, limit: limit + 1 };
    return this.read(() => {
      let rows: ApprovalRow[];
      if (request.conversationId !== '') {
        const conversationId = storedId(request.conversationId);
        rows =
          conversationId === undefined
            ? []
            : this.sql.approvalsOfConversationAfter.all({ ...after, conversation_id: conversationId, statuses: JSON.stringify(statuses) });
      } else {
        rows = oldestFirst(
          statuses.map((status) => this.sql.approvalsOfStatusAfter.all({ ...after, status })),
          limit + 1,
        );
      }
      return approvalPage(rows, limit);
    });
  }

  async listDueApprovals(limit: number): Promise<PendingApproval[]> {
    return this.read(() => this.sql.dueApprovals.all({ now: isoTimestamp(this.now()), limit }).map(approvalFromRow));
  }

  async appendAudit(entry: AuditEntry): Promise<AuditEntry> {
    return this.write(() =>
      auditEntryFromRow(
        this.sql.insertAudit.get({
          at: isoTimestamp(this.now()),
          kind: entry.kind,
          actor: entry.actor,
          via: entry.via,
          subject: entry.subject,
          detail_json: entry.detailJson,
        })!,
      ),
    );
  }

  async listAudit(request: ListAuditRequest): Promise<AuditPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const before = request.pageToken === '' ? Number.MAX_SAFE_INTEGER : decodeAuditPageToken(request.pageToken);
    return this.read(() => {
      const rows =
        request.kinds.length === 0
          ? this.sql.auditBefore.all({ before, limit: limit + 1 })
          : newestFirst(
              [...new Set(request.kinds)].map((kind) => this.sql.auditOfKindBefore.all({ kind, before, limit: limit + 1 })),
              limit + 1,
            );
      return auditPage(rows, limit);
    });
  }

  async claimWebhookCursor(endpoint: string, lease: RunLease): Promise<ClaimWebhookCursorResponse> {
    return this.write(() => {
      const now = this.now();
      const taken = { endpoint, owner: lease.owner, node: lease.node, expires_at: now + lease.ttlMs };
      const claimed = this.sql.claimWebhookCursor.get({ ...taken, now });
      if (claimed) return { held: true, lastEventId: claimed.last_event_id };
      const held = this.sql.selectWebhookCursor.get(endpoint);
      if (held) return { held: false, lastEventId: held.last_event_id };
      // A new endpoint starts at the newest event: no history is replayed to it.
      const lastEventId = this.sql.latestEventId.get()?.id ?? 0;
      this.sql.insertWebhookCursor.run({ ...taken, last_event_id: lastEventId });
      return { held: true, lastEventId };
    });
  }

  async setPushConfig(config: PushConfig): Promise<PushConfig> {
    return this.write(() => {
      const conversation = this.requireConversation(config.conversationId);
      const existing = this.sql.selectPushConfig.get(conversation.id, config.id);
      if (!existing && (this.sql.countPushConfigs.get(conversation.id)?.n ?? 0) >= MAX_PUSH_CONFIGS) {
        throw failedPrecondition(`task ${conversation.id} has ${MAX_PUSH_CONFIGS} push-notification configs already; delete one first`);
      }
      const row: PushConfigRow = {
        conversation_id: conversation.id,
        id: config.id,
        url: config.url,
        token: config.token,
        dialect: config.dialect,
        created_at: existing?.created_at ?? new Date(this.now()).toISOString(),
      };
      this.sql.upsertPushConfig.run(row);
      return pushConfigOfRow(row);
    });
  }

  async getPushConfig(conversationId: string, id: string): Promise<PushConfig | undefined> {
    const stored = storedId(conversationId);
    if (stored === undefined) return undefined;
    return this.read(() => {
      const row = this.sql.selectPushConfig.get(stored, id);
      return row && pushConfigOfRow(row);
    });
  }

  async listPushConfigs(conversationId: string): Promise<PushConfig[]> {
    const stored = storedId(conversationId);
    if (stored === undefined) return [];
    return this.read(() => this.sql.selectPushConfigs.all(stored).map(pushConfigOfRow));
  }

  async deletePushConfig(conversationId: string, id: string): Promise<boolean> {
    const stored = storedId(conversationId);
    if (stored === undefined) return false;
    return this.write(() => this.sql.deletePushConfig.run(stored, id).changes > 0);
  }

  async recordHistoryDigest(conversationId: string, digest: string): Promise<void> {
    this.write(() => {
      const conversation = this.requireConversation(conversationId);
      this.sql.upsertHistoryDigest.run(conversation.id, historyOwnerKey(conversation.owner ?? undefined), digest);
    });
  }

  async findConversationByHistory(digest: string, owner: string | undefined): Promise<string | undefined> {
    return this.read(() => this.sql.selectConversationByHistory.get(digest, historyOwnerKey(owner))?.id);
  }

  async advanceWebhookCursor(request: AdvanceWebhookCursorRequest): Promise<boolean> {
    return this.write(
      () =>
        this.sql.advanceWebhookCursor.run({
          endpoint: request.endpoint,
          owner: request.owner,
          last_event_id: request.lastEventId,
          expires_at: this.now() + request.ttlMs,
        }).changes > 0,
    );
  }

  async listUnfinishedApprovals(conversationId: string): Promise<PendingApproval[]> {
    return this.read(() => this.sql.selectUnfinishedApprovals.all(this.requireConversation(conversationId).id).map(approvalFromRow));
  }

  async markApprovalInterrupted(request: MarkApprovalInterruptedRequest): Promise<InterruptionMark> {
    return this.write(() => {
      const uuid = storedId(request.uuid);
      const now = this.now();
      const interrupted =
        uuid === undefined
          ? undefined
          : this.sql.interruptApproval.get({ uuid, now: isoTimestamp(now), unchanged_since: isoTimestamp(now - request.minAgeMs) });
      if (!interrupted) return { marked: false, approval: approvalFromRow(this.requireApproval(request.uuid)) };
      this.applyChange(this.requireConversation(interrupted.conversation_id), { messages: request.messages });
      return { marked: true, approval: approvalFromRow(interrupted) };
    });
  }

  async updateRun(request: UpdateRunRequest): Promise<number> {
    return this.write(() => {
      const conversation = this.requireConversation(request.conversationId);
      requireLease(conversation, request.leaseOwner);
      if (conversation.run_revision !== request.expectedRevision) {
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRevision}: another request changed it; read it again and redo the change`,
        );
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      if (request.interruptedApproval !== undefined) this.interruptExecuting(conversation.id, request.interruptedApproval, at);
      const requested = request.approvals.map((approval) => {
        const uuid = storedId(approval.uuid);
        if (uuid === undefined) throw invalidArgument(`approvals: ${JSON.stringify(approval.uuid)} is not a UUID`);
        if (this.sql.selectApproval.get(uuid)) throw invalidArgument(`approvals: approval ${uuid} already exists`);
        return this.insertApproval(conversation.id, { ...approval, uuid, replacesUuid: replacedUuid(approval.replacesUuid) }, at);
      });
      const waiting = waitingState(conversation.status, this.sql.selectPendingApprovals.all(conversation.id));
      this.applyChange(
        conversation,
        {
          messages: request.messages,
          ...waiting,
          // The revision a caller sends is not taken: the store sets it.
          run: request.run === undefined ? null : { state: request.run.state, schemaVersion: request.run.schemaVersion },
          requested,
        },
        at,
      );
      // The run ended (cleared) or paused (waiting): its turn is over.
      const paused = waiting.status === 'waiting_approval';
      if (request.run === undefined || paused) this.endTurn(conversation.id, endingOutcome(paused, request.messages));
      return conversation.run_revision + 1;
    });
  }

  async renewRunLease(conversationId: string, lease: RunLease): Promise<boolean> {
    return this.write(() => {
      const { id } = this.requireConversation(conversationId);
      return this.sql.renewRunLease.run({ id, owner: lease.owner, expires_at: this.now() + lease.ttlMs }).changes > 0;
    });
  }

  async releaseRunLease(conversationId: string, owner: string): Promise<boolean> {
    return this.write(() => {
      const { id } = this.requireConversation(conversationId);
      return this.sql.releaseRunLease.run({ id, owner, now: this.now() }).changes > 0;
    });
  }

  /**
   * One transaction (BEGIN IMMEDIATE: the only writer of the file), so no two takers get one
   * run. No event: the turn goes on, only its owner changed.
   */
  async takeOverRuns(lease: RunLease, limit: number, givenUp: readonly string[] = []): Promise<TakenOverRun[]> {
    return this.write(() => {
      const now = this.now();
      const given_up = JSON.stringify(storedIds(givenUp));
      const candidates = this.sql.selectTakeoverCandidates.all({ owner: lease.owner, node: lease.node, now, limit, given_up });
      return candidates.map((candidate) => {
        const taken = this.sql.takeOverRun.get({
          id: candidate.id,
          owner: lease.owner,
          node: lease.node,
          expires_at: now + lease.ttlMs,
          boot: this.bootId,
          since: isoTimestamp(now),
        })!;
        return { conversationId: candidate.id, previousOwner: candidate.lease_owner, takeovers: taken.lease_takeovers };
      });
    });
  }

  async readEvents(range: EventRange): Promise<ConversationEvent[]> {
    return this.read(() => {
      if (range.conversationId === undefined)
        return this.sql.selectEventsAfter.all({ after_id: range.afterId, limit: range.limit }).map(eventFromRow);
      const conversationId = storedId(range.conversationId);
      if (conversationId === undefined) return [];
      return this.sql.selectConversationEventsAfter
        .all({ conversation_id: conversationId, after_id: range.afterId, limit: range.limit })
        .map(eventFromRow);
    });
  }

  async latestEventId(): Promise<number> {
    return this.read(() => this.sql.latestEventId.get()?.id ?? 0);
  }

  onEventsCommitted(listener: CommittedEventsListener): () => void {
    // Wrapped, so that one listener subscribed twice is two subscriptions.
    const subscription: CommittedEventsListener = (events) => listener(events);
    this.listeners.add(subscription);
    return () => this.listeners.delete(subscription);
  }

  /** One process per database file: there is no other replica to tell. */
  shareLiveEvent(): void {}

  shareWatch(): void {}

  onLiveEvent(_listener: LiveEventListener): () => void {
    return () => undefined;
  }

  async noteInterruptedTurns(): Promise<number> {
    return this.write(() => {
      let noted = 0;
      for (const { id } of this.sql.selectTurnsOfOtherBoots.all(this.bootId)) {
        const conversation = this.requireConversation(id);
        // An approved call without its outcome is settled by the next StartTurn first (its
        // interrupted result must follow its call); that StartTurn adds the note after it.
        if (conversation.status === 'waiting_approval' || this.sql.selectUnfinishedApprovals.all(id).length > 0) continue;
        this.applyChange(conversation, { messages: this.interruptedTurnNote(id) });
        this.endTurn(id, 'interrupted');
        noted += 1;
      }
      return noted;
    });
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /**
   * Whether the conversation has a turn running now: marked by this boot, or with a lease (an
   * orchestrator owns it, whichever store boot marked it), and not stale (store.proto, StartTurn).
   */
  private turnRunning(row: ConversationRow): boolean {
    if (!row.running_turn_boot || !row.running_turn_since) return false;
    if (row.running_turn_boot !== this.bootId && !row.lease_owner) return false;
    return Date.parse(row.running_turn_since) > this.now() - this.staleTurnAfterMs;
  }

  /**
   * Marks a turn running from now, after the change that begins it. turn_started is recorded
   * unless a turn was running already (an approved sibling branch's continuation); a mark it
   * replaces (stale, or another boot's) is a turn that ended first.
   */
  private markTurnRunning(id: string, lease: RunLease | undefined): void {
    const row = this.requireConversation(id);
    const running = this.turnRunning(row);
    // A mark replaced without its turn's last write: a turn a crash (or a stale orchestrator) cut off.
    if (row.running_turn_boot && !running) this.recordEvent(id, row.updated_at, { kind: 'turn_ended', outcome: 'interrupted' });
    const now = this.now();
    // The lease is the new turn's: a new owner, no takeovers yet; none clears an earlier one.
    this.sql.markTurnRunning.run({
      id,
      boot: this.bootId,
      since: isoTimestamp(now),
      lease_owner: lease?.owner ?? null,
      lease_node: lease?.node ?? null,
      lease_expires_at: lease ? now + lease.ttlMs : null,
    });
    if (!running) this.recordEvent(id, row.updated_at, { kind: 'turn_started' });
  }

  /** Clears the running mark, with its turn_ended event (saying how it ended) when there was one. */
  private endTurn(id: string, outcome: TurnOutcome): void {
    if (this.sql.clearTurnRunning.run(id).changes === 0) return;
    // The event's time is the conversation's last change: a mark alone changes nothing a reader sees.
    this.recordEvent(id, this.requireConversation(id).updated_at, { kind: 'turn_ended', outcome });
  }

  /** The conditional claim of one pending approval with a decision; undefined when it is no longer pending. */
  private decide(uuid: string, decision: ClaimDecision): ApprovalRow | undefined {
    return this.sql.claimApproval.get({ uuid, now: isoTimestamp(this.now()), ...decision });
  }

  /** The conversation of a row, with whether a turn runs on it now. */
  private conversationOf(row: ConversationRow, messages: Message[], pending: readonly ApprovalRow[]): Conversation {
    return { ...conversationFromRow(row, messages, pending), turnRunning: this.turnRunning(row) };
  }

  /**
   * The note for a turn another boot left running, or none; the caller appends it and moves or
   * clears the mark. A mark with a lease gets none: its run is the orchestrators' to take over.
   */
  private interruptedTurnNote(conversationId: string): NewMessage[] {
    const mark = this.sql.selectRunningTurn.get(conversationId);
    const crashed = mark?.running_turn_boot && mark.running_turn_boot !== this.bootId && !mark.lease_owner;
    return crashed ? [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: INTERRUPTED_TURN_NOTE }] : [];
  }

  /**
   * BEGIN IMMEDIATE takes the write lock before the body reads anything, so a read-then-write
   * (message_count, status) cannot be overtaken by another process writing the same file.
   * The events the body recorded go to the listeners once COMMIT has succeeded; a rolled
   * back body's events are dropped with it.
   */
  private write<R>(body: () => R): R {
    const events: ConversationEvent[] = [];
    this.transactionEvents = events;
    let result: R;
    try {
      result = this.transaction.immediate(body) as R;
    } finally {
      this.transactionEvents = undefined;
    }
    if (events.length > 0) this.notify(events);
    return result;
  }

  /** The change is committed whatever a listener does: a failing listener is its own problem, never the writer's. */
  private notify(events: readonly ConversationEvent[]): void {
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch {
        // Listeners are in-process fan-outs that do not throw; nothing useful to do here.
      }
    }
  }

  /** Writes one event of the change in progress, in its transaction. */
  private recordEvent(conversationId: string, at: string, change: EventChange): void {
    if (!this.transactionEvents)
      throw internal(`a ${change.kind} event of conversation ${conversationId} was recorded outside a write transaction`);
    const row = { conversation_id: conversationId, kind: change.kind, payload: eventPayload(change), created_at: at };
    const { lastInsertRowid } = this.sql.insertEvent.run(row);
    this.transactionEvents.push(eventFromRow({ ...row, id: Number(lastInsertRowid) }));
  }

  /** Every statement of the body sees the same snapshot. */
  private read<R>(body: () => R): R {
    return this.transaction.deferred(body) as R;
  }

  private requireConversation(id: string): ConversationRow {
    const stored = storedId(id);
    const row = stored === undefined ? undefined : this.sql.selectConversation.get(stored);
    if (!row) throw notFound(`conversation ${id} not found`);
    return row;
  }

  private requireApproval(uuid: string): ApprovalRow {
    const stored = storedId(uuid);
    const row = stored === undefined ? undefined : this.sql.selectApproval.get(stored);
    if (!row) throw notFound(`approval ${uuid} not found`);
    return row;
  }

  private insertApproval(conversationId: string, approval: NewApprovalFields, at: string): ApprovalRow {
    // An expiry counts from the approval's creation, on the store's clock.
    const { inMs } = approvalExpiry(approval);
    const row = newApprovalRow(conversationId, approval, at, inMs === null ? null : isoTimestamp(Date.parse(at) + inMs));
    this.sql.insertApproval.run({ ...row, outcome_unknown: row.outcome_unknown ? 1 : 0 });
    return insertedApprovalRow(row);
  }

  /**
   * UpdateRun's interrupted_approval: executing → interrupted, with no message and
   * no event of its own (as MarkApprovalInterrupted); FAILED_PRECONDITION for anything but an
   * executing approval of this conversation, which rolls the whole write back.
   */
  private interruptExecuting(conversationId: string, uuid: string, at: string): void {
    const stored = storedId(uuid);
    if (stored !== undefined && this.sql.interruptExecutingApproval.get({ uuid: stored, conversation_id: conversationId, now: at })) return;
    const found = stored === undefined ? undefined : this.sql.selectApproval.get(stored);
    throw failedPrecondition(interruptedApprovalProblem(conversationId, uuid, found));
  }

  /** A conditional status move; FAILED_PRECONDITION naming the status found otherwise. */
  private moveApproval(uuid: string, from: ApprovalStatusName, to: ApprovalStatusName, rule: string): ApprovalRow {
    const stored = storedId(uuid);
    const moved = stored === undefined ? undefined : this.sql.moveApproval.get({ uuid: stored, from, to, now: isoTimestamp(this.now()) });
    if (moved) return moved;
    const current = this.requireApproval(uuid);
    throw failedPrecondition(`approval ${current.uuid} is ${current.status}: ${rule}`);
  }

  /**
   * Appends messages at seq = message_count + 1… (never a MAX() over the messages) and writes
   * the conversation's new state with them. `at` is the change's timestamp, shared by the
   * messages, updated_at and the change's events; it is always later than the previous
   * updated_at. The events are written in the order a reader expects them: approvals
   * resolved (the decision), messages added (e.g. its result), approvals requested (after
   * the call they gate), and the status the conversation ends in.
   */
  private applyChange(
    conversation: ConversationRow,
    change: ConversationChange,
    at = timestampAfter(conversation.updated_at, this.now()),
  ): Message[] {
    const next: ConversationState = {
      id: conversation.id,
      status: change.status ?? conversation.status,
      pending_approval_uuid: change.pendingApprovalUuid !== undefined ? change.pendingApprovalUuid : conversation.pending_approval_uuid,
      message_count: conversation.message_count,
      updated_at: at,
      input_tokens: conversation.input_tokens,
      output_tokens: conversation.output_tokens,
    };
    for (const approval of change.resolved ?? []) this.recordEvent(conversation.id, at, { kind: 'approval_resolved', approval });
    const appended = (change.messages ?? []).map((message): MessageRow => {
      const row = appendedMessageRow(conversation.id, message, next, at);
      this.sql.insertMessage.run(row);
      this.recordEvent(conversation.id, at, { kind: 'message_added', message: row });
      return row;
    });
    for (const approval of change.requested ?? []) this.recordEvent(conversation.id, at, { kind: 'approval_requested', approval });
    if (next.status !== conversation.status) this.recordEvent(conversation.id, at, { kind: 'status_changed', status: next.status });
    if (change.run !== undefined) {
      this.sql.writeRun.run({
        conversation_id: conversation.id,
        state: change.run?.state ?? null,
        schema_version: change.run?.schemaVersion ?? null,
        revision: conversation.run_revision + 1,
        updated_at: at,
      });
    }
    // A change of the run alone still moves updated_at: the conversation changed.
    const unchanged =
      appended.length === 0 &&
      next.status === conversation.status &&
      next.pending_approval_uuid === conversation.pending_approval_uuid &&
      change.run === undefined;
    if (!unchanged) this.sql.updateConversation.run(next);
    return appended.map(messageFromRow);
  }

  /** Full conversation with its pending approvals (read only while it waits). */
  private readConversation(row: ConversationRow, includeMessages: boolean): Conversation {
    const messages = includeMessages ? this.sql.selectMessages.all(row.id).map(messageFromRow) : [];
    const pending = row.status === 'waiting_approval' ? this.sql.selectPendingApprovals.all(row.id) : [];
    return this.conversationOf(row, messages, pending);
  }

  /**
   * One page of a conversation's history: at most `messageLimit` messages and
   * MAX_PAGE_CONTENT_CHARS of text, the newest or those next to a cursor, oldest first. One
   * more row than the page is read in the page's direction, to tell whether more follow.
   */
  private readConversationPage(row: ConversationRow, request: GetConversationRequest): Conversation {
    const limit = request.messageLimit ?? 0;
    const after = request.afterMessageId ? this.messageSeq(row, request.afterMessageId, 'after_message_id') : undefined;
    const before = request.beforeMessageId ? this.messageSeq(row, request.beforeMessageId, 'before_message_id') : row.message_count + 1;
    const walk =
      after === undefined
        ? this.sql.selectMessagesBefore.all({ conversation_id: row.id, seq: before, limit: limit + 1 })
        : this.sql.selectMessagesAfter.all({ conversation_id: row.id, seq: after, limit: limit + 1 });
    // More in the walk's direction when a row was left over; in the other direction, the
    // cursor message itself (and whatever lies beyond it) when there was a cursor.
    const { taken, moreOnWalk } = takePage(walk, limit, MAX_PAGE_CONTENT_CHARS);
    const messages = (after === undefined ? taken.reverse() : taken).map(messageFromRow);
    const pending = row.status === 'waiting_approval' ? this.sql.selectPendingApprovals.all(row.id) : [];
    return {
      ...this.conversationOf(row, messages, pending),
      hasMoreBefore: after === undefined ? moreOnWalk : true,
      hasMoreAfter: after === undefined ? Boolean(request.beforeMessageId) : moreOnWalk,
    };
  }

  /** The seq of a cursor message; INVALID_ARGUMENT when the id is not a message of this conversation. */
  private messageSeq(row: ConversationRow, messageId: string, field: string): number {
    const stored = storedId(messageId);
    // Only a well-formed id is named back: the text came from outside.
    if (stored === undefined) throw invalidArgument(`${field}: not a message id; expected the id of a message of conversation ${row.id}`);
    const position = this.sql.selectMessagePosition.get(stored);
    if (!position || position.conversation_id !== row.id)
      throw invalidArgument(`${field}: ${stored} is not a message of conversation ${row.id}`);
    return position.seq;
  }

  /** Pending approvals of a page's waiting conversations, by conversation id, oldest first, in one query. */
  private pendingApprovalsOf(page: ConversationRow[]): Map<string, ApprovalRow[]> {
    const waiting = page.flatMap((row) => (row.status === 'waiting_approval' ? [row.id] : []));
    if (waiting.length === 0) return new Map();
    return byConversation(this.sql.selectPendingApprovalsOfConversations.all(JSON.stringify(waiting)));
  }

  /** The counts by status of every conversation, or of one owner's. */
  private summary(owner?: string): ConversationSummary {
    const counts: Record<ConversationStatusName, number> = { active: 0, waiting_approval: 0, completed: 0 };
    const rows = owner === undefined ? this.sql.selectCounts.all() : this.sql.selectOwnerCounts.all(owner);
    for (const row of rows) counts[row.status] = row.count;
    return summaryOf(counts);
  }
}
