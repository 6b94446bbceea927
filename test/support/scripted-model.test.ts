import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resourceAgentScript, startScriptedModel, type ModelRequest, type ScriptedModelServer } from './scripted-model.js';
import { until } from './until.js';

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel();
});

afterAll(async () => {
  await model.close();
});

afterEach(() => {
  model.requests.length = 0;
  model.setScript(resourceAgentScript);
});

// `any`: the assertions below read the vendors' JSON shapes field by field.
async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

const geminiTools = [
  {
    functionDeclarations: [
      { name: 'resources_list', parameters: { type: 'object' } },
      { name: 'resources_add', parameters: { type: 'object' } },
    ],
  },
];
const openaiTools = [
  { type: 'function', function: { name: 'resources_list', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'resources_add', parameters: { type: 'object', properties: {} } } },
];

const gemini = (body: unknown, headers: Record<string, string> = { 'x-goog-api-key': 'test-key' }, modelName = 'gemini-2.5-flash') =>
  post(`${model.geminiBaseUrl}/models/${modelName}:generateContent`, headers, body);
const openai = (body: unknown, headers: Record<string, string> = { authorization: 'Bearer test-key' }) =>
  post(`${model.openaiBaseUrl}/chat/completions`, headers, body);
const anthropic = (body: unknown, headers: Record<string, string> = { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' }) =>
  post(`${model.anthropicBaseUrl}/messages`, headers, body);
const mistral = (body: unknown, headers: Record<string, string> = { authorization: 'Bearer test-key' }) =>
  post(`${model.mistralBaseUrl}/chat/completions`, headers, body);
const ollama = (body: unknown, headers: Record<string, string> = {}) => post(`${model.ollamaBaseUrl}/chat/completions`, headers, body);
const openrouter = (body: unknown, headers: Record<string, string> = { authorization: 'Bearer test-key' }) =>
  post(`${model.openrouterBaseUrl}/chat/completions`, headers, body);

describe('startScriptedModel', () => {
  it('listens on loopback only', () => {
    expect(new URL(model.geminiBaseUrl).hostname).toBe('127.0.0.1');
    expect(model.geminiBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1beta$/);
    expect(model.openaiBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('gives every vendor its own base URL, also under its environment variable', () => {
    const origin = new URL(model.geminiBaseUrl).origin;
    expect(model.baseUrlEnv).toEqual({
      GEMINI_BASE_URL: `${origin}/v1beta`,
      ANTHROPIC_BASE_URL: `${origin}/anthropic/v1`,
      OPENAI_BASE_URL: `${origin}/v1`,
      MISTRAL_BASE_URL: `${origin}/mistral/v1`,
      OLLAMA_BASE_URL: `${origin}/ollama/v1`,
      OPENROUTER_BASE_URL: `${origin}/openrouter/api/v1`,
    });
    expect([model.anthropicBaseUrl, model.mistralBaseUrl, model.ollamaBaseUrl, model.openrouterBaseUrl]).toEqual([
      model.baseUrlEnv.ANTHROPIC_BASE_URL,
      model.baseUrlEnv.MISTRAL_BASE_URL,
      model.baseUrlEnv.OLLAMA_BASE_URL,
      model.baseUrlEnv.OPENROUTER_BASE_URL,
    ]);
  });
});

describe('Gemini generateContent', () => {
  it('answers text as candidates[].content.parts[] with STOP and usageMetadata', async () => {
    model.setScript(() => ({ text: 'Hello.' }));
    const { status, json } = await gemini({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    });
    expect(status).toBe(200);
    expect(json.candidates).toEqual([{ content: { parts: [{ text: 'Hello.' }], role: 'model' }, finishReason: 'STOP', index: 0 }]);
    expect(json.usageMetadata.promptTokenCount).toBeGreaterThan(0);
    expect(json.usageMetadata.totalTokenCount).toBe(json.usageMetadata.promptTokenCount + json.usageMetadata.candidatesTokenCount);
  });

  it('records what the model was asked', async () => {
    await gemini(
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'list them' }] }],
        tools: geminiTools,
      },
      { 'x-goog-api-key': 'k-1' },
      'gemini-2.5-pro',
    );
    expect(model.requests).toHaveLength(1);
    const seen: ModelRequest = model.requests[0]!;
    expect(seen).toMatchObject({
      provider: 'gemini',
      path: '/v1beta/models/gemini-2.5-pro:generateContent',
      model: 'gemini-2.5-pro',
      system: 'Be brief.',
      lastUserText: 'list them',
      toolResults: [],
      tools: ['resources_list', 'resources_add'],
    });
    expect(seen.headers['x-goog-api-key']).toBe('k-1');
  });

  it('answers tool calls as functionCall parts, still with finishReason STOP', async () => {
    const { json } = await gemini({
      contents: [{ role: 'user', parts: [{ text: 'create a server my-test with value 42' }] }],
      tools: geminiTools,
    });
    expect(json.candidates[0].finishReason).toBe('STOP');
    expect(json.candidates[0].content.parts).toEqual([{ functionCall: { name: 'resources_add', args: { name: 'my-test', value: 42 } } }]);
  });

  it('reads functionResponse parts of the last turn as tool results', async () => {
    const { json } = await gemini({
      contents: [
        { role: 'user', parts: [{ text: 'list' }] },
        { role: 'model', parts: [{ functionCall: { name: 'resources_list', args: {} } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'resources_list', response: { name: 'resources_list', content: '[a, b]' } } }],
        },
      ],
      tools: geminiTools,
    });
    expect(model.requests[0]?.toolResults).toEqual([{ name: 'resources_list', output: '[a, b]' }]);
    expect(model.requests[0]?.lastUserText).toBe('list');
    expect(json.candidates[0].content.parts).toEqual([{ text: 'Done. resources_list: [a, b]' }]);
  });

  it('sends a scripted thoughtSignature beside its functionCall only', async () => {
    model.setScript(() => ({
      toolCalls: [
        { name: 'resources_add', args: { name: 'x', value: 1 }, thoughtSignature: 'sig-1' },
        { name: 'resources_list', args: {} },
      ],
    }));
    const { json } = await gemini({ contents: [{ role: 'user', parts: [{ text: 'go' }] }] });
    expect(json.candidates[0].content.parts).toEqual([
      { functionCall: { name: 'resources_add', args: { name: 'x', value: 1 } }, thoughtSignature: 'sig-1' },
      { functionCall: { name: 'resources_list', args: {} } },
    ]);
  });

  it('refuses a call without x-goog-api-key as Gemini does', async () => {
    const { status, json } = await gemini({ contents: [] }, {});
    expect(status).toBe(403);
    expect(json.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
  });
});

