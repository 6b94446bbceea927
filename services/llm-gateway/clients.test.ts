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

const ALL_KEYS = {
  GEMINI_API_KEY: 'gemini-key-123456',
  ANTHROPIC_API_KEY: 'anthropic-key-123456',
  OPENAI_API_KEY: 'openai-key-123456',
  MISTRAL_API_KEY: 'mistral-key-123456',
  OPENROUTER_API_KEY: 'openrouter-key-123456',
};

describe('ModelClients', () => {
  const clients = new ModelClients(readProviderEnvironment(ALL_KEYS), neverFetch);

  it('creates one client per model and reuses it', () => {
    const flash = clients.get(routeModel('gemini-2.5-flash'));
    expect(clients.get(routeModel('gemini-2.5-flash'))).toBe(flash);
    expect(clients.get(routeModel('gemini-2.5-pro'))).not.toBe(flash);
  });

  it.each([
    ['gemini-2.5-flash', 'google.generative-ai', 'gemini-2.5-flash'],
    ['claude-sonnet-4-5', 'anthropic.messages', 'claude-sonnet-4-5'],
    ['openai-gpt-4o', 'openai.chat', 'gpt-4o'],
    ['mistral:mistral-large-latest', 'mistral.chat', 'mistral-large-latest'],
    ['ollama-llama3', 'ollama.chat', 'llama3'],
    ['openrouter-anthropic/claude-3-opus', 'openrouter.chat', 'anthropic/claude-3-opus'],
  ])('builds %s as a %s client for %s', (model, provider, modelId) => {
    expect(clients.get(routeModel(model))).toMatchObject({ provider, modelId });
  });

  it.each([
    ['gemini-2.5-flash', 'GEMINI_API_KEY'],
    ['claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
    ['openai-gpt-4o', 'OPENAI_API_KEY'],
    ['mistral-large-latest', 'MISTRAL_API_KEY'],
    ['openrouter-anthropic/claude-3-opus', 'OPENROUTER_API_KEY'],
  ])('refuses %s without %s with FAILED_PRECONDITION', (model, keyEnv) => {
    const withoutKeys = new ModelClients(readProviderEnvironment({}), neverFetch);
    const error = failure(() => withoutKeys.get(routeModel(model)));
    expect(error.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(error.message).toBe(`${keyEnv} is not set: cannot call model ${model}`);
  });

  it('builds an Ollama client without any key', () => {
    const withoutKeys = new ModelClients(readProviderEnvironment({}), neverFetch);
    expect(withoutKeys.get(routeModel('ollama-llama3'))).toMatchObject({ provider: 'ollama.chat', modelId: 'llama3' });
  });
});
