/**
 * Contract tests of the six providers (docs/configuration.md, "Models"): what the gateway sends over real
 * HTTP to a local emulation of each vendor's wire format, and how it reads the answers, all
 * through real gRPC calls to startLlmGateway.
 */
import { describe, expect, it } from 'vitest';
import { ChatRole, type ChatMessage, type GenerateRequest } from '../../gen/ts/asg/llm/v1/llm.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { resourceAgentScript, type ScriptedModelServer } from '../../test/support/scripted-model.js';
import {
  generateRequest,
  KEYS,
  pathOf,
  RESOURCE_TOOLS,
  rpcError,
  useLlmGateway,
  user,
  type ProviderContract,
  type WireBody as Body,
} from '../../test/support/llm-gateway-harness.js';

/** Here every request names its messages; each offers RESOURCE_TOOLS. */
const request = (name: string, messages: ChatMessage[]): GenerateRequest => generateRequest(name, messages);

// Ids every vendor takes back: Mistral refuses any but nine letters and digits.
const FIRST_CALL = 'callXq7K1';
const SECOND_CALL = 'callYr8L2';

/** The conversation after the model asked for two tools at once and both answered, one with an error. */
const afterTwoCalls: ChatMessage[] = [
  user('create x with value 1 and y with value 2'),
  {
    role: ChatRole.CHAT_ROLE_ASSISTANT,
    text: '',
    toolCalls: [
      { id: FIRST_CALL, name: 'resources_add', argumentsJson: '{"name":"x","value":1}' },
      { id: SECOND_CALL, name: 'resources_add', argumentsJson: '{"name":"y","value":2}' },
    ],
    toolResults: [],
  },
  {
    role: ChatRole.CHAT_ROLE_TOOL,
    text: '',
    toolCalls: [],
    toolResults: [
      { id: FIRST_CALL, name: 'resources_add', output: 'added x', isError: false },
      { id: SECOND_CALL, name: 'resources_add', output: 'y exists already', isError: true },
    ],
  },
];

interface VendorContract extends ProviderContract {
  path: (server: ScriptedModelServer) => string;
  /** Asserts the credential headers: the right one, and no other. */
  credentials(headers: Record<string, string>): void;
  /** The tools the body declares, read from the vendor's own fields. */
  declaredTools(body: Body): { name: string; description: string; schema: unknown }[];
  /** Temperature and the output token limit as the body carries them. */
  sampling(body: Body): { temperature: unknown; maxTokens: unknown };
  /** What the body of `afterTwoCalls` must contain, in the vendor's shape. */
  toolResultTurn: Body;
}

const openaiTools = (body: Body) =>
  body.tools.map((entry: Body) => ({
    name: entry.function.name,
    description: entry.function.description,
    schema: entry.function.parameters,
  }));
const openaiSampling = (body: Body) => ({ temperature: body.temperature, maxTokens: body.max_tokens });

/** The OpenAI Chat Completions history as the OpenAI and OpenAI-compatible clients send it. */
const openaiToolResultTurn = {
  messages: [
    { role: 'system', content: 'You manage resources.' },
    { role: 'user', content: 'create x with value 1 and y with value 2' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: FIRST_CALL, type: 'function', function: { name: 'resources_add', arguments: '{"name":"x","value":1}' } },
        { id: SECOND_CALL, type: 'function', function: { name: 'resources_add', arguments: '{"name":"y","value":2}' } },
      ],
    },
    { role: 'tool', tool_call_id: FIRST_CALL, content: 'added x' },
    { role: 'tool', tool_call_id: SECOND_CALL, content: 'y exists already' },
  ],
};

const bearer = (key: string) => (headers: Record<string, string>) => {
  expect(headers.authorization).toBe(`Bearer ${key}`);
  expect(headers['x-api-key']).toBeUndefined();
};

