import { randomBytes } from 'node:crypto';
import { asArray, asObject, asString, estimateTokens, type JsonObject } from './json.js';
import { jsonFragments, sseEvent, textPieces } from './sse.js';
import type { ModelRequest, ParsedRequest, ScriptedToolCall, VendorWire, WireResponse, WireStream } from './types.js';

/**
 * The Chat Completions shape that OpenAI defined and Mistral, OpenRouter and Ollama speak:
 * `messages[]` with `tool_calls[].function.arguments` as a JSON string, one `role: "tool"`
 * message per `tool_call_id`, and `finish_reason: "tool_calls"` when the model calls tools.
 * Each vendor differs in its path, credentials, ids, extra fields and error bodies.
 *
 * Streamed when the body says `"stream": true`: `data:` events of `chat.completion.chunk`
 * objects whose `choices[0].delta` holds the next piece of text or of a tool call (the call's
 * id and name first, its `arguments` string after), a last chunk with `finish_reason`, then
 * `data: [DONE]`. Usage comes as each vendor sends it (`streamUsage`); a failure after the
 * stream began is a chunk with the vendor's error body.
 */
export interface ChatCompletionsVendor {
  provider: ModelRequest['provider'];
  /** The full request path, e.g. /v1/chat/completions. */
  path: string;
  checkAuth(headers: Record<string, string>): WireResponse | undefined;
  checkBody?(body: unknown): WireResponse | undefined;
  /** A tool-call id in this vendor's format. */
  toolCallId(): string;
  /** The completion id in this vendor's format. */
  completionId(): string;
  /** `message.content` of a reply without text: null for OpenAI, "" for Mistral and Ollama. */
  contentWithoutText: null | '';
  /** Vendor fields added to every completion, its choice and its message. */
  extraFields?: { completion?: JsonObject; choice?: JsonObject; message?: JsonObject };
  /**
   * Where a stream carries usage: in a chunk of its own with no choices, only when the body asks
   * with `stream_options.include_usage` (OpenAI, Ollama) or always (OpenRouter); or always on
   * the chunk with the finish reason (Mistral).
   */
  streamUsage: 'own-chunk-when-asked' | 'own-chunk' | 'finish-chunk';
  /** Whether a streamed tool call's `arguments` come in fragments after its id and name (OpenAI, OpenRouter) or whole with them (Mistral, Ollama). */
  streamsArgumentFragments: boolean;
  renderError(status: number, message?: string): WireResponse;
}

/** `content` is a string or an array of parts; only text parts carry text. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map(asObject)
    .filter((part) => part.type === 'text')
    .map((part) => asString(part.text))
    .join('');
}

/** The trailing `role: "tool"` messages, named after the calls of the assistant message before them. */
function trailingToolResults(messages: JsonObject[]): ParsedRequest['toolResults'] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === 'tool') start -= 1;
  const callNames = new Map<string, string>();
  for (const call of asArray(messages[start - 1]?.tool_calls).map(asObject)) {
    callNames.set(asString(call.id), asString(asObject(call.function).name));
  }
  return messages
    .slice(start)
    .map((message) => ({ name: callNames.get(asString(message.tool_call_id)) ?? '', output: contentText(message.content) }));
}

export function randomId(alphabet: string, length: number): string {
  return [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

function argumentsOf(call: ScriptedToolCall): string {
  return typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
}

function usageOf(request: ModelRequest, answer: unknown): JsonObject {
  const promptTokens = estimateTokens(JSON.stringify(request.body));
  const completionTokens = estimateTokens(JSON.stringify(answer));
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/** The `delta.tool_calls` entries of one streamed call: whole, or its id and name and then its arguments in fragments. */
function toolCallDeltas(vendor: ChatCompletionsVendor, call: ScriptedToolCall, index: number): JsonObject[] {
  const id = vendor.toolCallId();
  const args = argumentsOf(call);
  if (!vendor.streamsArgumentFragments) return [{ index, id, type: 'function', function: { name: call.name, arguments: args } }];
  return [
    { index, id, type: 'function', function: { name: call.name, arguments: '' } },
    ...jsonFragments(args).map((fragment) => ({ index, function: { arguments: fragment } })),
  ];
}

export function chatCompletionsWire(vendor: ChatCompletionsVendor): VendorWire {
  return {
    provider: vendor.provider,

    matchPath(path) {
      return path === vendor.path ? {} : undefined;
    },

    checkAuth: vendor.checkAuth,
    ...(vendor.checkBody ? { checkBody: vendor.checkBody } : {}),

    parseRequest(body): ParsedRequest {
      const request = asObject(body);
      const messages = asArray(request.messages).map(asObject);
      return {
        provider: vendor.provider,
        model: asString(request.model),
        system: messages
          .filter((message) => message.role === 'system' || message.role === 'developer')
          .map((message) => contentText(message.content))
          .join('\n'),
        lastUserText: contentText(messages.filter((message) => message.role === 'user').at(-1)?.content),
        toolResults: trailingToolResults(messages),
        tools: asArray(request.tools).map((entry) => asString(asObject(asObject(entry).function).name)),
      };
    },

    renderReply(reply, request: ModelRequest): WireResponse {
      const toolCalls = (reply.toolCalls ?? []).map((call) => ({
        id: vendor.toolCallId(),
        type: 'function',
        function: { name: call.name, arguments: argumentsOf(call) },
      }));
      const message: JsonObject = { role: 'assistant', content: reply.text || vendor.contentWithoutText, ...vendor.extraFields?.message };
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      return {
        status: 200,
        body: {
          id: vendor.completionId(),
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.model,
          choices: [{ index: 0, message, ...vendor.extraFields?.choice, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
          usage: usageOf(request, message),
          ...vendor.extraFields?.completion,
        },
      };
    },

    renderStream(reply, request: ModelRequest): WireStream {
      const head = {
        id: vendor.completionId(),
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        ...vendor.extraFields?.completion,
      };
      const chunk = (delta: JsonObject, finishReason: string | null = null, extra: JsonObject = {}) =>
        sseEvent({ ...head, choices: [{ index: 0, delta, ...vendor.extraFields?.choice, finish_reason: finishReason }], ...extra });
      const calls = reply.toolCalls ?? [];
      const content = [
        chunk({ role: 'assistant', content: '' }),
        ...textPieces(reply.text ?? '').map((piece) => chunk({ content: piece })),
        ...calls.flatMap((call, index) => toolCallDeltas(vendor, call, index).map((entry) => chunk({ tool_calls: [entry] }))),
      ];
      const usage = usageOf(request, { text: reply.text ?? '', calls });
      const finishReason = calls.length > 0 ? 'tool_calls' : 'stop';
      const askedForUsage = asObject(asObject(request.body).stream_options).include_usage === true;
      const end =
        vendor.streamUsage === 'finish-chunk'
          ? [chunk({}, finishReason, { usage })]
          : [
              chunk({}, finishReason),
              ...(vendor.streamUsage === 'own-chunk' || askedForUsage ? [sseEvent({ ...head, choices: [], usage })] : []),
            ];
      return { content, end: [...end, sseEvent('[DONE]')] };
    },

    renderError: vendor.renderError,

    renderStreamError(message) {
      return sseEvent(vendor.renderError(500, message).body);
    },
  };
}
