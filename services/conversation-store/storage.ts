import type {
  AdvanceWebhookCursorRequest,
  AppendMessagesRequest,
  AuditEntry,
  ClaimApprovalRequest,
  ClaimWebhookCursorResponse,
  Conversation,
  ConversationEvent,
  ConversationSummary,
  CreateApprovalRequest,
  CreateConversationRequest,
  FinishApprovalExecutionRequest,
  GetConversationRequest,
  ListApprovalsRequest,
  ListAuditRequest,
  ListConversationsRequest,
  MarkApprovalInterruptedRequest,
  Message,
  PendingApproval,
  RunLease,
  StartTurnRequest,
  TakenOverRun,
  UpdateRunRequest,
  ListPendingApprovalsRequest,
  PushConfig,
} from '../../gen/ts/asg/store/v1/store.js';
import { MAX_PRINCIPAL_LENGTH } from '../common/principal-id.js';

/** At most this many push-notification configs per task: each turn's end POSTs to every one. */
export const MAX_PUSH_CONFIGS = 10;

/**
 * What a conversation shows for a turn a crash cut off: an assistant message, so
 * that the web chat shows it like any answer and the model's history keeps alternating
 * (user, assistant, user) when the user sends the message again.
 */
export const INTERRUPTED_TURN_NOTE = 'This turn was interrupted: the service stopped before it finished. Send your message again to retry.';

/** The stale limit of a running mark when none is given: the default chat.turn_timeout (5 min) plus STALE_TURN_MARGIN_MS. */
export const STALE_TURN_MARGIN_MS = 60_000;
export const DEFAULT_STALE_TURN_MS = 300_000 + STALE_TURN_MARGIN_MS;

/**
 * Runs with leases (store.proto RunLease / TakeOverRuns): the longest lease, the most
 * runs one TakeOverRuns moves, and the longest owner or node name the store keeps.
 */
export const MAX_LEASE_TTL_MS = 3_600_000;
export const MAX_TAKEOVER_LIMIT = 100;
export const MAX_LEASE_NAME_LENGTH = 200;

/**
 * The most due approvals one ListDueApprovals reads; the longest expiry
 * of a new approval (a year); the limits of an audit entry and of a webhook endpoint's name.
 */
export const MAX_DUE_APPROVALS_LIMIT = 100;
export const MAX_APPROVAL_EXPIRY_MS = 366 * 24 * 3_600_000;
export const AUDIT_KIND_PATTERN = /^[a-z]+(\.[a-z_]+)+$/;
export const MAX_AUDIT_KIND_LENGTH = 64;
/** The longest actor (and decider): a principal (services/common/principal-id.ts). */
export const MAX_AUDIT_ACTOR_LENGTH = MAX_PRINCIPAL_LENGTH;
export const MAX_AUDIT_VIA_LENGTH = 32;
export const MAX_AUDIT_SUBJECT_LENGTH = 200;
export const MAX_AUDIT_DETAIL_BYTES = 16 * 1024;
/** The most kinds one ListAudit filters by. */
export const MAX_AUDIT_KINDS = 20;
export const MAX_WEBHOOK_ENDPOINT_LENGTH = 200;
/** The longest owner of a conversation: a principal, bounded as an audit entry's actor. */
export const MAX_OWNER_LENGTH = MAX_AUDIT_ACTOR_LENGTH;

/** The longest history digest (store.proto RecordHistoryDigest): a hash in hex or base64 fits. */
export const MAX_HISTORY_DIGEST_LENGTH = 128;

/** A conversation's owner as the history digests keep it: '' for none (an owner is never blank). */
export const historyOwnerKey = (owner: string | undefined): string => owner ?? '';

/** A page size of 0 asks for this many conversations (store.proto, ListConversationsRequest). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
/** The most messages one page of history holds (GetConversationRequest.message_limit). */
export const MAX_MESSAGE_PAGE_SIZE = 1000;
/**
 * The most text (content and tool calls, in characters) one page of history holds; a page
 * ends before the message that would pass it, but always holds at least one message. With
 * messages of up to 1,000,000 characters, a page of 1,000 could otherwise reach gigabytes.
 */
export const MAX_PAGE_CONTENT_CHARS = 8_000_000;

export interface ConversationPage {
  /** Newest first (created_at, then id, descending). */
  conversations: Conversation[];
  /** Empty on the last page. */
  nextPageToken: string;
  summary: ConversationSummary;
}

export interface ApprovalClaim {
  /** True only for the one request that moved the approval out of pending. */
  claimed: boolean;
  /** After a lost claim: the approval as the winner left it (its decision). */
  approval: PendingApproval;
  /** Lost because the approval's expires_at had passed and the claim was not its expiry's: it is still pending. */
  tooLate?: boolean;
}

