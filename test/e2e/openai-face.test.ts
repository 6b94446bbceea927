/**
 * The OpenAI-compatible face, end to end: the real mesh (`bin/asg up`), the
 * real mcp-resources server over stdio, a scripted model speaking Gemini's wire format, and the
 * official `openai` npm client at the gateway's /v1: chat.completions.create streaming and not,
 * a destructive request that stops for an approval decided with POST /approvals/:uuid, a chat
 * client that resends its whole history with no conversation id and goes on in one
 * conversation (its own, never someone else's), token usage, errors as the client's APIError
 * classes, and authentication refused in OpenAI's shape.
 */
import { join } from 'node:path';
import OpenAI, { APIError, AuthenticationError, BadRequestError, NotFoundError, PermissionDeniedError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { tokenAuth } from '../support/token-auth.js';

const MODEL = 'test-agent';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

let model: ScriptedModelServer;
let agent: AgentProcess;
let db: string;
let client: OpenAI;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  db = join(agent.dir, 'resources.db');
  client = new OpenAI({ apiKey: 'not-checked-without-auth', baseURL: `${agent.url}/v1`, maxRetries: 0, timeout: 60_000 });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

const count = (name: string) => resourceNames(db).filter((candidate) => candidate === name).length;

async function toolMessages(conversationId: string, tool: string): Promise<unknown[]> {
  const { body } = await get(`${agent.url}/conversations/${conversationId}`);
  return body.conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call?.name === tool);
}

