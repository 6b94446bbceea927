import { describe, expect, it } from 'vitest';
import { configSchema } from '../common/config/schema.js';
import { readProviderEnvironment } from './environment.js';
import { callBudgetMs } from './generate.js';
import { formatDuration } from './provider-errors.js';
import { configuredModels, routingErrors, startupWarnings } from './startup-checks.js';

const at = (...models: string[]) => models.map((model, index) => ({ model, where: `place ${index}` }));

describe('configuredModels', () => {
  it('lists llm.model and every model of the agent tree, with the path that names it', () => {
    const config = configSchema.parse({
      llm: { model: 'gemini-2.5-flash' },
      agent: {
        name: 'root',
        type: 'sequential',
        agents: [
          { name: 'a', type: 'llm', model: 'openai-gpt-4o' },
          {
            name: 'loop',
            type: 'loop',
            agents: [
              { name: 'b', type: 'llm', model: 'ollama-llama3' },
              { name: 'c', type: 'llm', model: 'gemini-2.5-flash' },
            ],
          },
          { name: 'd', type: 'llm' },
        ],
      },
    });
    expect(configuredModels(config)).toEqual([
      { model: 'gemini-2.5-flash', where: 'llm.model' },
      { model: 'openai-gpt-4o', where: 'agent.agents[0].model (node "a")' },
      { model: 'ollama-llama3', where: 'agent.agents[1].agents[0].model (node "b")' },
      { model: 'gemini-2.5-flash', where: 'agent.agents[1].agents[1].model (node "c")' },
    ]);
  });
});

describe('routingErrors', () => {
  it('names each model that routes nowhere and where it is configured', () => {
    expect(
      routingErrors([
        { model: 'gemini-2.5-flash', where: 'llm.model' },
        { model: 'azure:gpt-4o', where: 'agent.agents[0].model (node "a")' },
        { model: 'openai-', where: 'agent.agents[1].model (node "b")' },
      ]),
    ).toEqual([
      'agent.agents[0].model (node "a"): model "azure:gpt-4o" names an unknown provider "azure" (known providers: anthropic, gemini, google, mistral, ollama, openai, openrouter)',
      'agent.agents[1].model (node "b"): model "openai-" names no model after the "openai-" prefix (expected "openai-<model id>")',
    ]);
  });

  it('accepts every prefix and every provider: form', () => {
    expect(
      routingErrors(
        at(
          'gemini-2.5-flash',
          'claude-sonnet-4-5',
          'openai-gpt-4o',
          'mistral-large-latest',
          'ollama-llama3',
          'openrouter-x/y',
          'anthropic:claude-3',
          'google:gemini-2.5-pro',
        ),
      ),
    ).toEqual([]);
  });
});

describe('startupWarnings', () => {
  it('says nothing when every key is set, and asks no key for Ollama', () => {
    const environment = readProviderEnvironment({ GEMINI_API_KEY: 'k1-123456', OPENAI_API_KEY: 'k2-123456' });
    expect(startupWarnings(at('gemini-2.5-flash', 'openai-gpt-4o', 'ollama-llama3'), environment)).toEqual([]);
  });

  it('warns once per missing key (a blank key is missing), naming each model once', () => {
    const environment = readProviderEnvironment({ GEMINI_API_KEY: '  ' });
    expect(
      startupWarnings(
        at(
          'gemini-2.5-flash',
          'openai-gpt-4o',
          'google:gemini-2.5-pro',
          'gemini-2.5-flash',
          'claude-sonnet-4-5',
          'mistral:mistral-small-latest',
          'openrouter-x/y',
        ),
        environment,
      ),
    ).toEqual([
      'GEMINI_API_KEY is not set; models gemini-2.5-flash, google:gemini-2.5-pro will fail',
      'OPENAI_API_KEY is not set; models openai-gpt-4o will fail',
      'ANTHROPIC_API_KEY is not set; models claude-sonnet-4-5 will fail',
      'MISTRAL_API_KEY is not set; models mistral:mistral-small-latest will fail',
      'OPENROUTER_API_KEY is not set; models openrouter-x/y will fail',
    ]);
  });
});

describe('readProviderEnvironment', () => {
  it('takes base URLs from the environment and defaults otherwise', () => {
    const environment = readProviderEnvironment({ GEMINI_BASE_URL: 'http://127.0.0.1:9/v1beta', OPENAI_API_KEY: 'sk-test-123456' });
    expect(environment.get('gemini')).toEqual({ baseUrl: 'http://127.0.0.1:9/v1beta' });
    expect(environment.get('openai')).toEqual({ apiKey: 'sk-test-123456', baseUrl: 'https://api.openai.com/v1' });
  });

  it('refuses a base URL that is not an http(s) URL, at start', () => {
    expect(() => readProviderEnvironment({ OPENAI_BASE_URL: 'localhost:8080/v1' })).toThrow(
      'OPENAI_BASE_URL must be an absolute http(s) URL',
    );
  });
});

describe('deadlines', () => {
  it('uses the earlier of llm.timeout and the caller deadline', () => {
    expect(callBudgetMs(60_000, undefined, 1_000)).toBe(60_000);
    expect(callBudgetMs(60_000, 3_000, 1_000)).toBe(2_000);
    expect(callBudgetMs(300, 100_000, 1_000)).toBe(300);
  });

  it('formats durations the way config writes them', () => {
    expect(formatDuration(60_000)).toBe('60s');
    expect(formatDuration(300)).toBe('300ms');
    expect(formatDuration(1_500)).toBe('1.5s');
  });
});