export interface TurnStart {
  started: boolean;
  /** Not started because another turn of the conversation is running (store.proto, StartTurn). */
  busy: boolean;
  conversation: Conversation;
  unfinishedApprovals: PendingApproval[];
}

export interface InterruptionMark {
  marked: boolean;
  approval: PendingApproval;
}

/** Which stored events to read: after `afterId`, of one conversation or (absent) of all, at most `limit`. */
export interface EventRange {
  conversationId?: string;
  afterId: number;
  limit: number;
}

export interface ApprovalPage {
  approvals: PendingApproval[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  /** Empty on the last page. */
  nextPageToken: string;
}

/** Called with the stored events of one change, in id order, once the change has committed. */
export type CommittedEventsListener = (events: readonly ConversationEvent[]) => void;

/** Called with a live-only event (id 0) another store replica published. */
export type LiveEventListener = (event: ConversationEvent) => void;

/**
 * Everything the conversation store keeps, behind one interface so that the embedded SQLite
 * driver and a PostgreSQL driver are interchangeable. Requests arrive validated (shape,
 * ranges, non-empty ids); the rules that need the stored data are the store's (sql/storage.ts,
 * written once for both databases), and report themselves with the ServiceErrors of `services/common/grpc/errors.ts`:
 *
 * - unknown ids — including ids that are not UUIDs at all — are NOT_FOUND, never a
 *   database error;
 * - each method is one transaction: messages are appended together with the status,
 *   pending approval and run change they belong to, or not at all;
 * - appending costs the same at any conversation length (seq = message_count + 1), and no
 *   method reads every conversation;
 * - an approval leaves `pending` exactly once, by a conditional update;
 * - every change writes the events that describe it (store.proto, ConversationEvent: a
 *   message added, an approval requested or resolved, a status changed) in its own
 *   transaction, and hands them to the `onEventsCommitted` listeners after the commit.
 */
/** The database answers again (`available`), or stopped answering, with why (for the log only). */
export type AvailabilityListener = (available: boolean, reason: string) => void;

export interface ConversationStorage {
  /** A new active conversation, with its `owner` if given; a non-empty system prompt becomes message seq 1. */
  createConversation(request: CreateConversationRequest): Promise<Conversation>;

  /**
   * NOT_FOUND when unknown. `pendingApproval` is filled while the conversation waits. With a
   * `messageLimit`, one page of messages (store.proto, GetConversationRequest) with
   * `hasMoreBefore`/`hasMoreAfter`; INVALID_ARGUMENT for a cursor that is not a message of it.
   */
  getConversation(request: GetConversationRequest): Promise<Conversation>;

  /**
   * Summaries (no messages; title, message_count, pending approvals). With `owner`,
   * only that owner's conversations, and the summary counts only them. INVALID_ARGUMENT for a
   * page token this store did not issue.
   */
  listConversations(request: ListConversationsRequest): Promise<ConversationPage>;

  /**
   * The user's message appended unless the conversation waits, has a turn running (`busy`:
   * one active run per conversation) or has unfinished approved calls; one
   * transaction, so of concurrent StartTurns at most one starts. A started turn is marked
   * running until the write that ends it; a mark another boot of the store left is noted
   * first (INTERRUPTED_TURN_NOTE), a mark older than the stale limit is ignored (store.proto, StartTurn).
   *
   * With `lease` the mark carries it (owner, node, expiry now + ttl, no takeovers).
   * A mark with a lease is busy whichever store boot wrote it, until it clears or goes stale,
   * and is never noted as interrupted: orchestrators take such runs over (`takeOverRuns`).
   */
  startTurn(request: StartTurnRequest): Promise<TurnStart>;

  /**
   * Appends in request order and returns the stored messages. `status` may be UNSPECIFIED
   * (keep), ACTIVE or COMPLETED: a conversation starts waiting only through
   * `createApproval` and stops only through `claimApproval`, so FAILED_PRECONDITION when a
   * waiting conversation would change status here.
   *
   * Fencing: with `leaseOwner`, ABORTED and nothing written unless that owner holds
   * the conversation's lease on a running turn (expired or not: it is lost only to a takeover,
   * or when the turn ends).
   */
  appendMessages(request: AppendMessagesRequest): Promise<Message[]>;

  /** FAILED_PRECONDITION when the conversation already waits for another approval (simple mode). */
  createApproval(request: CreateApprovalRequest): Promise<PendingApproval>;

