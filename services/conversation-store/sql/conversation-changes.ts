import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { failedPrecondition, invalidArgument, notFound } from '../../common/grpc/errors.js';
import {
  appendedMessageRow,
  byConversation,
  type ClaimDecision,
  type ConversationChange,
  decisionAuditRow,
  expiresInMs,
  interruptedApprovalProblem,
  type NewApprovalFields,
  newApprovalRow,
  summaryOf,
  takePage,
} from '../changes.js';
import { storedId } from '../ids.js';
import { type ApprovalStatusName, type ConversationStatusName, isoTimestamp, timestampAfter, type TurnOutcome } from '../records.js';
import { type ApprovalRow, type ConversationRow, conversationFromRow, type MessageRow, messageFromRow } from '../rows.js';
import { type CommittedEventsListener, INTERRUPTED_TURN_NOTE, MAX_PAGE_CONTENT_CHARS } from '../storage.js';
import type { SqlStatements, SqlWrite } from './port.js';

/** A conversation row with whether another live process holds its mark, and has watchers of it. */
export type StoredConversation = ConversationRow & { running_turn_boot_live: boolean | number | null; watched_elsewhere: boolean | number };

/** NOT_FOUND for an id that names nothing stored (or no UUID at all). */
export const missing = (what: 'conversation' | 'approval' | 'run', id: string) => notFound(`${what} ${id} not found`);

/** The conversation row; NOT_FOUND for an unknown id, or one that is no UUID at all. */
export async function requireConversation(tx: SqlStatements, id: string): Promise<StoredConversation> {
  const stored = storedId(id);
  const row = stored === undefined ? undefined : (await tx.all<StoredConversation>('selectConversation', { id: stored }))[0];
  if (!row) throw missing('conversation', id);
  return row;
}

export async function requireApproval(tx: SqlStatements, uuid: string): Promise<ApprovalRow> {
  const stored = storedId(uuid);
  const row = stored === undefined ? undefined : (await tx.all<ApprovalRow>('selectApproval', { uuid: stored }))[0];
  if (!row) throw missing('approval', uuid);
  return row;
}

/** A conversation's pending approvals, oldest first. */
export function pendingApprovals(tx: SqlStatements, conversationId: string): Promise<ApprovalRow[]> {
  return tx.all<ApprovalRow>('selectPendingApprovals', { conversation_id: conversationId });
}

/** A conversation's approvals that are approved or executing, oldest first. */
export function unfinishedApprovals(tx: SqlStatements, conversationId: string): Promise<ApprovalRow[]> {
  return tx.all<ApprovalRow>('selectUnfinishedApprovals', { conversation_id: conversationId });
}

export interface SqlStorageSettings {
  /** This store process: its running marks. */
  bootId: string;
  /** Epoch milliseconds; replaced in tests to age approvals and marks without waiting. */
  now: () => number;
  /** A running mark older than this is stale (store.proto, StartTurn). */
  staleTurnAfterMs: number;
  /** Whether a writer locks the conversation's row first (PostgreSQL); SQLite's writer holds the whole file. */
  locksRows: boolean;
}

/** What the store's rules share: a change to a conversation with its events, a turn's mark and lease, the reads. */
export abstract class ConversationChanges {
  protected readonly listeners = new Set<CommittedEventsListener>();
  readonly bootId: string;
  protected readonly now: () => number;

  constructor(private readonly settings: SqlStorageSettings) {
    this.bootId = settings.bootId;
    this.now = settings.now;
  }

  /** Every statement of the body sees one snapshot. */
  protected abstract read<R>(body: (tx: SqlStatements) => Promise<R>): Promise<R>;
  /** One write transaction; its events reach the listeners after COMMIT, before it returns. */
  protected abstract write<R>(body: (tx: SqlWrite) => Promise<R>): Promise<R>;

