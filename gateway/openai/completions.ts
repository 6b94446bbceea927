import { randomUUID } from 'node:crypto';
import type { Conversation, PendingApproval, TokenUsage } from '../../gen/ts/asg/store/v1/store.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { withContextPatch } from '../../services/common/context.js';
import { newSessionId } from '../../services/common/session-id.js';
import type { Agent } from '../app/agent.js';
import { pendingApprovalJson, type PendingApprovalJson } from '../app/shapes.js';
import { OpenAiError } from './errors.js';
import { hasHistory, historyDigest } from './history.js';
import { CONVERSATION_HEADER, type ChatCompletionRequest } from './requests.js';

/**
 * A Chat Completions request as a turn of a conversation: the new input is
 * sent to the conversation the request names, or else to the caller's conversation whose
 * history the request resends (history.ts), or to a new one; what the agent answers is the
 * assistant message; a turn that stops for an approval answers with a text that names the
 * approval and how to decide it, and the approval itself in the extra field `approval`.
 * The response shapes are OpenAI's, with two extra fields: `conversation_id` and `approval`;
 * `usage` counts the tokens of the turn's model calls, as the providers counted them.
 */

export type TurnsAgent = Pick<
  Agent,
  'createConversation' | 'sendMessage' | 'getConversationRecord' | 'findConversationByHistory' | 'recordHistoryDigest'
>;

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

/** OpenAI's usage object. */
interface UsageJson {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletionJson extends Extras {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: 0; message: { role: 'assistant'; content: string; refusal: null }; finish_reason: 'stop'; logprobs: null }[];
  usage: UsageJson;
}

export interface ChatCompletionChunkJson extends Extras {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: { role?: 'assistant'; content?: string }; finish_reason: 'stop' | null; logprobs: null }[];
  /** Only on the last chunk of a stream that asked for it (`stream_options.include_usage`), whose `choices` is empty. */
  usage?: UsageJson;
}

/** Where a conversation's turn runs, with the session id its calls carry. */
export interface TurnTarget {
  conversationId: string;
  sessionId: string;
  /** The conversation's tokens before the turn: the turn's usage is what it adds. */
  tokensBefore: TokenUsage;
}

/** How the turn ended. */
export interface TurnOutcome {
  response: string;
  approval?: PendingApproval;
}

/** How the turn ended, with the tokens its model calls used. */
export interface CountedOutcome extends TurnOutcome {
  usage: UsageJson;
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

/**
 * The orchestrator answers a turn that stopped with the approval's "Approval required (id: …)"
 * line, which the approval text repeats with how to decide it: the line is said once, there.
 */
function outcomeOf(result: TurnResult): TurnOutcome {
  const approval = result.waitingApproval ? result.approval : undefined;
  if (!approval) return { response: result.response };
  const headline = approvalText(approval, '').split('\n')[0];
  const response = result.response
    .split('\n')
    .filter((line) => line !== headline)
    .join('\n')
    .trim();
  return { response, approval };
}

function usageJson(tokens: TokenUsage): UsageJson {
  const prompt = Math.max(0, tokens.inputTokens);
  const completion = Math.max(0, tokens.outputTokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const NO_TOKENS: TokenUsage = { inputTokens: 0, outputTokens: 0 };

export function extrasOf(target: TurnTarget, outcome?: TurnOutcome): Extras {
  return { conversation_id: target.conversationId, ...(outcome?.approval && { approval: pendingApprovalJson(outcome.approval) }) };
}

export function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function completionJson(request: ChatCompletionRequest, target: TurnTarget, outcome: CountedOutcome): ChatCompletionJson {
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
    usage: outcome.usage,
    ...extrasOf(target, outcome),
  };
}

const targetOf = (conversation: Conversation, sessionId: string): TurnTarget => ({
  conversationId: conversation.id,
  sessionId,
  tokensBefore: conversation.usage ?? NO_TOKENS,
});

/** The caller's conversation whose latest history is the one the request resends (history.ts), if any. */
async function resentConversation(agent: TurnsAgent, request: ChatCompletionRequest): Promise<string | undefined> {
  if (!hasHistory(request.history)) return undefined;
  return agent.findConversationByHistory(historyDigest(request.history));
}

/**
 * The conversation a request goes to: the one it names (NOT_FOUND — 404 — when unknown or
 * not the caller's, app/ownership.ts); else the caller's own whose history it resends; else a
 * new one, created without a message so that its id is known before the turn runs (a stream
 * can then follow its events).
 */
export async function openTarget(agent: TurnsAgent, request: ChatCompletionRequest, callerSessionId: string): Promise<TurnTarget> {
  const named = request.conversationId ?? (await resentConversation(agent, request));
  if (named !== undefined) {
    const record = await agent.getConversationRecord(named);
    return targetOf(record, callerSessionId || record.sessionId);
  }
  // A new conversation's session id is made here, at the entry point, unless the caller sent one.
  const sessionId = callerSessionId || newSessionId();
  const { conversation } = await withContextPatch({ sessionId }, () => agent.createConversation());
  return targetOf(conversation, sessionId);
}

/**
 * Runs the turn. A conversation that already waits for an approval processes no message: the
 * answer is the pending approval again (as REST's `POST /conversations/:id/messages` answers).
 * The turn's usage is what its model calls added to the conversation's count (a turn holds its
 * conversation: no other model call of it runs meanwhile), read from the record once it ended.
 */
export async function runTurn(agent: TurnsAgent, target: TurnTarget, input: string): Promise<CountedOutcome> {
  return withContextPatch({ sessionId: target.sessionId }, async () => {
    const turn = await agent.sendMessage(target.conversationId, input);
    // The record is read after the turn's last write; should that read fail, the answer's own copy of the conversation counts.
    const after = await agent.getConversationRecord(target.conversationId).catch(() => turn.conversation);
    const tokens = after.usage ?? target.tokensBefore;
    return {
      ...outcomeOf(turn.result),
      usage: usageJson({
        inputTokens: tokens.inputTokens - target.tokensBefore.inputTokens,
        outputTokens: tokens.outputTokens - target.tokensBefore.outputTokens,
      }),
    };
  });
}

/**
 * Records on the conversation the history its client has now been shown — the earlier
 * messages, the input and `answer` exactly as sent — so that the client's next request, which
 * resends it, continues this conversation (history.ts).
 */
export async function recordShownHistory(
  agent: TurnsAgent,
  request: ChatCompletionRequest,
  target: TurnTarget,
  answer: string,
): Promise<void> {
  const shown = [...request.history, { role: 'user' as const, text: request.input }, { role: 'assistant' as const, text: answer }];
  await withContextPatch({ sessionId: target.sessionId }, () => agent.recordHistoryDigest(target.conversationId, historyDigest(shown)));
}
