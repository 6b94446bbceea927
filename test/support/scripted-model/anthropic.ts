import { randomBytes } from 'node:crypto';
import { asArray, asObject, asString, estimateTokens, type JsonObject } from './json.js';
import { jsonFragments, sseEvent, textPieces } from './sse.js';
import type { ModelRequest, ParsedRequest, ScriptedToolCall, VendorWire, WireResponse, WireStream } from './types.js';

/**
 * Anthropic's Messages API (`POST /v1/messages`, served here under /anthropic/v1): key in
 * `x-api-key`, an `anthropic-version` header and `max_tokens` both required, `content` blocks
 * `text` and `tool_use {id, name, input}`, tool results back in a user message as
 * `tool_result` blocks, `stop_reason` and `usage {input_tokens, output_tokens}`.
 *
 * Streamed when the body says `"stream": true`: named events `message_start` (input tokens),
 * per block `content_block_start`, `content_block_delta` (`text_delta`, or `input_json_delta`
 * fragments of a tool's input) and `content_block_stop`, then `message_delta` (stop reason,
 * output tokens) and `message_stop`; a `ping` after the start, and `event: error` for a
 * failure after the stream began.
 */
const PATH = '/anthropic/v1/messages';

const ERROR_TYPES: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'The requested resource could not be found.' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

function error(status: number, type: string, message: string): WireResponse {
  return { status, body: { type: 'error', error: { type, message } } };
}

/** `content` (and `system`) is a string or an array of blocks; only text blocks carry text. */
function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map(asObject)
    .filter((block) => block.type === 'text')
    .map((block) => asString(block.text))
    .join('');
}

function blocksOf(message: JsonObject | undefined): JsonObject[] {
  return asArray(message?.content).map(asObject);
}

/** The `tool_result` blocks of the last user message, named after the `tool_use` blocks they answer. */
function trailingToolResults(messages: JsonObject[]): ParsedRequest['toolResults'] {
  const last = messages.at(-1);
  if (last?.role !== 'user') return [];
  const callNames = new Map<string, string>();
  for (const block of blocksOf(messages.at(-2)).filter((candidate) => candidate.type === 'tool_use'))
    callNames.set(asString(block.id), asString(block.name));
  return blocksOf(last)
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({ name: callNames.get(asString(block.tool_use_id)) ?? '', output: blocksText(block.content) }));
}

/** Anthropic always sends `input` as an object; a scripted string is parsed when it is JSON, else sent as is. */
function inputOf(args: ScriptedToolCall['args']): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

const messageId = (): string => `msg_${randomBytes(18).toString('base64url')}`;

function contentBlocks(reply: { text?: string; toolCalls?: ScriptedToolCall[] }): JsonObject[] {
  const content: JsonObject[] = [];
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls ?? [])
    content.push({ type: 'tool_use', id: `toolu_${randomBytes(18).toString('base64url')}`, name: call.name, input: inputOf(call.args) });
  return content;
}

function stopReasonOf(reply: { toolCalls?: ScriptedToolCall[] }): string {
  return (reply.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn';
}

export const anthropicWire: VendorWire = {
  provider: 'anthropic',

  matchPath(path) {
    return path === PATH ? {} : undefined;
  },

  checkAuth(headers) {
    if (!headers['x-api-key']) return error(401, 'authentication_error', 'x-api-key header is required');
    if (!headers['anthropic-version']) return error(400, 'invalid_request_error', 'anthropic-version: header is required');
    return undefined;
  },

  checkBody(body) {
    const maxTokens = asObject(body).max_tokens;
    if (maxTokens === undefined) return error(400, 'invalid_request_error', 'max_tokens: Field required');
    if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
      return error(400, 'invalid_request_error', 'max_tokens: Input should be a valid integer greater than 0');
    return undefined;
  },

  parseRequest(body): ParsedRequest {
    const request = asObject(body);
    const messages = asArray(request.messages).map(asObject);
    const lastUser = messages.filter((message) => message.role === 'user' && blocksText(message.content) !== '').at(-1);
    return {
      provider: 'anthropic',
      model: asString(request.model),
      system: blocksText(request.system),
      lastUserText: lastUser ? blocksText(lastUser.content) : '',
      toolResults: trailingToolResults(messages),
      tools: asArray(request.tools).map((entry) => asString(asObject(entry).name)),
    };
  },

  renderReply(reply, request: ModelRequest): WireResponse {
    const content = contentBlocks(reply);
    return {
      status: 200,
      body: {
        id: messageId(),
        type: 'message',
        role: 'assistant',
        model: request.model,
        content,
        stop_reason: stopReasonOf(reply),
        stop_sequence: null,
        usage: { input_tokens: estimateTokens(JSON.stringify(request.body)), output_tokens: estimateTokens(JSON.stringify(content)) },
      },
    };
  },

  renderStream(reply, request: ModelRequest): WireStream {
    const blocks = contentBlocks(reply);
    const inputTokens = estimateTokens(JSON.stringify(request.body));
    const content = [
      sseEvent(
        {
          type: 'message_start',
          message: {
            id: messageId(),
            type: 'message',
            role: 'assistant',
            model: request.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: inputTokens, output_tokens: 1 },
          },
        },
        'message_start',
      ),
      sseEvent({ type: 'ping' }, 'ping'),
    ];
    blocks.forEach((block, index) => {
      const isText = block.type === 'text';
      const start = isText ? { type: 'text', text: '' } : { ...block, input: {} };
      const deltas = isText
        ? textPieces(asString(block.text)).map((text) => ({ type: 'text_delta', text }))
        : jsonFragments(JSON.stringify(block.input)).map((partial_json) => ({ type: 'input_json_delta', partial_json }));
      content.push(sseEvent({ type: 'content_block_start', index, content_block: start }, 'content_block_start'));
      for (const delta of deltas) content.push(sseEvent({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
      content.push(sseEvent({ type: 'content_block_stop', index }, 'content_block_stop'));
    });
    const end = [
      sseEvent(
        {
          type: 'message_delta',
          delta: { stop_reason: stopReasonOf(reply), stop_sequence: null },
          usage: { output_tokens: estimateTokens(JSON.stringify(blocks)) },
        },
        'message_delta',
      ),
      sseEvent({ type: 'message_stop' }, 'message_stop'),
    ];
    return { content, end };
  },

  renderStreamError(message) {
    return sseEvent({ type: 'error', error: { type: 'api_error', message } }, 'error');
  },

  renderError(status, message) {
    const known = ERROR_TYPES[status] ?? { type: status >= 500 ? 'api_error' : 'invalid_request_error', message: `HTTP ${status}` };
    return error(status, known.type, message ?? known.message);
  },
};