const CONTRACTS: VendorContract[] = [
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    sentModel: 'gemini-2.5-flash',
    path: (server) => pathOf(server.geminiBaseUrl, '/models/gemini-2.5-flash:generateContent'),
    credentials(headers) {
      expect(headers['x-goog-api-key']).toBe(KEYS.GEMINI_API_KEY);
      expect(headers.authorization).toBeUndefined();
    },
    // The SDK leaves out `parameters` of a tool without properties; Gemini reads that as "no arguments".
    declaredTools: (body) =>
      body.tools[0].functionDeclarations.map((entry: Body) => ({
        name: entry.name,
        description: entry.description,
        schema: 'parameters' in entry ? entry.parameters : { type: 'object', properties: {} },
      })),
    sampling: (body) => ({ temperature: body.generationConfig?.temperature, maxTokens: body.generationConfig?.maxOutputTokens }),
    toolResultTurn: {
      systemInstruction: { parts: [{ text: 'You manage resources.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'create x with value 1 and y with value 2' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'resources_add', args: { name: 'x', value: 1 } } },
            { functionCall: { name: 'resources_add', args: { name: 'y', value: 2 } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'resources_add', response: { name: 'resources_add', content: 'added x' } } },
            { functionResponse: { name: 'resources_add', response: { name: 'resources_add', content: 'y exists already' } } },
          ],
        },
      ],
    },
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    sentModel: 'claude-sonnet-4-5',
    path: (server) => pathOf(server.anthropicBaseUrl, '/messages'),
    credentials(headers) {
      expect(headers['x-api-key']).toBe(KEYS.ANTHROPIC_API_KEY);
      expect(headers['anthropic-version']).toBe('2023-06-01');
      expect(headers.authorization).toBeUndefined();
    },
    declaredTools: (body) =>
      body.tools.map((entry: Body) => ({ name: entry.name, description: entry.description, schema: entry.input_schema })),
    sampling: (body) => ({ temperature: body.temperature, maxTokens: body.max_tokens }),
    toolResultTurn: {
      system: [{ type: 'text', text: 'You manage resources.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'create x with value 1 and y with value 2' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: FIRST_CALL, name: 'resources_add', input: { name: 'x', value: 1 } },
            { type: 'tool_use', id: SECOND_CALL, name: 'resources_add', input: { name: 'y', value: 2 } },
          ],
        },
        // Wire fact: tool results go back in a user message, as tool_result blocks.
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: FIRST_CALL, content: 'added x' },
            { type: 'tool_result', tool_use_id: SECOND_CALL, content: 'y exists already', is_error: true },
          ],
        },
      ],
    },
  },
  {
    provider: 'openai',
    model: 'openai-gpt-4o',
    sentModel: 'gpt-4o',
    path: (server) => pathOf(server.openaiBaseUrl, '/chat/completions'),
    credentials: bearer(KEYS.OPENAI_API_KEY),
    declaredTools: openaiTools,
    sampling: openaiSampling,
    toolResultTurn: openaiToolResultTurn,
  },
  {
    provider: 'mistral',
    model: 'mistral-large-latest',
    sentModel: 'mistral-large-latest',
    path: (server) => pathOf(server.mistralBaseUrl, '/chat/completions'),
    credentials: bearer(KEYS.MISTRAL_API_KEY),
    declaredTools: openaiTools,
    sampling: openaiSampling,
    // Mistral's client sends user text as parts, "" beside tool calls, and names each tool result.
    toolResultTurn: {
      messages: [
        { role: 'system', content: 'You manage resources.' },
        { role: 'user', content: [{ type: 'text', text: 'create x with value 1 and y with value 2' }] },
        { role: 'assistant', content: '', tool_calls: openaiToolResultTurn.messages[2]!.tool_calls },
        { role: 'tool', name: 'resources_add', tool_call_id: FIRST_CALL, content: 'added x' },
        { role: 'tool', name: 'resources_add', tool_call_id: SECOND_CALL, content: 'y exists already' },
      ],
    },
  },
  {
    provider: 'ollama',
    model: 'ollama-llama3',
    sentModel: 'llama3',
    path: (server) => pathOf(server.ollamaBaseUrl, '/chat/completions'),
    credentials(headers) {
      // Ollama takes no key: no Authorization header at all.
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-api-key']).toBeUndefined();
    },
    declaredTools: openaiTools,
    sampling: openaiSampling,
    toolResultTurn: openaiToolResultTurn,
  },
  {
    provider: 'openrouter',
    model: 'openrouter-anthropic/claude-3-opus',
    sentModel: 'anthropic/claude-3-opus',
    path: (server) => pathOf(server.openrouterBaseUrl, '/chat/completions'),
    credentials(headers) {
      bearer(KEYS.OPENROUTER_API_KEY)(headers);
      expect(headers['http-referer']).toBe('https://github.com/agentic-platform');
      expect(headers['x-title']).toBe('Agent Stop and Go');
    },
    declaredTools: openaiTools,
    sampling: openaiSampling,
    toolResultTurn: openaiToolResultTurn,
  },
];

