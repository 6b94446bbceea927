import { chatCompletionsWire, randomId } from './chat-completions.js';

/**
 * Ollama's OpenAI-compatible `POST /v1/chat/completions` (served here under /ollama/v1): no
 * credentials at all (an Authorization header is ignored, as Ollama does), tool-call ids
 * `call_` plus eight characters, `system_fingerprint: "fp_ollama"`.
 */
const LOWER_ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

export const ollamaWire = chatCompletionsWire({
  provider: 'ollama',
  path: '/ollama/v1/chat/completions',
  checkAuth: () => undefined,
  toolCallId: () => `call_${randomId(LOWER_ALPHANUMERIC, 8)}`,
  completionId: () => `chatcmpl-${randomId('0123456789', 3)}`,
  contentWithoutText: '',
  extraFields: { completion: { system_fingerprint: 'fp_ollama' } },

  streamUsage: 'own-chunk-when-asked',
  streamsArgumentFragments: false,

  renderError(status, message) {
    const text = message ?? (status === 404 ? 'model not found, try pulling it first' : `HTTP ${status}`);
    return { status, body: { error: { message: text, type: 'api_error', param: null, code: null } } };
  },
});