  /** Whether a running mark belongs to a live store process: this one, or (PostgreSQL) a replica seen lately. */
  protected liveMark(row: StoredConversation): boolean {
    return row.running_turn_boot === this.bootId || Boolean(row.running_turn_boot_live);
  }

  /** A turn runs now: marked by a live store or with a lease (whichever store marked it), and not stale. */
  protected turnRunning(row: StoredConversation): boolean {
    if (!row.running_turn_boot || !row.running_turn_since) return false;
    if (!this.liveMark(row) && !row.lease_owner) return false;
    return Date.parse(row.running_turn_since) > this.now() - this.settings.staleTurnAfterMs;
  }

  /**
   * Marks a turn running from now, after the change that begins it; turn_started unless a turn was running already (a
   * sibling branch's continuation). A mark it replaces (stale, or a dead store's) is a turn a crash cut off.
   */
  protected async markTurnRunning(tx: SqlWrite, id: string, lease: pb.RunLease | undefined): Promise<void> {
    const row = await requireConversation(tx, id);
    const running = this.turnRunning(row);
    if (row.running_turn_boot && !running) await this.turnEnded(tx, id, row.updated_at, 'interrupted');
    const now = this.now();
    // The lease is the new turn's: a new owner, no takeovers yet; none clears an earlier one.
    await tx.run('markTurnRunning', {
      id,
      boot: this.bootId,
      since: isoTimestamp(now),
      lease_owner: lease?.owner ?? null,
      lease_node: lease?.node ?? null,
      lease_ttl_ms: lease?.ttlMs ?? null,
      now_ms: now,
    });
    if (!running) tx.changes.event(id, row.updated_at, { kind: 'turn_started' });
  }

  /** Clears the running mark, with its turn_ended event (saying how it ended) when there was one. */
  protected async endTurn(tx: SqlWrite, id: string, outcome: TurnOutcome): Promise<void> {
    if ((await tx.run('clearTurnRunning', { id })) === 0) return;
    // The event's time is the conversation's last change: a mark alone changes nothing a reader sees.
    await this.turnEnded(tx, id, (await requireConversation(tx, id)).updated_at, outcome);
  }

  /**
   * A turn_ended event, with whether the conversation has push-notification configs now (in this transaction, under the
   * conversation's lock, as SetPushConfig): the A2A push outbox reads them only for a turn whose event says so.
   */
  private async turnEnded(tx: SqlWrite, id: string, at: string, outcome: TurnOutcome): Promise<void> {
    const [found] = await tx.all<{ has: boolean | number }>('hasPushConfigs', { conversation_id: id });
    tx.changes.event(id, at, { kind: 'turn_ended', outcome, hasPushConfigs: Boolean(found?.has) });
  }

  /**
   * The conditional claim of one pending approval with a decision, audited in its transaction; undefined when it is no
   * longer pending (a lost claim decided nothing).
   */
  protected async decide(tx: SqlWrite, uuid: string, decision: ClaimDecision): Promise<ApprovalRow | undefined> {
    const now = isoTimestamp(this.now());
    const [decided] = await tx.all<ApprovalRow>('claimApproval', { uuid, ...decision, now, decided_at: now });
    if (decided) await tx.all('insertAudit', decisionAuditRow(decided, now));
    return decided;
  }

  /** The conversation of a row, with whether a turn runs on it now and whether another replica watches it. */
  protected conversationOf(row: StoredConversation, messages: pb.Message[], pending: readonly ApprovalRow[]): pb.Conversation {
    return { ...conversationFromRow(row, messages, pending), turnRunning: this.turnRunning(row), watched: Boolean(row.watched_elsewhere) };
  }

