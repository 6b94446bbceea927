import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ChatMessage, ToolDefinition } from '../../../gen/ts/asg/llm/v1/llm.js';

export type TokenCounter = (text: string) => number;

/** Roles, separators and call framing each message costs in every provider's format. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Documented estimate for models without a public tokenizer here (Gemini, Claude, Mistral,
 * Llama…): one token per 4 characters of text, the ratio seed 002 uses for English; code and
 * JSON run denser, which the 25 % margin of the compaction target absorbs.
 */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

/** OpenAI's own encodings for its models (`openai-…` / `openai:…`), the estimate for the rest. */
export function tokenCounterFor(model: string): TokenCounter {
  const id = model.replace(/^openai[-:]/, '');
  if (id === model && !model.startsWith('openrouter-openai/')) return estimateTokens;
  const name = id.replace(/^openrouter-openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d)/.test(name)) return o200k;
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return cl100k;
  return o200k;
}

export function chatMessageTokens(message: ChatMessage, count: TokenCounter): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + (message.text ? count(message.text) : 0);
  for (const call of message.toolCalls) tokens += MESSAGE_OVERHEAD_TOKENS + count(call.name) + count(call.argumentsJson);
  for (const result of message.toolResults) tokens += MESSAGE_OVERHEAD_TOKENS + count(result.name) + count(result.output);
  return tokens;
}

export function toolDefinitionTokens(tools: readonly ToolDefinition[], count: TokenCounter): number {
  return tools.reduce((total, tool) => total + MESSAGE_OVERHEAD_TOKENS + count(JSON.stringify(tool)), 0);
}
