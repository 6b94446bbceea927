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

/** A turn a crash cut off shows as an assistant message, so the history keeps alternating when the user sends again. */
export const INTERRUPTED_TURN_NOTE = 'This turn was interrupted: the service stopped before it finished. Send your message again to retry.';

/** The stale limit of a running mark when none is given: the default chat.turn_timeout (5 min) plus STALE_TURN_MARGIN_MS. */
export const STALE_TURN_MARGIN_MS = 60_000;
export const DEFAULT_STALE_TURN_MS = 300_000 + STALE_TURN_MARGIN_MS;

/** Runs with leases: the longest lease, the most runs one TakeOverRuns moves, the longest owner or node name. */
export const MAX_LEASE_TTL_MS = 3_600_000;
export const MAX_TAKEOVER_LIMIT = 100;
export const MAX_LEASE_NAME_LENGTH = 200;

/** Approvals, audit entries and webhook endpoints: the limits the edge checks. */
export const MAX_DUE_APPROVALS_LIMIT = 100;
export const MAX_APPROVAL_EXPIRY_MS = 366 * 24 * 3_600_000;
export const AUDIT_KIND_PATTERN = /^[a-z]+(\.[a-z_]+)+$/;
export const MAX_AUDIT_KIND_LENGTH = 64;
/** The longest actor (and decider, and owner): a principal (services/common/principal-id.ts). */
export const MAX_AUDIT_ACTOR_LENGTH = MAX_PRINCIPAL_LENGTH;
export const MAX_AUDIT_VIA_LENGTH = 32;
export const MAX_AUDIT_SUBJECT_LENGTH = 200;
export const MAX_AUDIT_DETAIL_BYTES = 16 * 1024;
export const MAX_AUDIT_KINDS = 20;
export const MAX_WEBHOOK_ENDPOINT_LENGTH = 200;
export const MAX_OWNER_LENGTH = MAX_AUDIT_ACTOR_LENGTH;
/** The longest history digest: a hash in hex or base64 fits. */
export const MAX_HISTORY_DIGEST_LENGTH = 128;

/** A conversation's owner as the history digests keep it: '' for none (an owner is never blank). */
export const historyOwnerKey = (owner: string | undefined): string => owner ?? '';

/** A page size of 0 asks for DEFAULT_PAGE_SIZE conversations. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
/** The most messages one page of history holds (GetConversationRequest.message_limit). */
export const MAX_MESSAGE_PAGE_SIZE = 1000;
/**
 * The most text (content and tool calls, in characters) one page of history holds, at least one message:
 * 1,000 messages of up to 1,000,000 characters could otherwise reach gigabytes.
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
  /** After a lost claim: the approval as the winner left it. */
  approval: PendingApproval;
  /** Lost because expires_at had passed and the claim was not its expiry's: still pending. */
  tooLate?: boolean;
}

export interface TurnStart {
  started: boolean;
  /** Not started because another turn of the conversation is running. */
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
  nextPageToken: string;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  nextPageToken: string;
}

/** Called with the stored events of one change, in id order, once the change has committed. */
export type CommittedEventsListener = (events: readonly ConversationEvent[]) => void;

/** Called with a live-only event (id 0) another store replica published. */
export type LiveEventListener = (event: ConversationEvent) => void;

/** The database answers again (`available`), or stopped answering, with why (for the log only). */
export type AvailabilityListener = (available: boolean, reason: string) => void;

/**
 * Everything the store keeps, one interface for SQLite and PostgreSQL (the rules: sql/storage.ts). Requests
 * arrive validated; errors are ServiceErrors. Unknown or malformed ids are NOT_FOUND, never a database error;
 * each method is one transaction, writing the events of its change and handing them to `onEventsCommitted`
 * listeners after the commit; appending costs the same at any length (seq = message_count + 1); an approval
 * leaves `pending` exactly once, by a conditional update.
 */
