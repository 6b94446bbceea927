import { nearest } from './suggest.js';

/**
 * Which provider serves a model name (docs/configuration.md, "Models"). Pure data
 * and rules, no keys and no clients: the llm-gateway routes its calls with it,
 * and the configuration check (check.ts) refuses a name that routes nowhere before anything
 * starts, so both say the same thing about the same name.
 *
 * A name is either `<provider>:<model id>` (the id is sent whole) or begins with a provider's
 * prefix. Anthropic's, Mistral's and Gemini's own model ids begin with `claude-`, `mistral-`
 * and `gemini-`/`gemma-`, so those prefixes are part of the id and kept; `openai-`, `ollama-`
 * and `openrouter-` are stripped. A bare name of another vendor's family (`gpt-4o`, `llama3`) or
 * with a misspelt prefix (`claud-…`) is an error that suggests the name meant (Gemini could only
 * answer it with a 404); any other bare name
 * goes to Gemini, the documented default, with a warning from the check so it is never silent.
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
  /** Set when the name was routed by the default rule (no prefix): the check prints it as a warning. */
  notice?: string;
}

export const ROUTES: Readonly<Record<ProviderName, ProviderRoute>> = {
  gemini: {
    provider: 'gemini',
    keyEnv: 'GEMINI_API_KEY',
    baseUrlEnv: 'GEMINI_BASE_URL',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  },
  anthropic: {
    provider: 'anthropic',
    keyEnv: 'ANTHROPIC_API_KEY',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com/v1',
  },
  openai: { provider: 'openai', keyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL', defaultBaseUrl: 'https://api.openai.com/v1' },
  mistral: { provider: 'mistral', keyEnv: 'MISTRAL_API_KEY', baseUrlEnv: 'MISTRAL_BASE_URL', defaultBaseUrl: 'https://api.mistral.ai/v1' },
  // Ollama takes no key: its OpenAI-compatible endpoint is called without Authorization.
  ollama: { provider: 'ollama', baseUrlEnv: 'OLLAMA_BASE_URL', defaultBaseUrl: 'http://localhost:11434/v1' },
  openrouter: {
    provider: 'openrouter',
    keyEnv: 'OPENROUTER_API_KEY',
    baseUrlEnv: 'OPENROUTER_BASE_URL',
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
  },
};

interface PrefixRule {
  prefix: string;
  provider: ProviderName;
  /** The provider's own model ids begin with the prefix, so it is sent with them. */
  keepPrefix: boolean;
}

const PREFIX_RULES: readonly PrefixRule[] = [
  { prefix: 'gemini-', provider: 'gemini', keepPrefix: true },
  { prefix: 'gemma-', provider: 'gemini', keepPrefix: true },
  { prefix: 'claude-', provider: 'anthropic', keepPrefix: true },
  { prefix: 'openai-', provider: 'openai', keepPrefix: false },
  { prefix: 'mistral-', provider: 'mistral', keepPrefix: true },
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

const KNOWN = `known providers: ${Object.keys(PROVIDER_NAMES).join(', ')}`;

/** A model name that routes nowhere; `suggestion` is the likely intended name, when there is one. */
export class ModelNameError extends Error {
  constructor(
    message: string,
    readonly suggestion?: string,
  ) {
    super(suggestion ? `${message}; did you mean "${suggestion}"?` : message);
    this.name = 'ModelNameError';
  }
}

// Model families of other vendors, so that a bare `gpt-4o` is answered with `openai:gpt-4o`.
const FAMILIES: readonly [RegExp, ProviderName][] = [
  [/^(gpt-|chatgpt-|o[1-9](-|$)|text-embedding-|davinci|babbage)/i, 'openai'],
  [/^(open-)?(mixtral|codestral|ministral|magistral|pixtral|devstral|mistral)/i, 'mistral'],
  [/^(llama|qwen|phi[0-9]|deepseek|tinyllama|gemma[0-9]|smollm)/i, 'ollama'],
  [/^[a-z0-9_.-]+\/[a-z0-9_.:-]+$/i, 'openrouter'],
];

/** The name the user most likely meant, for a name that routes nowhere. */
function suggestionFor(name: string): string | undefined {
  const colon = name.indexOf(':');
  if (colon > 0) {
    const provider = nearest(name.slice(0, colon), Object.keys(PROVIDER_NAMES));
    return provider ? `${provider}:${name.slice(colon + 1)}` : undefined;
  }
  const dash = name.indexOf('-');
  if (dash > 0) {
    const prefix = nearest(
      name.slice(0, dash + 1),
      PREFIX_RULES.map((rule) => rule.prefix),
    );
    if (prefix) return `${prefix}${name.slice(dash + 1)}`;
  }
  const family = FAMILIES.find(([pattern]) => pattern.test(name));
  return family ? `${family[1]}:${name}` : undefined;
}

/**
 * Routes a configured model name, or throws ModelNameError for one that routes nowhere:
 * empty, a bare prefix, an unknown `provider:`, or a name with no provider at all.
 */
export function resolveModel(model: string): ModelRoute {
  const name = model.trim();
  if (name === '') throw new ModelNameError('no model named: set a model, e.g. "gemini-2.5-flash" or "openai:gpt-4o"');
  // Prefixes first, so that a colon inside a model id (`ollama-llama3:8b`) is not taken for a provider.
  const rule = PREFIX_RULES.find((candidate) => name.startsWith(candidate.prefix));
  if (rule) {
    if (name.length === rule.prefix.length)
      throw new ModelNameError(`model "${name}" names no model after the "${rule.prefix}" prefix (expected "${rule.prefix}<model id>")`);
    return { ...ROUTES[rule.provider], model: name, modelId: rule.keepPrefix ? name : name.slice(rule.prefix.length) };
  }
  const colon = name.indexOf(':');
  if (colon < 0) {
    // Another vendor's model family (`gpt-4o`) or a misspelt prefix (`claud-…`) can never be what
    // Gemini serves: refuse it with the name meant.
    const suggestion = suggestionFor(name);
    if (suggestion) {
      throw new ModelNameError(
        `model "${name}" names no provider (${KNOWN}; write "<provider>:<model id>" or a prefixed name such as "openai-gpt-4o" or "gemini-2.5-flash")`,
        suggestion,
      );
    }
    // Anything else goes to Gemini, the documented default — said out loud, never silently.
    return {
      ...ROUTES.gemini,
      model: name,
      modelId: name,
      notice: `model "${name}" has no provider prefix, so it goes to Gemini (the rule for unprefixed names); write "gemini-…" or "<provider>:<model id>" to say so`,
    };
  }
  const providerName = name.slice(0, colon);
  const provider = PROVIDER_NAMES[providerName];
  if (!provider) throw new ModelNameError(`model "${name}" names an unknown provider "${providerName}" (${KNOWN})`, suggestionFor(name));
  const modelId = name.slice(colon + 1).trim();
  if (modelId === '')
    throw new ModelNameError(`model "${name}" names no model after "${providerName}:" (expected "${providerName}:<model id>")`);
  return { ...ROUTES[provider], model: name, modelId };
}

/** What is wrong with the variable that moves `route`'s endpoint, if anything: it must hold an absolute http(s) URL. */
export function baseUrlError(route: ProviderRoute, env: NodeJS.ProcessEnv): string | undefined {
  const value = env[route.baseUrlEnv]?.trim();
  if (!value || isHttpUrl(value)) return undefined;
  return `${route.baseUrlEnv} must be an absolute http(s) URL such as ${route.defaultBaseUrl}, got "${value}"`;
}

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}
