import type { Conversation, PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { givenReason, reasonProblem } from '../../services/common/decision-reason.js';
import { decisionFromWord, type Decision } from '../app/decision.js';
import { invalidParams } from './jsonrpc.js';
import type { InboundMessage } from './params.js';
import { isWaiting, pendingApprovals } from './task.js';

/**
 * What a message sent to a waiting task means: a data part `{"approved": bool}`
 * decides (with `"approval_uuid"` it picks one of several pending approvals, with `"reason"`
 * it gives the human's reason), else the text, when it is one of the approval words
 * (a text answer carries no reason: the word is the whole answer); anything else is no answer
 * at all.
 *
 * A task whose first pending approval is an MCP server's question (an approval of kind
 * `input`) asked for data: a data part is the answer (the orchestrator checks it against the
 * schema the server requested), unless it is `{"approved": false}`, which declines as a
 * rejection word does; a text that is not a rejection is no answer. Pure.
 */
export type ApprovalAnswer =
  | { kind: 'decision'; uuid: string; decision: Decision; reason?: string; input?: Record<string, unknown> }
  | { kind: 'unclear'; text: string; question?: true };

/** The data part's "reason"; -32602 when it is not a string of at most 2,000 characters. */
function reasonOf(data: Record<string, unknown>): { reason?: string } {
  const problem = reasonProblem(data.reason);
  if (problem) throw invalidParams(`message.parts: ${problem}`);
  const reason = givenReason(data.reason as string | undefined);
  return reason === undefined ? {} : { reason };
}

function decisionOf(value: unknown): Decision | undefined {
  if (typeof value === 'boolean') return value ? 'approved' : 'rejected';
  return typeof value === 'string' ? decisionFromWord(value) : undefined;
}

/** The answer to a question: the first data part (or its decline), else a rejection word; anything else is no answer. */
function answerToQuestion(question: PendingApproval, message: InboundMessage): ApprovalAnswer {
  const data = message.data[0];
  if (data) {
    if (data.approved === false) return { kind: 'decision', uuid: question.uuid, decision: 'rejected', ...reasonOf(data) };
    return { kind: 'decision', uuid: question.uuid, decision: 'approved', input: data };
  }
  return decisionFromWord(message.text) === 'rejected'
    ? { kind: 'decision', uuid: question.uuid, decision: 'rejected' }
    : { kind: 'unclear', text: message.text, question: true };
}

/**
 * `pending` is the task's pending approvals, oldest first, at least one; `asksForInput`, whether
 * the first of them is an MCP server's question.
 */
export function interpretAnswer(pending: readonly PendingApproval[], message: InboundMessage, asksForInput = false): ApprovalAnswer {
  const first = pending[0];
  if (!first) return { kind: 'unclear', text: message.text };
  if (asksForInput) return answerToQuestion(first, message);
  for (const data of message.data) {
    const decision = decisionOf(data.approved);
    if (!decision) continue;
    const chosen = data.approval_uuid;
    if (chosen === undefined) return { kind: 'decision', uuid: first.uuid, decision, ...reasonOf(data) };
    if (typeof chosen !== 'string' || !pending.some((approval) => approval.uuid === chosen)) {
      const known = pending.map((approval) => approval.uuid).join(', ');
      throw invalidParams(`approval_uuid ${JSON.stringify(chosen)} is not an approval this task waits for; it waits for ${known}`);
    }
    return { kind: 'decision', uuid: chosen, decision, ...reasonOf(data) };
  }
  const decision = decisionFromWord(message.text);
  return decision ? { kind: 'decision', uuid: first.uuid, decision } : { kind: 'unclear', text: message.text };
}

/** What a message to an existing task asks for: decide an approval, nothing (no answer), or a new turn. */
export type Continuation = ApprovalAnswer | { kind: 'message'; text: string };

/**
 * A waiting task takes the message as an answer to its approval; any other task takes it as
 * the next message of the conversation, which then needs some text.
 */
export function planContinuation(conversation: Conversation, message: InboundMessage, asksForInput = false): Continuation {
  if (isWaiting(conversation)) return interpretAnswer(pendingApprovals(conversation), message, asksForInput);
  if (message.text.trim() === '') {
    throw invalidParams(
      `message.parts: task ${conversation.id} is not waiting for an approval, so the message needs a text part with some text`,
    );
  }
  return { kind: 'message', text: message.text };
}
