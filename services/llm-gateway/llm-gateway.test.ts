/**
 * The llm-gateway as a service: start-up checks, keys, failures, retries and deadlines, over
 * real gRPC and real HTTP to the scripted model. What each provider sends is in providers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ChatRole, type ChatMessage, type GenerateRequest } from '../../gen/ts/asg/llm/v1/llm.js';
import { ConfigError } from '../common/config/load.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { context, trace } from '@opentelemetry/api';
import { initTelemetry } from '../common/telemetry.js';
import {
  captureLog,
  generateRequest,
  inTurnThen,
  KEYS,
  MODELS_AND_KEY_VARIABLES,
  recordingClock,
  rpcError,
  useLlmGateway,
  user,
} from '../../test/support/llm-gateway-harness.js';
import { startLlmGateway } from './index.js';

/** One model of each keyed provider, with its key. */
const KEYED_MODELS = [
  ['gemini-2.5-flash', KEYS.GEMINI_API_KEY],
  ['claude-sonnet-4-5', KEYS.ANTHROPIC_API_KEY],
  ['openai-gpt-4o', KEYS.OPENAI_API_KEY],
  ['mistral:mistral-large-latest', KEYS.MISTRAL_API_KEY],
  ['openrouter-anthropic/claude-3-opus', KEYS.OPENROUTER_API_KEY],
] as const;

/** Requests here offer no tools. */
const request = (name: string, messages?: ChatMessage[]): GenerateRequest => generateRequest(name, messages, []);

const inTurn = inTurnThen({ text: 'finally' });

const { model, start: startGateway } = useLlmGateway();

describe('start-up', () => {
  it.each([
    [{ llm: { model: 'azure:gpt-4o' } }, 'invalid configuration: llm.model: model "azure:gpt-4o" names an unknown provider "azure"'],
    [
      {
        agent: {
          name: 'root',
          type: 'sequential',
          agents: [
            { name: 'ok', type: 'llm', model: 'claude-sonnet-4-5' },
            { name: 'analyzer', type: 'llm', model: 'openai-' },
          ],
        },
      },
      'invalid configuration: agent.agents[1].model (node "analyzer"): model "openai-" names no model after the "openai-" prefix',
    ],
  ])('refuses to start when a configured model routes nowhere (%j)', async (config, message) => {
    const log = captureLog();
    const starting = startLlmGateway({
      config: configSlice(configSchema.parse(config), 'llmGateway'),
      listen: '127.0.0.1:0',
      log,
      env: { ...KEYS },
    });
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    await expect(starting).rejects.toThrow(message);
    expect(log.lines.filter((line) => line.msg === 'listening')).toEqual([]);
  });

  it('warns once per missing key, naming every configured model it breaks, and asks none for Ollama', async () => {
    const { log } = await startGateway({
      env: { OPENAI_API_KEY: KEYS.OPENAI_API_KEY, ...model().baseUrlEnv },
      config: {
        llm: { model: 'gemini-2.5-flash' },
        agent: {
          name: 'root',
          type: 'sequential',
          agents: [
            { name: 'a', type: 'llm', model: 'gemini-2.5-pro' },
            { name: 'b', type: 'llm', model: 'openai-gpt-4o' },
            { name: 'c', type: 'llm', model: 'claude-sonnet-4-5' },
            { name: 'd', type: 'llm', model: 'anthropic:claude-opus-4-1' },
            { name: 'e', type: 'llm', model: 'ollama-llama3' },
            { name: 'f', type: 'llm', model: 'mistral-small-latest' },
            { name: 'g', type: 'llm', model: 'openrouter:openai/gpt-4o' },
          ],
        },
      },
    });
    const warnings = log.lines.filter((line) => line.level === 'warn').map((line) => line.msg);
    expect(warnings).toEqual([
      'GEMINI_API_KEY is not set; models gemini-2.5-flash, gemini-2.5-pro will fail',
      'ANTHROPIC_API_KEY is not set; models claude-sonnet-4-5, anthropic:claude-opus-4-1 will fail',
      'MISTRAL_API_KEY is not set; models mistral-small-latest will fail',
      'OPENROUTER_API_KEY is not set; models openrouter:openai/gpt-4o will fail',
    ]);
  });
});

