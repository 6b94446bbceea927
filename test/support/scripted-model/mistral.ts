import { randomBytes } from 'node:crypto';
import { chatCompletionsWire, randomId } from './chat-completions.js';
import { asArray, asObject, asString } from './json.js';

/**
 * Mistral's `POST /v1/chat/completions` (served here under /mistral/v1): Bearer key, tool-call
 * ids of exactly nine letters and digits (ids of any other shape in the history are refused),
 * `content: ""` beside tool calls, and errors as `{object: "error", message, type, param, code}`.
 */
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOOL_CALL_ID = /^[A-Za-z0-9]{9}$/;

/** Every tool-call id the history mentions: on assistant calls and on tool results. */
function historyToolCallIds(body: unknown): string[] {
  return asArray(asObject(body).messages)
    .map(asObject)
    .flatMap((message) => [
      ...asArray(message.tool_calls).map((call) => asString(asObject(call).id)),
      ...(message.role === 'tool' ? [asString(message.tool_call_id)] : []),
    ]);
}

const ERROR_TYPES: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request' },
  401: { type: 'invalid_request_error', message: 'Unauthorized' },
  404: { type: 'invalid_request_error', message: 'Invalid model' },
  429: { type: 'rate_limited', message: 'Requests rate limit exceeded' },
  500: { type: 'internal_server_error', message: 'Internal server error' },
  503: { type: 'service_unavailable', message: 'Service unavailable' },
};

export const mistralWire = chatCompletionsWire({
  provider: 'mistral',
  path: '/mistral/v1/chat/completions',

  checkAuth(headers) {
    if (/^Bearer\s+\S+/i.test(headers.authorization ?? '')) return undefined;
    return { status: 401, body: { message: 'Unauthorized', request_id: randomBytes(16).toString('hex') } };
  },

  checkBody(body) {
    const bad = historyToolCallIds(body).find((id) => !TOOL_CALL_ID.test(id));
    if (bad === undefined) return undefined;
    return {
      status: 400,
      body: {
        object: 'error',
        message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`,
        type: 'invalid_function_call',
        param: null,
        code: '3280',
      },
    };
  },

  toolCallId: () => randomId(ALPHANUMERIC, 9),
  completionId: () => randomBytes(16).toString('hex'),
  contentWithoutText: '',

  streamUsage: 'finish-chunk',
  streamsArgumentFragments: false,

  renderError(status, message) {
    const known = ERROR_TYPES[status] ?? {
      type: status >= 500 ? 'internal_server_error' : 'invalid_request_error',
      message: `HTTP ${status}`,
    };
    return { status, body: { object: 'error', message: message ?? known.message, type: known.type, param: null, code: null } };
  },
});