describe('OpenAI chat completions', () => {
  it('answers text in choices[].message with finish_reason stop and usage', async () => {
    model.setScript(() => ({ text: 'Hello.' }));
    const { status, json } = await openai({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
    });
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens);
  });

  it('answers tool calls with arguments as a JSON string and finish_reason tool_calls', async () => {
    const { json } = await openai({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'add resource test-2 value 20' }] },
      ],
      tools: openaiTools,
    });
    const choice = json.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'resources_add', arguments: '{"name":"test-2","value":20}' },
      },
    ]);
    expect(model.requests[0]).toMatchObject({
      provider: 'openai',
      path: '/v1/chat/completions',
      model: 'gpt-4o',
      system: 'sys',
      lastUserText: 'add resource test-2 value 20',
    });
  });

  it('sends scripted string arguments unchanged, even when they are not JSON', async () => {
    model.setScript(() => ({ toolCalls: [{ name: 'resources_add', args: '{"name": ' }] }));
    const { json } = await openai({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(json.choices[0].message.tool_calls[0].function.arguments).toBe('{"name": ');
  });

  it('names trailing role:"tool" messages after the calls they answer', async () => {
    await openai({
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'remove test-2' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'resources_remove', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_9', content: 'removed 1' },
      ],
    });
    expect(model.requests[0]?.toolResults).toEqual([{ name: 'resources_remove', output: 'removed 1' }]);
  });

  it('refuses a call without a Bearer key as OpenAI does', async () => {
    const { status, json } = await openai({ model: 'gpt-4o', messages: [] }, {});
    expect(status).toBe(401);
    expect(json.error).toMatchObject({ type: 'invalid_request_error' });
  });
});

