import { MessageRole, type Compaction, type Message } from '../../../gen/ts/asg/store/v1/store.js';
import type { AgentConfig } from '../../common/config/schema.js';
import { toModelHistory } from './history.js';
import { chatMessageTexts, chatMessageTokens, type TokenCounter } from './tokens.js';

export type CompactionStrategy = AgentConfig['chat']['compaction_strategy'];

/**
 * History compaction over an append-only conversation: nothing is deleted. A
 * compaction is a system message recording that messages from_seq..to_seq are no longer
 * sent to the model (with a summary for partial-summary); the latest one supersedes the
 * earlier ones, so each new range extends the previous. Cuts fall only between turns — a
 * user message and everything the agent did until the next one — so a tool call is never
 * separated from its result, and the current turn is never compacted. The system prompt
 * always stays.
 */

/** Once over budget, compact down to this share of it, so that the next turns do not compact again at once. */
export const COMPACTION_TARGET = 0.75;

export interface VisibleHistory {
  /** The stored messages the model sees, in order; system messages are not among them. */
  messages: Message[];
  /** The compaction in force, if any. */
  latest?: Compaction;
}

export function visibleHistory(messages: readonly Message[]): VisibleHistory {
  let latest: Compaction | undefined;
  for (const message of messages) if (message.compaction) latest = message.compaction;
  const hidden = (message: Message) => latest !== undefined && message.seq >= latest.fromSeq && message.seq <= latest.toSeq;
  return { messages: messages.filter((message) => message.role !== MessageRole.MESSAGE_ROLE_SYSTEM && !hidden(message)), latest };
}

/** A user message and everything after it up to the next user message. */
export function turnsOf(messages: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const message of messages) {
    if (message.role === MessageRole.MESSAGE_ROLE_USER || turns.length === 0) turns.push([message]);
    else turns[turns.length - 1]!.push(message);
  }
  return turns;
}

export interface CompactionInput {
  /** The whole stored conversation. */
  messages: readonly Message[];
  strategy: CompactionStrategy;
  /** Prompt tokens the history may use in all. */
  budget: number;
  /** Tokens of what is always sent: system prompt (with any summary) and tool definitions. */
  fixedTokens: number;
  count: TokenCounter;
}

export interface CompactionPlan {
  strategy: Exclude<CompactionStrategy, 'none'>;
  fromSeq: number;
  toSeq: number;
  /** Messages hidden by this compaction that were visible before (what a summary must cover). */
  newlyHidden: Message[];
  tokensBefore: number;
  tokensAfter: number;
}

export function planCompaction(input: CompactionInput): CompactionPlan | undefined {
  if (input.strategy === 'none') return undefined;
  const { messages: visible, latest } = visibleHistory(input.messages);
  const turns = turnsOf(visible);
  const turnTokens = turns.map((turn) =>
    toModelHistory(turn).reduce((total, message) => total + chatMessageTokens(message, input.count), 0),
  );
  const total = input.fixedTokens + turnTokens.reduce((sum, tokens) => sum + tokens, 0);
  if (total <= input.budget || turns.length < 2) return undefined;

  const target = Math.floor(input.budget * COMPACTION_TARGET);
  // delete-middle keeps the first turn, which usually states the task, unless keeping it
  // would leave the history over budget or would split the range already compacted.
  const pinnedFits = total - turnTokens.slice(1, -1).reduce((sum, tokens) => sum + tokens, 0) <= input.budget;
  const pinnedBeforeRange = latest === undefined || turns[0]![0]!.seq < latest.fromSeq;
  const pinned = input.strategy === 'delete-middle' && turns.length > 2 && pinnedFits && pinnedBeforeRange ? 1 : 0;

  let after = total;
  let end = pinned;
  while (end < turns.length - 1 && after > target) after -= turnTokens[end++]!;
  if (end === pinned) return undefined;

  const newlyHidden = turns.slice(pinned, end).flat();
  const firstHidden = newlyHidden[0]!.seq;
  const lastHidden = newlyHidden[newlyHidden.length - 1]!.seq;
  return {
    strategy: input.strategy,
    // Extending the range in force keeps what it hid hidden.
    fromSeq: latest ? Math.min(latest.fromSeq, firstHidden) : firstHidden,
    toSeq: lastHidden,
    newlyHidden,
    tokensBefore: total,
    tokensAfter: after,
  };
}

/** The texts planCompaction counts in the history it is given, for countAhead (tokens.ts) to count first. */
export function* historyTexts(messages: readonly Message[]): Generator<string> {
  for (const turn of turnsOf(visibleHistory(messages).messages))
    for (const message of toModelHistory(turn)) yield* chatMessageTexts(message);
}

/** The text a summary is made from: the earlier summary, then the newly compacted turns. */
export function transcriptOf(messages: readonly Message[], previousSummary: string | undefined, maxResultChars = 2000): string {
  const lines: string[] = [];
  if (previousSummary) lines.push(`Summary of the conversation before these messages:\n${previousSummary}\n`);
  for (const message of messages) {
    const call = message.toolCall;
    if (message.role === MessageRole.MESSAGE_ROLE_USER) lines.push(`User: ${message.content}`);
    else if (message.role === MessageRole.MESSAGE_ROLE_TOOL && call) {
      const output = call.result ?? message.content;
      lines.push(
        `Result of ${call.name}${call.isError ? ' (error)' : ''}: ${output.length > maxResultChars ? `${output.slice(0, maxResultChars)}…` : output}`,
      );
    } else if (call) lines.push(`Assistant called ${call.name} with ${call.argumentsJson || '{}'}`);
    else if (message.content) lines.push(`Assistant: ${message.content}`);
  }
  return lines.join('\n');
}

export const SUMMARY_INSTRUCTIONS =
  'Summarize the conversation below so that an assistant can continue it without seeing it. ' +
  'Keep every fact, name, number, decision, tool result that still matters and task still open; ' +
  'drop greetings and repetition. Write at most 300 words, plain text, no preamble.';

/** The system prompt the model gets while a summary is in force. */
export function withSummary(systemPrompt: string, summary: string | undefined): string {
  return summary ? `${systemPrompt}\n\nSummary of the earlier conversation (older messages are not shown):\n${summary}` : systemPrompt;
}

export function compactionNotice(plan: CompactionPlan, budget: number, summary: string | undefined): string {
  const base =
    `History compacted (chat.compaction_strategy ${plan.strategy}): messages ${plan.fromSeq}–${plan.toSeq} are no longer sent to the model; ` +
    `about ${plan.tokensBefore} prompt tokens exceeded the budget of ${budget}, about ${plan.tokensAfter} remain.`;
  return summary ? `${base} They are replaced by this summary: ${summary}` : base;
}
