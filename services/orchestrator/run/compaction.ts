import { type Compaction, type Message, MessageRole, type NewMessage, type TokenUsage } from '../../../gen/ts/asg/store/v1/store.js';
import { compactionNotice, planCompaction, transcriptOf, visibleHistory, withSummary } from '../domain/compaction.js';
import { contextWindowOf } from '../domain/context-window.js';
import { systemPromptOf, unansweredCallIds } from '../domain/history.js';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import { tokenCounterFor, toolDefinitionTokens } from '../domain/tokens.js';
import { callModel, llmFrame, runOpenCalls, toolDefinitionsOf } from './model-steps.js';
import { describePath, log, outOfPhase, type Transition } from './transition.js';
import { nodePath, record, timing } from './journal.js';
import type { LlmFrame, Path, PendingCompaction } from './types.js';

/**
 * Simple mode's conversation fitted to the token budget (`chat.max_tokens`, or the model's
 * context window less room for the answer) before the model sees it. When it outgrows the
 * budget it is compacted (domain/compaction.ts): with `partial-summary` the model is asked for
 * a summary of what is hidden first, and the compaction's notice is recorded in the
 * conversation before the model sees its effect.
 */

/** Room kept for the model's answer when the budget is the context window. */
const ANSWER_RESERVE_TOKENS = 4096;

export function conversationLoaded(transition: Transition, path: Path, messages: Message[]): void {
  const frame = llmFrame(transition, path, 'history');
  if (!frame) {
    outOfPhase(transition, 'conversationLoaded', `no node at ${describePath(path)} waits for its history`);
    return;
  }
  frame.baseSeq = messages.at(-1)?.seq ?? 0;
  placeApprovedCall(transition, messages);
  const { history } = transition.env;
  const basePrompt = systemPromptOf(messages, history.systemPrompt);
  const count = tokenCounterFor(frame.model);
  const window = history.maxTokens || contextWindowOf(frame.model);
  const budget = window - Math.min(ANSWER_RESERVE_TOKENS, Math.floor(window / 4));
  const { messages: visible, latest } = visibleHistory(messages);
  const plan = planCompaction({
    messages,
    strategy: history.compactionStrategy,
    budget,
    fixedTokens: count(withSummary(basePrompt, latest?.summary)) + toolDefinitionTokens(toolDefinitionsOf(frame), count),
    count,
  });
  if (!plan) {
    startWith(transition, path, frame, visible, withSummary(basePrompt, latest?.summary));
    return;
  }
  frame.awaiting = 'compaction';
  frame.compaction = { plan, budget, basePrompt, previousSummary: latest?.summary, messages, startedAt: transition.at };
  if (plan.strategy === 'partial-summary') {
    transition.effects.push({ kind: 'summarize', model: frame.model, transcript: transcriptOf(plan.newlyHidden, latest?.summary) });
    return;
  }
  recordCompaction(frame, frame.compaction, undefined, undefined, transition);
}

