import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { ModelClients } from './clients.js';
import { readProviderEnvironment } from './environment.js';
import { routeModel } from './routing.js';

const neverFetch: typeof fetch = async () => {
  throw new Error('no request may be sent while creating clients');
};

function failure(action: () => unknown): ServiceError {
  try {
    action();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
}

describe('ModelClients', () => {
  const clients = new ModelClients(readProviderEnvironment({ GEMINI_API_KEY: 'gemini-key-123456', OPENAI_API_KEY: 'openai-key-123456' }), neverFetch);

  it('creates one client per model and reuses it', () => {
    const flash = clients.get(routeModel('gemini-2.5-flash'));
    expect(clients.get(routeModel('gemini-2.5-flash'))).toBe(flash);
    expect(clients.get(routeModel('gemini-2.5-pro'))).not.toBe(flash);
  });

  it('builds Gemini and OpenAI Chat Completions clients with the provider model id', () => {
    expect(clients.get(routeModel('gemini-2.5-flash'))).toMatchObject({ provider: 'google.generative-ai', modelId: 'gemini-2.5-flash' });
    expect(clients.get(routeModel('openai-gpt-4o'))).toMatchObject({ provider: 'openai.chat', modelId: 'gpt-4o' });
  });

  it('refuses a model whose key is missing with FAILED_PRECONDITION', () => {
    const withoutKeys = new ModelClients(readProviderEnvironment({}), neverFetch);
    const error = failure(() => withoutKeys.get(routeModel('openai-gpt-4o')));
    expect(error.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(error.message).toBe('OPENAI_API_KEY is not set: cannot call model openai-gpt-4o');
  });

  it.each([
    ['claude-sonnet-4-5', 'anthropic'],
    ['mistral-large-latest', 'mistral'],
    ['ollama-llama3', 'ollama'],
    ['openrouter-anthropic/claude-3-opus', 'openrouter'],
  ])('refuses %s: this build has no %s client', (model, provider) => {
    const error = failure(() => clients.get(routeModel(model)));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(`model ${model} needs the ${provider} provider, which this build does not include`);
  });
});
