import { invalidArgument } from '../common/grpc/errors.js';

/**
 * Which provider serves a model name (seed 000, "Provider Routing"; DESIGN §4 "Providers").
 * Pure data: the table knows all six providers of the seed even where this build has no
 * client for one, so adding a provider is a client, not a routing change.
 */
export type ProviderName = 'gemini' | 'anthropic' | 'openai' | 'mistral' | 'ollama' | 'openrouter';

export interface ProviderRoute {
  provider: ProviderName;
  /** The environment variable holding the API key; absent for providers that take none (Ollama). */
  keyEnv?: string;
  /** The environment variable whose value replaces `defaultBaseUrl`. */
  baseUrlEnv: string;
  defaultBaseUrl: string;
}

export interface ModelRoute extends ProviderRoute {
  /** The model name as configured, e.g. "openai-gpt-4o"; used in every message. */
  model: string;
  /** The name the provider's API expects, e.g. "gpt-4o". */
  modelId: string;
}

interface PrefixRule {
  prefix: string;
  /** Anthropic's own model names begin with "claude-", so that prefix is kept. */
  keepPrefix: boolean;
  route: ProviderRoute;
}

const GEMINI: ProviderRoute = {
  provider: 'gemini',
  keyEnv: 'GEMINI_API_KEY',
  baseUrlEnv: 'GEMINI_BASE_URL',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
};

const PREFIX_RULES: readonly PrefixRule[] = [
  { prefix: 'claude-', keepPrefix: true, route: { provider: 'anthropic', keyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: 'ANTHROPIC_BASE_URL', defaultBaseUrl: 'https://api.anthropic.com/v1' } },
  { prefix: 'openai-', keepPrefix: false, route: { provider: 'openai', keyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL', defaultBaseUrl: 'https://api.openai.com/v1' } },
  { prefix: 'mistral-', keepPrefix: false, route: { provider: 'mistral', keyEnv: 'MISTRAL_API_KEY', baseUrlEnv: 'MISTRAL_BASE_URL', defaultBaseUrl: 'https://api.mistral.ai/v1' } },
  // Ollama takes no key: its OpenAI-compatible endpoint is called without Authorization.
  { prefix: 'ollama-', keepPrefix: false, route: { provider: 'ollama', baseUrlEnv: 'OLLAMA_BASE_URL', defaultBaseUrl: 'http://localhost:11434/v1' } },
  { prefix: 'openrouter-', keepPrefix: false, route: { provider: 'openrouter', keyEnv: 'OPENROUTER_API_KEY', baseUrlEnv: 'OPENROUTER_BASE_URL', defaultBaseUrl: 'https://openrouter.ai/api/v1' } },
];

/** Every provider's route, for start-up checks that look at keys and base URLs. */
export const PROVIDER_ROUTES: readonly ProviderRoute[] = [GEMINI, ...PREFIX_RULES.map((rule) => rule.route)];

/**
 * Routes a configured model name. Names without a known prefix go to Gemini, as in the seed.
 * Throws INVALID_ARGUMENT for a name that routes nowhere: empty, or a bare prefix.
 */
export function routeModel(model: string): ModelRoute {
  const name = model.trim();
  if (name === '') throw invalidArgument('no model named: set GenerateRequest.model, e.g. "gemini-2.5-flash" or "openai-gpt-4o"');
  const rule = PREFIX_RULES.find((candidate) => name.startsWith(candidate.prefix));
  if (!rule) return { ...GEMINI, model: name, modelId: name };
  if (name.length === rule.prefix.length) {
    throw invalidArgument(`model "${name}" names no model after the "${rule.prefix}" prefix (expected "${rule.prefix}<model id>")`);
  }
  return { ...rule.route, model: name, modelId: rule.keepPrefix ? name : name.slice(rule.prefix.length) };
}
