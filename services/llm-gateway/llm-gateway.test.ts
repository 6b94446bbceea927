import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChatRole, LlmGatewayServiceService, type ChatMessage, type GenerateRequest, type ToolDefinition } from '../../gen/ts/asg/llm/v1/llm.js';
import { configSchema } from '../common/config/schema.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import type { Logger, LogFields } from '../common/log.js';
import type { RunningService } from '../common/service.js';
import { context, trace } from '@opentelemetry/api';
import { initTelemetry } from '../common/telemetry.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../../test/support/scripted-model.js';
import { startLlmGateway } from './index.js';

// Recognisable fake keys: neither may ever appear in an error message or a log line.
const GEMINI_KEY = 'gemini-fake-key-DO-NOT-LEAK-4711';
const OPENAI_KEY = 'openai-fake-key-DO-NOT-LEAK-0815';

interface CapturedLog extends Logger {
  lines: { level: string; msg: string; fields: LogFields }[];
}

function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  const log: CapturedLog = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return log;
}

const RESOURCE_TOOLS: ToolDefinition[] = [
  { name: 'resources_list', description: 'List resources', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'resources_add',
    description: 'Add a resource',
    inputSchema: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'number' } }, required: ['name', 'value'] },
  },
];

const user = (text: string): ChatMessage => ({ role: ChatRole.CHAT_ROLE_USER, text, toolCalls: [], toolResults: [] });

function request(model: string, messages: ChatMessage[], tools: ToolDefinition[] = RESOURCE_TOOLS): GenerateRequest {
  return { model, systemPrompt: 'You manage resources.', messages, tools };
}

/** The conversation after the model asked for resources_add and the tool answered. */
const afterToolCall: ChatMessage[] = [
  user('create a server x with value 1'),
  { role: ChatRole.CHAT_ROLE_ASSISTANT, text: '', toolCalls: [{ id: 'call_1', name: 'resources_add', argumentsJson: '{"name":"x","value":1}' }], toolResults: [] },
  { role: ChatRole.CHAT_ROLE_TOOL, text: '', toolCalls: [], toolResults: [{ id: 'call_1', name: 'resources_add', output: 'added x', isError: false }] },
];

let model: ScriptedModelServer;
let running: { service: RunningService; client: PromiseClient<typeof LlmGatewayServiceService>; log: CapturedLog }[] = [];

beforeAll(async () => {
  model = await startScriptedModel();
});

afterAll(async () => {
  await model.close();
});

afterEach(async () => {
  for (const { client, service } of running) {
    client.close();
    await service.stop();
  }
  running = [];
  model.requests.length = 0;
  model.setScript(resourceAgentScript);
});

async function startGateway(options: { env?: NodeJS.ProcessEnv; config?: Record<string, unknown> } = {}) {
  const log = captureLog();
  const env = options.env ?? { GEMINI_API_KEY: GEMINI_KEY, OPENAI_API_KEY: OPENAI_KEY, GEMINI_BASE_URL: model.geminiBaseUrl, OPENAI_BASE_URL: model.openaiBaseUrl };
  const service = await startLlmGateway({ config: configSchema.parse(options.config ?? {}), listen: '127.0.0.1:0', log, env });
  const client = createPromiseClient(LlmGatewayServiceService, service.address, 'test', 5000);
  running.push({ service, client, log });
  return { client, log };
}

async function rpcError(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof RpcError)) throw new Error(`expected an RpcError, got ${String(error)}`);
  return error;
}

