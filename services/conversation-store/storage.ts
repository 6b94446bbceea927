import type { AuditEntry, Conversation, ConversationEvent, ConversationSummary, PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { MAX_PRINCIPAL_LENGTH } from '../common/principal-id.js';
import type { SqlConversationStorage } from './sql/storage.js';

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

/** The most events or audit entries one prune removes: one short transaction. */
export const MAX_PRUNE_BATCH = 10_000;

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
  /** A vote of a quorum was recorded and the quorum is not complete: nothing claimed, still pending. */
  voteRecorded?: boolean;
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
  /** Only events of these kinds (store.proto's field names: "turn_ended"…); absent or empty: every kind. */
  kinds?: readonly string[];
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
 * Everything the store keeps: the one implementation of its rules over both databases (sql/storage.ts) as the drivers
 * open it. Requests arrive validated; errors are ServiceErrors. Unknown or malformed ids are NOT_FOUND, never a
 * database error; each method is one transaction, writing the events of its change and handing them to
 * `onEventsCommitted` listeners after the commit; appending costs the same at any length; an approval leaves `pending`
 * exactly once, by a conditional update.
 */
export type ConversationStorage = Omit<SqlConversationStorage, 'bootId'> & {
  /** Calls `listener` each time the database stops or starts answering; absent on SQLite. */
  onAvailability?(listener: AvailabilityListener): () => void;
};
