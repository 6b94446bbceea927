import { invalidArgument } from '../common/grpc/errors.js';

/**
 * Which provider serves a model name (seed 000, "Provider Routing"; DESIGN §4 "Providers"),
 * plus the `provider:model` form of issue 3. Pure data: no keys, no clients.
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

const ROUTES: Record<ProviderName, ProviderRoute> = {
  gemini: { provider: 'gemini', keyEnv: 'GEMINI_API_KEY', baseUrlEnv: 'GEMINI_BASE_URL', defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta' },
  anthropic: { provider: 'anthropic', keyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: 'ANTHROPIC_BASE_URL', defaultBaseUrl: 'https://api.anthropic.com/v1' },
  openai: { provider: 'openai', keyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL', defaultBaseUrl: 'https://api.openai.com/v1' },
  mistral: { provider: 'mistral', keyEnv: 'MISTRAL_API_KEY', baseUrlEnv: 'MISTRAL_BASE_URL', defaultBaseUrl: 'https://api.mistral.ai/v1' },
  // Ollama takes no key: its OpenAI-compatible endpoint is called without Authorization.
  ollama: { provider: 'ollama', baseUrlEnv: 'OLLAMA_BASE_URL', defaultBaseUrl: 'http://localhost:11434/v1' },
  openrouter: { provider: 'openrouter', keyEnv: 'OPENROUTER_API_KEY', baseUrlEnv: 'OPENROUTER_BASE_URL', defaultBaseUrl: 'https://openrouter.ai/api/v1' },
};

interface PrefixRule {
  prefix: string;
  provider: ProviderName;
  /** Anthropic's own model names begin with "claude-", so that prefix is kept. */
  keepPrefix: boolean;
}

const PREFIX_RULES: readonly PrefixRule[] = [
  { prefix: 'claude-', provider: 'anthropic', keepPrefix: true },
  { prefix: 'openai-', provider: 'openai', keepPrefix: false },
  { prefix: 'mistral-', provider: 'mistral', keepPrefix: false },
  { prefix: 'ollama-', provider: 'ollama', keepPrefix: false },
  { prefix: 'openrouter-', provider: 'openrouter', keepPrefix: false },
];

/** The names `provider:model` accepts; "google" and "gemini" are the same provider. */
const PROVIDER_NAMES: Readonly<Record<string, ProviderName>> = {
  anthropic: 'anthropic',
  gemini: 'gemini',
  google: 'gemini',
  mistral: 'mistral',
  ollama: 'ollama',
  openai: 'openai',
  openrouter: 'openrouter',
};

/** Every provider's route, for start-up checks that look at keys and base URLs. */
export const PROVIDER_ROUTES: readonly ProviderRoute[] = Object.values(ROUTES);

/**
 * Routes a configured model name. The seed's prefixes are tried first, so that a colon inside
 * a model id (`ollama-llama3:8b`) is not taken for a provider; then `provider:model`, where the
 * model id is sent whole; anything else goes to Gemini, as in the seed. Throws INVALID_ARGUMENT
 * for a name that routes nowhere: empty, a bare prefix, or an unknown `provider:`.
 */
export function routeModel(model: string): ModelRoute {
  const name = model.trim();
  if (name === '') throw invalidArgument('no model named: set GenerateRequest.model, e.g. "gemini-2.5-flash" or "openai-gpt-4o"');
  const rule = PREFIX_RULES.find((candidate) => name.startsWith(candidate.prefix));
  if (rule) {
    if (name.length === rule.prefix.length) {
      throw invalidArgument(`model "${name}" names no model after the "${rule.prefix}" prefix (expected "${rule.prefix}<model id>")`);
    }
    return { ...ROUTES[rule.provider], model: name, modelId: rule.keepPrefix ? name : name.slice(rule.prefix.length) };
  }
  const colon = name.indexOf(':');
  if (colon < 0) return { ...ROUTES.gemini, model: name, modelId: name };
  const providerName = name.slice(0, colon);
  const provider = PROVIDER_NAMES[providerName];
  if (!provider) {
    throw invalidArgument(`model "${name}" names an unknown provider "${providerName}" (expected one of ${Object.keys(PROVIDER_NAMES).join(', ')} before the colon)`);
  }
  const modelId = name.slice(colon + 1).trim();
  if (modelId === '') throw invalidArgument(`model "${name}" names no model after "${providerName}:" (expected "${providerName}:<model id>")`);
  return { ...ROUTES[provider], model: name, modelId };
}
