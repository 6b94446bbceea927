/**
 * Bad input, never a crash: each case gets a clear error and changes nothing.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, resourcesServer, startAgent, tempDir, TEST_GEMINI_KEY, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
let db: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  const dir = tempDir();
  db = join(dir, 'resources.db');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    dir,
    config: {
      mcp_servers: [
        resourcesServer(db),
        { name: 'fragile', command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/fragile-mcp-server.mjs')], timeout: '2s' },
      ],
      // A short model deadline so that the hanging-provider case ends quickly.
      llm: { model: 'gemini-2.5-flash', timeout: '2s', retry: { initial_backoff: '10ms', max_backoff: '50ms' } },
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

async function conversation(): Promise<string> {
  return (await post(`${agent.url}/conversations`, {})).body.conversation.id;
}

async function messageCount(id: string): Promise<number> {
  return (await get(`${agent.url}/conversations/${id}`)).body.conversation.messages.length;
}

describe('REST edge', () => {
  it('malformed JSON → 400', async () => {
    const id = await conversation();
    const response = await request(`${agent.url}/conversations/${id}/messages`, 'POST', '{"message": ');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/json/i);
    expect(await messageCount(id)).toBe(1);
  });

  it('empty or missing message → 400', async () => {
    const id = await conversation();
    for (const body of [{}, { message: '' }, { message: '   ' }, { message: 42 }]) {
      const response = await post(`${agent.url}/conversations/${id}/messages`, body);
      expect(response.status).toBe(400);
      expect(typeof response.body.error).toBe('string');
    }
    expect((await post(`${agent.url}/conversations`, { message: '' })).status).toBe(400);
    expect(await messageCount(id)).toBe(1);
  });

  it('unknown conversation → 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await get(`${agent.url}/conversations/${id}`)).status).toBe(404);
      const response = await post(`${agent.url}/conversations/${id}/messages`, { message: 'list' });
      expect(response.status).toBe(404);
      expect(response.body.error).toContain('not found');
    }
  });

  it('unknown approval → 404', async () => {
    const response = await post(`${agent.url}/approvals/00000000-0000-4000-8000-000000000000`, { approved: true });
    expect(response.status).toBe(404);
    expect(response.body.error).toContain('not found');
  });

  it('an approval body that says neither yes nor no → 400, and the approval still waits', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'add resource undecided with value 1' });
    const uuid = created.body.result.approval.uuid;
    for (const body of [{}, { answer: 'maybe' }, { action: 'later' }, { approved: 'yes' }, 'null']) {
      const response = await post(`${agent.url}/approvals/${uuid}`, body);
      expect(response.status).toBe(400);
    }
    const after = await get(`${agent.url}/conversations/${created.body.conversation.id}`);
    expect(after.body.conversation.status).toBe('waiting_approval');
    expect(resourceNames(db)).not.toContain('undecided');
  });

  // Bodies are strict — a misspelt or unknown field is refused by name, not silently ignored.
  it('a body field the route does not take → 400 naming it, and nothing happens (REST and tRPC)', async () => {
    const id = await conversation();
    const misspelt = await post(`${agent.url}/conversations/${id}/messages`, { mesage: 'add resource typo with value 1' });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.error).toBe('unknown field "mesage"; expected {"message": "<non-empty text>"}');
    const extra = await post(`${agent.url}/conversations`, { message: 'add resource extra with value 1', temperature: 0 });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatch(/^unknown field "temperature"; /);

    const created = await post(`${agent.url}/conversations`, { message: 'add resource strict with value 1' });
    const uuid = created.body.result.approval.uuid;
    const decision = await post(`${agent.url}/approvals/${uuid}`, { approved: true, comment: 'fine' });
    expect(decision.status).toBe(400);
    expect(decision.body.error).toMatch(/^unknown field "comment"; expected /);

    const trpc = await post(`${agent.url}/trpc/approvals.resolve`, { uuid, approved: true, note: 'fine' });
    expect(trpc.status).toBe(400);
    expect(trpc.body.error).toMatchObject({ message: 'unknown field "note"', data: { code: 'BAD_REQUEST', httpStatus: 400 } });

    expect(await messageCount(id)).toBe(1);
    expect((await get(`${agent.url}/conversations/${created.body.conversation.id}`)).body.conversation.status).toBe('waiting_approval');
    for (const name of ['typo', 'extra', 'strict']) expect(resourceNames(db)).not.toContain(name);
  });

  it('a body over 1 MB → 413', async () => {
    const id = await conversation();
    const response = await post(`${agent.url}/conversations/${id}/messages`, { message: 'x'.repeat(1_100_000) });
    expect(response.status).toBe(413);
    expect(await messageCount(id)).toBe(1);
  });
});

describe('model mistakes are reported in the conversation and nothing runs', () => {
  it('an unknown tool', async () => {
    model.setScript((r) => (r.toolResults.length ? { text: 'ok' } : { toolCalls: [{ name: 'drop_database', args: {} }] }));
    try {
      const id = await conversation();
      const body = (await post(`${agent.url}/conversations/${id}/messages`, { message: 'anything' })).body;
      const result = body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call).toMatchObject({ name: 'drop_database', is_error: true });
      expect(result.content).toContain('unknown tool');
      expect(body.result.waiting_approval).toBe(false);
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('arguments that fail the schema', async () => {
    model.setScript((r) =>
      r.toolResults.length ? { text: 'ok' } : { toolCalls: [{ name: 'resources_add', args: { name: 'bad-args', value: 'ten' } }] },
    );
    try {
      const id = await conversation();
      const body = (await post(`${agent.url}/conversations/${id}/messages`, { message: 'anything' })).body;
      expect(body.result.waiting_approval).toBe(false);
      const result = body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call.is_error).toBe(true);
      expect(result.content).toMatch(/invalid arguments for resources_add/);
      expect(resourceNames(db)).not.toContain('bad-args');
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('arguments that are not JSON (an OpenAI-family model, whose arguments travel as a string)', async () => {
    model.setScript((r) => (r.toolResults.length ? { text: 'ok' } : { toolCalls: [{ name: 'resources_add', args: '{"name": "half' }] }));
    const openai = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { llm: { model: 'openai-gpt-4o-mini', retry: { initial_backoff: '10ms' } } },
      env: { OPENAI_BASE_URL: model.openaiBaseUrl, OPENAI_API_KEY: 'test-openai-key-0a1b2c3d4e5f' },
    });
    try {
      const body = (await post(`${openai.url}/conversations`, { message: 'anything' })).body;
      const last = model.requests.at(-1)!;
      expect(last.provider).toBe('openai');
      expect(last.model).toBe('gpt-4o-mini');
      const result = body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call).toMatchObject({ name: 'resources_add', is_error: true });
      expect(result.content).toMatch(/the arguments must be valid JSON/);
      expect(body.result.waiting_approval).toBe(false);
      expect(body.conversation.status).toBe('active');
      expect(resourceNames(join(openai.dir, 'resources.db'))).toEqual([]);
    } finally {
      model.setScript(resourceAgentScript);
      await openai.stop();
    }
  });
});

describe('failures outside the mesh', () => {
  it('an MCP server that crashes mid-call: error in the conversation, the service keeps serving', async () => {
    model.setScript((r) =>
      r.toolResults.length ? { text: `result: ${r.toolResults[0]!.output}` } : { toolCalls: [{ name: 'crash_now', args: {} }] },
    );
    try {
      const id = await conversation();
      const body = (await post(`${agent.url}/conversations/${id}/messages`, { message: 'crash' })).body;
      const result = body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call).toMatchObject({ name: 'crash_now', is_error: true });
      expect(result.content).toMatch(/fragile/);
    } finally {
      model.setScript(resourceAgentScript);
    }
    // The other server still works, and the crashed one is started again on the next call.
    const listed = await post(`${agent.url}/conversations`, { message: 'list resources' });
    expect(listed.body.result.waiting_approval).toBe(false);
    model.setScript((r) =>
      r.toolResults.length
        ? { text: `result: ${r.toolResults[0]!.output}` }
        : { toolCalls: [{ name: 'echo', args: { text: 'back again' } }] },
    );
    try {
      const echoed = await post(`${agent.url}/conversations`, { message: 'echo' });
      expect(echoed.body.result.response).toBe('result: back again');
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('an MCP server that hangs: the call times out with a clear error', async () => {
    model.setScript((r) =>
      r.toolResults.length ? { text: `result: ${r.toolResults[0]!.output}` } : { toolCalls: [{ name: 'never_answers', args: {} }] },
    );
    try {
      const body = (await post(`${agent.url}/conversations`, { message: 'hang' })).body;
      const result = body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call.is_error).toBe(true);
      expect(result.content).toMatch(/within|deadline|timed? ?out/i);
      expect((await get(`${agent.url}/health`)).status).toBe(200);
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('an LLM error: a message in the conversation, without the key, and the conversation stays usable', async () => {
    model.setScript(() => ({
      httpStatus: 503,
      body: { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } },
    }));
    let id: string;
    try {
      const created = await post(`${agent.url}/conversations`, { message: 'list resources' });
      expect(created.status).toBe(201);
      id = created.body.conversation.id;
      expect(created.body.result.response).toMatch(/^The model could not answer \(transient error\): /);
      expect(JSON.stringify(created.body)).not.toContain(TEST_GEMINI_KEY);
      expect(created.body.conversation.status).toBe('active');
    } finally {
      model.setScript(resourceAgentScript);
    }
    const next = await post(`${agent.url}/conversations/${id!}/messages`, { message: 'list resources' });
    expect(next.status).toBe(200);
    expect(next.body.result.response).toContain('resources_list');
  });
});

describe('provider failures (bad input)', () => {
  it('a provider that hangs: the call times out, the conversation says so and stays usable', async () => {
    model.setScript(() => ({ hang: true }));
    let id: string;
    try {
      const created = await post(`${agent.url}/conversations`, { message: 'list resources' });
      expect(created.status).toBe(201);
      id = created.body.conversation.id;
      expect(created.body.result.response).toMatch(/model gemini-2\.5-flash did not answer within 2s/);
      expect(created.body.conversation.status).toBe('active');
    } finally {
      model.setScript(resourceAgentScript);
    }
    const next = await post(`${agent.url}/conversations/${id!}/messages`, { message: 'list resources' });
    expect(next.body.result.response).toContain('resources_list');
  });

  it('a malformed provider reply: a clear error in the conversation', async () => {
    model.setScript(() => ({ httpStatus: 200, body: '{"candidates": [ this is not json' }));
    try {
      const created = await post(`${agent.url}/conversations`, { message: 'list resources' });
      expect(created.status).toBe(201);
      expect(created.body.result.response).toMatch(/^The model could not answer \(internal error\): /);
      expect(created.body.result.response).toMatch(/gemini/i);
      expect(created.body.conversation.status).toBe('active');
    } finally {
      model.setScript(resourceAgentScript);
    }
  });
});

describe('a missing API key', () => {
  it('warns at startup naming the models, and fails on first use without calling the API', async () => {
    const keyless = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: { GEMINI_API_KEY: null } });
    try {
      expect(keyless.output()).toMatch(/GEMINI_API_KEY.*gemini-2\.5-flash/);
      const before = model.requests.length;
      const created = await post(`${keyless.url}/conversations`, { message: 'list resources' });
      expect(created.status).toBe(201);
      expect(created.body.result.response).toMatch(/^The model could not answer \(provider error\): GEMINI_API_KEY is not set/);
      // An error, not an answer: the result and the stored message say so.
      expect(created.body.result.is_error).toBe(true);
      expect(created.body.conversation.messages.at(-1)).toMatchObject({ role: 'assistant', is_error: true });
      expect(model.requests.length).toBe(before);
    } finally {
      await keyless.stop();
    }
  });
});