describe('Anthropic messages', () => {
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'add resource test-2 value 20' }] }];

  it('answers text blocks with stop_reason end_turn and usage', async () => {
    model.setScript(() => ({ text: 'Hello.' }));
    const { status, json } = await anthropic({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Hello.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(json.id).toMatch(/^msg_/);
    expect(json.usage.input_tokens).toBeGreaterThan(0);
    expect(json.usage.output_tokens).toBeGreaterThan(0);
  });

  it('answers tool calls as tool_use blocks with an object input and stop_reason tool_use', async () => {
    const { json } = await anthropic({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: [{ type: 'text', text: 'sys' }],
      messages,
      tools: [{ name: 'resources_add', input_schema: { type: 'object' } }],
    });
    expect(json.stop_reason).toBe('tool_use');
    expect(json.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'resources_add', input: { name: 'test-2', value: 20 } },
    ]);
    expect(model.requests[0]).toMatchObject({
      provider: 'anthropic',
      path: '/anthropic/v1/messages',
      model: 'claude-sonnet-4-5',
      system: 'sys',
      lastUserText: 'add resource test-2 value 20',
      tools: ['resources_add'],
    });
  });

  it('reads tool_result blocks of the last user message, named after the tool_use blocks they answer', async () => {
    await anthropic({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'sys',
      messages: [
        { role: 'user', content: 'remove test-2' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'resources_remove', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: [{ type: 'text', text: 'removed 1' }] }] },
      ],
    });
    expect(model.requests[0]).toMatchObject({
      system: 'sys',
      lastUserText: 'remove test-2',
      toolResults: [{ name: 'resources_remove', output: 'removed 1' }],
    });
  });

  it.each([
    [
      'no x-api-key',
      { 'anthropic-version': '2023-06-01' },
      { model: 'c', max_tokens: 1, messages },
      401,
      'authentication_error',
      'x-api-key header is required',
    ],
    [
      'no anthropic-version',
      { 'x-api-key': 'k' },
      { model: 'c', max_tokens: 1, messages },
      400,
      'invalid_request_error',
      'anthropic-version: header is required',
    ],
    ['no max_tokens', undefined, { model: 'c', messages }, 400, 'invalid_request_error', 'max_tokens: Field required'],
  ])('refuses a request with %s as Anthropic does', async (_case, headers, body, status, type, message) => {
    expect(await anthropic(body, headers)).toEqual({ status, json: { type: 'error', error: { type, message } } });
  });
});

describe('OpenAI-compatible vendors', () => {
  const body = { model: 'm', messages: [{ role: 'user', content: 'add resource test-2 value 20' }], tools: openaiTools };

  it('Mistral: nine-character ids, "" beside tool calls, Bearer required', async () => {
    const { json } = await mistral(body);
    expect(json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: '' } });
    expect(json.choices[0].message.tool_calls[0].id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(model.requests[0]).toMatchObject({ provider: 'mistral', path: '/mistral/v1/chat/completions' });
    expect((await mistral(body, {})).status).toBe(401);
  });

  it('Mistral: refuses a history whose tool-call ids are not nine letters and digits', async () => {
    const history = {
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'resources_list', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: 'ok' },
      ],
    };
    const { status, json } = await mistral(history);
    expect(status).toBe(400);
    expect(json).toEqual({
      object: 'error',
      message: 'Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9.',
      type: 'invalid_function_call',
      param: null,
      code: '3280',
    });
  });

  it('Ollama: answers without any credentials', async () => {
    const { status, json } = await ollama(body);
    expect(status).toBe(200);
    expect(json).toMatchObject({ object: 'chat.completion', system_fingerprint: 'fp_ollama', choices: [{ finish_reason: 'tool_calls' }] });
    expect(json.choices[0].message.tool_calls[0].id).toMatch(/^call_[a-z0-9]{8}$/);
    expect(model.requests[0]).toMatchObject({
      provider: 'ollama',
      path: '/ollama/v1/chat/completions',
      headers: expect.not.objectContaining({ authorization: expect.anything() }),
    });
  });

  it('OpenRouter: gen- ids with the upstream provider, Bearer required, errors with a numeric code', async () => {
    model.setScript(() => ({ text: 'Hello.' }));
    const { json } = await openrouter(body);
    expect(json).toMatchObject({ provider: 'Anthropic', choices: [{ message: { content: 'Hello.' }, finish_reason: 'stop' }] });
    expect(json.id).toMatch(/^gen-/);
    expect(await openrouter(body, {})).toEqual({ status: 401, json: { error: { message: 'No auth credentials found', code: 401 } } });
  });
});

