import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { failedPrecondition, invalidArgument } from '../common/grpc/errors.js';
import type { ProviderEnvironment, ProviderSettings } from './environment.js';
import type { ModelRoute, ProviderName } from './routing.js';

/** A provider model object (never the SDK's string shorthand, which would go through its gateway). */
export type ModelClient = Exclude<LanguageModel, string>;

interface ClientSettings extends ProviderSettings {
  apiKey: string;
  fetch: typeof fetch;
}

type ProviderFactory = (settings: ClientSettings) => (modelId: string) => ModelClient;

/**
 * The providers this build includes. The key and base URL are always passed explicitly:
 * left unset, the SDKs would fall back to their own variables (GOOGLE_GENERATIVE_AI_API_KEY,
 * OPENAI_BASE_URL) behind our back.
 */
const FACTORIES: Partial<Record<ProviderName, ProviderFactory>> = {
  gemini: ({ apiKey, baseUrl, fetch }) => {
    const google = createGoogleGenerativeAI({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => google(modelId);
  },
  // Chat Completions, not the Responses API that `openai(id)` would call: the endpoint
  // every OpenAI-compatible server (and DESIGN §4) speaks.
  openai: ({ apiKey, baseUrl, fetch }) => {
    const openai = createOpenAI({ apiKey, baseURL: baseUrl, fetch });
    return (modelId) => openai.chat(modelId);
  },
};

export function isProviderIncluded(provider: ProviderName): boolean {
  return FACTORIES[provider] !== undefined;
}

/** Model clients, created on first use and kept per configured model name. */
export class ModelClients {
  private readonly providers = new Map<ProviderName, (modelId: string) => ModelClient>();
  private readonly models = new Map<string, ModelClient>();

  constructor(
    private readonly environment: ProviderEnvironment,
    private readonly fetchImpl: typeof fetch,
  ) {}

  /**
   * The client for a routed model. Throws INVALID_ARGUMENT when this build has no client for
   * the provider and FAILED_PRECONDITION when its key is not set; neither sends anything.
   */
  get(route: ModelRoute): ModelClient {
    const cached = this.models.get(route.model);
    if (cached) return cached;
    const model = this.provider(route)(route.modelId);
    this.models.set(route.model, model);
    return model;
  }

  private provider(route: ModelRoute): (modelId: string) => ModelClient {
    const existing = this.providers.get(route.provider);
    if (existing) return existing;
    const factory = FACTORIES[route.provider];
    if (!factory) throw invalidArgument(`model ${route.model} needs the ${route.provider} provider, which this build does not include`);
    const settings = this.environment.get(route.provider);
    if (!settings) throw new Error(`no settings were read for provider ${route.provider}`);
    if (!settings.apiKey) throw failedPrecondition(`${route.keyEnv} is not set: cannot call model ${route.model}`);
    const provider = factory({ ...settings, apiKey: settings.apiKey, fetch: this.fetchImpl });
    this.providers.set(route.provider, provider);
    return provider;
  }
}
