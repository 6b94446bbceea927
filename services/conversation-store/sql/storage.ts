import { randomUUID } from 'node:crypto';
import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { ConversationStatus, MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../../common/call-hash.js';
import { aborted, alreadyExists, failedPrecondition, invalidArgument, permissionDenied } from '../../common/grpc/errors.js';
import { jsonObjectOf } from '../../common/json-value.js';
import {
  alsoRejected,
  approvalPage,
  auditPage,
  type ClaimDecision,
  claimDecision,
  EXPIRY_VIA,
  escalationAuditRow,
  policyDecisionRow,
  voteAuditRow,
  endingOutcome,
  FIRST_APPROVAL,
  listedStatuses,
  lostClaim,
  newestFirst,
  oldestFirst,
  pageOf,
  replacedUuid,
  requireLease,
  waitingState,
} from '../changes.js';
import { FIRST_UUID, storedId, storedIds } from '../ids.js';
import {
  decodeApprovalsPageToken,
  decodeAuditPageToken,
  decodePageToken,
  decodeRunsPageToken,
  encodePageToken,
  encodeRunsPageToken,
} from '../page-token.js';
import { conversationStatus, isoTimestamp, timestampAfter } from '../records.js';
import {
  type ApprovalRow,
  type AuditRow,
  approvalFromRow,
  auditEntryFromRow,
  type EventRow,
  type MessageRow,
  messageFromRow,
  eventFromRow,
  type PushConfigRow,
  pushConfigOfRow,
} from '../rows.js';
import {
  type ApprovalClaim,
  type ApprovalPage,
  type AuditPage,
  type CommittedEventsListener,
  type ConversationPage,
  DEFAULT_PAGE_SIZE,
  type EventRange,
  historyOwnerKey,
  type InterruptionMark,
  type LiveEventListener,
  MAX_PAGE_SIZE,
  MAX_PUSH_CONFIGS,
  type TurnStart,
} from '../storage.js';
import { type SqlWrite, subscribe, tellEach } from './port.js';
import {
  ConversationChanges,
  missing,
  pendingApprovals,
  requireApproval,
  requireConversation,
  type StoredConversation,
  unfinishedApprovals,
} from './conversation-changes.js';
import { deletionAuditRow, deletionRejection, pruneAuditHead, pruneEventHead } from './lifecycle.js';
import type { QueryName } from './queries.js';
import { type RunJournalRow, type RunStepRow, recordJournal, runRecordOf, runStepOf } from './run-journal.js';

const pageSize = (asked: number) => Math.min(asked || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);

/** ABORTED: the run is not at the revision the caller read (another request changed it); `then` says what to do after reading it. */
const staleRun = (conversation: StoredConversation, expected: number, then: string) =>
  aborted(
    `the run of conversation ${conversation.id} is at revision ${conversation.run_revision}, not ${expected}: another request changed it; read it again and ${then}`,
  );

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

  /** Inserts a new active conversation with its first `messages`, all one change at one timestamp; its id. */
  private async insertActiveConversation(
    tx: SqlWrite,
    fields: Pick<pb.CreateConversationRequest, 'sessionId' | 'owner' | 'a2aOrigin'>,
    messages: pb.NewMessage[],
  ): Promise<string> {
    const [newest] = await tx.all<{ created_at: string }>('newestCreatedAt', {});
    const createdAt = timestampAfter(newest?.created_at, this.now());
    const id = randomUUID();
    const owner = fields.owner ?? null;
    await tx.run('insertConversation', {
      id,
      session_id: fields.sessionId,
      created_at: createdAt,
      a2a_dialect: fields.a2aOrigin?.dialect ?? null,
      a2a_context_id: fields.a2aOrigin?.contextId ?? null,
      owner,
    });
    tx.changes.count(owner, 'active', 1);
    // From no status to active: the event that makes it known to watchers of every conversation.
    tx.changes.event(id, createdAt, { kind: 'status_changed', status: 'active' });
    // The conversation row and its first messages share one timestamp: it is one change.
    await this.applyChange(tx, await requireConversation(tx, id), { messages }, createdAt);
    return id;
  }

  /** A new active conversation; a non-empty system prompt becomes message seq 1. */
  async createConversation(request: pb.CreateConversationRequest): Promise<pb.Conversation> {
    return this.write(async (tx) => {
      const messages = request.systemPrompt === '' ? [] : [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: request.systemPrompt }];
      const id = await this.insertActiveConversation(tx, request, messages);
      // Its first turn, as StartTurn starts one on an idle conversation (no note, no run, nothing unfinished to settle).
      if (request.firstMessage) {
        await this.applyChange(tx, await requireConversation(tx, id), { messages: [request.firstMessage] });
        await this.markTurnRunning(tx, id, request.lease);
      }
      return this.readConversation(tx, await requireConversation(tx, id), true);
    });
  }

  /**
   * A fork: a new conversation owned by `owner` with a copy of the source's messages 1..upToSeq (same seqs, new ids and
   * times), in one transaction; nothing else of the source goes with it (no approval, decision, run or journal). With a
   * lease, its turn is marked running in the same transaction, as StartTurn marks one.
   */
  async forkConversation(request: pb.ForkConversationRequest): Promise<pb.Conversation> {
    return this.write(async (tx) => {
      const source = await requireConversation(tx, request.sourceConversationId);
      const upTo = Number(request.upToSeq);
      if (upTo > source.message_count)
        throw invalidArgument(`up_to_seq: conversation ${source.id} has ${source.message_count} messages, not ${upTo}`);
      const copied = (await tx.all<MessageRow>('selectMessages', { conversation_id: source.id }))
        .filter((row) => row.seq <= upTo)
        .map(messageFromRow)
        .map(
          ({ role, content, toolCall, usage, compaction, node }): pb.NewMessage => ({ role, content, toolCall, usage, compaction, node }),
        );
      const id = await this.insertActiveConversation(tx, request, copied);
      if (request.lease) await this.markTurnRunning(tx, id, request.lease);
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
    const limit = pageSize(request.pageSize);
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
      const { page, nextPageToken } = pageOf(rows, limit, (last) => encodePageToken({ createdAt: last.created_at, id: last.id }));
      // Summaries: the row has the counts and the title; no message is read.
      const pending = await this.pendingApprovalsOf(tx, page);
      return {
        conversations: page.map((row) => this.conversationOf(row, [], pending.get(row.id) ?? [])),
        nextPageToken,
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
      await recordJournal(tx, conversation.id, request.journal, this.now(), Number(conversation.message_count));
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
    let decision = claimDecision(request);
    const outcome = await this.write(async (tx): Promise<ApprovalClaim | 'refused'> => {
      const found = await requireApproval(tx, request.uuid);
      // The conversation first (the lock order of every write), then the conditional claim.
      await this.lockConversation(tx, found.conversation_id);
      // An approval that needs a quorum is approved by votes; the expiry's own approval is the policy's, not a person's.
      if (request.approved && (found.quorum_required ?? 0) >= 1 && request.via !== EXPIRY_VIA) {
        const voted = await this.vote(tx, await requireApproval(tx, found.uuid), decision);
        if (voted.answer !== undefined) return voted.answer;
        decision = voted.decision;
      }
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
        throw staleRun(conversation, request.expectedRunRevision, 'decide again');
      }
      await this.applyChange(tx, conversation, {
        messages,
        ...waitingState(conversation.status, await pendingApprovals(tx, conversation.id)),
        run: request.clearRun ? null : undefined,
        resolved,
      });
      await recordJournal(tx, conversation.id, request.journal, this.now(), Number(conversation.message_count));
      // Approved (or a rejection the model is told of), the turn goes on, with the caller's lease if any.
      if (request.approved || request.continuesTurn) await this.markTurnRunning(tx, conversation.id, request.lease);
      return { claimed: true, approval: approvalFromRow(claimed) };
    });
    // The refusal is audited in a transaction that wrote nothing else, and then told.
    if (outcome === 'refused')
      throw permissionDenied(`approval ${request.uuid}: the principal who asked for the call may not vote for it (not_requester)`);
    return outcome;
  }

  /**
   * One approving vote of a quorum, under the conversation's lock: refused (audited) for the requester with
   * not_requester; ALREADY_EXISTS for a second vote of one voter on the arguments in force; an edit replaces the
   * arguments and restarts the count. An `answer` unless this vote completes the quorum: then the decision that claims,
   * with the arguments in force.
   */
  private async vote(
    tx: SqlWrite,
    approval: ApprovalRow,
    decision: ClaimDecision,
  ): Promise<{ answer: ApprovalClaim | 'refused'; decision?: undefined } | { answer?: undefined; decision: ClaimDecision }> {
    const now = isoTimestamp(this.now());
    // Decided, or past its deadline: nothing to vote on; the answer is a lost claim's.
    if ((await tx.all('approvalOpenForVote', { uuid: approval.uuid, now })).length === 0)
      return { answer: lostClaim(approvalFromRow(approval)) };
    const voter = decision.decided_by;
    if (approval.quorum_not_requester && approval.requested_by && voter === approval.requested_by) {
      await tx.all('insertAudit', voteAuditRow(approval, decision, now, { refused: true }));
      return { answer: 'refused' };
    }
    const inForce = approval.edited_args ?? approval.tool_args;
    const hashInForce = callHash(approval.tool_name, jsonObjectOf(inForce));
    const asked = decision.edited_args;
    const hash = asked === null ? hashInForce : callHash(approval.tool_name, jsonObjectOf(asked));
    const edits = hash !== hashInForce;
    if (edits) {
      // New arguments: the votes for the others no longer count toward them.
      await tx.run('editPendingArgs', { uuid: approval.uuid, edited_args: asked, now });
      await tx.run('deleteVotes', { approval_uuid: approval.uuid });
    } else if ((await tx.all('selectVote', { approval_uuid: approval.uuid, voter })).length > 0) {
      throw alreadyExists(`approval ${approval.uuid}: ${voter} already voted for these arguments; another voter completes the quorum`);
    }
    await tx.run('insertVote', {
      approval_uuid: approval.uuid,
      voter,
      via: decision.via,
      reason: decision.reason,
      at: now,
      args_hash: hash,
    });
    const [count] = await tx.all<{ n: number | string }>('countVotes', { approval_uuid: approval.uuid, args_hash: hash });
    const votes = Number(count?.n ?? 0);
    const required = approval.quorum_required!;
    await tx.all('insertAudit', voteAuditRow(approval, decision, now, { votes, required, edited: edits }));
    // The vote that completes the quorum claims as any approval does, with the arguments in force.
    if (votes >= required) return { decision: { ...decision, edited_args: edits ? asked : (approval.edited_args ?? null) } };
    return { answer: { claimed: false, voteRecorded: true, approval: approvalFromRow(await requireApproval(tx, approval.uuid)) } };
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

  // The lists: each page is one walk of an index (or one per status or kind, merged) from the cursor, one row longer
  // than the page.

  async listPendingApprovals(request: pb.ListPendingApprovalsRequest): Promise<ApprovalPage> {
    const limit = pageSize(request.pageSize);
    const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken, 'ListPendingApprovals');
    const args = { created_at: cursor?.createdAt, uuid: cursor && (storedId(cursor.id) ?? FIRST_UUID), limit: limit + 1 };
    const rows = await this.read((tx) => tx.all<ApprovalRow>(cursor ? 'pendingApprovalsPageAfter' : 'pendingApprovalsFirstPage', args));
    return approvalPage(rows, limit, encodePageToken);
  }

  async listApprovals(request: pb.ListApprovalsRequest): Promise<ApprovalPage> {
    const limit = pageSize(request.pageSize);
    const cursor = request.pageToken === '' ? FIRST_APPROVAL : decodeApprovalsPageToken(request.pageToken);
    const statuses = listedStatuses(request.statuses);
    const after = { created_at: cursor.createdAt, uuid: cursor.id, limit: limit + 1 };
    if (request.conversationId === '') {
      const walks = await this.read((tx) =>
        Promise.all(statuses.map((status) => tx.all<ApprovalRow>('approvalsOfStatusAfter', { ...after, status }))),
      );
      return approvalPage(oldestFirst(walks, limit + 1), limit);
    }
    const conversationId = storedId(request.conversationId);
    if (conversationId === undefined) return approvalPage([], limit);
    const args = { ...after, conversation_id: conversationId, statuses };
    return approvalPage(await this.read((tx) => tx.all<ApprovalRow>('approvalsOfConversationAfter', args)), limit);
  }

  async listDueApprovals(limit: number): Promise<pb.PendingApproval[]> {
    return this.read(async (tx) =>
      (await tx.all<ApprovalRow>('dueApprovals', { now: isoTimestamp(this.now()), limit })).map(approvalFromRow),
    );
  }

  /**
   * Escalates the pending approvals whose escalates_at has passed, each once across replicas: under its conversation's
   * lock, the conditional mark (escalated_at), its event and its audit entry commit together; one that another replica
   * escalated (or somebody decided) meanwhile is left alone. The approvals this call escalated, as stored.
   */
  async escalateDueApprovals(limit: number): Promise<pb.PendingApproval[]> {
    const due = await this.read((tx) => tx.all<ApprovalRow>('dueEscalations', { now: isoTimestamp(this.now()), limit }));
    const escalated: pb.PendingApproval[] = [];
    for (const approval of due) {
      const row = await this.write(async (tx) => {
        await this.lockConversation(tx, approval.conversation_id);
        const now = isoTimestamp(this.now());
        const [marked] = await tx.all<ApprovalRow>('markEscalated', { uuid: approval.uuid, now });
        if (!marked) return undefined;
        tx.changes.event(marked.conversation_id, now, { kind: 'approval_escalated', approval: marked });
        await tx.all('insertAudit', escalationAuditRow(marked, now));
        return marked;
      });
      if (row) escalated.push(approvalFromRow(row));
    }
    return escalated;
  }

  /**
   * Appends an audit entry with the store's id and time (the request's are ignored); with a policy's decision on a
   * call, its conversation's approval_resolved event too (the webhooks' approval.decided), in the same transaction.
   */
  async appendAudit(entry: pb.AuditEntry, policyDecision?: pb.PolicyDecision): Promise<pb.AuditEntry> {
    const { kind, actor, via, subject, detailJson } = entry;
    return this.write(async (tx) => {
      const at = isoTimestamp(this.now());
      if (policyDecision) {
        await this.lockConversation(tx, policyDecision.conversationId);
        tx.changes.event(policyDecision.conversationId, at, { kind: 'approval_resolved', approval: policyDecisionRow(policyDecision, at) });
      }
      const args = { at, kind, actor, via, subject, detail_json: detailJson };
      return auditEntryFromRow((await tx.all<AuditRow>('insertAudit', args))[0]!);
    });
  }

  async listAudit(request: pb.ListAuditRequest): Promise<AuditPage> {
    const limit = pageSize(request.pageSize);
    const before = request.pageToken === '' ? Number.MAX_SAFE_INTEGER : decodeAuditPageToken(request.pageToken);
    if (request.kinds.length === 0)
      return auditPage(await this.read((tx) => tx.all<AuditRow>('auditBefore', { before, limit: limit + 1 })), limit);
    const walks = await this.read((tx) =>
      Promise.all([...new Set(request.kinds)].map((kind) => tx.all<AuditRow>('auditOfKindBefore', { kind, before, limit: limit + 1 }))),
    );
    return auditPage(newestFirst(walks, limit + 1), limit);
  }

  /** One statement: of processes claiming at once, one holds the cursor. */
  async claimWebhookCursor(endpoint: string, lease: pb.RunLease): Promise<pb.ClaimWebhookCursorResponse> {
    return this.write(async (tx) => {
      const args = { endpoint, owner: lease.owner, node: lease.node, ttl_ms: lease.ttlMs, now_ms: this.now() };
      const [claimed] = await tx.all<{ last_event_id: number }>('claimWebhookCursor', args);
      if (claimed) return { held: true, lastEventId: claimed.last_event_id };
      const [held] = await tx.all<{ last_event_id: number }>('selectWebhookCursor', { endpoint });
      return { held: false, lastEventId: held?.last_event_id ?? 0 };
    });
  }

  async advanceWebhookCursor(request: pb.AdvanceWebhookCursorRequest): Promise<boolean> {
    const { endpoint, owner, lastEventId, ttlMs } = request;
    return this.write(async (tx) => {
      const args = { endpoint, owner, last_event_id: lastEventId, ttl_ms: ttlMs, now_ms: this.now() };
      return (await tx.run('advanceWebhookCursor', args)) > 0;
    });
  }

  async setPushConfig(config: pb.PushConfig): Promise<pb.PushConfig> {
    return this.write(async (tx) => {
      // Under the conversation's lock, like the write that ends a turn: that write sees this config or ends before it.
      const conversation = await this.lockConversation(tx, config.conversationId);
      const [existing] = await tx.all<PushConfigRow>('selectPushConfig', { conversation_id: conversation.id, id: config.id });
      if (!existing) {
        const [count] = await tx.all<{ n: number | string }>('countPushConfigs', { conversation_id: conversation.id });
        if (Number(count?.n ?? 0) >= MAX_PUSH_CONFIGS)
          throw failedPrecondition(`task ${conversation.id} has ${MAX_PUSH_CONFIGS} push-notification configs already; delete one first`);
      }
      // A replaced config keeps its creation.
      const createdAt = existing?.created_at ?? isoTimestamp(this.now());
      const { id, url, token, dialect } = config;
      const row = { conversation_id: conversation.id, id, url, token, dialect, created_at: createdAt };
      await tx.run('upsertPushConfig', row);
      return pushConfigOfRow(row);
    });
  }

  async getPushConfig(conversationId: string, id: string): Promise<pb.PushConfig | undefined> {
    const stored = storedId(conversationId);
    if (stored === undefined) return undefined;
    const [row] = await this.read((tx) => tx.all<PushConfigRow>('selectPushConfig', { conversation_id: stored, id }));
    return row && pushConfigOfRow(row);
  }

  async listPushConfigs(conversationId: string): Promise<pb.PushConfig[]> {
    const stored = storedId(conversationId);
    if (stored === undefined) return [];
    return (await this.read((tx) => tx.all<PushConfigRow>('selectPushConfigs', { conversation_id: stored }))).map(pushConfigOfRow);
  }

  async deletePushConfig(conversationId: string, id: string): Promise<boolean> {
    const stored = storedId(conversationId);
    if (stored === undefined) return false;
    return (await this.write((tx) => tx.run('deletePushConfig', { conversation_id: stored, id }))) > 0;
  }

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
        throw staleRun(conversation, request.expectedRevision, 'redo the change');
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
      await recordJournal(tx, conversation.id, request.journal, this.now(), Number(conversation.message_count));
      // The run ended (cleared) or paused (waiting): its turn is over.
      const paused = waiting.status === 'waiting_approval';
      if (request.run === undefined || paused) await this.endTurn(tx, conversation.id, endingOutcome(paused, request.messages));
      return conversation.run_revision + 1;
    });
  }

  /** A conversation's runs as their journal keeps them, newest first; NOT_FOUND for an unknown conversation. */
  async listRuns(request: pb.ListRunsRequest): Promise<pb.ListRunsResponse> {
    const limit = pageSize(request.pageSize);
    const cursor = request.pageToken === '' ? undefined : decodeRunsPageToken(request.pageToken);
    return this.read(async (tx) => {
      const conversation = await requireConversation(tx, request.conversationId);
      const args = { conversation_id: conversation.id, limit: limit + 1, started_at: cursor?.createdAt, run_id: cursor?.id };
      const rows = await tx.all<RunJournalRow>(cursor ? 'runsOfConversationPageAfter' : 'runsOfConversationFirstPage', args);
      const { page, nextPageToken } = pageOf(rows, limit, (last) => encodeRunsPageToken({ createdAt: last.started_at, id: last.run_id }));
      return { runs: page.map(runRecordOf), nextPageToken };
    });
  }

  /** One run with its steps in order; NOT_FOUND for an unknown run. */
  async getRun(runId: string): Promise<pb.GetRunResponse> {
    const id = storedId(runId);
    if (id === undefined) throw missing('run', runId);
    return this.read(async (tx) => {
      const [run] = await tx.all<RunJournalRow>('selectRunJournal', { run_id: id });
      if (!run) throw missing('run', runId);
      const steps = await tx.all<RunStepRow>('selectRunSteps', { run_id: id });
      return { run: runRecordOf(run), steps: steps.map(runStepOf) };
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
    return this.write(async (tx) => {
      const id = storedId(conversationId);
      if (id !== undefined && (await tx.run(query, { ...args, id, now_ms: this.now() })) > 0) return true;
      await requireConversation(tx, conversationId);
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
    const kinds = range.kinds?.length ? range.kinds : undefined;
    const args = { conversation_id: conversationId, after_id: range.afterId, limit: range.limit, kinds };
    let query: QueryName = every ? 'selectEventsAfter' : 'selectConversationEventsAfter';
    if (kinds) query = every ? 'selectEventsOfKindsAfter' : 'selectConversationEventsOfKindsAfter';
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

  /**
   * Deletes a conversation in one transaction (store.proto DeleteConversation): refused while an approved call has no
   * outcome; its pending approvals rejected and audited first; its events, then its row (the rest cascades); the
   * `conversation.deleted` entry and event last; then the space goes back. Returns the rejected approvals.
   */
  async deleteConversation(request: pb.DeleteConversationRequest): Promise<string[]> {
    const rejected = await this.write(async (tx) => {
      const conversation = await this.lockConversation(tx, request.id);
      const [unfinished] = await unfinishedApprovals(tx, conversation.id);
      if (unfinished) {
        throw failedPrecondition(
          `conversation ${conversation.id} runs approved call ${unfinished.uuid} (${unfinished.tool_name}), which has no outcome yet; delete it once the call has finished`,
        );
      }
      const rejected: ApprovalRow[] = [];
      for (const approval of await pendingApprovals(tx, conversation.id)) {
        const decided = await this.decide(tx, approval.uuid, deletionRejection(request.actor, request.via));
        if (decided) rejected.push(decided);
      }
      await tx.run('deleteConversationEvents', { conversation_id: conversation.id });
      await tx.run('deleteConversation', { id: conversation.id });
      tx.changes.count(conversation.owner, conversation.status, -1);
      const at = isoTimestamp(this.now());
      await tx.all('insertAudit', deletionAuditRow(conversation, request.actor, request.via, rejected, at));
      // Written after the deletion of its events: the one event left of it, which ends the live streams of it.
      tx.changes.event(conversation.id, at, { kind: 'conversation_deleted' });
      return rejected.map((approval) => approval.uuid);
    });
    await this.reclaimSpace();
    return rejected;
  }

  /** Conversations unchanged for `idleForMs`, least recently changed first. */
  async listIdleConversations(idleForMs: number, limit: number): Promise<string[]> {
    const before = isoTimestamp(this.now() - idleForMs);
    return this.read(async (tx) => (await tx.all<{ id: string }>('idleConversations', { before, limit })).map((row) => row.id));
  }

  /** One batch of the event log's head older than `olderThanMs` (store.proto PruneEvents); then the space goes back. */
  async pruneEvents(olderThanMs: number, limit: number): Promise<pb.PruneEventsResponse> {
    const before = isoTimestamp(this.now() - olderThanMs);
    const pruned = await this.write((tx) => pruneEventHead(tx, before, limit));
    if (pruned.removed > 0) await this.reclaimSpace();
    return pruned;
  }

  /** One batch of the audit trail's head older than `olderThanMs` (retention.audit). */
  async pruneAudit(olderThanMs: number, limit: number): Promise<number> {
    const before = isoTimestamp(this.now() - olderThanMs);
    const removed = await this.write((tx) => pruneAuditHead(tx, before, limit));
    if (removed > 0) await this.reclaimSpace();
    return removed;
  }

  /** One batch of the journals of runs that ended longer than `olderThanMs` ago (runs.keep), with their steps. */
  async pruneRunJournals(olderThanMs: number, limit: number): Promise<pb.PruneRunJournalsResponse> {
    const before = isoTimestamp(this.now() - olderThanMs);
    const runs = await this.write((tx) => tx.all<{ step_count: number | string }>('deleteEndedRuns', { before, limit }));
    if (runs.length > 0) await this.reclaimSpace();
    return { removed: runs.length, stepsRemoved: runs.reduce((sum, run) => sum + Number(run.step_count), 0) };
  }

  /** One statement: of replicas claiming at once, one holds the lease until it expires or its owner claims again. */
  async claimBackgroundLease(name: string, lease: pb.RunLease): Promise<boolean> {
    const args = { name, owner: lease.owner, node: lease.node, ttl_ms: lease.ttlMs, now_ms: this.now() };
    return this.write(async (tx) => (await tx.all('claimBackgroundLease', args)).length > 0);
  }

  /** Gives the pages that deletions freed back to the file system where the database does not do it itself. */
  protected async reclaimSpace(): Promise<void> {}

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