/** The error a call failed with: it must fail. */
async function failure(call: Promise<unknown>): Promise<APIError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe('GET /v1/models', () => {
  it('lists the agent as the one model, and retrieves it by id', async () => {
    const models: OpenAI.Models.Model[] = [];
    for await (const entry of client.models.list()) models.push(entry);
    expect(models).toEqual([{ id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'agent-stop-and-go' }]);
    expect(await client.models.retrieve(MODEL)).toMatchObject({ id: MODEL, object: 'model' });
    const missing = await failure(client.models.retrieve('gpt-4o'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe('model_not_found');
  });
});

describe('chat.completions.create', () => {
  it('answers without streaming, in a new conversation whose id comes back in a header and a field', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'list all resources' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(MODEL);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.choices[0]!.message.role).toBe('assistant');
    expect(data.choices[0]!.message.content).toMatch(/^Done\. resources_list: /);
    const conversationId = (data as unknown as { conversation_id: string }).conversation_id;
    expect(conversationId).toMatch(UUID);
    expect(response.headers.get('x-conversation-id')).toBe(conversationId);
    expect(await toolMessages(conversationId, 'resources_list')).toHaveLength(1);
  });

  it('streams chat.completion.chunk objects that add up to the answer, ending with data: [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'list all resources' }],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]!.id)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const last = chunks.at(-1)!;
    expect(last.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices[0]!.finish_reason === null)).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('');
    expect(text).toMatch(/^Done\. resources_list: /);
    const conversationId = (last as unknown as { conversation_id: string }).conversation_id;
    expect(await toolMessages(conversationId, 'resources_list')).toHaveLength(1);

    // The wire itself: SSE data lines, the last one [DONE].
    const raw = await fetch(`${agent.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], stream: true }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await raw.text();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = body.split('\n\n').filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]');
    const said = events.map((event) => JSON.parse(event.slice('data: '.length)).choices[0].delta.content ?? '').join('');
    expect(said).toBe('I can list, add and remove resources.');
  });

  it('continues the conversation named by "user" or by the X-Conversation-Id header; the last user message is the input', async () => {
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] });
    const conversationId = (first as unknown as { conversation_id: string }).conversation_id;
    const byUser = await client.chat.completions.create({
      model: MODEL,
      user: conversationId,
      messages: [
        { role: 'system', content: 'ignored: the agent has its own prompt' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: [{ type: 'text', text: 'list all resources' }] },
      ],
    });
    expect((byUser as unknown as { conversation_id: string }).conversation_id).toBe(conversationId);
    const byHeader = await client.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'list all resources' }] },
      { headers: { 'X-Conversation-Id': conversationId } },
    );
    expect((byHeader as unknown as { conversation_id: string }).conversation_id).toBe(conversationId);
    const { body } = await get(`${agent.url}/conversations/${conversationId}`);
    expect(body.conversation.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual([
      'hello',
      'list all resources',
      'list all resources',
    ]);
  });
});

/** How many conversations the agent holds, by its own count. */
async function conversationCount(url: string, headers: Record<string, string> = {}): Promise<number> {
  const { status, body } = await get(`${url}/conversations?limit=1`, headers);
  expect(status).toBe(200);
  return body.summary.total;
}

const conversationOf = (answer: unknown) => (answer as { conversation_id: string }).conversation_id;

/** The text of every model request's body since `from`, to see what history the model was given. */
const modelSaw = (from: number) => model.requests.slice(from).map((request) => JSON.stringify(request.body));

describe('a chat client that resends the whole history, with no conversation id', () => {
  it('goes on in the same conversation: one conversation stored, the model sees the earlier turns, usage counted, one approval line', async () => {
    const before = await conversationCount(agent.url);
    const opening = 'hello, history test';
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: opening }] });
    const conversationId = conversationOf(first);
    const answer = first.choices[0]!.message.content!;
    expect(first.usage!.total_tokens).toBeGreaterThan(0);

    const asked = model.requests.length;
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: opening },
        { role: 'assistant', content: answer },
        { role: 'user', content: 'list all resources' },
      ],
    });
    expect(conversationOf(second)).toBe(conversationId);
    expect(await conversationCount(agent.url)).toBe(before + 1);
    // The model was given the earlier turn with the new one.
    const seen = modelSaw(asked);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((body) => body.includes(opening) && body.includes(answer) && body.includes('list all resources'))).toBe(true);
    // usage: the tokens of this turn's model calls, as the provider counted them.
    const usage = second.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);

    // The third message asks for a destructive call: the approval is named once, in the same conversation.
    const third = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: opening },
        { role: 'assistant', content: answer },
        { role: 'user', content: 'list all resources' },
        // A client may trim or re-wrap what it shows: white space does not count.
        { role: 'assistant', content: `  ${second.choices[0]!.message.content!.replaceAll('\n', '\n\n')}  ` },
        { role: 'user', content: 'add resource oa-history with value 7' },
      ],
    });
    expect(conversationOf(third)).toBe(conversationId);
    const content = third.choices[0]!.message.content!;
    expect(content.match(/Approval required/g)).toHaveLength(1);
    expect(
      content.match(new RegExp(`Approval required \\(id: ${(third as unknown as { approval: { uuid: string } }).approval.uuid}\\)`, 'g')),
    ).toHaveLength(1);
    expect(await conversationCount(agent.url)).toBe(before + 1);
    expect(count('oa-history')).toBe(0);
    expect(
      (await post(`${agent.url}/approvals/${(third as unknown as { approval: { uuid: string } }).approval.uuid}`, { approved: false }))
        .status,
    ).toBe(200);

    const { body } = await get(`${agent.url}/conversations/${conversationId}`);
    expect(body.conversation.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual([
      opening,
      'list all resources',
      'add resource oa-history with value 7',
    ]);
  });

  it('a history that is not the latest of a conversation (an edited message) starts a new conversation', async () => {
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello, edit test' }] });
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'hello, edit test' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'hello again' },
      ],
    });
    expect(conversationOf(second)).toBe(conversationOf(first));
    const edited = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'hello, edited test' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'hello again' },
      ],
    });
    expect(conversationOf(edited)).not.toBe(conversationOf(first));
  });

  it('streaming: the answer as streamed is the history that continues; usage comes in a last chunk when asked for', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello, stream history test' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    const next = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'hello, stream history test' },
        { role: 'assistant', content: text },
        { role: 'user', content: 'add resource oa-stream-history with value 1' },
      ],
      stream: true,
    });
    const more: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of next) more.push(chunk);
    expect(conversationOf(more.at(-1))).toBe(conversationOf(last));
    const said = more.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(said.match(/Approval required/g)).toHaveLength(1);
    const uuid = (more.at(-1) as unknown as { approval: { uuid: string } }).approval.uuid;
    expect((await post(`${agent.url}/approvals/${uuid}`, { approved: false })).status).toBe(200);
  });
});

describe('stop → approve over REST → go', () => {
  it('answers a destructive request with the approval UUID; POST /approvals/:uuid runs the call once', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'add resource oa-1 with value 3' }],
    });
    const extra = completion as unknown as { conversation_id: string; approval: { uuid: string; tool_name: string; tool_args: unknown } };
    const content = completion.choices[0]!.message.content!;
    const uuid = /Approval required \(id: ([0-9a-f-]{36})\)/.exec(content)?.[1];
    expect(uuid).toMatch(UUID);
    expect(content).toContain(`POST /approvals/${uuid}`);
    expect(content).toContain('Tool: resources_add');
    expect(content.match(/Approval required/g)).toHaveLength(1);
    expect(extra.approval).toMatchObject({
      uuid,
      conversation_id: extra.conversation_id,
      tool_name: 'resources_add',
      tool_args: { name: 'oa-1', value: 3 },
    });
    expect(count('oa-1')).toBe(0);

    // Asking again while it waits runs nothing and names the same approval.
    const again = await client.chat.completions.create({
      model: MODEL,
      user: extra.conversation_id,
      messages: [{ role: 'user', content: 'list all resources' }],
    });
    expect((again as unknown as { approval: { uuid: string } }).approval.uuid).toBe(uuid);

    const decided = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    expect(decided.status).toBe(200);
    expect(count('oa-1')).toBe(1);
    expect((await post(`${agent.url}/approvals/${uuid}`, { approved: true })).status).toBe(409);

    const next = await client.chat.completions.create({
      model: MODEL,
      user: extra.conversation_id,
      messages: [{ role: 'user', content: 'list all resources' }],
    });
    expect(next.choices[0]!.message.content).toContain('oa-1');
    expect((next as unknown as { approval?: unknown }).approval).toBeUndefined();
    expect(await toolMessages(extra.conversation_id, 'resources_add')).toHaveLength(1);
    expect(count('oa-1')).toBe(1);
  });

  it('streaming: the last chunk carries the approval, and the text names it', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'add resource oa-2 with value 4' }],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)! as unknown as { approval: { uuid: string }; conversation_id: string; choices: { finish_reason: string }[] };
    expect(last.choices[0]!.finish_reason).toBe('stop');
    const text = chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('');
    expect(text).toContain(`Approval required (id: ${last.approval.uuid})`);
    expect(text.match(/Approval required/g)).toHaveLength(1);
    expect(count('oa-2')).toBe(0);
    expect((await post(`${agent.url}/approvals/${last.approval.uuid}`, { approved: false, reason: 'not now' })).status).toBe(200);
    expect(count('oa-2')).toBe(0);
    expect(await toolMessages(last.conversation_id, 'resources_add')).toHaveLength(1);
  });
});

describe("errors in OpenAI's shape", () => {
  it('an unknown model is a NotFoundError naming the model', async () => {
    const error = await failure(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ type: 'not_found_error', param: 'model', code: 'model_not_found' });
    expect(error.message).toContain('test-agent');
  });

  it('an unknown field is a BadRequestError naming it; the standard fields are accepted', async () => {
    const error = await failure(
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], colour: 'blue' } as never),
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'colour' });
    expect(error.message).toContain('"colour"');
    const ok = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello' }],
      temperature: 0.2,
      top_p: 1,
      max_tokens: 100,
      presence_penalty: 0,
      stream: false,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    });
    expect(ok.choices[0]!.message.content).toBe('I can list, add and remove resources.');
  });

  it('a request without a user message, bad JSON, an unknown conversation: 400, 400, 404', async () => {
    const noUser = await failure(
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'only a prompt' }] }),
    );
    expect(noUser.status).toBe(400);
    expect(noUser.error).toMatchObject({ param: 'messages' });
    const malformed = await request(`${agent.url}/v1/chat/completions`, 'POST', '{"model": ', {});
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('malformed JSON') });
    const unknown = await failure(
      client.chat.completions.create(
        { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'X-Conversation-Id': '00000000-0000-4000-8000-000000000000' } },
      ),
    );
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown.error).toMatchObject({ type: 'not_found_error' });
    const route = await get(`${agent.url}/v1/embeddings`);
    expect(route.status).toBe(404);
    expect(route.body.error).toMatchObject({ type: 'not_found_error', code: 'unknown_url' });
  });
});

describe('with authentication', () => {
  let secured: AgentProcess;
  const tokens = tokenAuth({
    writer: { token: 'openai-e2e-writer-6a1f0c9e', roles: ['chat'] },
    other: { token: 'openai-e2e-other-9c4e1d7b', roles: ['chat'] },
    boss: { token: 'openai-e2e-boss-5f3a8b2c', roles: ['admin'] },
    auditor: { token: 'openai-e2e-auditor-2b7d5e3a', roles: ['approve'] },
  });

  beforeAll(async () => {
    secured = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: tokens.config, env: tokens.env });
  });

  afterAll(async () => {
    await secured?.stop();
  });

  const clientWith = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${secured.url}/v1`, maxRetries: 0, timeout: 60_000 });

  it("a wrong key is an AuthenticationError (401) in OpenAI's shape; a chat token talks", async () => {
    const refused = await failure(
      clientWith('wrong-key').chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
    );
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused.status).toBe(401);
    expect(refused.error).toMatchObject({
      type: 'authentication_error',
      code: 'invalid_api_key',
      param: null,
      message: expect.any(String),
    });
    expect(refused.headers?.get('www-authenticate')).toMatch(/^Bearer /);
    expect(JSON.stringify(refused.error)).not.toContain('wrong-key');

    const models = await failure(clientWith('wrong-key').models.retrieve(MODEL));
    expect(models).toBeInstanceOf(AuthenticationError);

    const wrongRole = await failure(
      clientWith('openai-e2e-auditor-2b7d5e3a').chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
    );
    expect(wrongRole).toBeInstanceOf(PermissionDeniedError);
    expect(wrongRole.error).toMatchObject({ type: 'permission_error' });

    const answer = await clientWith('openai-e2e-writer-6a1f0c9e').chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(answer.choices[0]!.message.content).toBe('I can list, add and remove resources.');
  });

  it("a resent history continues only the caller's own conversation: another chat principal, or an admin, gets a new one", async () => {
    const writer = clientWith('openai-e2e-writer-6a1f0c9e');
    const first = await writer.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello, owner test' }] });
    const history = [
      { role: 'user' as const, content: 'hello, owner test' },
      { role: 'assistant' as const, content: first.choices[0]!.message.content },
      { role: 'user' as const, content: 'hello again' },
    ];
    const stranger = await clientWith('openai-e2e-other-9c4e1d7b').chat.completions.create({ model: MODEL, messages: history });
    expect(conversationOf(stranger)).not.toBe(conversationOf(first));
    const admin = await clientWith('openai-e2e-boss-5f3a8b2c').chat.completions.create({ model: MODEL, messages: history });
    expect(conversationOf(admin)).not.toBe(conversationOf(first));
    expect(conversationOf(admin)).not.toBe(conversationOf(stranger));
    const own = await writer.chat.completions.create({ model: MODEL, messages: history });
    expect(conversationOf(own)).toBe(conversationOf(first));
  });
});