describe('Gemini (the default provider)', () => {
  it('calls {base}/models/{model}:generateContent with the key header, system prompt and tool schemas', async () => {
    const { client } = await startGateway();
    await client.generate(request('gemini-2.5-flash', [user('hello')]));

    expect(model.requests).toHaveLength(1);
    const sent = model.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.system).toBe('You manage resources.');
    expect(sent.lastUserText).toBe('hello');
    expect(sent.body).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            { name: 'resources_list', description: 'List resources' },
            { name: 'resources_add', description: 'Add a resource', parameters: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'number' } }, required: ['name', 'value'] } },
          ],
        },
      ],
    });
    // Sampling settings are the provider's defaults (seed 000): nothing is sent.
    const generationConfig = (sent.body as { generationConfig?: Record<string, unknown> }).generationConfig ?? {};
    expect(generationConfig.temperature).toBeUndefined();
    expect(generationConfig.maxOutputTokens).toBeUndefined();
  });

  it('returns a text reply with finish reason and usage', async () => {
    model.setScript(() => ({ text: 'Hello there.' }));
    const { client } = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', [user('hello')]));
    expect(reply.text).toBe('Hello there.');
    expect(reply.toolCalls).toEqual([]);
    expect(reply.finishReason).toBe('stop');
    expect(reply.usage?.inputTokens).toBeGreaterThan(0);
    expect(reply.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('returns function calls as tool calls with an id, although Gemini says STOP', async () => {
    const { client } = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', [user('create a server my-test with value 42')]));
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]).toMatchObject({ name: 'resources_add' });
    expect(JSON.parse(reply.toolCalls[0]!.argumentsJson)).toEqual({ name: 'my-test', value: 42 });
    expect(reply.toolCalls[0]!.id).not.toBe('');
    expect(reply.finishReason).toBe('tool-calls');
  });

  it('sends the tool-result turn as a functionResponse after the functionCall', async () => {
    const { client } = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', afterToolCall));
    const sent = model.requests[0]!;
    expect(sent.toolResults).toEqual([{ name: 'resources_add', output: 'added x' }]);
    expect(sent.body).toMatchObject({
      contents: [
        { role: 'user', parts: [{ text: 'create a server x with value 1' }] },
        { role: 'model', parts: [{ functionCall: { name: 'resources_add', args: { name: 'x', value: 1 } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'resources_add' } }] },
      ],
    });
    expect(reply.text).toBe('Done. resources_add: added x');
  });

  it("continues the caller's trace in the provider call, even when no spans are exported", async () => {
    initTelemetry('llm-gateway-test');
    const { client } = await startGateway();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const caller = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    await context.with(caller, () => client.generate(request('gemini-2.5-flash', [user('hello')])));
    expect(model.requests[0]?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });

  it('routes a model name without a known prefix to Gemini, unchanged', async () => {
    const { client } = await startGateway();
    await client.generate(request('gpt-4o', [user('hello')]));
    expect(model.requests[0]?.path).toBe('/v1beta/models/gpt-4o:generateContent');
  });

  it('returns a call to a tool that was not offered, instead of failing', async () => {
    model.setScript(() => ({ toolCalls: [{ name: 'format_disk', args: { drive: 'c' } }] }));
    const { client } = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', [user('wipe it')]));
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]).toMatchObject({ name: 'format_disk' });
    expect(JSON.parse(reply.toolCalls[0]!.argumentsJson)).toEqual({ drive: 'c' });
  });
});

