import { ApprovalStatus, ApprovalTimeoutAction, ConversationStatus, MessageRole, type ToolCall } from '../../gen/ts/asg/store/v1/store.js';
import { jsonObjectOf } from '../common/json-value.js';

// How the store writes its data down in either database: statuses and roles as the REST API's lowercase names (not
// proto numbers), JSON columns in its snake_case shapes, timestamps as ISO strings with milliseconds (they sort as text).

export type ConversationStatusName = 'active' | 'waiting_approval' | 'completed';
export type MessageRoleName = 'system' | 'user' | 'assistant' | 'tool';
export type ApprovalStatusName = 'pending' | 'approved' | 'rejected' | 'executing' | 'done' | 'failed' | 'interrupted' | 'expired';
/** What an approval's expiry decides, as stored. */
export type ApprovalTimeoutActionName = 'reject' | 'approve';

function nameTable<E extends number, N extends string>(pairs: ReadonlyArray<readonly [E, N]>, kind: string) {
  const byValue = new Map<E, N>(pairs);
  const byName = new Map<string, E>(pairs.map(([value, name]) => [name, value]));
  return {
    names: pairs.map(([, name]) => name),
    /** The stored name of a value; undefined for one that has none. */
    find: (value: E): N | undefined => byValue.get(value),
    name(value: E): N {
      const name = byValue.get(value);
      if (name === undefined) throw new Error(`${kind} ${value} has no stored name`);
      return name;
    },
    value(name: string): E {
      const value = byName.get(name);
      if (value === undefined) throw new Error(`stored ${kind} "${name}" is not one this build knows`);
      return value;
    },
  };
}

export const conversationStatus = nameTable<ConversationStatus, ConversationStatusName>(
  [
    [ConversationStatus.CONVERSATION_STATUS_ACTIVE, 'active'],
    [ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL, 'waiting_approval'],
    [ConversationStatus.CONVERSATION_STATUS_COMPLETED, 'completed'],
  ],
  'conversation status',
);

export const messageRole = nameTable<MessageRole, MessageRoleName>(
  [
    [MessageRole.MESSAGE_ROLE_SYSTEM, 'system'],
    [MessageRole.MESSAGE_ROLE_USER, 'user'],
    [MessageRole.MESSAGE_ROLE_ASSISTANT, 'assistant'],
    [MessageRole.MESSAGE_ROLE_TOOL, 'tool'],
  ],
  'message role',
);

export const approvalStatus = nameTable<ApprovalStatus, ApprovalStatusName>(
  [
    [ApprovalStatus.APPROVAL_STATUS_PENDING, 'pending'],
    [ApprovalStatus.APPROVAL_STATUS_APPROVED, 'approved'],
    [ApprovalStatus.APPROVAL_STATUS_REJECTED, 'rejected'],
    [ApprovalStatus.APPROVAL_STATUS_EXECUTING, 'executing'],
    [ApprovalStatus.APPROVAL_STATUS_DONE, 'done'],
    [ApprovalStatus.APPROVAL_STATUS_FAILED, 'failed'],
    [ApprovalStatus.APPROVAL_STATUS_INTERRUPTED, 'interrupted'],
    [ApprovalStatus.APPROVAL_STATUS_EXPIRED, 'expired'],
  ],
  'approval status',
);

export const approvalTimeoutAction = nameTable<ApprovalTimeoutAction, ApprovalTimeoutActionName>(
  [
    [ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT, 'reject'],
    [ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE, 'approve'],
  ],
  'approval timeout action',
);

/** How a turn ended (store.proto, TurnEnded.outcome). */
export type TurnOutcome = 'answered' | 'paused' | 'failed' | 'interrupted';

/** The dialects a conversation created over A2A is answered in (store.proto, A2aOrigin.dialect); "seed" is the early type-parts dialect. */
export const A2A_DIALECTS = ['seed', 'v0.3', 'v1.0'] as const;

/** An approval's agent chain as stored: a JSON array of agent names, nearest first; none is NULL. */
export function storedAgentChain(chain: readonly string[] | undefined): string | null {
  return chain === undefined || chain.length === 0 ? null : JSON.stringify(chain);
}

/** NULL (approvals stored before chains existed, or with none) reads as no agents. */
export function agentChainFromStored(stored: string | null): string[] {
  return stored === null ? [] : (JSON.parse(stored) as string[]);
}

/** A tool call as a message row keeps it: the arguments nested as a JSON object (every release wrote so), not text. */
export interface StoredToolCall {
  id: string;
  name: string;
  arguments?: Record<string, unknown>;
  result?: string;
  is_error?: boolean;
  provider_metadata_json?: string;
  rejected?: boolean;
  reason?: string;
}

export function storedToolCall(call: ToolCall): StoredToolCall {
  return {
    id: call.id,
    name: call.name,
    ...(call.argumentsJson !== undefined && { arguments: jsonObjectOf(call.argumentsJson) }),
    ...(call.result !== undefined && { result: call.result }),
    ...(call.isError !== undefined && { is_error: call.isError }),
    ...(call.providerMetadataJson !== undefined && { provider_metadata_json: call.providerMetadataJson }),
    ...(call.rejected !== undefined && { rejected: call.rejected }),
    ...(call.reason !== undefined && { reason: call.reason }),
  };
}

export function toolCallFromStored(stored: StoredToolCall): ToolCall {
  return {
    id: stored.id,
    name: stored.name,
    // Text of any depth: a value stored before the limits existed reads back like any other.
    argumentsJson: stored.arguments === undefined ? undefined : JSON.stringify(stored.arguments),
    result: stored.result,
    isError: stored.is_error,
    providerMetadataJson: stored.provider_metadata_json,
    rejected: stored.rejected,
    reason: stored.reason,
  };
}

export function isoTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** A change's timestamp, always after `previous`: updated_at moves and creation order is total even if the clock stalls. */
export function timestampAfter(previous: string | undefined, nowMs: number): string {
  if (previous === undefined) return isoTimestamp(nowMs);
  return isoTimestamp(Math.max(nowMs, Date.parse(previous) + 1));
}

/** How much of the first user message the conversation row keeps (schema 8): enough for any title. */
export const FIRST_USER_TEXT_LENGTH = 200;
/** A title's longest length, "…" included (store.proto, Conversation.title). */
const TITLE_LENGTH = 60;

/**
 * The first words of the first user message, whitespace collapsed, at most TITLE_LENGTH characters, cut at the last
 * word boundary (or in a word longer than half the title) with "…". Computed when read: a better rule applies to old rows.
 */
export function conversationTitle(firstUserText: string | null): string {
  // Code points, not UTF-16 units: a cut never splits a surrogate pair.
  const words = [...(firstUserText ?? '').replace(/\s+/g, ' ').trim()];
  if (words.length <= TITLE_LENGTH) return words.join('');
  const room = words.slice(0, TITLE_LENGTH - 1);
  const boundary = room.lastIndexOf(' ');
  const cut = boundary >= TITLE_LENGTH / 2 ? room.slice(0, boundary) : room;
  return `${cut.join('').trimEnd()}…`;
}
