import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createMistral } from '@ai-sdk/mistral';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { failedPrecondition } from '../common/grpc/errors.js';
import type { ProviderEnvironment, ProviderSettings } from './environment.js';
import type { ModelRoute, ProviderName } from './routing.js';

/**
 * A provider model object of the SDK's current model interface (never the SDK's string
 * shorthand, which would go through its gateway): one-step.ts calls its `doGenerate` itself.
 */
export type ModelClient = Extract<LanguageModel, { specificationVersion: 'v3' }>;

interface ClientSettings extends ProviderSettings {
  fetch: typeof fetch;
}

type ProviderFactory = (settings: ClientSettings) => (modelId: string) => ModelClient;

/** OpenRouter gets these on every call, to attribute the traffic to the project. */
const OPENROUTER_HEADERS: Readonly<Record<string, string>> = {
  'HTTP-Referer': 'https://github.com/agentic-platform',
  'X-Title': 'Agent Stop and Go',
};

/**
 * One factory per provider. The key and base URL are always passed explicitly: left unset,
 * the SDKs would fall back to their own variables (GOOGLE_GENERATIVE_AI_API_KEY,
 * ANTHROPIC_BASE_URL, …) behind our back. ModelClients never calls a keyed factory without
 * its key.
 */
const FACTORIES: Record<ProviderName, ProviderFactory> = {
  gemini: ({ apiKey, baseUrl, fetch }) => {
    const google = createGoogleGenerativeAI({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => google(modelId);
  },
  // The SDK sends `x-api-key` and its own `anthropic-version`.
  anthropic: ({ apiKey, baseUrl, fetch }) => {
    const anthropic = createAnthropic({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => anthropic.messages(modelId);
  },
  // Chat Completions, not the Responses API that `openai(id)` would call: the endpoint
  // every OpenAI-compatible server speaks (`{base}/chat/completions`).
  openai: ({ apiKey, baseUrl, fetch }) => {
    const openai = createOpenAI({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => openai.chat(modelId);
  },
  mistral: ({ apiKey, baseUrl, fetch }) => {
    const mistral = createMistral({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => mistral.chat(modelId);
  },
  // No apiKey, so no Authorization header: Ollama's OpenAI-compatible /v1 takes none.
  // `includeUsage` asks for token counts at the end of a stream (`stream_options`), which
  // OpenAI-compatible servers send only when asked; it changes nothing for Generate.
  ollama: ({ baseUrl, fetch }) => {
    const ollama = createOpenAICompatible({ name: 'ollama', baseURL: baseUrl, includeUsage: true, fetch });
    return (modelId) => ollama.chatModel(modelId);
  },
  openrouter: ({ apiKey, baseUrl, fetch }) => {
    const openrouter = createOpenAICompatible({
      name: 'openrouter',
      baseURL: baseUrl,
      apiKey,
      headers: { ...OPENROUTER_HEADERS },
      includeUsage: true,
      fetch,
    });
    return (modelId) => openrouter.chatModel(modelId);
  },
};

/** Model clients, created on first use and kept per configured model name. */
/** More distinct models than any agent tree names; past it the cache starts over (a client is cheap to make). */
const MAX_CACHED_MODELS = 256;

export class ModelClients {
  private readonly providers = new Map<ProviderName, (modelId: string) => ModelClient>();
  private readonly models = new Map<string, ModelClient>();

  constructor(
    private readonly environment: ProviderEnvironment,
    private readonly fetchImpl: typeof fetch,
  ) {}

  /** The client for a routed model. Throws FAILED_PRECONDITION when its key is not set, having sent nothing. */
  get(route: ModelRoute): ModelClient {
    const cached = this.models.get(route.model);
    if (cached) return cached;
    const model = this.provider(route)(route.modelId);
    // Model names come from the config, but the service answers whatever a caller names: a
    // bound keeps a caller that names ever new models from growing the cache.
    if (this.models.size >= MAX_CACHED_MODELS) this.models.clear();
    this.models.set(route.model, model);
    return model;
  }

  private provider(route: ModelRoute): (modelId: string) => ModelClient {
    const existing = this.providers.get(route.provider);
    if (existing) return existing;
    const settings = this.environment.get(route.provider);
    if (!settings) throw new Error(`no settings were read for provider ${route.provider}`);
    if (route.keyEnv && !settings.apiKey) throw failedPrecondition(`${route.keyEnv} is not set: cannot call model ${route.model}`);
    const provider = FACTORIES[route.provider]({ ...settings, fetch: this.fetchImpl });
    this.providers.set(route.provider, provider);
    return provider;
  }
}
