import { InvalidToolInputError, NoSuchToolError, type ContentPart, type ToolSet } from 'ai';
import { asLanguageModelUsage, convertToLanguageModelPrompt, prepareCallSettings, prepareToolsAndToolChoice } from 'ai/internal';
import type { CallSettings } from './call-settings.js';
import type { ModelClient } from './clients.js';
import type { ModelPrompt } from './prompt.js';
import type { ModelReply } from './reply.js';

/** A reply with the provider's warnings about the request (settings it does not support, …). */
export interface ProviderReply extends ModelReply {
  warnings: ReadonlyArray<unknown>;
}

type ProviderContent = Awaited<ReturnType<ModelClient['doGenerate']>>['content'][number];
type ProviderToolCall = Extract<ProviderContent, { type: 'tool-call' }>;

/**
 * One model answer, as `generateText` with one step, no `execute` and no SDK retries gives it,
 * from the provider model's own `doGenerate`. `generateText` validates the whole prompt against
 * the SDK's zod schema of messages on every call (its `standardizePrompt`): on a prompt that
 * prompt.ts built from the proto, field by field in the SDK's types, that check finds nothing
 * and costs more than the rest of the SDK's layers together. The layers that do matter are the
 * SDK's own functions (`ai/internal`): the conversion of the messages into the provider's
 * prompt and the tool preparation, so every provider sees exactly what it saw before; the
 * provider's errors are thrown as they are, as `generateText` throws them with `maxRetries: 0`.
 *
 * The tool calls are parsed as `generateText` parses them for tools with a JSON schema and no
 * validator (prompt.ts's `jsonSchema`): a call to a tool that was not offered is marked invalid
 * with NoSuchToolError, arguments that are not JSON with InvalidToolInputError keeping the raw
 * text, empty arguments are `{}`. reply.ts reads them the same way from either path.
 */
export async function generateOnce(
  model: ModelClient,
  prompt: ModelPrompt,
  settings: CallSettings,
  abortSignal: AbortSignal,
): Promise<ProviderReply> {
  const messages = await convertToLanguageModelPrompt({
    prompt: { ...(prompt.system !== undefined ? { system: prompt.system } : {}), messages: prompt.messages },
    supportedUrls: await model.supportedUrls,
    download: undefined,
    abortSignal,
  });
  const { tools, toolChoice } = await prepareToolsAndToolChoice({ tools: prompt.tools, toolChoice: undefined, activeTools: undefined });
  const result = await model.doGenerate({ ...prepareCallSettings(settings), tools, toolChoice, prompt: messages, abortSignal });
  const content: Array<ContentPart<ToolSet>> = [];
  let text = '';
  for (const part of result.content) {
    if (part.type === 'tool-call') content.push(parsedToolCall(part, prompt.tools));
    else if (part.type === 'text') {
      text += part.text;
      content.push(part);
    }
    // Reasoning, sources, files and provider-executed results are not part of the reply (reply.ts).
  }
  return { text, content, finishReason: result.finishReason.unified, usage: asLanguageModelUsage(result.usage), warnings: result.warnings };
}

function parsedToolCall(call: ProviderToolCall, tools: ToolSet | undefined): ContentPart<ToolSet> {
  const common = {
    type: 'tool-call' as const,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    ...(call.providerExecuted !== undefined ? { providerExecuted: call.providerExecuted } : {}),
    ...(call.providerMetadata !== undefined ? { providerMetadata: call.providerMetadata } : {}),
  };
  if (!tools || !Object.hasOwn(tools, call.toolName)) {
    // The SDK keeps the arguments of a call it could not use parsed when they parse, as text when not (empty too).
    const error = new NoSuchToolError({ toolName: call.toolName, ...(tools ? { availableTools: Object.keys(tools) } : {}) });
    const parsed = call.input.trim() === '' ? undefined : parseJson(call.input);
    return { ...common, input: parsed?.ok ? parsed.value : call.input, dynamic: true, invalid: true, error };
  }
  const parsed = call.input.trim() === '' ? ({ ok: true, value: {} } as const) : parseJson(call.input);
  if (!parsed.ok) {
    const error = new InvalidToolInputError({ toolName: call.toolName, toolInput: call.input, cause: parsed.error });
    return { ...common, input: call.input, dynamic: true, invalid: true, error };
  }
  return { ...common, input: parsed.value } as ContentPart<ToolSet>;
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: unknown };

/** JSON, with `__proto__` and `constructor.prototype` keys refused as the SDK's secure parse refuses them. */
function parseJson(text: string): Parsed {
  try {
    const value: unknown = JSON.parse(text);
    // Walked whatever the text looks like: a key may be written with \u escapes.
    if (hasPrototypeKeys(value)) return { ok: false, error: new SyntaxError('Object contains forbidden prototype property') };
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

function hasPrototypeKeys(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.hasOwn(value, '__proto__')) return true;
  const made = Object.hasOwn(value, 'constructor') ? (value as Record<string, unknown>).constructor : undefined;
  if (typeof made === 'object' && made !== null && Object.hasOwn(made, 'prototype')) return true;
  return Object.values(value).some(hasPrototypeKeys);
}