describe('OpenAI (openai-*)', () => {
  it('calls {base}/chat/completions with a Bearer key and the model name without its prefix', async () => {
    const { client } = await startGateway();
    await client.generate(request('openai-gpt-4o', [user('hello')]));

    expect(model.requests).toHaveLength(1);
    const sent = model.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(sent.model).toBe('gpt-4o');
    expect(sent.system).toBe('You manage resources.');
    const body = sent.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'gpt-4o',
      tools: [
        { type: 'function', function: { name: 'resources_list', description: 'List resources' } },
        { type: 'function', function: { name: 'resources_add', parameters: RESOURCE_TOOLS[1]!.inputSchema } },
      ],
    });
    expect(body.temperature).toBeUndefined();
    expect(body.max_tokens).toBeUndefined();
    expect(body.stream).not.toBe(true);
  });

  it('sends the assistant tool call and one role:"tool" message per call id', async () => {
    const { client } = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', afterToolCall));
    const sent = model.requests[0]!;
    expect(sent.toolResults).toEqual([{ name: 'resources_add', output: 'added x' }]);
    expect(sent.body).toMatchObject({
      messages: [
        { role: 'system', content: 'You manage resources.' },
        { role: 'user', content: 'create a server x with value 1' },
        { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'resources_add', arguments: '{"name":"x","value":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'added x' },
      ],
    });
    expect(reply.text).toBe('Done. resources_add: added x');
  });

  it('returns tool calls with the provider id and the arguments string', async () => {
    const { client } = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', [user('add resource test-2 value 20')]));
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]!.id).toMatch(/^call_/);
    expect(reply.toolCalls[0]!.name).toBe('resources_add');
    expect(JSON.parse(reply.toolCalls[0]!.argumentsJson)).toEqual({ name: 'test-2', value: 20 });
    expect(reply.finishReason).toBe('tool-calls');
  });

  it('returns arguments that are not valid JSON exactly as the model produced them', async () => {
    const broken = '{"name": "x", "value": ';
    model.setScript(() => ({ toolCalls: [{ name: 'resources_add', args: broken }] }));
    const { client } = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', [user('add x')]));
    expect(reply.toolCalls).toEqual([expect.objectContaining({ name: 'resources_add', argumentsJson: broken })]);
    expect(model.requests).toHaveLength(1);
  });

  it('returns unknown tools and broken arguments side by side with valid calls', async () => {
    model.setScript(() => ({
      toolCalls: [
        { name: 'resources_list', args: {} },
        { name: 'format_disk', args: 'not json' },
      ],
    }));
    const { client } = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', [user('go')]));
    expect(reply.toolCalls.map((call) => [call.name, call.argumentsJson])).toEqual([
      ['resources_list', '{}'],
      ['format_disk', 'not json'],
    ]);
    // The SDK answered the invalid call with an error result itself; that must not cost a second request.
    expect(model.requests).toHaveLength(1);
  });
});