describe('scripted failures', () => {
  it('sends HTTP errors in the vendor error shape, or the given body', async () => {
    model.setScript(() => ({ httpStatus: 429 }));
    const geminiError = await gemini({ contents: [] });
    expect(geminiError).toEqual({ status: 429, json: { error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' } } });
    const openaiError = await openai({ model: 'gpt-4o', messages: [] });
    expect(openaiError.status).toBe(429);
    expect(openaiError.json.error).toMatchObject({ code: 'rate_limit_exceeded' });

    model.setScript(() => ({ httpStatus: 500, body: { custom: true } }));
    expect(await openai({ model: 'gpt-4o', messages: [] })).toEqual({ status: 500, json: { custom: true } });
  });

  it('sends the given message in the vendor error shape, and the given headers', async () => {
    model.setScript(() => ({ httpStatus: 429, message: 'slow down', headers: { 'retry-after': '7' } }));
    const response = await fetch(`${model.anthropicBaseUrl}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'c', max_tokens: 1, messages: [] }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    expect((await mistral({ model: 'm', messages: [] })).json).toEqual({
      object: 'error',
      message: 'slow down',
      type: 'rate_limited',
      param: null,
      code: null,
    });
  });

  it('waits delayMs before an HTTP answer', async () => {
    model.setScript(() => ({ httpStatus: 503, delayMs: 200 }));
    const { status } = await gemini({ contents: [] });
    expect(status).toBe(503);
  });

  it('answers a script that throws with a 500 naming the failure', async () => {
    model.setScript(() => {
      throw new Error('script bug');
    });
    const { status, json } = await openai({ model: 'gpt-4o', messages: [] });
    expect(status).toBe(500);
    expect(json.error.message).toBe('scripted model failed: script bug');
  });

  it('answers 404 off the vendor paths and 400 for a body that is not JSON', async () => {
    expect((await post(`${model.openaiBaseUrl}/responses`, {}, {})).status).toBe(404);
    expect((await gemini('{not json')).status).toBe(400);
    expect(model.requests).toHaveLength(0);
  });

  it('never answers a hanging request, and close() does not wait for it', async () => {
    const server = await startScriptedModel(() => ({ hang: true }));
    const abandoned = fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: '{}',
    }).then(
      () => 'answered',
      () => 'cut off',
    );
    await until('the request at the model', () => server.requests.length === 1);
    await server.close();
    // Cut off by the close: an answer would have been 'answered'.
    expect(await abandoned).toBe('cut off');
  });
});

/** A streamed answer: its content type, and each event as its name (when it has one) and parsed data. */
async function postStream(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; contentType: string | null; events: { event?: string; data: any }[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)![1]!;
      return { ...(event ? { event } : {}), data: data === '[DONE]' ? data : JSON.parse(data) };
    });
  return { status: response.status, contentType: response.headers.get('content-type'), events };
}

const STREAM_TEXT = 'Streams arrive word by word.';
const STREAM_CALLS = {
  text: 'Adding.',
  toolCalls: [
    { name: 'resources_add', args: { name: 'a', value: 1 } },
    { name: 'resources_list', args: {} },
  ],
};

describe('streamed answers', () => {
  it('Gemini: streamGenerateContent?alt=sse sends one response per piece, the last with STOP and usage', async () => {
    model.setScript(() => ({ text: STREAM_TEXT }));
    const { status, contentType, events } = await postStream(
      `${model.geminiBaseUrl}/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      { 'x-goog-api-key': 'k' },
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    );
    expect(status).toBe(200);
    expect(contentType).toBe('text/event-stream');
    const texts = events.map(({ data }) => data.candidates[0].content.parts[0].text);
    expect(texts.slice(0, -1)).toEqual(['Streams ', 'arrive ', 'word ', 'by ', 'word.']);
    expect(events.slice(0, -1).every(({ data }) => data.candidates[0].finishReason === undefined && data.usageMetadata === undefined)).toBe(
      true,
    );
    expect(events.at(-1)!.data).toMatchObject({
      candidates: [{ finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: expect.any(Number) },
    });
    expect(model.requests[0]).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent',
      query: '?alt=sse',
      stream: true,
      model: 'gemini-2.5-flash',
      streamEnd: 'complete',
    });
  });

  it('Gemini: streams function calls whole, and has no stream without alt=sse', async () => {
    model.setScript(() => STREAM_CALLS);
    const { events } = await postStream(
      `${model.geminiBaseUrl}/models/g:streamGenerateContent?alt=sse`,
      { 'x-goog-api-key': 'k' },
      { contents: [] },
    );
    expect(events.map(({ data }) => data.candidates[0].content.parts).find((parts) => parts[0].functionCall)).toEqual([
      { functionCall: { name: 'resources_add', args: { name: 'a', value: 1 } } },
      { functionCall: { name: 'resources_list', args: {} } },
    ]);
    expect((await post(`${model.geminiBaseUrl}/models/g:streamGenerateContent`, { 'x-goog-api-key': 'k' }, { contents: [] })).status).toBe(
      404,
    );
  });

  it('Anthropic: "stream": true gets named events, text_delta and input_json_delta fragments, then message_delta and message_stop', async () => {
    model.setScript(() => STREAM_CALLS);
    const { events } = await postStream(
      `${model.anthropicBaseUrl}/messages`,
      { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      { model: 'claude-sonnet-4-5', max_tokens: 10, stream: true, messages: [] },
    );
    expect(events.every(({ event, data }) => event === data.type)).toBe(true);
    expect(events.map(({ event }) => event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const blockOne = events.filter(({ data }) => data.index === 1);
    expect(blockOne[0]!.data.content_block).toMatchObject({
      type: 'tool_use',
      id: expect.stringMatching(/^toolu_/),
      name: 'resources_add',
      input: {},
    });
    expect(
      blockOne
        .filter(({ event }) => event === 'content_block_delta')
        .map(({ data }) => data.delta.partial_json)
        .join(''),
    ).toBe('{"name":"a","value":1}');
    expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: expect.any(Number) } });
    expect(model.requests[0]).toMatchObject({ stream: true, query: '' });
  });

  it('OpenAI: chat.completion.chunk deltas, arguments in fragments, usage only when asked, then [DONE]', async () => {
    model.setScript(() => STREAM_CALLS);
    const url = `${model.openaiBaseUrl}/chat/completions`;
    const asked = await postStream(
      url,
      { authorization: 'Bearer k' },
      { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [] },
    );
    const chunks = asked.events.slice(0, -1).map(({ data }) => data);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Adding.');
    const first = chunks.map((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]).filter((delta) => delta?.index === 0);
    expect(first[0]).toMatchObject({ id: expect.stringMatching(/^call_/), function: { name: 'resources_add', arguments: '' } });
    expect(first.map((delta) => delta.function.arguments).join('')).toBe('{"name":"a","value":1}');
    expect(first.length).toBeGreaterThan(2);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
    expect(asked.events.at(-1)!.data).toBe('[DONE]');

    const unasked = await postStream(url, { authorization: 'Bearer k' }, { model: 'gpt-4o', stream: true, messages: [] });
    expect(unasked.events.some(({ data }) => data.usage)).toBe(false);
  });

  it('Mistral: whole tool calls, and usage on the chunk with the finish reason', async () => {
    model.setScript(() => STREAM_CALLS);
    const { events } = await postStream(
      `${model.mistralBaseUrl}/chat/completions`,
      { authorization: 'Bearer k' },
      { model: 'm', stream: true, messages: [] },
    );
    const calls = events.flatMap(({ data }) => data.choices?.[0]?.delta.tool_calls ?? []);
    expect(calls.map((call: any) => [call.function.name, call.function.arguments])).toEqual([
      ['resources_add', '{"name":"a","value":1}'],
      ['resources_list', '{}'],
    ]);
    expect(calls.every((call: any) => /^[A-Za-z0-9]{9}$/.test(call.id))).toBe(true);
    expect(events.at(-2)!.data).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }], usage: { total_tokens: expect.any(Number) } });
  });

  it('answers a request that does not stream as before, and records that it did not', async () => {
    await openai({ model: 'gpt-4o', messages: [] });
    expect(model.requests[0]).toMatchObject({ stream: false, query: '' });
    expect(model.requests[0]?.streamEnd).toBeUndefined();
  });

  it('breaks a stream off with the vendor error event instead of its end', async () => {
    model.setScript(() => ({ text: 'Partial.', stream: { breakOff: { errorEvent: 'Overloaded' } } }));
    const anthropicStream = await postStream(
      `${model.anthropicBaseUrl}/messages`,
      { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      { model: 'c', max_tokens: 1, stream: true, messages: [] },
    );
    expect(anthropicStream.events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'Overloaded' } },
    });
    expect(anthropicStream.events.some(({ event }) => event === 'message_stop')).toBe(false);
    const openaiStream = await postStream(
      `${model.openaiBaseUrl}/chat/completions`,
      { authorization: 'Bearer k' },
      { model: 'gpt-4o', stream: true, messages: [] },
    );
    expect(openaiStream.events.at(-1)!.data).toEqual({ error: { message: 'Overloaded', type: 'server_error', param: null, code: null } });
    const geminiStream = await postStream(
      `${model.geminiBaseUrl}/models/g:streamGenerateContent?alt=sse`,
      { 'x-goog-api-key': 'k' },
      { contents: [] },
    );
    expect(geminiStream.events.at(-1)!.data).toEqual({ error: { code: 503, message: 'Overloaded', status: 'UNAVAILABLE' } });
  });

  it('drops the connection after the content when told to', async () => {
    model.setScript(() => ({ text: 'Partial.', stream: { breakOff: 'drop' } }));
    const response = await fetch(`${model.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [] }),
    });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow('terminated');
    expect(model.requests[0]?.streamEnd).toBe('dropped');
  });

  it('paces the events by delayMs, and notes a client that closes the stream before its end', async () => {
    model.setScript(() => ({ text: 'one two three four five six', stream: { delayMs: 100 } }));
    const aborter = new AbortController();
    const response = await fetch(`${model.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [] }),
      signal: aborter.signal,
    });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('"two ')) received += new TextDecoder().decode((await reader.read()).value);
    aborter.abort();
    await expect.poll(() => model.requests[0]?.streamEnd, { timeout: 2000 }).toBe('client-closed');
  });
});

