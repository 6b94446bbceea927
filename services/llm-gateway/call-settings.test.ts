import { describe, expect, it } from 'vitest';
import { callSettingsFor } from './call-settings.js';
import type { ProviderName } from './routing.js';

const OTHERS: ProviderName[] = ['gemini', 'openai', 'mistral', 'ollama', 'openrouter'];

describe('callSettingsFor', () => {
  it.each(OTHERS)('sends nothing to %s when nothing is configured', (provider) => {
    expect(callSettingsFor(provider, {})).toEqual({});
  });

  it('gives Anthropic max_tokens 4096 when none is configured, and no temperature', () => {
    expect(callSettingsFor('anthropic', {})).toEqual({ maxOutputTokens: 4096 });
  });

  it.each([...OTHERS, 'anthropic' as const])('sends %s what is configured, a temperature of 0 included', (provider) => {
    expect(callSettingsFor(provider, { temperature: 0, max_tokens: 512 })).toEqual({ temperature: 0, maxOutputTokens: 512 });
    expect(callSettingsFor(provider, { temperature: 0.7 })).toEqual(
      provider === 'anthropic' ? { temperature: 0.7, maxOutputTokens: 4096 } : { temperature: 0.7 },
    );
  });
});
