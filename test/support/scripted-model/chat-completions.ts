import { randomBytes } from 'node:crypto';
import { asArray, asObject, asString, estimateTokens, type JsonObject } from './json.js';
import type { ModelRequest, ParsedRequest, VendorWire, WireResponse } from './types.js';

/**
 * The Chat Completions shape that OpenAI defined and Mistral, OpenRouter and Ollama speak:
 * `messages[]` with `tool_calls[].function.arguments` as a JSON string, one `role: "tool"`
 * message per `tool_call_id`, and `finish_reason: "tool_calls"` when the model calls tools.
 * Each vendor differs in its path, credentials, ids, extra fields and error bodies.
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
  return messages.slice(start).map((message) => ({ name: callNames.get(asString(message.tool_call_id)) ?? '', output: contentText(message.content) }));
}

export function randomId(alphabet: string, length: number): string {
  return [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('');
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
        function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
      }));
      const message: JsonObject = { role: 'assistant', content: reply.text || vendor.contentWithoutText, ...vendor.extraFields?.message };
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      const promptTokens = estimateTokens(JSON.stringify(request.body));
      const completionTokens = estimateTokens(JSON.stringify(message));
      return {
        status: 200,
        body: {
          id: vendor.completionId(),
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.model,
          choices: [{ index: 0, message, ...vendor.extraFields?.choice, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
          ...vendor.extraFields?.completion,
        },
      };
    },

    renderError: vendor.renderError,
  };
}
