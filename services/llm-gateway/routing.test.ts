import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { PROVIDER_ROUTES, routeModel } from './routing.js';

describe('routeModel', () => {
  it.each([
    ['gemini-2.5-flash', 'gemini', 'gemini-2.5-flash', 'GEMINI_API_KEY'],
    ['gemini-2.5-pro', 'gemini', 'gemini-2.5-pro', 'GEMINI_API_KEY'],
    ['gpt-4o', 'gemini', 'gpt-4o', 'GEMINI_API_KEY'],
    ['claude-sonnet-4-5-20250929', 'anthropic', 'claude-sonnet-4-5-20250929', 'ANTHROPIC_API_KEY'],
    ['openai-gpt-4o', 'openai', 'gpt-4o', 'OPENAI_API_KEY'],
    ['openai-gpt-4o-mini', 'openai', 'gpt-4o-mini', 'OPENAI_API_KEY'],
    ['mistral-large-latest', 'mistral', 'large-latest', 'MISTRAL_API_KEY'],
    ['ollama-llama3', 'ollama', 'llama3', undefined],
    ['openrouter-anthropic/claude-3-opus', 'openrouter', 'anthropic/claude-3-opus', 'OPENROUTER_API_KEY'],
  ])('routes %s to %s as %s', (model, provider, modelId, keyEnv) => {
    const route = routeModel(model);
    expect(route).toMatchObject({ model, provider, modelId });
    expect(route.keyEnv).toBe(keyEnv);
  });

  it('keeps the configured name for messages', () => {
    expect(routeModel('  openai-gpt-4o ').model).toBe('openai-gpt-4o');
  });

  it.each(['', '   ', 'openai-', 'ollama-', 'claude-'])('rejects %j as routing nowhere', (model) => {
    let thrown: unknown;
    try {
      routeModel(model);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ServiceError);
    expect((thrown as ServiceError).code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('moves every provider by the base URL variables of DESIGN §4', () => {
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