  /** The note for a turn a dead store left running; none with a lease (orchestrators take that run over). */
  protected interruptedTurnNote(row: StoredConversation): pb.NewMessage[] {
    const dead = row.running_turn_boot && !this.liveMark(row) && !row.lease_owner;
    return dead ? [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: INTERRUPTED_TURN_NOTE }] : [];
  }

  /** The conversation row, locked for this transaction where rows are locked, read after the lock (the latest version). */
  protected async lockConversation(tx: SqlStatements, id: string): Promise<StoredConversation> {
    if (this.settings.locksRows) {
      const stored = storedId(id);
      if (stored === undefined || (await tx.all('lockConversation', { id: stored })).length === 0) throw missing('conversation', id);
    }
    return requireConversation(tx, id);
  }

  /** Inserts a new approval; its expiry counts from its creation, on the clock that expires it. */
  protected async insertApproval(tx: SqlWrite, conversationId: string, approval: NewApprovalFields, at: string): Promise<ApprovalRow> {
    const row = newApprovalRow(conversationId, approval, at);
    const [inserted] = await tx.all<{ expires_at: string | null }>('insertApproval', { ...row, expires_in_ms: expiresInMs(approval) });
    return { ...row, expires_at: inserted!.expires_at };
  }

  /** UpdateRun's interrupted_approval: executing → interrupted, no message or event; FAILED_PRECONDITION rolls it all back. */
  protected async interruptExecuting(tx: SqlWrite, conversationId: string, uuid: string, at: string): Promise<void> {
    const stored = storedId(uuid);
    const args = { uuid: stored, conversation_id: conversationId, now: at };
    if (stored !== undefined && (await tx.all('interruptExecutingApproval', args)).length > 0) return;
    const found = stored === undefined ? undefined : (await tx.all<ApprovalRow>('selectApproval', { uuid: stored }))[0];
    throw failedPrecondition(interruptedApprovalProblem(conversationId, uuid, found));
  }

  /** A conditional status move under the conversation's lock; FAILED_PRECONDITION naming the status found otherwise. */
  protected async moveApproval(
    tx: SqlWrite,
    uuid: string,
    from: ApprovalStatusName,
    to: ApprovalStatusName,
    rule: string,
  ): Promise<ApprovalRow> {
    const approval = await requireApproval(tx, uuid);
    await this.lockConversation(tx, approval.conversation_id);
    const [moved] = await tx.all<ApprovalRow>('moveApproval', { uuid: approval.uuid, from, to, now: isoTimestamp(this.now()) });
    if (moved) return moved;
    const current = await requireApproval(tx, uuid);
    throw failedPrecondition(`approval ${current.uuid} is ${current.status}: ${rule}`);
  }

  /**
   * Appends messages at seq = message_count + 1… (never a MAX()) with the conversation's new state, all at `at`. Events
   * in the order a reader expects: approvals resolved, messages added (a result), approvals requested, the new status.
   */
  protected async applyChange(
    tx: SqlWrite,
    conversation: StoredConversation,
    change: ConversationChange,
    at = timestampAfter(conversation.updated_at, this.now()),
  ): Promise<pb.Message[]> {
    const id = conversation.id;
    const next = {
      id,
      status: change.status ?? conversation.status,
      pending_approval_uuid: change.pendingApprovalUuid !== undefined ? change.pendingApprovalUuid : conversation.pending_approval_uuid,
      message_count: conversation.message_count,
      updated_at: at,
      input_tokens: conversation.input_tokens,
      output_tokens: conversation.output_tokens,
    };
    for (const approval of change.resolved ?? []) tx.changes.event(id, at, { kind: 'approval_resolved', approval });
    const appended: MessageRow[] = [];
    for (const message of change.messages ?? []) {
      const row = appendedMessageRow(id, message, next, at);
      await tx.run('insertMessage', { ...row });
      tx.changes.event(id, at, { kind: 'message_added', message: row });
      appended.push(row);
    }
    for (const approval of change.requested ?? []) tx.changes.event(id, at, { kind: 'approval_requested', approval });
    if (next.status !== conversation.status) {
      tx.changes.event(id, at, { kind: 'status_changed', status: next.status });
      tx.changes.count(conversation.owner, conversation.status, -1);
      tx.changes.count(conversation.owner, next.status, 1);
    }
    if (change.run !== undefined) {
      await tx.run('writeRun', {
        conversation_id: id,
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
    if (!unchanged) await tx.run('updateConversation', next);
    return appended.map(messageFromRow);
  }

  /** Full conversation with its pending approvals (read only while it waits). */
  protected async readConversation(tx: SqlStatements, row: StoredConversation, includeMessages: boolean): Promise<pb.Conversation> {
    const messages = includeMessages ? (await tx.all<MessageRow>('selectMessages', { conversation_id: row.id })).map(messageFromRow) : [];
    const pending = row.status === 'waiting_approval' ? await pendingApprovals(tx, row.id) : [];
    return this.conversationOf(row, messages, pending);
  }

  /** One page of history, oldest first: the newest, or those next to a cursor; one more row tells whether more follow. */
  protected async readConversationPage(
    tx: SqlStatements,
    row: StoredConversation,
    request: pb.GetConversationRequest,
  ): Promise<pb.Conversation> {
    const limit = request.messageLimit ?? 0;
    const after = request.afterMessageId ? await this.messageSeq(tx, row, request.afterMessageId, 'after_message_id') : undefined;
    const before = request.beforeMessageId
      ? await this.messageSeq(tx, row, request.beforeMessageId, 'before_message_id')
      : row.message_count + 1;
    const walk = await tx.all<MessageRow>(after === undefined ? 'selectMessagesBefore' : 'selectMessagesAfter', {
      conversation_id: row.id,
      seq: after ?? before,
      limit: limit + 1,
    });
    // Against the walk's direction, a cursor message itself lies beyond the page.
    const { taken, moreOnWalk } = takePage(walk, limit, MAX_PAGE_CONTENT_CHARS);
    const messages = (after === undefined ? taken.reverse() : taken).map(messageFromRow);
    const pending = row.status === 'waiting_approval' ? await pendingApprovals(tx, row.id) : [];
    return {
      ...this.conversationOf(row, messages, pending),
      hasMoreBefore: after === undefined ? moreOnWalk : true,
      hasMoreAfter: after === undefined ? Boolean(request.beforeMessageId) : moreOnWalk,
    };
  }

  /** The seq of a cursor message; INVALID_ARGUMENT when the id is not a message of this conversation. */
  protected async messageSeq(tx: SqlStatements, row: StoredConversation, messageId: string, field: string): Promise<number> {
    const stored = storedId(messageId);
    // Only a well-formed id is named back: the text came from outside.
    if (stored === undefined) throw invalidArgument(`${field}: not a message id; expected the id of a message of conversation ${row.id}`);
    const [position] = await tx.all<{ conversation_id: string; seq: number }>('selectMessagePosition', { id: stored });
    if (!position || position.conversation_id !== row.id)
      throw invalidArgument(`${field}: ${stored} is not a message of conversation ${row.id}`);
    return position.seq;
  }

  /** Pending approvals of a page's waiting conversations, by conversation id, oldest first, in one query. */
  protected async pendingApprovalsOf(tx: SqlStatements, page: StoredConversation[]): Promise<Map<string, ApprovalRow[]>> {
    const waiting = page.flatMap((row) => (row.status === 'waiting_approval' ? [row.id] : []));
    if (waiting.length === 0) return new Map();
    return byConversation(await tx.all<ApprovalRow>('selectPendingApprovalsOfConversations', { ids: waiting }));
  }

  /** The counts by status of every conversation, or of one owner's. */
  protected async summary(tx: SqlStatements, owner?: string): Promise<pb.ConversationSummary> {
    const counts: Record<ConversationStatusName, number> = { active: 0, waiting_approval: 0, completed: 0 };
    const query = owner === undefined ? 'selectCounts' : 'selectOwnerCounts';
    const rows = await tx.all<{ status: ConversationStatusName; count: number }>(query, { owner });
    for (const row of rows) counts[row.status] = Number(row.count);
    return summaryOf(counts);
  }
}
