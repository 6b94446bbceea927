import { ConversationStatus, MessageRole, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { jsonObjectOf } from '../../services/common/json-value.js';

/**
 * A conversation seen as an A2A task, in no dialect in particular: what each dialect's
 * wire module renders. Task id = conversation id. Pure functions of the
 * conversation and the turn that just ran.
 */

export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed' | 'rejected' | 'auth-required';

/** States no message changes any more (A2A: a message to such a task is refused, no new turn). */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'canceled', 'failed', 'rejected']);

/** The approval an input-required task waits for, as the status message's data part carries it. */
interface ApprovalRequest {
  uuid: string;
  toolName: string;
  toolArgs: Record<string, unknown>;
  description: string;
  /** For proxy approvals: the agents the call is held by, nearest first. */
  chain: string[];
}

export interface HistoryEntry {
  id: string;
  role: 'user' | 'agent';
  text: string;
}

export interface TaskSnapshot {
  id: string;
  contextId: string;
  state: TaskState;
  /** The status message's text. */
  statusText?: string;
  /** Every approval an input-required task waits for, oldest first; an answer decides the first. */
  approvals: ApprovalRequest[];
  /** The answer's text: the artifact of a completed task. */
  artifactText?: string;
  /** ISO 8601: when the conversation last changed. */
  timestamp: string;
  /** The latest user and agent text messages, oldest first, when the caller asked for them. */
  history: HistoryEntry[];
}

/** One event of a streamed answer. */
export type TaskEvent =
  | { kind: 'task'; task: TaskSnapshot }
  | { kind: 'status'; task: TaskSnapshot; final: boolean }
  | { kind: 'artifact'; task: TaskSnapshot };

const QUESTION_HINT =
  'Send the answer as a data part: a JSON object that fits the schema the server requested (see GET /approvals/<uuid>); reply "reject" (or send {"approved": false}) to decline.';

const UNCLEAR_ANSWER_HINT =
  'Reply "approve" or "reject" (also: yes/no, ok/cancel), or send a data part {"approved": true|false}; {"approval_uuid": "<uuid>"} beside it picks one approval.';

function approvalRequest(approval: PendingApproval): ApprovalRequest {
  return {
    uuid: approval.uuid,
    toolName: approval.toolName,
    toolArgs: jsonObjectOf(approval.toolArgsJson),
    description: approval.description,
    chain: [...(approval.agentChain ?? [])],
  };
}

/** The approval line of a waiting task's status, which remote agents parse: `Approval required (id: <uuid>): <description>`. */
function approvalRequiredText(approval: ApprovalRequest): string {
  return `Approval required (id: ${approval.uuid}): ${approval.description}`;
}

/** The approvals a conversation waits for, oldest first; empty unless it waits. */
export function pendingApprovals(conversation: Conversation): PendingApproval[] {
  if (conversation.status !== ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL) return [];
  if (conversation.pendingApprovals.length > 0) return conversation.pendingApprovals;
  return conversation.pendingApproval ? [conversation.pendingApproval] : [];
}

export function isWaiting(conversation: Conversation): boolean {
  return conversation.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL;
}

/**
 * Whether the conversation has a user message. A summary (a listing) or a record carries no
 * messages but its title, the first user message's first words.
 */
