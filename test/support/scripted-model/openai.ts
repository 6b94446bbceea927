import { randomBytes } from 'node:crypto';
import { asArray, asObject, asString, estimateTokens, type JsonObject } from './json.js';
import type { ModelRequest, ParsedRequest, VendorWire, WireResponse } from './types.js';

/**
 * OpenAI's Chat Completions (`POST /v1/chat/completions`): Bearer key, `messages[]` with
 * `tool_calls[].function.arguments` as a JSON string, one `role: "tool"` message per
 * `tool_call_id`, and `finish_reason: "tool_calls"` when the model calls tools.
 */
const PATH = '/v1/chat/completions';

const ERROR_TYPES: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again later.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
};

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

export const openaiWire: VendorWire = {
  provider: 'openai',

  matchPath(path) {
    return path === PATH ? {} : undefined;
  },

  checkAuth(headers) {
    if (/^Bearer\s+\S+/i.test(headers.authorization ?? '')) return undefined;
    return {
      status: 401,
      body: {
        error: {
          message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    };
  },

  parseRequest(body): ParsedRequest {
    const request = asObject(body);
    const messages = asArray(request.messages).map(asObject);
    return {
      provider: 'openai',
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
      id: `call_${randomBytes(12).toString('base64url')}`,
      type: 'function',
      function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
    }));
    const message: JsonObject = { role: 'assistant', content: reply.text ?? null, refusal: null, annotations: [] };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    const promptTokens = estimateTokens(JSON.stringify(request.body));
    const completionTokens = estimateTokens(JSON.stringify(message));
    return {
      status: 200,
      body: {
        id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
        system_fingerprint: null,
      },
    };
  },

  renderError(status, message) {
    const known = ERROR_TYPES[status] ?? { type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null, message: `HTTP ${status}` };
    return { status, body: { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } } };
  },
};