  getApproval(uuid: string): Promise<PendingApproval>;

  /**
   * pending → approved | rejected | expired; a lost or late claim is `claimed: false`, not an
   * error. A winning claim that marks the turn running (approved, or `continuesTurn`) sets the
   * mark with the request's `lease` (none: a mark without one), as `startTurn` does.
   *
   * The decision keeps who decided (`decidedBy`, "anonymous" when absent), through
   * which face (`via`), the reason and an approval's edited arguments; `expired` makes a
   * rejection an expiry. A winning claim appends the audit entry of each approval it decided
   * (approval.decided, approval.expired) in its transaction; a lost one appends nothing.
   * INVALID_ARGUMENT for edited arguments on a rejection, or `expired` with `approved`.
   */
  claimApproval(request: ClaimApprovalRequest): Promise<ApprovalClaim>;

  /** approved → executing, recorded before the call runs; FAILED_PRECONDITION otherwise. */
  startApprovalExecution(uuid: string): Promise<PendingApproval>;

  /** executing → done | failed with the result messages; FAILED_PRECONDITION otherwise. */
  finishApprovalExecution(request: FinishApprovalExecutionRequest): Promise<PendingApproval>;

  /** Every pending approval, oldest first (created_at, uuid), a page at a time; INVALID_ARGUMENT for a foreign token. */
  listPendingApprovals(request: ListPendingApprovalsRequest): Promise<{ approvals: PendingApproval[]; nextPageToken: string }>;

  /**
   * Approvals of the given statuses (none: every status), of one conversation or all
   * (''), oldest first (created_at, uuid), a page at a time, through the index of approvals by
   * status or the conversation's; INVALID_ARGUMENT for a token this list did not issue. An
   * unknown or malformed conversation id lists nothing.
   */
  listApprovals(request: ListApprovalsRequest): Promise<ApprovalPage>;

  /**
   * Up to `limit` pending approvals whose expires_at has passed (the driver's clock, as
   * when it was set), oldest expiry first, through the partial index of pending approvals with an
   * expiry. Only a read: claims decide them.
   */
  listDueApprovals(limit: number): Promise<PendingApproval[]>;

  /**
   * Appends an entry to the audit trail (its id and time are the store's; the request's
   * are ignored) and returns it as stored. The trail is append-only: nothing updates or deletes.
   * Decisions are appended by `claimApproval` itself.
   */
  appendAudit(entry: AuditEntry): Promise<AuditEntry>;

  /** The audit trail newest first, of the given kinds (none: every kind), a page at a time. */
  listAudit(request: ListAuditRequest): Promise<AuditPage>;

  /**
   * Takes the lease on an endpoint's webhook cursor when it is free, expired, the
   * caller's own, or held by an earlier boot of the caller's node (then renewed to now + ttl);
   * `held: false` otherwise. An endpoint claimed for the first time starts at the newest stored
   * event (no history is replayed). Answers the cursor either way.
   */
  claimWebhookCursor(endpoint: string, lease: RunLease): Promise<ClaimWebhookCursorResponse>;

  /**
   * Moves the cursor forward (never back) and renews the lease by `ttlMs`, while
   * `owner` holds it (expired or not: it is lost only to another claim); false otherwise, with
   * nothing changed (an unknown endpoint too).
   */
  advanceWebhookCursor(request: AdvanceWebhookCursorRequest): Promise<boolean>;

  /**
   * Adds a task's push-notification config, or replaces the one with its id (keeping
   * its created_at); NOT_FOUND for an unknown conversation; FAILED_PRECONDITION past
   * MAX_PUSH_CONFIGS configs on one task.
   */
  setPushConfig(config: PushConfig): Promise<PushConfig>;
  /** One config; undefined when the conversation or the config is unknown. */
  getPushConfig(conversationId: string, id: string): Promise<PushConfig | undefined>;
  /** The conversation's configs, oldest first (none for an unknown conversation). */
  listPushConfigs(conversationId: string): Promise<PushConfig[]>;
  /** False when there was no such config. */
  deletePushConfig(conversationId: string, id: string): Promise<boolean>;

  /**
   * The conversation's history digest (store.proto RecordHistoryDigest), replacing its
   * previous one; NOT_FOUND for an unknown conversation.
   */
  recordHistoryDigest(conversationId: string, digest: string): Promise<void>;
  /**
   * The conversation of `owner` (undefined: of no owner) whose latest digest is `digest`, the
   * most recently recorded when several are; read through the index of digests.
   */
  findConversationByHistory(digest: string, owner: string | undefined): Promise<string | undefined>;

