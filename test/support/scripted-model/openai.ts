import { randomBytes } from 'node:crypto';
import { chatCompletionsWire } from './chat-completions.js';

/** OpenAI's Chat Completions (`POST /v1/chat/completions`): Bearer key, ids `call_…`. */
const ERROR_TYPES: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  403: {
    type: 'invalid_request_error',
    code: 'unsupported_country_region_territory',
    message: 'Country, region, or territory not supported',
  },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again later.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
};

export const openaiWire = chatCompletionsWire({
  provider: 'openai',
  path: '/v1/chat/completions',

  checkAuth(headers) {
    if (/^Bearer\s+\S+/i.test(headers.authorization ?? '')) return undefined;
    return {
      status: 401,
      body: {
        error: {
          message:
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    };
  },

  toolCallId: () => `call_${randomBytes(12).toString('base64url')}`,
  completionId: () => `chatcmpl-${randomBytes(12).toString('base64url')}`,
  contentWithoutText: null,
  extraFields: { completion: { system_fingerprint: null }, choice: { logprobs: null }, message: { refusal: null, annotations: [] } },

  streamUsage: 'own-chunk-when-asked',
  streamsArgumentFragments: true,

  renderError(status, message) {
    const known = ERROR_TYPES[status] ?? {
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
      message: `HTTP ${status}`,
    };
    return { status, body: { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } } };
  },
});