describe('keys', () => {
  it.each(MODELS_AND_KEY_VARIABLES)('answers FAILED_PRECONDITION for %s without %s, sending nothing', async (modelName, keyEnv) => {
    const { client } = await startGateway({ env: { ...model().baseUrlEnv } });
    const error = await rpcError(client.generate(request(modelName)));
    expect(error.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(error.message).toBe(`${keyEnv} is not set: cannot call model ${modelName}`);
    expect(model().requests).toHaveLength(0);
  });

  it('calls Ollama with no key set at all', async () => {
    const { client } = await startGateway({ env: { ...model().baseUrlEnv } });
    const reply = await client.generate(request('ollama-llama3'));
    expect(reply.text).toBe('I can list, add and remove resources.');
  });

  it('never puts a key in an error message or a log line, even when the provider echoes it', async () => {
    const { client, log } = await startGateway();
    const echoes = [400, 401, 403, 404, 429, 500, 503];
    for (const [modelName, key] of KEYED_MODELS) {
      for (const status of echoes) {
        model().setScript(() => ({ httpStatus: status, message: `API key ${key} is not valid` }));
        const error = await rpcError(client.generate(request(modelName)));
        expect(error.message).toContain(`HTTP ${status}`);
        // The provider's words reached the message, with the key cut out.
        expect(error.message).toContain('API key [redacted] is not valid');
        expect(error.message).not.toContain(key);
      }
    }
    // Retried statuses (429, 500, 503) log each retry too.
    expect(log.lines.filter((line) => line.msg === 'model call failed, retrying').length).toBe(KEYED_MODELS.length * 3 * 3);
    const logged = JSON.stringify(log.lines);
    for (const key of Object.values(KEYS)) expect(logged).not.toContain(key);
  });
});

describe('retries', () => {
  it('succeeds after two 429s, in three requests, having waited 1 s and then 2 s', async () => {
    model().setScript(inTurn({ httpStatus: 429 }, { httpStatus: 429 }));
    const retryClock = recordingClock();
    const { client, log } = await startGateway({ config: {}, retryClock });
    const reply = await client.generate(request('claude-sonnet-4-5'));
    expect(reply.text).toBe('finally');
    expect(model().requests).toHaveLength(3);
    expect(retryClock.waits).toEqual([1_000, 2_000]);
    expect(
      log.lines
        .filter((line) => line.msg === 'model call failed, retrying')
        .map((line) => [line.level, line.fields.attempt, line.fields.status, line.fields.retry_in_ms]),
    ).toEqual([
      ['warn', 1, 429, 1_000],
      ['warn', 2, 429, 2_000],
    ]);
  });

  it('waits what Retry-After asks, in seconds or as an HTTP date, but no longer than max_backoff', async () => {
    const now = Date.now();
    const date = new Date(now + 7_000).toUTCString();
    model().setScript(
      inTurn(
        { httpStatus: 429, headers: { 'retry-after': '3' } },
        { httpStatus: 503, headers: { 'retry-after': date } },
        { httpStatus: 429, headers: { 'retry-after': '120' } },
      ),
    );
    // A clock that stands still, so that the HTTP date gives an exact wait.
    const retryClock = recordingClock(() => now);
    const { client } = await startGateway({ config: {}, retryClock });
    // A caller deadline beyond llm.timeout (60 s), so that 30 s still fits.
    await client.generate(request('openai-gpt-4o'), { timeoutMs: 120_000 });
    expect(model().requests).toHaveLength(4);
    expect(retryClock.waits).toEqual([3_000, Date.parse(date) - now, 30_000]);
  });

  it('retries a 500 max_retries times, then answers UNAVAILABLE with the attempt count', async () => {
    model().setScript(() => ({ httpStatus: 500 }));
    const retryClock = recordingClock();
    const { client } = await startGateway({
      config: { llm: { retry: { max_retries: 2, initial_backoff: '10ms', multiplier: 3 } } },
      retryClock,
    });
    const error = await rpcError(client.generate(request('gemini-2.5-flash')));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toMatch(
      /^the provider gemini failed to answer for model gemini-2\.5-flash \(HTTP 500\): .* \(after 3 attempts\)$/,
    );
    expect(model().requests).toHaveLength(3);
    expect(retryClock.waits).toEqual([10, 30]);
  });

  it('makes one request for a 400, and waits for nothing', async () => {
    model().setScript(() => ({ httpStatus: 400 }));
    const retryClock = recordingClock();
    const { client } = await startGateway({ config: {}, retryClock });
    const error = await rpcError(client.generate(request('mistral-large-latest')));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).not.toContain('attempts');
    expect(model().requests).toHaveLength(1);
    expect(retryClock.waits).toEqual([]);
  });

  it('does not retry a reply it could not read', async () => {
    model().setScript(() => ({ httpStatus: 200, body: 'this is not JSON' }));
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request('gemini-2.5-flash')));
    expect(error.code).toBe(GrpcStatus.INTERNAL);
    expect(error.message).toContain('model gemini-2.5-flash');
    expect(error.message).toContain('HTTP 200');
    expect(model().requests).toHaveLength(1);
  });

  it('makes no retry whose wait would pass llm.timeout, and says so', async () => {
    model().setScript(() => ({ httpStatus: 429, headers: { 'retry-after': '5' } }));
    const retryClock = recordingClock();
    const { client } = await startGateway({ config: { llm: { timeout: '2s' } }, retryClock });
    const error = await rpcError(client.generate(request('openrouter-anthropic/claude-3-opus')));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toMatch(/\(HTTP 429\).* \(after 1 attempt; a retry in 5s would pass the call's deadline\)$/);
    expect(model().requests).toHaveLength(1);
    expect(retryClock.waits).toEqual([]);
  });

  it("stops retrying at the caller's deadline when it comes before llm.timeout", async () => {
    model().setScript(() => ({ httpStatus: 503 }));
    const retryClock = recordingClock();
    const { client } = await startGateway({ config: { llm: { timeout: '60s' } }, retryClock });
    // Backoff 1 s, 2 s, 4 s: only the first wait fits in the caller's 1.8 s.
    const error = await rpcError(client.generate(request('ollama-llama3'), { timeoutMs: 1_800 }));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toMatch(/\(after 2 attempts; a retry in 2s would pass the call's deadline\)$/);
    expect(model().requests).toHaveLength(2);
    expect(retryClock.waits).toEqual([1_000]);
  });

  it('retries a provider it cannot reach, then answers UNAVAILABLE', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const { client, log } = await startGateway({
      env: { GEMINI_API_KEY: KEYS.GEMINI_API_KEY, GEMINI_BASE_URL: 'http://127.0.0.1:1/v1beta' },
    });
    const error = await rpcError(client.generate(request('gemini-2.5-flash')));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toContain('could not reach the provider gemini for model gemini-2.5-flash at http://127.0.0.1:1');
    expect(error.message).toMatch(/\(after 4 attempts\)$/);
    expect(log.lines.filter((line) => line.msg === 'model call failed, retrying').map((line) => line.fields.status)).toEqual([
      'none',
      'none',
      'none',
    ]);
  });
});

describe('rate limits (rate_limits.models)', () => {
  it('lets the budget through, then refuses beyond max_wait with RESOURCE_EXHAUSTED and sends nothing', async () => {
    const { client } = await startGateway({
      config: { rate_limits: { max_wait: '10ms', models: { 'gemini-*': { calls: 2, window: '1m' } } } },
    });
    await client.generate(request('gemini-2.5-flash'));
    await client.generate(request('gemini-2.5-pro'));
    const sent = model().requests.length;
    const refused = await rpcError(client.generate(request('gemini-2.5-flash')));
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(refused.message).toContain('rate limit for model gemini-2.5-flash (rule "gemini-*": 2 calls per 1m) reached');
    expect(model().requests.length).toBe(sent);
    // Another model, under no rule, is not held back.
    await client.generate(request('openai-gpt-4o'));
    expect(model().requests.length).toBe(sent + 1);
  });
});

describe('deadlines', () => {
  it('answers DEADLINE_EXCEEDED when the model does not answer within llm.timeout', async () => {
    model().setScript(() => ({ hang: true }));
    const { client } = await startGateway({ config: { llm: { timeout: '300ms' } } });
    const error = await rpcError(client.generate(request('gemini-2.5-flash')));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error.message).toBe('model gemini-2.5-flash did not answer within 300ms');
  });

  it("uses the request's own timeout (an llm node's) instead of llm.timeout", async () => {
    model().setScript(() => ({ hang: true }));
    const { client } = await startGateway({ config: { llm: { timeout: '60s' } } });
    const error = await rpcError(client.generate({ ...request('gemini-2.5-flash'), timeoutMs: 250 }));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error.message).toBe('model gemini-2.5-flash did not answer within 250ms');
  });

  it('counts the time spent on earlier attempts against llm.timeout', async () => {
    model().setScript(inTurn({ httpStatus: 503 }, { hang: true }));
    const { client } = await startGateway({ config: { llm: { timeout: '400ms', retry: { initial_backoff: '1ms' } } } });
    const error = await rpcError(client.generate(request('claude-sonnet-4-5')));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error.message).toBe('model claude-sonnet-4-5 did not answer within 400ms (after 2 attempts)');
    expect(model().requests).toHaveLength(2);
  });

  it('gives up at the caller deadline when it comes before llm.timeout', async () => {
    model().setScript(() => ({ hang: true }));
    const { client, log } = await startGateway({ config: { llm: { timeout: '60s' } } });
    const error = await rpcError(client.generate(request('openai-gpt-4o'), { timeoutMs: 400 }));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    // The gateway's own abort shows in its log, well before the 60 s llm.timeout.
    await expect
      .poll(() => log.lines.find((line) => line.msg === 'model call failed')?.fields.error, { timeout: 3000 })
      .toMatch(/^model openai-gpt-4o did not answer within \d+ms$/);
  });
});

describe('requests that cannot be sent', () => {
  it('rejects a tool result that answers no call, before calling the provider', async () => {
    const { client } = await startGateway();
    const orphan: ChatMessage = {
      role: ChatRole.CHAT_ROLE_TOOL,
      text: '',
      toolCalls: [],
      toolResults: [{ id: 'nope', name: 'resources_add', output: 'x', isError: false }],
    };
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello'), orphan])));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain('message 1: tool result for resources_add (id "nope") answers no tool call');
    expect(model().requests).toHaveLength(0);
  });

  it.each([
    ['', 'no model named'],
    ['azure:gpt-4o', 'names an unknown provider "azure"'],
    ['ollama-', 'names no model after the "ollama-" prefix'],
  ])('rejects the model name %j, sending nothing', async (name, message) => {
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request(name)));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain(message);
    expect(model().requests).toHaveLength(0);
  });
});

describe('tracing', () => {
  it("continues the caller's trace in the provider call, even when no spans are exported", async () => {
    initTelemetry('llm-gateway-test');
    const { client } = await startGateway();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const caller = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    await context.with(caller, () => client.generate(request('gemini-2.5-flash')));
    expect(model().requests[0]?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});