describe('resourceAgentScript', () => {
  const ask = (lastUserText: string, tools = ['resources_list', 'resources_add', 'resources_remove']) =>
    resourceAgentScript({
      provider: 'openai',
      path: '/v1/chat/completions',
      model: 'm',
      system: '',
      lastUserText,
      toolResults: [],
      tools,
      headers: {},
      body: {},
    });

  it.each([
    ['List all resources', { toolCalls: [{ name: 'resources_list', args: {} }] }],
    ['show me what you have', { toolCalls: [{ name: 'resources_list', args: {} }] }],
    ['create a server my-test with value 42', { toolCalls: [{ name: 'resources_add', args: { name: 'my-test', value: 42 } }] }],
    ['add resource test-2 value 20', { toolCalls: [{ name: 'resources_add', args: { name: 'test-2', value: 20 } }] }],
    ['Make a resource list-2 with value 7', { toolCalls: [{ name: 'resources_add', args: { name: 'list-2', value: 7 } }] }],
    ['remove my-test', { toolCalls: [{ name: 'resources_remove', args: { pattern: '^my-test$' } }] }],
    ['Delete resource test-2', { toolCalls: [{ name: 'resources_remove', args: { pattern: '^test-2$' } }] }],
    ['what is the weather?', { text: 'I can list, add and remove resources.' }],
  ])('answers %j', async (text, expected) => {
    expect(await ask(text)).toEqual(expected);
  });

  it('says so when the tool it needs is not offered', async () => {
    expect(await ask('remove my-test', ['resources_list'])).toEqual({
      text: 'I would use the resources_remove tool, but it is not available to me.',
    });
  });

  it('reports tool results back with their outputs', async () => {
    const reply = await resourceAgentScript({
      provider: 'gemini',
      path: '',
      model: 'm',
      system: '',
      lastUserText: 'add x value 1',
      toolResults: [{ name: 'resources_add', output: 'Added resource x (value 1)' }],
      tools: [],
      headers: {},
      body: {},
    });
    expect(reply).toEqual({ text: 'Done. resources_add: Added resource x (value 1)' });
  });
});
