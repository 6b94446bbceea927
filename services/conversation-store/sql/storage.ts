import { randomUUID } from 'node:crypto';
import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { ConversationStatus, MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { aborted, failedPrecondition, invalidArgument, notFound } from '../../common/grpc/errors.js';
import {
  alsoRejected,
  claimDecision,
  decisionAuditRow,
  endingOutcome,
  lostClaim,
  replacedUuid,
  requireLease,
  waitingState,
} from '../changes.js';
import { storedId, storedIds } from '../ids.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import { conversationStatus, isoTimestamp, timestampAfter } from '../records.js';
import { type ApprovalRow, approvalFromRow, type EventRow, eventFromRow } from '../rows.js';
import {
  type ApprovalClaim,
  type CommittedEventsListener,
  type ConversationPage,
  DEFAULT_PAGE_SIZE,
  type EventRange,
  historyOwnerKey,
  type InterruptionMark,
  type LiveEventListener,
  MAX_PAGE_SIZE,
  type TurnStart,
} from '../storage.js';
import * as lists from './lists.js';
import { subscribe, tellEach } from './port.js';
import {
  FIRST_UUID,
  pendingApprovals,
  requireApproval,
  requireConversation,
  type StoredConversation,
  unfinishedApprovals,
} from './lookups.js';
import { ConversationChanges } from './conversation-changes.js';
import * as webhooks from './webhooks.js';

/**
 * The store's rules, written once over the port (port.ts): each method one transaction of the driver's. Locks are taken
 * conversation first (its row, where rows are locked, read afresh), then approvals by conditional updates: no cycles.
 */
export abstract class SqlConversationStorage extends ConversationChanges {
  protected readonly liveListeners = new Set<LiveEventListener>();
  abstract close(): Promise<void>;

  /** Shares a live-only event with the other replicas; never fails the caller. SQLite: one process per file, none. */
  shareLiveEvent(_event: pb.ConversationEvent): void {}

  /** This replica has (or no longer has) watchers of a conversation ('': every one), for the others' `watched`. */
  shareWatch(_conversationId: string, _watched: boolean): void {}

  /** The live-only events the other replicas share; returns the unsubscribe. */
  onLiveEvent(listener: LiveEventListener): () => void {
    return subscribe(this.liveListeners, listener);
  }

  /** A new active conversation; a non-empty system prompt becomes message seq 1. */
  async createConversation(request: pb.CreateConversationRequest): Promise<pb.Conversation> {
    return this.write(async (tx) => {
      const [newest] = await tx.all<{ created_at: string }>('newestCreatedAt', {});
      const createdAt = timestampAfter(newest?.created_at, this.now());
      const id = randomUUID();
      const owner = request.owner ?? null;
      await tx.run('insertConversation', {
        id,
        session_id: request.sessionId,
        created_at: createdAt,
        a2a_dialect: request.a2aOrigin?.dialect ?? null,
        a2a_context_id: request.a2aOrigin?.contextId ?? null,
        owner,
      });
      tx.changes.count(owner, 'active', 1);
      const messages = request.systemPrompt === '' ? [] : [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: request.systemPrompt }];
      // From no status to active: the event that makes it known to watchers of every conversation.
      tx.changes.event(id, createdAt, { kind: 'status_changed', status: 'active' });
      // The conversation row and its first message share one timestamp: it is one change.
      await this.applyChange(tx, await requireConversation(tx, id), { messages }, createdAt);
      return this.readConversation(tx, await requireConversation(tx, id), true);
    });
  }

  async getConversation(request: pb.GetConversationRequest): Promise<pb.Conversation> {
    return this.read(async (tx) => {
      const row = await requireConversation(tx, request.id);
      if (!request.includeMessages || !request.messageLimit) return this.readConversation(tx, row, request.includeMessages);
      return this.readConversationPage(tx, row, request);
    });
  }

  async listConversations(request: pb.ListConversationsRequest): Promise<ConversationPage> {
    const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken);
    return this.read(async (tx) => {
      // One row more than asked tells whether another page follows.
      const args = {
        owner: request.owner,
        limit: limit + 1,
        created_at: cursor?.createdAt,
        id: cursor && (storedId(cursor.id) ?? FIRST_UUID),
      };
      const query = request.owner === undefined ? (cursor ? 'pageAfter' : 'firstPage') : cursor ? 'ownerPageAfter' : 'ownerFirstPage';
      const rows = await tx.all<StoredConversation>(query, args);
      const page = rows.slice(0, limit);
      // Summaries: the row has the counts and the title; no message is read.
      const pending = await this.pendingApprovalsOf(tx, page);
      const last = page.at(-1);
      return {
        conversations: page.map((row) => this.conversationOf(row, [], pending.get(row.id) ?? [])),
        nextPageToken: rows.length > limit && last ? encodePageToken({ createdAt: last.created_at, id: last.id }) : '',
        summary: await this.summary(tx, request.owner),
      };
    });
  }

  /**
   * Appends the user's message unless the conversation waits, is `busy` or has unfinished approved calls. A dead boot's
   * mark is noted first; a stale one ignored; one with a lease is busy whichever boot wrote it, and never noted.
   */
  async startTurn(request: pb.StartTurnRequest): Promise<TurnStart> {
    return this.write(async (tx) => {
      let conversation = await this.lockConversation(tx, request.conversationId);
      const unfinished = (await unfinishedApprovals(tx, conversation.id)).map(approvalFromRow);
      const waiting = conversation.status === 'waiting_approval';
      // One active run per conversation, checked and marked in one transaction: of concurrent StartTurns one starts.
      const busy = !waiting && this.turnRunning(conversation);
      const started = !waiting && !busy && unfinished.length === 0;
      if (started) {
        // A new turn is a new run: one a crashed turn left behind must not steer it.
        const messages = [...this.interruptedTurnNote(conversation), request.message!];
        await this.applyChange(tx, conversation, { messages, run: conversation.run_state === null ? undefined : null });
        await this.markTurnRunning(tx, conversation.id, request.lease);
        conversation = await requireConversation(tx, conversation.id);
      }
      return { started, busy, conversation: await this.readConversation(tx, conversation, true), unfinishedApprovals: unfinished };
    });
  }

  /** `status` may be kept, ACTIVE or COMPLETED; with `leaseOwner`, ABORTED unless that owner holds the lease. */
  async appendMessages(request: pb.AppendMessagesRequest): Promise<pb.Message[]> {
    return this.write(async (tx) => {
      const conversation = await this.lockConversation(tx, request.conversationId);
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

  async createApproval(request: pb.CreateApprovalRequest): Promise<pb.PendingApproval> {
    return this.write(async (tx) => {
      const conversation = await this.lockConversation(tx, request.conversationId);
      if (conversation.status === 'waiting_approval') {
        throw failedPrecondition(`conversation ${conversation.id} already waits for approval ${conversation.pending_approval_uuid}`);
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      const uuid = randomUUID();
      const requested = await this.insertApproval(tx, conversation.id, { ...request, uuid }, at);
      await this.applyChange(
        tx,
        conversation,
        { messages: request.messages, status: 'waiting_approval', pendingApprovalUuid: uuid, requested: [requested] },
        at,
      );
      // A turn that stops for an approval is over; the approval's continuation is marked when it is approved.
      await this.endTurn(tx, conversation.id, 'paused');
      return approvalFromRow(await requireApproval(tx, uuid));
    });
  }

  async getApproval(uuid: string): Promise<pb.PendingApproval> {
    return this.read(async (tx) => approvalFromRow(await requireApproval(tx, uuid)));
  }

  /** pending → approved | rejected | expired, exactly once; a lost or late claim is `claimed: false`, not an error. */
  async claimApproval(request: pb.ClaimApprovalRequest): Promise<ApprovalClaim> {
    const decision = claimDecision(request);
    return this.write(async (tx) => {
      const found = await requireApproval(tx, request.uuid);
      // The conversation first (the lock order of every write), then the conditional claim.
      await this.lockConversation(tx, found.conversation_id);
      const claimed = await this.decide(tx, found.uuid, decision);
      if (!claimed) return lostClaim(approvalFromRow(await requireApproval(tx, found.uuid)));
      const messages = [...request.messages];
      const resolved = [claimed];
      for (const other of request.approved ? [] : request.alsoReject) {
        const row = await requireApproval(tx, other.uuid);
        if (row.conversation_id !== claimed.conversation_id) {
          throw invalidArgument(`also_reject: approval ${row.uuid} belongs to another conversation than approval ${claimed.uuid}`);
        }
        const rejected = await this.decide(tx, row.uuid, alsoRejected(decision));
        if (rejected) {
          resolved.push(rejected);
          messages.push(...other.messages);
        }
      }
      const conversation = await requireConversation(tx, claimed.conversation_id);
      if (request.expectedRunRevision !== undefined && conversation.run_revision !== request.expectedRunRevision) {
        // Thrown inside the transaction: the claim above is rolled back with it.
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRunRevision}: another request changed it; read it again and decide again`,
        );
      }
      await this.applyChange(tx, conversation, {
        messages,
        ...waitingState(conversation.status, await pendingApprovals(tx, conversation.id)),
        run: request.clearRun ? null : undefined,
        resolved,
      });
      // Every decision it made is audited in its transaction: a lost claim decided nothing.
      for (const decided of resolved) await tx.all('insertAudit', decisionAuditRow(decided, decided.decided_at!));
      // Approved (or a rejection the model is told of), the turn goes on, with the caller's lease if any.
      if (request.approved || request.continuesTurn) await this.markTurnRunning(tx, conversation.id, request.lease);
      return { claimed: true, approval: approvalFromRow(claimed) };
    });
  }

  async startApprovalExecution(uuid: string): Promise<pb.PendingApproval> {
    return this.write(async (tx) =>
      approvalFromRow(await this.moveApproval(tx, uuid, 'approved', 'executing', 'only an approved call can start executing')),
    );
  }

  async finishApprovalExecution(request: pb.FinishApprovalExecutionRequest): Promise<pb.PendingApproval> {
    return this.write(async (tx) => {
      const to = request.success ? 'done' : 'failed';
      const finished = await this.moveApproval(tx, request.uuid, 'executing', to, 'only an executing call can finish');
      await this.applyChange(tx, await requireConversation(tx, finished.conversation_id), { messages: request.messages });
      return approvalFromRow(finished);
    });
  }

  // The lists, the audit trail, the webhooks' cursors and push configs: each one transaction over lists.ts or webhooks.ts.
  listPendingApprovals = (request: pb.ListPendingApprovalsRequest) => this.read((tx) => lists.listPendingApprovals(tx, request));
  listApprovals = (request: pb.ListApprovalsRequest) => this.read((tx) => lists.listApprovals(tx, request));
  listDueApprovals = (limit: number) => this.read((tx) => lists.listDueApprovals(tx, limit, this.now()));
  appendAudit = (entry: pb.AuditEntry) => this.write((tx) => lists.appendAudit(tx, entry, this.now()));
  listAudit = (request: pb.ListAuditRequest) => this.read((tx) => lists.listAudit(tx, request));
  claimWebhookCursor = (endpoint: string, lease: pb.RunLease) =>
    this.write((tx) => webhooks.claimWebhookCursor(tx, endpoint, lease, this.now()));
  advanceWebhookCursor = (request: pb.AdvanceWebhookCursorRequest) =>
    this.write((tx) => webhooks.advanceWebhookCursor(tx, request, this.now()));
  setPushConfig = (config: pb.PushConfig) => this.write((tx) => webhooks.setPushConfig(tx, config, this.now()));
  getPushConfig = (conversationId: string, id: string) => this.read((tx) => webhooks.getPushConfig(tx, conversationId, id));
  listPushConfigs = (conversationId: string) => this.read((tx) => webhooks.listPushConfigs(tx, conversationId));
  deletePushConfig = (conversationId: string, id: string) => this.write((tx) => webhooks.deletePushConfig(tx, conversationId, id));

  async recordHistoryDigest(conversationId: string, digest: string): Promise<void> {
    await this.write(async (tx) => {
      const conversation = await requireConversation(tx, conversationId);
      await tx.run('upsertHistoryDigest', {
        conversation_id: conversation.id,
        owner_key: historyOwnerKey(conversation.owner ?? undefined),
        digest,
      });
    });
  }

  async findConversationByHistory(digest: string, owner: string | undefined): Promise<string | undefined> {
    return this.read(
      async (tx) => (await tx.all<{ id: string }>('selectConversationByHistory', { digest, owner_key: historyOwnerKey(owner) }))[0]?.id,
    );
  }

  async listUnfinishedApprovals(conversationId: string): Promise<pb.PendingApproval[]> {
    return this.read(async (tx) => {
      const conversation = await requireConversation(tx, conversationId);
      return (await unfinishedApprovals(tx, conversation.id)).map(approvalFromRow);
    });
  }

  async markApprovalInterrupted(request: pb.MarkApprovalInterruptedRequest): Promise<InterruptionMark> {
    return this.write(async (tx) => {
      const approval = await requireApproval(tx, request.uuid);
      await this.lockConversation(tx, approval.conversation_id);
      const now = this.now();
      const [interrupted] = await tx.all<ApprovalRow>('interruptApproval', {
        uuid: approval.uuid,
        now: isoTimestamp(now),
        unchanged_since: isoTimestamp(now - request.minAgeMs),
      });
      if (!interrupted) return { marked: false, approval: approvalFromRow(await requireApproval(tx, approval.uuid)) };
      await this.applyChange(tx, await requireConversation(tx, interrupted.conversation_id), { messages: request.messages });
      return { marked: true, approval: approvalFromRow(interrupted) };
    });
  }

  /** Messages, new approvals and the run (absent: cleared) when its revision is `expectedRevision`; the new revision. */
  async updateRun(request: pb.UpdateRunRequest): Promise<number> {
    return this.write(async (tx) => {
      // Compare-and-set: the write's lock makes the revision read here the latest one until COMMIT.
      const conversation = await this.lockConversation(tx, request.conversationId);
      requireLease(conversation, request.leaseOwner);
      if (conversation.run_revision !== request.expectedRevision) {
        throw aborted(
          `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${request.expectedRevision}: another request changed it; read it again and redo the change`,
        );
      }
      const at = timestampAfter(conversation.updated_at, this.now());
      if (request.interruptedApproval !== undefined) await this.interruptExecuting(tx, conversation.id, request.interruptedApproval, at);
      const requested: ApprovalRow[] = [];
      for (const approval of request.approvals) {
        const uuid = storedId(approval.uuid);
        if (uuid === undefined) throw invalidArgument(`approvals: ${JSON.stringify(approval.uuid)} is not a UUID`);
        if ((await tx.all('selectApproval', { uuid })).length > 0) throw invalidArgument(`approvals: approval ${uuid} already exists`);
        const fields = { ...approval, uuid, replacesUuid: replacedUuid(approval.replacesUuid) };
        requested.push(await this.insertApproval(tx, conversation.id, fields, at));
      }
      const waiting = waitingState(conversation.status, await pendingApprovals(tx, conversation.id));
      // The revision a caller sends is not taken: the store sets it.
      const run = request.run === undefined ? null : { state: request.run.state, schemaVersion: request.run.schemaVersion };
      await this.applyChange(tx, conversation, { messages: request.messages, ...waiting, run, requested }, at);
      // The run ended (cleared) or paused (waiting): its turn is over.
      const paused = waiting.status === 'waiting_approval';
      if (request.run === undefined || paused) await this.endTurn(tx, conversation.id, endingOutcome(paused, request.messages));
      return conversation.run_revision + 1;
    });
  }

  async renewRunLease(conversationId: string, lease: pb.RunLease): Promise<boolean> {
    return this.changeLease(conversationId, 'renewRunLease', { owner: lease.owner, ttl_ms: lease.ttlMs });
  }

  /** Expires `owner`'s lease now (never later): the next takeOverRuns takes the run. */
  async releaseRunLease(conversationId: string, owner: string): Promise<boolean> {
    return this.changeLease(conversationId, 'releaseRunLease', { owner });
  }

  /** One conditional UPDATE, which waits for a writer of the conversation and then sees whether the caller holds the lease. */
  private async changeLease(conversationId: string, query: 'renewRunLease' | 'releaseRunLease', args: object): Promise<boolean> {
    const id = storedId(conversationId);
    if (id === undefined) throw notFound(`conversation ${conversationId} not found`);
    return this.write(async (tx) => {
      if ((await tx.run(query, { ...args, id, now_ms: this.now() })) > 0) return true;
      if ((await tx.all('conversationExists', { id })).length === 0) throw notFound(`conversation ${conversationId} not found`);
      return false;
    });
  }

  /** One transaction: each run goes to exactly one taker (PostgreSQL skips rows another locked). No event: only the owner changed. */
  async takeOverRuns(lease: pb.RunLease, limit: number, givenUp: readonly string[] = []): Promise<pb.TakenOverRun[]> {
    return this.write(async (tx) => {
      const now = this.now();
      const { owner, node } = lease;
      const candidates = await tx.all<{ id: string; lease_owner: string }>('selectTakeoverCandidates', {
        owner,
        node,
        now,
        limit,
        given_up: storedIds(givenUp),
      });
      const taken: pb.TakenOverRun[] = [];
      for (const candidate of candidates) {
        const args = { id: candidate.id, owner, node, now, ttl_ms: lease.ttlMs, boot: this.bootId, since: isoTimestamp(now) };
        const [row] = await tx.all<{ lease_takeovers: number }>('takeOverRun', args);
        taken.push({ conversationId: candidate.id, previousOwner: candidate.lease_owner, takeovers: row!.lease_takeovers });
      }
      return taken;
    });
  }

  async readEvents(range: EventRange): Promise<pb.ConversationEvent[]> {
    const every = range.conversationId === undefined;
    const conversationId = every ? undefined : storedId(range.conversationId!);
    if (!every && conversationId === undefined) return [];
    const args = { conversation_id: conversationId, after_id: range.afterId, limit: range.limit };
    const query = every ? 'selectEventsAfter' : 'selectConversationEventsAfter';
    return this.read(async (tx) => (await tx.all<EventRow>(query, args)).map(eventFromRow));
  }

  async latestEventId(): Promise<number> {
    return this.read(async (tx) => Number((await tx.all<{ id: number | null }>('latestEventId', {}))[0]?.id ?? 0));
  }

  /** The events of every committed change, in id order, each once, before the writer returns; must not throw or block. */
  onEventsCommitted(listener: CommittedEventsListener): () => void {
    return subscribe(this.listeners, listener);
  }

  protected tellCommitted(events: readonly pb.ConversationEvent[]): void {
    tellEach(this.listeners, events);
  }

  /** One transaction per conversation: of processes sweeping at once, the fresh read under the lock lets one note each. */
  async noteInterruptedTurns(): Promise<number> {
    const marks = await this.read((tx) => tx.all<{ id: string }>('selectTurnsOfDeadBoots', { boot: this.bootId }));
    let noted = 0;
    for (const { id } of marks) {
      const wasNoted = await this.write(async (tx) => {
        const conversation = await this.lockConversation(tx, id);
        if (!conversation.running_turn_boot || this.liveMark(conversation) || conversation.lease_owner) return false;
        // An unfinished approved call is settled by the next StartTurn first, which adds the note after it.
        if (conversation.status === 'waiting_approval' || (await unfinishedApprovals(tx, id)).length > 0) return false;
        await this.applyChange(tx, conversation, { messages: this.interruptedTurnNote(conversation) });
        await this.endTurn(tx, id, 'interrupted');
        return true;
      });
      if (wasNoted) noted += 1;
    }
    return noted;
  }
}