describe('keys', () => {
  it('warns once per missing key at start, naming every configured model it breaks', async () => {
    const { log } = await startGateway({
      env: { OPENAI_API_KEY: OPENAI_KEY, GEMINI_BASE_URL: model.geminiBaseUrl, OPENAI_BASE_URL: model.openaiBaseUrl },
      config: {
        llm: { model: 'gemini-2.5-flash' },
        agent: {
          name: 'root',
          type: 'sequential',
          agents: [
            { name: 'a', type: 'llm', model: 'gemini-2.5-pro' },
            { name: 'b', type: 'llm', model: 'openai-gpt-4o' },
            { name: 'c', type: 'llm', model: 'claude-sonnet-4-5' },
          ],
        },
      },
    });
    const warnings = log.lines.filter((line) => line.level === 'warn').map((line) => line.msg);
    expect(warnings).toEqual([
      'GEMINI_API_KEY is not set; models gemini-2.5-flash, gemini-2.5-pro will fail',
      'this build does not include the anthropic provider; models claude-sonnet-4-5 will fail',
    ]);
  });

  it('answers FAILED_PRECONDITION for a model whose key is missing, without sending anything', async () => {
    const { client } = await startGateway({ env: { GEMINI_BASE_URL: model.geminiBaseUrl } });
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(error.message).toBe('GEMINI_API_KEY is not set: cannot call model gemini-2.5-flash');
    expect(model.requests).toHaveLength(0);
  });

  it('answers INVALID_ARGUMENT for a provider this build does not include', async () => {
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request('claude-sonnet-4-5', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe('model claude-sonnet-4-5 needs the anthropic provider, which this build does not include');
    expect(model.requests).toHaveLength(0);
  });

  it('never puts a key in an error message or a log line, even when the provider echoes it', async () => {
    const { client, log } = await startGateway();
    const echoes = [400, 401, 403, 404, 429, 500, 503];
    for (const [modelName, key] of [
      ['gemini-2.5-flash', GEMINI_KEY],
      ['openai-gpt-4o', OPENAI_KEY],
    ] as const) {
      for (const status of echoes) {
        model.setScript(() => ({ httpStatus: status, body: { error: { code: status, message: `API key ${key} is not valid`, status: 'X' } } }));
        const error = await rpcError(client.generate(request(modelName, [user('hello')])));
        expect(error.message).toContain(`HTTP ${status}`);
        expect(error.message).not.toContain(key);
      }
    }
    expect(log.lines.filter((line) => line.level === 'warn')).toHaveLength(2 * echoes.length);
    expect(JSON.stringify(log.lines)).not.toContain(GEMINI_KEY);
    expect(JSON.stringify(log.lines)).not.toContain(OPENAI_KEY);
  });
});

describe('provider failures', () => {
  it.each([
    [400, 'INVALID_ARGUMENT'],
    [401, 'INVALID_ARGUMENT'],
    [403, 'INVALID_ARGUMENT'],
    [404, 'INVALID_ARGUMENT'],
    [429, 'UNAVAILABLE'],
    [500, 'UNAVAILABLE'],
    [503, 'UNAVAILABLE'],
  ] as const)('maps HTTP %i to %s, naming model, provider and status, without retrying', async (status, code) => {
    model.setScript(() => ({ httpStatus: status }));
    const { client } = await startGateway();
    for (const name of ['gemini-2.5-flash', 'openai-gpt-4o']) {
      const error = await rpcError(client.generate(request(name, [user('hello')])));
      expect(GrpcStatus[error.code]).toBe(code);
      expect(error.message).toContain(`model ${name}`);
      expect(error.message).toContain(name.startsWith('openai-') ? 'openai' : 'gemini');
      expect(error.message).toContain(`HTTP ${status}`);
    }
    expect(model.requests).toHaveLength(2);
  });

  it('says the provider rejected the API key on 401', async () => {
    model.setScript(() => ({ httpStatus: 401 }));
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request('openai-gpt-4o', [user('hello')])));
    expect(error.message).toMatch(/^the provider openai rejected the API key for model openai-gpt-4o \(HTTP 401\); check OPENAI_API_KEY/);
  });

  it('answers INTERNAL for a reply that is not the provider format', async () => {
    model.setScript(() => ({ httpStatus: 200, body: 'this is not JSON' }));
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.INTERNAL);
    expect(error.message).toContain('model gemini-2.5-flash');
    expect(error.message).toContain('HTTP 200');
  });

  it('answers UNAVAILABLE when the provider cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const { client } = await startGateway({ env: { GEMINI_API_KEY: GEMINI_KEY, GEMINI_BASE_URL: 'http://127.0.0.1:1/v1beta' } });
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toContain('could not reach the provider gemini for model gemini-2.5-flash at http://127.0.0.1:1');
  });

  it('answers DEADLINE_EXCEEDED when the model does not answer within llm.timeout', async () => {
    model.setScript(() => ({ hang: true }));
    const { client } = await startGateway({ config: { llm: { timeout: '300ms' } } });
    const started = Date.now();
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error.message).toBe('model gemini-2.5-flash did not answer within 300ms');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up at the caller deadline when it comes before llm.timeout', async () => {
    model.setScript(() => ({ hang: true }));
    const { client, log } = await startGateway({ config: { llm: { timeout: '60s' } } });
    const error = await rpcError(client.generate(request('openai-gpt-4o', [user('hello')]), { timeoutMs: 400 }));
    expect(error.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    // The gateway's own abort shows in its log, well before the 60 s llm.timeout.
    await expect.poll(() => log.lines.find((line) => line.msg === 'model call failed')?.fields.error, { timeout: 3000 }).toMatch(/^model openai-gpt-4o did not answer within \d+ms$/);
  });
});

describe('requests that cannot be sent', () => {
  it('rejects a tool result that answers no call, before calling the provider', async () => {
    const { client } = await startGateway();
    const orphan: ChatMessage = { role: ChatRole.CHAT_ROLE_TOOL, text: '', toolCalls: [], toolResults: [{ id: 'nope', name: 'resources_add', output: 'x', isError: false }] };
    const error = await rpcError(client.generate(request('gemini-2.5-flash', [user('hello'), orphan])));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain('message 1: tool result for resources_add (id "nope") answers no tool call');
    expect(model.requests).toHaveLength(0);
  });

  it('rejects an empty model name', async () => {
    const { client } = await startGateway();
    const error = await rpcError(client.generate(request('', [user('hello')])));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(model.requests).toHaveLength(0);
  });
});
