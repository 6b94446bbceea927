import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { PROVIDER_ROUTES, routeModel } from './routing.js';

function rejection(model: string): ServiceError {
  try {
    routeModel(model);
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(model)} to route nowhere`);
}

describe('routeModel', () => {
  it.each([
    ['gemini-2.5-flash', 'gemini', 'gemini-2.5-flash', 'GEMINI_API_KEY'],
    ['gemini-2.5-pro', 'gemini', 'gemini-2.5-pro', 'GEMINI_API_KEY'],
    ['gemma-3-27b-it', 'gemini', 'gemma-3-27b-it', 'GEMINI_API_KEY'],
    ['claude-sonnet-4-5-20250929', 'anthropic', 'claude-sonnet-4-5-20250929', 'ANTHROPIC_API_KEY'],
    ['openai-gpt-4o', 'openai', 'gpt-4o', 'OPENAI_API_KEY'],
    ['openai-gpt-4o-mini', 'openai', 'gpt-4o-mini', 'OPENAI_API_KEY'],
    // Mistral's own ids begin with "mistral-", so the prefix is kept, as "claude-" is.
    ['mistral-large-latest', 'mistral', 'mistral-large-latest', 'MISTRAL_API_KEY'],
    ['mistral-small-latest', 'mistral', 'mistral-small-latest', 'MISTRAL_API_KEY'],
    ['ollama-llama3', 'ollama', 'llama3', undefined],
    ['ollama-llama3:8b', 'ollama', 'llama3:8b', undefined],
    ['openrouter-anthropic/claude-3-opus', 'openrouter', 'anthropic/claude-3-opus', 'OPENROUTER_API_KEY'],
  ])('routes the prefixed name %s to %s as %s', (model, provider, modelId, keyEnv) => {
    const route = routeModel(model);
    expect(route).toMatchObject({ model, provider, modelId });
    expect(route.keyEnv).toBe(keyEnv);
  });

  it.each([
    ['anthropic:claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
    ['google:gemini-2.5-flash', 'gemini', 'gemini-2.5-flash'],
    ['gemini:gemini-2.5-pro', 'gemini', 'gemini-2.5-pro'],
    ['openai:gpt-4o', 'openai', 'gpt-4o'],
    ['mistral:mistral-large-latest', 'mistral', 'mistral-large-latest'],
    ['ollama:llama3', 'ollama', 'llama3'],
    ['ollama:llama3:8b', 'ollama', 'llama3:8b'],
    ['openrouter:anthropic/claude-3-opus', 'openrouter', 'anthropic/claude-3-opus'],
  ])('routes %s to %s, sending %s whole', (model, provider, modelId) => {
    expect(routeModel(model)).toMatchObject({ model, provider, modelId });
  });

  it('sends any other bare name to Gemini unchanged, with a notice for the check to print', () => {
    const route = routeModel('scripted-model');
    expect(route).toMatchObject({ provider: 'gemini', model: 'scripted-model', modelId: 'scripted-model' });
    expect(route.notice).toContain('has no provider prefix, so it goes to Gemini');
    expect(routeModel('gemini-2.5-flash').notice).toBeUndefined();
  });

  it('keeps the configured name for messages', () => {
    expect(routeModel('  openai-gpt-4o ').model).toBe('openai-gpt-4o');
    expect(routeModel('openai:gpt-4o').model).toBe('openai:gpt-4o');
  });

  it.each([
    ['', 'no model named'],
    ['   ', 'no model named'],
    ['openai-', 'model "openai-" names no model after the "openai-" prefix (expected "openai-<model id>")'],
    ['ollama-', 'names no model after the "ollama-" prefix'],
    ['claude-', 'names no model after the "claude-" prefix'],
    ['openai:', 'model "openai:" names no model after "openai:" (expected "openai:<model id>")'],
    ['gemini-', 'names no model after the "gemini-" prefix'],
    [
      'azure:gpt-4o',
      'model "azure:gpt-4o" names an unknown provider "azure" (known providers: anthropic, gemini, google, mistral, ollama, openai, openrouter)',
    ],
    [
      'opnai:gpt-4o',
      'names an unknown provider "opnai" (known providers: anthropic, gemini, google, mistral, ollama, openai, openrouter); did you mean "openai:gpt-4o"?',
    ],
    // A bare name of another vendor's family, or with a misspelt prefix, is not sent to Gemini.
    [
      'gpt-4o',
      'model "gpt-4o" names no provider (known providers: anthropic, gemini, google, mistral, ollama, openai, openrouter; write "<provider>:<model id>"',
    ],
    ['gpt-4o', 'did you mean "openai:gpt-4o"?'],
    ['codestral-latest', 'did you mean "mistral:codestral-latest"?'],
    ['llama3', 'did you mean "ollama:llama3"?'],
    ['anthropic/claude-3-opus', 'did you mean "openrouter:anthropic/claude-3-opus"?'],
    ['gemni-2.5-flash', 'did you mean "gemini-2.5-flash"?'],
    ['opnai-gpt-4o', 'did you mean "openai-gpt-4o"?'],
  ])('rejects %j as routing nowhere', (model, message) => {
    const error = rejection(model);
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain(message);
  });

  it('moves every provider by its base URL variable', () => {
    expect(PROVIDER_ROUTES.map((route) => [route.provider, route.baseUrlEnv, route.defaultBaseUrl])).toEqual([
      ['gemini', 'GEMINI_BASE_URL', 'https://generativelanguage.googleapis.com/v1beta'],
      ['anthropic', 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1'],
      ['openai', 'OPENAI_BASE_URL', 'https://api.openai.com/v1'],
      ['mistral', 'MISTRAL_BASE_URL', 'https://api.mistral.ai/v1'],
      ['ollama', 'OLLAMA_BASE_URL', 'http://localhost:11434/v1'],
      ['openrouter', 'OPENROUTER_BASE_URL', 'https://openrouter.ai/api/v1'],
    ]);
  });
});
