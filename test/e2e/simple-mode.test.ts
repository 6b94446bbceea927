/**
 * Simple mode end to end: the real mesh (`bin/asg up`), the real mcp-resources
 * server over stdio, and a scripted model speaking Gemini's wire format over HTTP.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
let db: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  db = join(agent.dir, 'resources.db');
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

async function createConversation(message?: string) {
  const response = await post(`${agent.url}/conversations`, message === undefined ? undefined : { message });
  expect(response.status).toBe(201);
  return response.body;
}

async function send(id: string, message: string) {
  const response = await post(`${agent.url}/conversations/${id}/messages`, { message });
  expect(response.status).toBe(200);
  return response.body;
}

async function decide(uuid: string, body: unknown) {
  return post(`${agent.url}/approvals/${uuid}`, body);
}

describe('startup', () => {
  it('answers /health', async () => {
    const response = await get(`${agent.url}/health`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('lists the MCP tools with their destructiveHint and server', async () => {
    const response = await get(`${agent.url}/tools`);
    expect(response.status).toBe(200);
    const byName = Object.fromEntries(response.body.tools.map((tool: any) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(['resources_add', 'resources_list', 'resources_remove']);
    expect(byName.resources_add).toMatchObject({ destructiveHint: true, server: 'resources' });
    expect(byName.resources_remove).toMatchObject({ destructiveHint: true, server: 'resources' });
    expect(byName.resources_list).toMatchObject({ destructiveHint: false, server: 'resources' });
    expect(byName.resources_add.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['name', 'value']) });
    expect(typeof byName.resources_add.description).toBe('string');
  });
});

describe('create conversation', () => {
  it('creates an empty conversation with the system prompt', async () => {
    const body = await createConversation();
    expect(body.result).toBeUndefined();
    const c = body.conversation;
    expect(c.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.session_id).toMatch(/^[0-9a-f]{8}$/);
    expect(c.status).toBe('active');
    expect(c.messages).toHaveLength(1);
    expect(c.messages[0]).toMatchObject({ role: 'system', content: 'You manage resources.' });
    expect(Date.parse(c.created_at)).not.toBeNaN();
    expect(Date.parse(c.updated_at)).not.toBeNaN();
  });

  it('processes an initial message at once', async () => {
    const body = await createConversation('list resources');
    expect(body.result.waiting_approval).toBe(false);
    const roles = body.conversation.messages.map((m: any) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    const tool = body.conversation.messages[3];
    expect(tool.tool_call).toMatchObject({ name: 'resources_list', is_error: false });
  });
});

describe('non-destructive tool', () => {
  it('runs resources_list at once and records call and result', async () => {
    const { conversation } = await createConversation();
    const body = await send(conversation.id, 'list all resources');
    expect(body.result.waiting_approval).toBe(false);
    expect(body.result.approval).toBeUndefined();
    expect(body.result.response).toContain('resources_list');
    expect(body.conversation.status).toBe('active');
    const call = body.conversation.messages.find((m: any) => m.role === 'assistant' && m.tool_call);
    expect(call.tool_call).toMatchObject({ name: 'resources_list', arguments: {} });
    const result = body.conversation.messages.find((m: any) => m.role === 'tool');
    expect(result.tool_call.result).toBeTypeOf('string');
    // Without an agent tree nothing is tagged with a node.
    expect(body.conversation.messages.some((m: any) => 'node' in m)).toBe(false);
    // The history the model saw on its second call contained the tool result.
    expect(model.requests.some((r) => r.toolResults.some((t) => t.name === 'resources_list'))).toBe(true);
  });

  it('lets the model call tools several times in one turn', async () => {
    const seen = new Map<string, number>();
    model.setScript((request) => {
      if (request.lastUserText !== 'count twice') return resourceAgentScript(request);
      const calls = (seen.get('n') ?? 0) + 1;
      seen.set('n', calls);
      return calls <= 2 ? { toolCalls: [{ name: 'resources_list', args: {} }] } : { text: `listed ${calls - 1} times` };
    });
    try {
      const { conversation } = await createConversation();
      const body = await send(conversation.id, 'count twice');
      expect(body.result.response).toBe('listed 2 times');
      expect(body.conversation.messages.filter((m: any) => m.role === 'tool')).toHaveLength(2);
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('stops a turn after chat.max_llm_iterations model calls', async () => {
    model.setScript((request) =>
      request.lastUserText === 'loop forever' ? { toolCalls: [{ name: 'resources_list', args: {} }] } : resourceAgentScript(request),
    );
    try {
      const before = model.requests.length;
      const { conversation } = await createConversation();
      const body = await send(conversation.id, 'loop forever');
      expect(model.requests.length - before).toBe(10);
      expect(body.result.response).toContain('max_llm_iterations');
      expect(body.conversation.status).toBe('active');
    } finally {
      model.setScript(resourceAgentScript);
    }
  });
});

describe('destructive tool with approval', () => {
  it('stops before resources_add and goes on after approval', async () => {
    const { conversation } = await createConversation();
    const stop = await send(conversation.id, 'create a server my-test with value 42');
    expect(stop.result.waiting_approval).toBe(true);
    const approval = stop.result.approval;
    expect(approval.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(approval).toMatchObject({
      conversation_id: conversation.id,
      tool_name: 'resources_add',
      tool_args: { name: 'my-test', value: 42 },
    });
    expect(approval.description).toContain('resources_add');
    expect(stop.result.response).toContain(approval.uuid);
    expect(stop.conversation.status).toBe('waiting_approval');
    expect(stop.conversation.pending_approval.uuid).toBe(approval.uuid);
    expect(resourceNames(db)).not.toContain('my-test');

    const fetched = await get(`${agent.url}/conversations/${conversation.id}`);
    expect(fetched.body.conversation.status).toBe('waiting_approval');
    expect(fetched.body.conversation.pending_approval).toMatchObject({ uuid: approval.uuid, tool_name: 'resources_add' });

    const go = await decide(approval.uuid, { answer: 'yes' });
    expect(go.status).toBe(200);
    expect(go.body.result.waiting_approval).toBe(false);
    expect(go.body.result.response).toContain('my-test');
    expect(go.body.conversation.status).toBe('active');
    expect(go.body.conversation.pending_approval).toBeUndefined();
    expect(resourceNames(db).filter((name) => name === 'my-test')).toHaveLength(1);
    const toolMessage = go.body.conversation.messages.find((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_add');
    expect(toolMessage.tool_call).toMatchObject({ arguments: { name: 'my-test', value: 42 }, is_error: false });
  });
});

describe('natural language variations', () => {
  const cases: [string, string][] = [
    ['list', 'resources_list'],
    ['show me all resources', 'resources_list'],
    ['create a server test-1 with value 10', 'resources_add'],
    ['add resource test-2 value 20', 'resources_add'],
    ['remove test-1', 'resources_remove'],
    ['delete resource test-2', 'resources_remove'],
  ];
  it.each(cases)('"%s" calls %s', async (message, tool) => {
    const { conversation } = await createConversation();
    const body = await send(conversation.id, message);
    const call = body.conversation.messages.find((m: any) => m.role === 'assistant' && m.tool_call);
    expect(call.tool_call.name).toBe(tool);
    if (tool === 'resources_add')
      expect(body.result.approval.tool_args).toEqual(
        message.includes('test-1') ? { name: 'test-1', value: 10 } : { name: 'test-2', value: 20 },
      );
    if (tool !== 'resources_list') {
      expect(body.result.waiting_approval).toBe(true);
      expect((await decide(body.result.approval.uuid, { approved: false })).status).toBe(200);
    }
  });
});

describe('approval rejection', () => {
  it('cancels the call and leaves the conversation active', async () => {
    const { conversation } = await createConversation();
    const stop = await send(conversation.id, 'add resource rejected-one with value 7');
    const reject = await decide(stop.result.approval.uuid, { answer: 'no' });
    expect(reject.status).toBe(200);
    // The answer says the operation was cancelled, then what the model made of the "no".
    expect(reject.body.result.waiting_approval).toBe(false);
    expect(reject.body.result.response).toMatch(/^Operation cancelled by user\.\n\nDone\. resources_add: Rejected by a human\./);
    expect(reject.body.conversation.status).toBe('active');
    expect(resourceNames(db)).not.toContain('rejected-one');
    const result = reject.body.conversation.messages.findLast((m: any) => m.role === 'tool');
    expect(result).toMatchObject({
      role: 'tool',
      content: 'Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.',
      tool_call: { name: 'resources_add', is_error: true, rejected: true },
    });
    // The conversation goes on normally afterwards.
    const next = await send(conversation.id, 'list resources');
    expect(next.result.waiting_approval).toBe(false);
  });
});

describe('approval formats', () => {
  it.each([
    ['approved', { approved: true }],
    ['action', { action: 'approve' }],
    ['answer', { answer: 'yes' }],
  ])('approves with the %s format', async (label, body) => {
    const name = `format-${label}`;
    const { conversation } = await createConversation();
    const stop = await send(conversation.id, `add resource ${name} with value 1`);
    const go = await decide(stop.result.approval.uuid, body);
    expect(go.status).toBe(200);
    expect(go.body.conversation.status).toBe('active');
    expect(resourceNames(db)).toContain(name);
  });
});

describe('a message to a waiting conversation', () => {
  it('is not processed and returns the pending approval', async () => {
    const { conversation } = await createConversation();
    const stop = await send(conversation.id, 'add resource waiting-one with value 3');
    const requestsBefore = model.requests.length;
    const again = await post(`${agent.url}/conversations/${conversation.id}/messages`, { message: 'list resources' });
    expect(again.status).toBe(200);
    expect(again.body.result.waiting_approval).toBe(true);
    expect(again.body.result.approval.uuid).toBe(stop.result.approval.uuid);
    expect(again.body.conversation.messages).toHaveLength(stop.conversation.messages.length);
    expect(model.requests.length).toBe(requestsBefore);
  });
});

describe('list conversations', () => {
  it('pages newest first with a status summary that counts every conversation', async () => {
    const waiting = await createConversation('add resource listed-one with value 2');
    const active = await createConversation();
    const first = await get(`${agent.url}/conversations?limit=1`);
    expect(first.status).toBe(200);
    expect(first.body.conversations.map((c: any) => c.id)).toEqual([active.conversation.id]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await get(`${agent.url}/conversations?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.conversations.map((c: any) => c.id)).toEqual([waiting.conversation.id]);
    expect(second.body.conversations[0].pending_approval.uuid).toBe(waiting.result.approval.uuid);
    const { summary } = first.body;
    expect(summary.total).toBe(summary.active + summary.waiting_approval + summary.completed);
    expect(summary.waiting_approval).toBeGreaterThanOrEqual(1);
    const all = await get(`${agent.url}/conversations?limit=500`);
    expect(all.body.conversations).toHaveLength(summary.total);
    expect(all.body.conversations.filter((c: any) => c.status === 'waiting_approval')).toHaveLength(summary.waiting_approval);
  });
});

describe('trace context without an OTLP exporter', () => {
  it("gives every request a trace id that reaches the provider, and continues a caller's", async () => {
    const { conversation } = await createConversation();
    await send(conversation.id, 'list resources');
    const made = model.requests.at(-1)!.headers.traceparent;
    expect(made).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    await send(conversation.id, 'list resources');
    expect(model.requests.at(-1)!.headers.traceparent!.slice(3, 35)).not.toBe(made!.slice(3, 35));

    const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
    const response = await post(
      `${agent.url}/conversations/${conversation.id}/messages`,
      { message: 'list resources' },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(response.status).toBe(200);
    expect(model.requests.at(-1)!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});

describe('token usage', () => {
  it('is stored on the first message of each model step and summed on the conversation', async () => {
    const { conversation } = await createConversation();
    const before = model.requests.length;
    const body = await send(conversation.id, 'list resources');
    const steps = body.conversation.messages.filter((m: any) => m.usage);
    expect(steps).toHaveLength(model.requests.length - before);
    expect(steps.map((m: any) => m.role)).toEqual(['assistant', 'assistant']);
    const sum = (key: 'input_tokens' | 'output_tokens') => steps.reduce((total: number, m: any) => total + m.usage[key], 0);
    expect(sum('input_tokens')).toBeGreaterThan(0);
    expect(body.conversation.usage).toEqual({ input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens') });
    const fetched = await get(`${agent.url}/conversations/${conversation.id}`);
    expect(fetched.body.conversation.usage).toEqual(body.conversation.usage);
  });
});
