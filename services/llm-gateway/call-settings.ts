import type { AgentConfig } from '../common/config/schema.js';
import type { ProviderName } from './routing.js';

/** Anthropic's Messages API requires `max_tokens`; 4096 unless `llm.max_tokens` says otherwise. */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** The sampling settings of one call, in the AI SDK's names; an absent field is not sent. */
export interface CallSettings {
  temperature?: number;
  maxOutputTokens?: number;
}

/**
 * `llm.temperature` and `llm.max_tokens` go out only when configured:
 * otherwise every provider applies its own default.
 */
export function callSettingsFor(provider: ProviderName, llm: Pick<AgentConfig['llm'], 'temperature' | 'max_tokens'>): CallSettings {
  const maxOutputTokens = llm.max_tokens ?? (provider === 'anthropic' ? ANTHROPIC_DEFAULT_MAX_TOKENS : undefined);
  return {
    ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
  };
}