export interface ConversationStorage {
  /** A new active conversation; a non-empty system prompt becomes message seq 1. */
  createConversation(request: CreateConversationRequest): Promise<Conversation>;
  /** With `messageLimit`, one page of messages; INVALID_ARGUMENT for a cursor that is not a message of it. */
  getConversation(request: GetConversationRequest): Promise<Conversation>;
  /** Summaries (no messages), of one owner's conversations when `owner` is given (the summary too). */
  listConversations(request: ListConversationsRequest): Promise<ConversationPage>;
  /**
   * Appends the user's message unless the conversation waits, is `busy` (one active run per conversation) or
   * has unfinished approved calls; of concurrent StartTurns at most one starts. A dead boot's mark is noted
   * first (INTERRUPTED_TURN_NOTE); a stale mark is ignored. A mark with a `lease` is busy whichever boot wrote
   * it, and never noted as interrupted: orchestrators take such runs over.
   */
  startTurn(request: StartTurnRequest): Promise<TurnStart>;
  /**
   * `status` may be UNSPECIFIED (keep), ACTIVE or COMPLETED: FAILED_PRECONDITION when a waiting conversation
   * would change status. With `leaseOwner`, ABORTED and nothing written unless that owner holds the lease.
   */
  appendMessages(request: AppendMessagesRequest): Promise<Message[]>;
  /** FAILED_PRECONDITION when the conversation already waits for another approval. */
  createApproval(request: CreateApprovalRequest): Promise<PendingApproval>;
  getApproval(uuid: string): Promise<PendingApproval>;
  /**
   * pending → approved | rejected | expired; a lost or late claim is `claimed: false`, not an error. A winning
   * claim that continues the turn marks it running with the request's `lease`, and audits each decision in its
   * transaction. INVALID_ARGUMENT for edited arguments on a rejection, or `expired` with `approved`.
   */
  claimApproval(request: ClaimApprovalRequest): Promise<ApprovalClaim>;
  /** approved → executing, recorded before the call runs; FAILED_PRECONDITION otherwise. */
  startApprovalExecution(uuid: string): Promise<PendingApproval>;
  /** executing → done | failed with the result messages; FAILED_PRECONDITION otherwise. */
  finishApprovalExecution(request: FinishApprovalExecutionRequest): Promise<PendingApproval>;
  /** Every pending approval, oldest first, a page at a time. */
  listPendingApprovals(request: ListPendingApprovalsRequest): Promise<{ approvals: PendingApproval[]; nextPageToken: string }>;
  /** Approvals of the given statuses (none: all), of one conversation or all (''), oldest first. */
  listApprovals(request: ListApprovalsRequest): Promise<ApprovalPage>;
  /** Up to `limit` pending approvals whose expires_at passed, oldest expiry first; only a read. */
  listDueApprovals(limit: number): Promise<PendingApproval[]>;
  /** Appends to the append-only audit trail, with the store's id and time. */
  appendAudit(entry: AuditEntry): Promise<AuditEntry>;
  /** The audit trail newest first, of the given kinds (none: every kind). */
  listAudit(request: ListAuditRequest): Promise<AuditPage>;
  /**
   * Takes the lease on an endpoint's cursor when free, expired, the caller's own, or an earlier boot's of its
   * node; a new endpoint starts at the newest event (no history is replayed).
   */
  claimWebhookCursor(endpoint: string, lease: RunLease): Promise<ClaimWebhookCursorResponse>;
  /** Moves the cursor forward (never back) and renews the lease while `owner` holds it; false otherwise. */
  advanceWebhookCursor(request: AdvanceWebhookCursorRequest): Promise<boolean>;
  /** Adds or replaces (keeping created_at) a task's config; FAILED_PRECONDITION past MAX_PUSH_CONFIGS. */
  setPushConfig(config: PushConfig): Promise<PushConfig>;
  getPushConfig(conversationId: string, id: string): Promise<PushConfig | undefined>;
  /** Oldest first; none for an unknown conversation. */
  listPushConfigs(conversationId: string): Promise<PushConfig[]>;
  deletePushConfig(conversationId: string, id: string): Promise<boolean>;
  /** Replaces the conversation's history digest. */
  recordHistoryDigest(conversationId: string, digest: string): Promise<void>;
  /** The conversation of `owner` whose latest digest is `digest`, the most recently recorded. */
  findConversationByHistory(digest: string, owner: string | undefined): Promise<string | undefined>;
  /** The conversation's approvals that are approved or executing, oldest first. */
  listUnfinishedApprovals(conversationId: string): Promise<PendingApproval[]>;
  /** approved | executing → interrupted, once unchanged for `minAgeMs`; else `marked: false`. */
  markApprovalInterrupted(request: MarkApprovalInterruptedRequest): Promise<InterruptionMark>;
  /**
   * Messages, new approvals and the run (absent: cleared) in one transaction when the run's revision is
   * `expectedRevision` (ABORTED otherwise); returns the new revision. Fenced by `leaseOwner`;
   * `interruptedApproval` must be an executing approval of the conversation (FAILED_PRECONDITION otherwise).
   */
  updateRun(request: UpdateRunRequest): Promise<number>;
  /** Extends the lease while `lease.owner` holds it on a running turn; false otherwise. */
  renewRunLease(conversationId: string, lease: RunLease): Promise<boolean>;
  /** Expires `owner`'s lease now (never later), so that the next takeOverRuns takes the run. */
  releaseRunLease(conversationId: string, owner: string): Promise<boolean>;
  /**
   * Moves up to `limit` leased running turns to `lease`, oldest expiry first: expired ones, those another boot
   * of `lease.node` holds, and the caller's own only in `givenUp`. Of concurrent takers exactly one gets each.
   */
  takeOverRuns(lease: RunLease, limit: number, givenUp?: readonly string[]): Promise<TakenOverRun[]>;
  /** Stored events in `range`, oldest first; none for a conversation that does not exist. */
  readEvents(range: EventRange): Promise<ConversationEvent[]>;
  /** The id of the newest stored event, 0 when there is none. */
  latestEventId(): Promise<number>;
  /**
   * `listener` gets the events of every committed change, in id order, each once, before the writing method
   * returns (PostgreSQL: the other replicas' too); it must not throw or block. Returns the unsubscribe.
   */
  onEventsCommitted(listener: CommittedEventsListener): () => void;
  /** Shares a live-only event with the other replicas (SQLite: none); never fails the caller. */
  shareLiveEvent(event: ConversationEvent): void;
  /** Calls `listener` with the live-only events the other replicas share; returns the unsubscribe. */
  onLiveEvent(listener: LiveEventListener): () => void;
  /** This replica has (or no longer has) watchers of a conversation ('': every one), for the others' `watched`. */
  shareWatch(conversationId: string, watched: boolean): void;
  /**
   * At the start: notes every turn a crash cut off, except those with an unfinished approved call (their next
   * StartTurn does) or a lease (an orchestrator takes them over). Returns how many.
   */
  noteInterruptedTurns(): Promise<number>;
  /** Calls `listener` each time the database stops or starts answering; absent on SQLite. */
  onAvailability?(listener: AvailabilityListener): () => void;
  close(): Promise<void>;
}
