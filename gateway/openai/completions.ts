import { randomUUID } from 'node:crypto';
import type { PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { withContextPatch } from '../../services/common/context.js';
import { newSessionId } from '../../services/common/session-id.js';
import type { Agent } from '../app/agent.js';
import { pendingApprovalJson, type PendingApprovalJson } from '../app/shapes.js';
import { OpenAiError } from './errors.js';
import { CONVERSATION_HEADER, type ChatCompletionRequest } from './requests.js';

/**
 * A Chat Completions request as a turn of a conversation: the new input is
 * sent to the conversation the request names, or to a new one; what the agent answers is the
 * assistant message; a turn that stops for an approval answers with a text that names the
 * approval and how to decide it, and the approval itself in the extra field `approval`.
 * The response shapes are OpenAI's, with two extra fields: `conversation_id` and `approval`.
 */

export type TurnsAgent = Pick<Agent, 'createConversation' | 'sendMessage' | 'getConversationRecord'>;

/** The agent as a model: `GET /v1/models`, and the one `model` a request may name. */
export interface AgentModel {
  id: string;
  /** Unix seconds: when this gateway started. */
  created: number;
}

export interface ModelJson {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

const MODEL_OWNER = 'agent-stop-and-go';

export function modelJson(model: AgentModel): ModelJson {
  return { id: model.id, object: 'model', created: model.created, owned_by: MODEL_OWNER };
}

export function requireModel(model: AgentModel, asked: string): void {
  if (asked === model.id) return;
  throw new OpenAiError(
    404,
    `The model ${JSON.stringify(asked.slice(0, 200))} does not exist; this agent answers as the model ${JSON.stringify(model.id)} (GET /v1/models)`,
    'model',
    'model_not_found',
  );
}

/** The extra fields of a completion and of every chunk. */
interface Extras {
  /** The conversation the turn ran in: send it back (X-Conversation-Id or `user`) to continue it. */
  conversation_id: string;
  /** The approval the turn stopped for, when it did (P of the REST API). */
  approval?: PendingApprovalJson;
}

export interface ChatCompletionJson extends Extras {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: 0; message: { role: 'assistant'; content: string; refusal: null }; finish_reason: 'stop'; logprobs: null }[];
}

export interface ChatCompletionChunkJson extends Extras {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: { role?: 'assistant'; content?: string }; finish_reason: 'stop' | null; logprobs: null }[];
}

/** Where a conversation's turn runs, with the session id its calls carry. */
export interface TurnTarget {
  conversationId: string;
  sessionId: string;
}

/** How the turn ended. */
export interface TurnOutcome {
  response: string;
  approval?: PendingApproval;
}

/** The text that tells a chat client a turn stopped for an approval, and how to decide it. */
function approvalText(approval: PendingApproval, conversationId: string): string {
  return [
    `Approval required (id: ${approval.uuid}): ${approval.description}`,
    `Tool: ${approval.toolName}`,
    `Arguments: ${approval.toolArgsJson || '{}'}`,
    `Nothing runs until a human decides. Approve with POST /approvals/${approval.uuid} and the body {"approved": true}, or reject with {"approved": false} (the approve role, when authentication is on); the agent then goes on with conversation ${conversationId}.`,
    `To continue the conversation, send the next request with the header ${CONVERSATION_HEADER}: ${conversationId} (or "user": "${conversationId}").`,
  ].join('\n');
}

/** The assistant's whole answer: the agent's text, then the approval text when it stopped. */
export function answerText(outcome: TurnOutcome, conversationId: string): string {
  if (!outcome.approval) return outcome.response;
  const notice = approvalText(outcome.approval, conversationId);
  return outcome.response ? `${outcome.response}\n\n${notice}` : notice;
}

function outcomeOf(result: TurnResult): TurnOutcome {
  return { response: result.response, ...(result.waitingApproval && result.approval && { approval: result.approval }) };
}

export function extrasOf(target: TurnTarget, outcome?: TurnOutcome): Extras {
  return { conversation_id: target.conversationId, ...(outcome?.approval && { approval: pendingApprovalJson(outcome.approval) }) };
}

export function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function completionJson(request: ChatCompletionRequest, target: TurnTarget, outcome: TurnOutcome): ChatCompletionJson {
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model: request.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: answerText(outcome, target.conversationId), refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    ...extrasOf(target, outcome),
  };
}

/**
 * The conversation a request goes to: the one it names (NOT_FOUND — 404 — when unknown or
 * not the caller's, app/ownership.ts), or a new one, created without a message so that its id
 * is known before the turn runs (a stream can then follow its events).
 */
export async function openTarget(agent: TurnsAgent, request: ChatCompletionRequest, callerSessionId: string): Promise<TurnTarget> {
  if (request.conversationId !== undefined) {
    const record = await agent.getConversationRecord(request.conversationId);
    return { conversationId: record.id, sessionId: callerSessionId || record.sessionId };
  }
  // A new conversation's session id is made here, at the entry point, unless the caller sent one.
  const sessionId = callerSessionId || newSessionId();
  const { conversation } = await withContextPatch({ sessionId }, () => agent.createConversation());
  return { conversationId: conversation.id, sessionId };
}

/**
 * Runs the turn. A conversation that already waits for an approval processes no message: the
 * answer is the pending approval again (as REST's `POST /conversations/:id/messages` answers).
 */
export async function runTurn(agent: TurnsAgent, target: TurnTarget, input: string): Promise<TurnOutcome> {
  const turn = await withContextPatch({ sessionId: target.sessionId }, () => agent.sendMessage(target.conversationId, input));
  return outcomeOf(turn.result);
}
