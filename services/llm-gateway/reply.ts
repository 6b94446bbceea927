import { InvalidToolInputError, type ContentPart, type FinishReason, type LanguageModelUsage, type ToolSet } from 'ai';
import type { GenerateResponse, ToolCallPart } from '../../gen/ts/asg/llm/v1/llm.js';

/** The parts of a `generateText` result that become the reply. */
export interface ModelReply {
  text: string;
  content: ReadonlyArray<ContentPart<ToolSet>>;
  finishReason: FinishReason;
  usage: Pick<LanguageModelUsage, 'inputTokens' | 'outputTokens'>;
}

/**
 * Maps a one-step `generateText` result to the proto reply. Every tool call the model made
 * comes back, including those `generateText` marks invalid: a call to a tool that was not
 * offered (NoSuchToolError) or with arguments that do not parse (InvalidToolInputError)
 * appears in `content` as a `tool-call` part with `invalid: true`, followed by a `tool-error`
 * part for the same id. The orchestrator decides what to tell the model about them.
 */
export function toGenerateResponse(reply: ModelReply): GenerateResponse {
  const toolCalls: ToolCallPart[] = [];
  const seen = new Set<string>();
  for (const part of reply.content) {
    if (part.type === 'tool-call') {
      if (part.providerExecuted) continue;
      toolCalls.push(toolCallPartOf(part));
      seen.add(part.toolCallId);
    } else if (part.type === 'tool-error' && !part.providerExecuted && !seen.has(part.toolCallId)) {
      // A tool error without its call: not produced by ai@6.0 for client tools, but the call
      // would otherwise be lost without a trace.
      toolCalls.push(toolCallPartOfError(part));
      seen.add(part.toolCallId);
    }
  }
  return {
    text: reply.text,
    toolCalls,
    finishReason: normaliseFinishReason(reply.finishReason, toolCalls.length > 0),
    usage: { inputTokens: reply.usage.inputTokens ?? 0, outputTokens: reply.usage.outputTokens ?? 0 },
  };
}

export type ToolCallContent = Extract<ContentPart<ToolSet>, { type: 'tool-call' }>;
export type ToolErrorContent = Extract<ContentPart<ToolSet>, { type: 'tool-error' }>;

/** A call the model made, valid or not, as the proto carries it (also for each call of a stream). */
export function toolCallPartOf(part: ToolCallContent): ToolCallPart {
  const providerMetadataJson = providerMetadataJsonOf(part);
  return {
    id: part.toolCallId,
    name: part.toolName,
    argumentsJson: argumentsJsonOf(part),
    ...(providerMetadataJson ? { providerMetadataJson } : {}),
  };
}

/** The call behind a tool error that came without its call. */
export function toolCallPartOfError(part: ToolErrorContent): ToolCallPart {
  return { id: part.toolCallId, name: part.toolName, argumentsJson: invalidArgumentsJson(part.input) };
}

/**
 * The arguments as the model produced them. For a valid call `input` is the parsed JSON,
 * re-serialised here. For an invalid one the SDK keeps the raw text on InvalidToolInputError;
 * otherwise `input` is the parsed value when the text parsed and the text itself when not.
 */
function argumentsJsonOf(part: ToolCallContent): string {
  if (!(part.dynamic && part.invalid)) return JSON.stringify(part.input ?? {});
  if (InvalidToolInputError.isInstance(part.error)) return part.error.toolInput;
  return invalidArgumentsJson(part.input);
}

/**
 * The provider state of a call (e.g. `{"google":{"thoughtSignature":"…"}}`), kept opaque and
 * whole: prompt.ts hands it back with the call in later requests, where Gemini requires it.
 */
function providerMetadataJsonOf(part: ToolCallContent): string | undefined {
  const metadata = part.providerMetadata;
  return metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : undefined;
}

function invalidArgumentsJson(input: unknown): string {
  if (input === undefined) return '';
  return typeof input === 'string' ? input : JSON.stringify(input);
}

/**
 * Gemini reports STOP even when it answered with function calls; the call list, not the
 * provider's word, says whether the model wants tools run.
 */
export function normaliseFinishReason(reason: FinishReason, hasToolCalls: boolean): string {
  return hasToolCalls && reason === 'stop' ? 'tool-calls' : reason;
}
