import { randomBytes } from 'node:crypto';
import { chatCompletionsWire, randomId } from './chat-completions.js';

/**
 * OpenRouter's `POST /api/v1/chat/completions` (served here under /openrouter/api/v1): Bearer
 * key, completions named `gen-…` with the upstream `provider` that served them, and errors as
 * `{error: {code, message}}` with the HTTP status as a number.
 */
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'No auth credentials found',
  402: 'Insufficient credits',
  404: 'No endpoints found for this model',
  429: 'Rate limit exceeded',
  500: 'Internal Server Error',
  502: 'Provider returned error',
  503: 'No available providers',
};

export const openrouterWire = chatCompletionsWire({
  provider: 'openrouter',
  path: '/openrouter/api/v1/chat/completions',

  checkAuth(headers) {
    if (/^Bearer\s+\S+/i.test(headers.authorization ?? '')) return undefined;
    return { status: 401, body: { error: { message: 'No auth credentials found', code: 401 } } };
  },

  toolCallId: () => `call_${randomId(ALPHANUMERIC, 24)}`,
  completionId: () => `gen-${Math.floor(Date.now() / 1000)}-${randomBytes(10).toString('hex')}`,
  contentWithoutText: '',
  extraFields: { completion: { provider: 'Anthropic' }, choice: { logprobs: null } },

  streamUsage: 'own-chunk',
  streamsArgumentFragments: true,

  renderError(status, message) {
    return { status, body: { error: { message: message ?? MESSAGES[status] ?? `HTTP ${status}`, code: status } } };
  },
});
