import { baseUrlError } from '../common/config/models.js';
import { PROVIDER_ROUTES, type ProviderName } from './routing.js';

/** Where one provider is reached and with which key, as the environment said at start. */
export interface ProviderSettings {
  /** Absent when the key variable is unset or blank (and always for Ollama, which takes none). */
  apiKey?: string;
  baseUrl: string;
}

export type ProviderEnvironment = ReadonlyMap<ProviderName, ProviderSettings>;

/**
 * Reads every provider's key and base URL once. Keys come from the environment only, never
 * from the config file, so they are never stored with it. A base URL that is not an absolute
 * http(s) URL is a start-up error: found at start, not on the first model call.
 */
export function readProviderEnvironment(env: NodeJS.ProcessEnv): ProviderEnvironment {
  const settings = new Map<ProviderName, ProviderSettings>();
  for (const route of PROVIDER_ROUTES) {
    const apiKey = route.keyEnv ? env[route.keyEnv]?.trim() : undefined;
    // The same rule and words as the configuration check (common/config/models.ts).
    const problem = baseUrlError(route, env);
    if (problem) throw new Error(problem);
    const baseUrl = env[route.baseUrlEnv]?.trim() || route.defaultBaseUrl;
    settings.set(route.provider, apiKey ? { apiKey, baseUrl } : { baseUrl });
  }
  return settings;
}