export function summaryAnswered(transition: Transition, text: string, usage: TokenUsage | undefined): void {
  const compacting = compactingFrame(transition, 'summaryAnswered');
  if (!compacting) return;
  const usageOfSummary = usage && { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  recordCompaction(compacting.frame, compacting.compaction, text.trim() || undefined, usageOfSummary, transition);
}

export function summaryFailed(transition: Transition, error: string): void {
  const compacting = compactingFrame(transition, 'summaryFailed');
  if (!compacting) return;
  log(transition, 'warn', 'summary for compaction failed; compacting without one', { error });
  recordCompaction(compacting.frame, compacting.compaction, undefined, undefined, transition);
}

/** The notice is stored: the model sees the conversation as the compaction left it. */
export function compactionRecorded(transition: Transition): void {
  const compacting = compactingFrame(transition, 'compactionRecorded');
  if (!compacting) return;
  const { frame, compaction } = compacting;
  const { plan, notice, messages } = compaction;
  if (!notice) {
    outOfPhase(transition, 'compactionRecorded', 'no compaction notice is being recorded');
    return;
  }
  log(transition, 'info', 'history compacted', {
    strategy: plan.strategy,
    from: plan.fromSeq,
    to: plan.toSeq,
    before: plan.tokensBefore,
    after: plan.tokensAfter,
  });
  record(transition, {
    kind: 'compaction',
    node: nodePath(transition, []),
    ...timing(transition, compaction.startedAt),
    body: {
      strategy: plan.strategy,
      tokens_before: plan.tokensBefore,
      tokens_after: plan.tokensAfter,
      summarized: compaction.keptSummary !== undefined && compaction.keptSummary !== compaction.previousSummary,
    },
  });
  const marker: Message = { ...notice, id: '', seq: (messages.at(-1)?.seq ?? 0) + 1, createdAt: undefined };
  frame.baseSeq = marker.seq;
  frame.compaction = undefined;
  startWith(
    transition,
    [],
    frame,
    visibleHistory([...messages, marker]).messages,
    withSummary(compaction.basePrompt, compaction.keptSummary),
  );
}

function compactingFrame(transition: Transition, event: 'summaryAnswered' | 'summaryFailed' | 'compactionRecorded') {
  const frame = llmFrame(transition, [], 'compaction');
  if (!frame?.compaction) {
    outOfPhase(transition, event, 'no compaction is under way');
    return undefined;
  }
  return { frame, compaction: frame.compaction };
}

/** The compaction's notice, recorded before the model sees its effect; without a new summary, the earlier one still covers what it covered. */
function recordCompaction(
  frame: LlmFrame,
  pending: PendingCompaction,
  summary: string | undefined,
  usage: TokenUsage | undefined,
  transition: Transition,
): void {
  const { plan } = pending;
  const keptSummary = summary ?? (plan.strategy === 'partial-summary' ? pending.previousSummary || undefined : undefined);
  const compaction: Compaction = {
    strategy: plan.strategy,
    fromSeq: plan.fromSeq,
    toSeq: plan.toSeq,
    summary: keptSummary ?? '',
    tokensBefore: plan.tokensBefore,
    tokensAfter: plan.tokensAfter,
  };
  const notice: NewMessage = {
    role: MessageRole.MESSAGE_ROLE_SYSTEM,
    content: compactionNotice(plan, pending.budget, summary),
    compaction,
    usage,
  };
  frame.compaction = { ...pending, notice, ...(keptSummary !== undefined && { keptSummary }) };
  transition.effects.push({ kind: 'recordCompaction', notice });
}

function startWith(transition: Transition, path: Path, frame: LlmFrame, history: LlmFrame['history'], systemPrompt: string): void {
  frame.history = [...history];
  frame.systemPrompt = systemPrompt;
  if (transition.state.openCalls) {
    transition.state.openCalls = false;
    const open = openCallsOf(history);
    if (open.length > 0) {
      runOpenCalls(transition, path, frame, open);
      return;
    }
  }
  callModel(transition, path, frame);
}

/** The calls of the conversation's last model step (after its last user message) that have no result yet, in the model's order. */
function openCallsOf(history: LlmFrame['history']): ToolCallPart[] {
  const lastUser = history.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
  const tail = history.slice(lastUser + 1);
  const open = new Set(unansweredCallIds(tail));
  return tail.flatMap((message) =>
    message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && message.toolCall && open.has(message.toolCall.id)
      ? [
          {
            id: message.toolCall.id,
            name: message.toolCall.name,
            argumentsJson: message.toolCall.argumentsJson || '{}',
            providerMetadataJson: message.toolCall.providerMetadataJson,
          },
        ]
      : [],
  );
}

/**
 * A decision's activation: the approved call's step was recorded before the conversation was
 * read; it stands before the call's result, which the conversation now holds.
 */
function placeApprovedCall(transition: Transition, messages: readonly Message[]): void {
  const callId = transition.state.decision?.approval.toolCallId;
  const journal = transition.state.journal;
  if (callId === undefined || !journal?.some((step) => step.messageSeq === undefined)) return;
  const result = messages.find((message) => message.role === MessageRole.MESSAGE_ROLE_TOOL && message.toolCall?.id === callId);
  if (!result) return;
  transition.state.journal = journal.map((step) => (step.messageSeq === undefined ? { ...step, messageSeq: result.seq - 1 } : step));
}