const gateway = useLlmGateway();
const { model } = gateway;

/** A client of a gateway with every key and every base URL pointed at the scripted model; unless `llm` says otherwise, retries wait 1 ms. */
async function startGateway(llm: Record<string, unknown> = {}) {
  return (await gateway.start({ llm })).client;
}

describe.each(CONTRACTS)('$provider ($model)', (contract) => {
  it('sends the exact path, credentials and model name, with the system prompt and the user text', async () => {
    const client = await startGateway();
    await client.generate(request(contract.model, [user('hello')]));
    expect(model().requests).toHaveLength(1);
    const sent = model().requests[0]!;
    expect(sent.provider).toBe(contract.provider);
    expect(sent.path).toBe(contract.path(model()));
    contract.credentials(sent.headers);
    expect(sent.model).toBe(contract.sentModel);
    expect(sent.system).toBe('You manage resources.');
    expect(sent.lastUserText).toBe('hello');
  });

  it('declares every tool with its description and JSON schema', async () => {
    const client = await startGateway();
    await client.generate(request(contract.model, [user('hello')]));
    expect(contract.declaredTools(model().requests[0]!.body)).toEqual(
      RESOURCE_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, schema: tool.inputSchema })),
    );
  });

  it('sends two tool calls and their results, one an error, in the vendor shape', async () => {
    const client = await startGateway();
    const reply = await client.generate(request(contract.model, afterTwoCalls));
    const sent = model().requests[0]!;
    expect(sent.body).toMatchObject(contract.toolResultTurn);
    expect(sent.toolResults).toEqual([
      { name: 'resources_add', output: 'added x' },
      { name: 'resources_add', output: 'y exists already' },
    ]);
    expect(reply.text).toBe('Done. resources_add: added x\nresources_add: y exists already');
  });

  it('reads a text reply with its finish reason and usage', async () => {
    model().setScript(() => ({ text: 'Hello there.' }));
    const client = await startGateway();
    const reply = await client.generate(request(contract.model, [user('hello')]));
    expect(reply.text).toBe('Hello there.');
    expect(reply.toolCalls).toEqual([]);
    expect(reply.finishReason).toBe('stop');
    expect(reply.usage?.inputTokens).toBeGreaterThan(0);
    expect(reply.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('reads several tool calls of one reply, each with its own id, beside text', async () => {
    model().setScript(() => ({
      text: 'Adding both.',
      toolCalls: [
        { name: 'resources_add', args: { name: 'a', value: 1 } },
        { name: 'resources_add', args: { name: 'b', value: 2 } },
        { name: 'resources_list', args: {} },
      ],
    }));
    const client = await startGateway();
    const reply = await client.generate(request(contract.model, [user('add a and b, then list')]));
    expect(reply.text).toBe('Adding both.');
    expect(reply.toolCalls.map((call) => [call.name, JSON.parse(call.argumentsJson)])).toEqual([
      ['resources_add', { name: 'a', value: 1 }],
      ['resources_add', { name: 'b', value: 2 }],
      ['resources_list', {}],
    ]);
    const ids = reply.toolCalls.map((call) => call.id);
    expect(ids.every((id) => id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(reply.finishReason).toBe('tool-calls');
  });

  it(`sends no temperature and ${contract.provider === 'anthropic' ? 'max_tokens 4096' : 'no token limit'} unless configured`, async () => {
    const client = await startGateway();
    await client.generate(request(contract.model, [user('hello')]));
    expect(contract.sampling(model().requests[0]!.body)).toEqual({
      temperature: undefined,
      maxTokens: contract.provider === 'anthropic' ? 4096 : undefined,
    });
  });

  it('sends llm.temperature and llm.max_tokens when configured', async () => {
    const client = await startGateway({ temperature: 0.2, max_tokens: 256 });
    await client.generate(request(contract.model, [user('hello')]));
    expect(contract.sampling(model().requests[0]!.body)).toEqual({ temperature: 0.2, maxTokens: 256 });
  });

  it('answers INVALID_ARGUMENT for a 400, at once', async () => {
    model().setScript(() => ({ httpStatus: 400, message: 'tools[0].name: bad name' }));
    const client = await startGateway();
    const error = await rpcError(client.generate(request(contract.model, [user('hello')])));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(
      `the provider ${contract.provider} refused the request for model ${contract.model} (HTTP 400): tools[0].name: bad name`,
    );
    expect(model().requests).toHaveLength(1);
  });

  it(
    contract.provider === 'ollama'
      ? 'answers INVALID_ARGUMENT for a 401, though Ollama takes no key'
      : 'answers INVALID_ARGUMENT for a 401, naming the key variable',
    async () => {
      model().setScript(() => ({ httpStatus: 401 }));
      const client = await startGateway();
      const error = await rpcError(client.generate(request(contract.model, [user('hello')])));
      expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      const keyEnv = `${contract.provider.toUpperCase()}_API_KEY`;
      if (contract.provider === 'ollama')
        expect(error.message).toMatch(/^the provider ollama refused the request for model ollama-llama3 \(HTTP 401\)/);
      else
        expect(error.message).toMatch(
          new RegExp(
            `^the provider ${contract.provider} rejected the API key for model ${contract.model.replace(/[/.]/g, '\\$&')} \\(HTTP 401\\); check ${keyEnv}`,
          ),
        );
      expect(model().requests).toHaveLength(1);
    },
  );

  it('answers UNAVAILABLE for a 5xx once the retries are spent', async () => {
    model().setScript(() => ({ httpStatus: 503 }));
    const client = await startGateway({ retry: { max_retries: 2, initial_backoff: '1ms' } });
    const error = await rpcError(client.generate(request(contract.model, [user('hello')])));
    expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error.message).toMatch(
      new RegExp(`^the provider ${contract.provider} failed to answer for model .+ \\(HTTP 503\\).* \\(after 3 attempts\\)$`),
    );
    expect(model().requests).toHaveLength(3);
  });
});

describe('provider:model names', () => {
  it.each([
    ['anthropic:claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
    ['google:gemini-2.5-pro', 'gemini', 'gemini-2.5-pro'],
    ['gemini:gemini-2.5-flash', 'gemini', 'gemini-2.5-flash'],
    ['openai:gpt-4o', 'openai', 'gpt-4o'],
    ['mistral:mistral-large-latest', 'mistral', 'mistral-large-latest'],
    ['ollama:llama3:8b', 'ollama', 'llama3:8b'],
    ['openrouter:anthropic/claude-3-opus', 'openrouter', 'anthropic/claude-3-opus'],
  ])('sends %s to %s as %s', async (name, provider, sentModel) => {
    const client = await startGateway();
    await client.generate(request(name, [user('hello')]));
    expect(model().requests.map((sent) => [sent.provider, sent.model])).toEqual([[provider, sentModel]]);
  });

  it('sends a bare Gemini name to Gemini, unchanged, and refuses a bare name of no provider without calling any', async () => {
    const client = await startGateway();
    await client.generate(request('gemini-2.5-pro', [user('hello')]));
    expect(model().requests[0]?.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    await expect(client.generate(request('gpt-4o', [user('hello')]))).rejects.toThrow('did you mean "openai:gpt-4o"?');
    expect(model().requests).toHaveLength(1);
    // Any other bare name goes to Gemini, the documented default (the check warns of it).
    await client.generate(request('house-model', [user('hello')]));
    expect(model().requests[1]?.path).toBe('/v1beta/models/house-model:generateContent');
  });
});

describe('Gemini specifics', () => {
  it('hands thoughtSignature back unchanged with the call it came with, and adds none to the others', async () => {
    const signature = 'CiQB0e2Kb3dRh7s+/Pq1Z9kGv0m2nT6Ew1vQ8oXhY4cR5aJ7bLs=';
    model().setScript(() => ({
      toolCalls: [
        { name: 'resources_add', args: { name: 'x', value: 1 }, thoughtSignature: signature },
        { name: 'resources_list', args: {} },
      ],
    }));
    const client = await startGateway();
    const first = await client.generate(request('gemini-2.5-flash', [user('add x, then list')]));
    expect(first.toolCalls[0]!.providerMetadataJson).toBe(JSON.stringify({ google: { thoughtSignature: signature } }));
    expect(first.toolCalls[1]!.providerMetadataJson).toBeUndefined();

    // The orchestrator stores the calls as they came and sends them back with their results.
    model().setScript(resourceAgentScript);
    await client.generate(
      request('gemini-2.5-flash', [
        user('add x, then list'),
        { role: ChatRole.CHAT_ROLE_ASSISTANT, text: '', toolCalls: first.toolCalls, toolResults: [] },
        {
          role: ChatRole.CHAT_ROLE_TOOL,
          text: '',
          toolCalls: [],
          toolResults: first.toolCalls.map((call) => ({ id: call.id, name: call.name, output: 'ok', isError: false })),
        },
      ]),
    );
    const modelTurn = (model().requests[1]!.body as Body).contents[1];
    expect(modelTurn.role).toBe('model');
    expect(modelTurn.parts[0].functionCall.name).toBe('resources_add');
    expect(modelTurn.parts[0].thoughtSignature).toBe(signature);
    expect(modelTurn.parts[1].functionCall.name).toBe('resources_list');
    expect(modelTurn.parts[1]).not.toHaveProperty('thoughtSignature');
  });

  it('returns function calls as tool calls with an id, although Gemini says STOP', async () => {
    const client = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', [user('create a server my-test with value 42')]));
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]).toMatchObject({ name: 'resources_add' });
    expect(JSON.parse(reply.toolCalls[0]!.argumentsJson)).toEqual({ name: 'my-test', value: 42 });
    expect(reply.toolCalls[0]!.id).not.toBe('');
    expect(reply.finishReason).toBe('tool-calls');
  });

  it('returns a call to a tool that was not offered, instead of failing', async () => {
    model().setScript(() => ({ toolCalls: [{ name: 'format_disk', args: { drive: 'c' } }] }));
    const client = await startGateway();
    const reply = await client.generate(request('gemini-2.5-flash', [user('wipe it')]));
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]).toMatchObject({ name: 'format_disk' });
    expect(JSON.parse(reply.toolCalls[0]!.argumentsJson)).toEqual({ drive: 'c' });
  });
});