function hasUserMessage(conversation: Conversation): boolean {
  if (conversation.messages.length === 0) return (conversation.title ?? '') !== '';
  return conversation.messages.some((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
}

/** The text of the last assistant message with any: what a finished task answered. */
function lastAssistantText(conversation: Conversation): string | undefined {
  for (let index = conversation.messages.length - 1; index >= 0; index -= 1) {
    const message = conversation.messages[index]!;
    if (message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && message.content.trim() !== '') return message.content;
  }
  return undefined;
}

function base(conversation: Conversation, contextId: string, state: TaskState): TaskSnapshot {
  const updated = conversation.updatedAt ?? conversation.createdAt;
  return {
    id: conversation.id,
    contextId,
    state,
    approvals: [],
    timestamp: (updated ?? new Date()).toISOString(),
    history: [],
  };
}

function inputRequired(conversation: Conversation, contextId: string, first: PendingApproval | undefined): TaskSnapshot {
  const pending = pendingApprovals(conversation);
  // The turn's own approval first, should the stored list not have caught up with it.
  const ordered = first && !pending.some((approval) => approval.uuid === first.uuid) ? [first, ...pending] : pending;
  const approvals = ordered.map(approvalRequest);
  const statusText = approvals.length > 0 ? approvals.map(approvalRequiredText).join('\n') : 'Waiting for an approval.';
  return { ...base(conversation, contextId, 'input-required'), statusText, approvals };
}

function completed(conversation: Conversation, contextId: string, text: string | undefined): TaskSnapshot {
  const snapshot = base(conversation, contextId, 'completed');
  return text ? { ...snapshot, artifactText: text } : snapshot;
}

/** The task after a turn (a new message, or an approval that let the agent go on). */
export function taskAfterTurn(conversation: Conversation, result: TurnResult, contextId: string): TaskSnapshot {
  if (result.waitingApproval || isWaiting(conversation)) return inputRequired(conversation, contextId, result.approval);
  return completed(conversation, contextId, result.response);
}

/** The task as the stored conversation shows it (`tasks/get`). */
export function taskOfConversation(conversation: Conversation, contextId: string): TaskSnapshot {
  if (isWaiting(conversation)) return inputRequired(conversation, contextId, undefined);
  // A turn runs on it: a message sent now is refused until it ends.
  if (conversation.turnRunning) return base(conversation, contextId, 'working');
  // Created over A2A, and its first turn not begun yet (a non-blocking send, a stream's first
  // moment). A conversation made over REST without a message reads as it always did.
  if (conversation.a2aOrigin && !hasUserMessage(conversation)) return base(conversation, contextId, 'submitted');
  return completed(conversation, contextId, lastAssistantText(conversation));
}

/** The task after its approval was rejected: the call did not run. */
export function canceledTask(conversation: Conversation, contextId: string, text: string): TaskSnapshot {
  return { ...base(conversation, contextId, 'canceled'), statusText: text };
}

/** An answer that is neither yes nor no: the task still waits, and the status says what it expects. */
export function unclearAnswerTask(conversation: Conversation, contextId: string, answer: string, question = false): TaskSnapshot {
  const waiting = inputRequired(conversation, contextId, undefined);
  if (question) {
    const heard = answer.trim() === '' ? 'The message did not answer the question.' : `"${answer.trim()}" does not answer the question.`;
    return { ...waiting, statusText: `${waiting.statusText}\n${heard} ${QUESTION_HINT}` };
  }
  const heard =
    answer.trim() === '' ? 'The message did not say whether to approve.' : `"${answer.trim()}" is neither an approval nor a rejection.`;
  return { ...waiting, statusText: `${waiting.statusText}\n${heard} ${UNCLEAR_ANSWER_HINT}` };
}

/** The task while its work is under way (the first events of a stream). */
export function taskInProgress(conversation: Conversation, contextId: string, state: 'submitted' | 'working'): TaskSnapshot {
  return base(conversation, contextId, state);
}

/** The latest `length` user and agent text messages, oldest first. */
export function withHistory(task: TaskSnapshot, conversation: Conversation, length: number | undefined): TaskSnapshot {
  if (!length) return task;
  const entries: HistoryEntry[] = [];
  for (const message of conversation.messages) {
    if (message.content.trim() === '' || message.toolCall) continue;
    if (message.role === MessageRole.MESSAGE_ROLE_USER) entries.push({ id: message.id, role: 'user', text: message.content });
    else if (message.role === MessageRole.MESSAGE_ROLE_ASSISTANT) entries.push({ id: message.id, role: 'agent', text: message.content });
  }
  return { ...task, history: entries.slice(-length) };
}

/** The events that end a streamed answer: the artifact of a completed task, then its final status. */
export function finalEvents(task: TaskSnapshot): TaskEvent[] {
  const events: TaskEvent[] = [];
  if (task.state === 'completed' && task.artifactText !== undefined) events.push({ kind: 'artifact', task });
  events.push({ kind: 'status', task, final: true });
  return events;
}