  /** The conversation's approvals that are approved or executing, oldest first. */
  listUnfinishedApprovals(conversationId: string): Promise<PendingApproval[]>;

  /** approved | executing → interrupted, once unchanged for `minAgeMs`; else `marked: false`. */
  markApprovalInterrupted(request: MarkApprovalInterruptedRequest): Promise<InterruptionMark>;

  /**
   * Messages, new pending approvals and the conversation's run (absent: cleared) in one
   * transaction, when the stored run's revision is `expectedRevision`; ABORTED otherwise,
   * with nothing written. Returns the new revision. The run's bytes are stored as given and
   * never read. The conversation waits exactly while an approval of it is pending.
   *
   * `leaseOwner` fences the write as in `appendMessages`. `interruptedApproval` moves
   * that executing approval of the conversation to interrupted in the same transaction, with no
   * message (FAILED_PRECONDITION, nothing written, for any other approval); new approvals keep
   * their `outcomeUnknown` and `replacesUuid`.
   */
  updateRun(request: UpdateRunRequest): Promise<number>;

  /**
   * Extends the lease to now + `lease.ttlMs` when `lease.owner` holds it on a running
   * turn; false otherwise (the turn ended, or another replica took it over). NOT_FOUND for an
   * unknown conversation.
   */
  renewRunLease(conversationId: string, lease: RunLease): Promise<boolean>;

  /**
   * A lease `owner` holds expires now (not later than it would have), so that the next
   * `takeOverRuns` of any replica takes the run; the running mark stays. False when `owner` does
   * not hold it. NOT_FOUND for an unknown conversation.
   */
  releaseRunLease(conversationId: string, owner: string): Promise<boolean>;

  /**
   * Moves up to `limit` running turns with a lease to `lease` (owner, node, expiry
   * now + ttl), oldest expiry first: those whose lease expired, and those another boot of
   * `lease.node` holds; never the caller's own, except those in `givenUp` (runs the caller
   * stopped without finishing them). Stale marks too: a run goes on after a long
   * outage. Each taken mark is fresh again (since now, this store boot's) and counts one more
   * takeover. Atomic per run: of concurrent takers (on any replica) exactly one gets it.
   */
  takeOverRuns(lease: RunLease, limit: number, givenUp?: readonly string[]): Promise<TakenOverRun[]>;

  /** Stored events in `range`, oldest first; none for a conversation that does not exist. */
  readEvents(range: EventRange): Promise<ConversationEvent[]>;

  /** The id of the newest stored event, 0 when there is none: where a watch of live events begins. */
  latestEventId(): Promise<number>;

  /**
   * Calls `listener` with the events of every change this storage object commits, right after
   * the commit and before the method that made the change returns; returns the function that
   * unsubscribes it. A listener must not throw or block: it runs on the writer's path.
   * Events are reported in id order, each once. SQLite: changes written by another process
   * sharing the file are not reported. PostgreSQL: those of the other store replicas are too,
   * as their commits are told (LISTEN/NOTIFY), still in id order.
   */
  onEventsCommitted(listener: CommittedEventsListener): () => void;

  /**
   * A live-only event (PublishEvent) this replica handed to its own watchers, for the other
   * store replicas sharing the database (PostgreSQL: NOTIFY); returns at once, never fails
   * the caller. The embedded SQLite store is the only process of its file: nothing to do.
   */
  shareLiveEvent(event: ConversationEvent): void;

  /** Calls `listener` with the live-only events the other replicas share; returns the unsubscribe. */
  onLiveEvent(listener: LiveEventListener): () => void;

  /**
   * This replica has (or no longer has) watchers of a conversation ('' : of every one), for
   * the `watched` the other replicas answer (store.proto, Conversation.watched): a conversation
   * read from this storage is `watched` when another live replica has such watchers. Returns
   * at once, never fails the caller; SQLite: nothing to share, `watched` stays false here.
   */
  shareWatch(conversationId: string, watched: boolean): void;

  /**
   * At the store's start: every turn a crash cut off gets its note now, so the conversation
   * shows it before anyone writes to it; one whose approved call is unfinished keeps its mark
   * for its next StartTurn (the call's interrupted result comes first). Marks with a lease are
   * not a crash's to note: an orchestrator takes them over. Returns how many.
   */
  noteInterruptedTurns(): Promise<number>;

  /**
   * Calls `listener` each time the database stops or starts answering (the store's readiness
   * follows it); returns the unsubscribe. Absent for a database inside the process (SQLite),
   * which answers while the process runs.
   */
  onAvailability?(listener: AvailabilityListener): () => void;

  close(): Promise<void>;
}