describe('OpenAI specifics', () => {
  it('sends a non-streaming request', async () => {
    const client = await startGateway();
    await client.generate(request('openai-gpt-4o', [user('hello')]));
    expect((model().requests[0]!.body as Body).stream).not.toBe(true);
  });

  it('returns arguments that are not valid JSON exactly as the model produced them', async () => {
    const broken = '{"name": "x", "value": ';
    model().setScript(() => ({ toolCalls: [{ name: 'resources_add', args: broken }] }));
    const client = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', [user('add x')]));
    expect(reply.toolCalls).toEqual([expect.objectContaining({ name: 'resources_add', argumentsJson: broken })]);
    expect(model().requests).toHaveLength(1);
  });

  it('returns unknown tools and broken arguments side by side with valid calls', async () => {
    model().setScript(() => ({
      toolCalls: [
        { name: 'resources_list', args: {} },
        { name: 'format_disk', args: 'not json' },
      ],
    }));
    const client = await startGateway();
    const reply = await client.generate(request('openai-gpt-4o', [user('go')]));
    expect(reply.toolCalls.map((call) => [call.name, call.argumentsJson])).toEqual([
      ['resources_list', '{}'],
      ['format_disk', 'not json'],
    ]);
    // The SDK answered the invalid call with an error result itself; that must not cost a second request.
    expect(model().requests).toHaveLength(1);
  });
});

describe('Mistral specifics', () => {
  it("reports Mistral's refusal of a tool-call id that is not nine letters and digits", async () => {
    const client = await startGateway();
    const history: ChatMessage[] = [
      user('add x'),
      {
        role: ChatRole.CHAT_ROLE_ASSISTANT,
        text: '',
        toolCalls: [{ id: 'call_1', name: 'resources_add', argumentsJson: '{}' }],
        toolResults: [],
      },
      {
        role: ChatRole.CHAT_ROLE_TOOL,
        text: '',
        toolCalls: [],
        toolResults: [{ id: 'call_1', name: 'resources_add', output: 'ok', isError: false }],
      },
    ];
    const error = await rpcError(client.generate(request('mistral:mistral-large-latest', history)));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain('(HTTP 400): Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.');
  });
});
