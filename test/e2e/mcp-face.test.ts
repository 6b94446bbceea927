/**
 * The agent as an MCP server (the agent served as an MCP tool), end
 * to end: the real mesh (`bin/asg up`), the real mcp-resources server over stdio, a scripted
 * model speaking Gemini's wire format, and the real MCP SDK client (@modelcontextprotocol/client)
 * at the gateway's /mcp, in both protocol generations: 2026-07-28 (stateless; elicitation by
 * `input_required` and a retry) and 2025 (a session; elicitation as a server→client request).
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type ElicitRequestFormParams, type ElicitResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, TEST_BEARER, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { logLineWhere } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

type Era = 'modern' | 'legacy';

interface ConnectOptions {
  /** Declares the elicitation capability and answers every approval question with this. */
  elicit?: (params: ElicitRequestFormParams) => ElicitResult | Promise<ElicitResult>;
  headers?: Record<string, string>;
}

interface ToolAnswer {
  text: string;
  isError: boolean;
  structured: {
    conversation_id: string;
    response: string;
    waiting_approval: boolean;
    approval?: { uuid: string; tool_name: string; tool_args: Record<string, unknown>; description: string };
  };
}

let model: ScriptedModelServer;
let agent: AgentProcess;
let db: string;
const clients: Client[] = [];

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  db = join(agent.dir, 'resources.db');
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await agent?.stop();
  await model?.close();
});

async function connect(url: string, era: Era, options: ConnectOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'mcp-face-e2e', version: '1.0.0' },
    {
      capabilities: options.elicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: era === 'modern' ? 'auto' : 'legacy' },
    },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler('elicitation/create', async (request) => answer(request.params as ElicitRequestFormParams));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: options.headers ?? {} } }));
  clients.push(client);
  // The era the test means is the era the client speaks.
  expect(client.getNegotiatedProtocolVersion()! >= '2026-07-28').toBe(era === 'modern');
  return client;
}

async function ask(client: Client, args: Record<string, unknown>, tool = 'ask'): Promise<ToolAnswer> {
  const result = await client.callTool({ name: tool, arguments: args });
  const text = (result.content as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n');
  return { text, isError: result.isError === true, structured: result.structuredContent as ToolAnswer['structured'] };
}

const count = (name: string) => resourceNames(db).filter((candidate) => candidate === name).length;

describe('tools/list', () => {
  it.each<Era>(['modern', 'legacy'])('shows the one configured tool (%s protocol)', async (era) => {
    const client = await connect(agent.url, era);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['ask']);
    expect(tools[0]).toMatchObject({
      description: 'Ask the agent. It may use its tools, and stops for a human approval before any destructive call.',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string' }, conversation_id: { type: 'string' } },
        required: ['message'],
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    });
    expect(client.getServerVersion()?.name).toBe('test-agent');
  });
});

describe('a read turn', () => {
  it.each<Era>(['modern', 'legacy'])('answers "list all resources" with the agent\'s answer (%s protocol)', async (era) => {
    const client = await connect(agent.url, era);
    const answer = await ask(client, { message: 'list all resources' });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('resources_list');
    expect(answer.structured).toEqual({
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      response: answer.text,
      waiting_approval: false,
    });
    const { body } = await get(`${agent.url}/conversations/${answer.structured.conversation_id}`);
    expect(body.conversation.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  });
});

describe('stop → elicitation → go', () => {
  it.each<[Era, string]>([
    ['modern', 'mcp-1'],
    ['legacy', 'mcp-legacy-1'],
  ])('%s protocol: the client approves "add resource %s with value 3"; it is added once', async (era, name) => {
    const asked: ElicitRequestFormParams[] = [];
    const client = await connect(agent.url, era, {
      elicit: (params) => {
        asked.push(params);
        return { action: 'accept', content: { approve: true } };
      },
    });
    const answer = await ask(client, { message: `add resource ${name} with value 3` });
    expect(answer.isError).toBe(false);
    expect(answer.structured.waiting_approval).toBe(false);
    expect(answer.text).toContain('resources_add');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toMatch(/Approval required \(id: [0-9a-f-]{36}\): /);
    expect(asked[0]!.message).toContain('Tool: resources_add');
    expect(asked[0]!.message).toContain(`Arguments: {"name":"${name}","value":3}`);
    expect(count(name)).toBe(1);
    const { body } = await get(`${agent.url}/conversations/${answer.structured.conversation_id}`);
    expect(body.conversation.status).toBe('active');
    expect(body.conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call?.name === 'resources_add')).toHaveLength(1);
  });

  it.each<[Era, string]>([
    ['modern', 'mcp-declined'],
    ['legacy', 'mcp-legacy-declined'],
  ])('%s protocol: a declined question rejects the approval; %s is not added', async (era, name) => {
    const client = await connect(agent.url, era, { elicit: () => ({ action: 'decline' }) });
    const answer = await ask(client, { message: `add resource ${name} with value 3` });
    expect(answer.isError).toBe(false);
    expect(answer.structured.waiting_approval).toBe(false);
    expect(answer.text).toContain('Operation cancelled by user.');
    expect(count(name)).toBe(0);
    const { body } = await get(`${agent.url}/conversations/${answer.structured.conversation_id}`);
    expect(body.conversation.status).toBe('active');
    const tool = body.conversation.messages.find((m: any) => m.role === 'tool');
    expect(tool.tool_call).toMatchObject({
      name: 'resources_add',
      is_error: true,
      rejected: true,
      result: 'Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.',
    });
  });
});

describe('a client without elicitation', () => {
  it('gets the approval in the result and approves it over REST', async () => {
    const client = await connect(agent.url, 'modern');
    const answer = await ask(client, { message: 'add resource mcp-rest with value 4' });
    expect(answer.isError).toBe(false);
    const approval = answer.structured.approval!;
    expect(answer.structured).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'resources_add', tool_args: { name: 'mcp-rest', value: 4 } },
    });
    expect(answer.text.startsWith(`Approval required (id: ${approval.uuid}): ${approval.description}`)).toBe(true);
    expect(count('mcp-rest')).toBe(0);

    const decided = await post(`${agent.url}/approvals/${approval.uuid}`, { approved: true });
    expect(decided.status).toBe(200);
    expect(decided.body.conversation.id).toBe(answer.structured.conversation_id);
    expect(count('mcp-rest')).toBe(1);
    // Exactly once: a second decision is refused and runs nothing.
    expect((await post(`${agent.url}/approvals/${approval.uuid}`, { approved: true })).status).toBe(409);
    expect(count('mcp-rest')).toBe(1);
  });

  it('approves by calling the tool again with the conversation_id and "yes"', async () => {
    const client = await connect(agent.url, 'legacy');
    const answer = await ask(client, { message: 'add resource mcp-yes with value 5' });
    expect(answer.structured.waiting_approval).toBe(true);
    const yes = await ask(client, { message: 'yes', conversation_id: answer.structured.conversation_id });
    expect(yes.structured).toMatchObject({ conversation_id: answer.structured.conversation_id, waiting_approval: false });
    expect(yes.text).toContain('resources_add');
    expect(count('mcp-yes')).toBe(1);
  });
});

describe('continuing a conversation', () => {
  it('sends the next message to the conversation named by conversation_id, in its session', async () => {
    const client = await connect(agent.url, 'modern', { headers: { 'X-Session-ID': '0a1b2c3d', Authorization: `Bearer ${TEST_BEARER}` } });
    const first = await ask(client, { message: 'hello' });
    const id = first.structured.conversation_id;
    const second = await ask(client, { message: 'list all resources', conversation_id: id });
    expect(second.structured.conversation_id).toBe(id);
    expect(second.text).toContain('resources_list');
    const { body } = await get(`${agent.url}/conversations/${id}`);
    expect(body.conversation.session_id).toBe('0a1b2c3d');
    expect(body.conversation.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual([
      'hello',
      'list all resources',
    ]);
    await agent.waitForLine(logLineWhere((line) => line.path === '/mcp' && line.session_id === '0a1b2c3d'));
    expect(agent.output()).not.toContain(TEST_BEARER);
  });

  it('answers an unknown conversation_id with a tool error', async () => {
    const client = await connect(agent.url, 'modern');
    const answer = await ask(client, { message: 'hello', conversation_id: '00000000-0000-4000-8000-000000000000' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/00000000-0000-4000-8000-000000000000/);
    expect(answer.text).toMatch(/not found/);
  });
});

describe('serve_mcp configuration', () => {
  let custom: AgentProcess;
  let disabled: AgentProcess;

  beforeAll(async () => {
    [custom, disabled] = await Promise.all([
      startAgent({
        geminiBaseUrl: model.geminiBaseUrl,
        config: {
          serve_mcp: {
            tool: {
              name: 'resource_agent',
              description: 'Manage resources in words.',
              argument_name: 'request',
              argument_description: 'What to do with the resources.',
            },
          },
        },
      }),
      startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { serve_mcp: { enabled: false } } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([custom?.stop(), disabled?.stop()]);
  });

  it('serves the tool under the configured name, description and argument', async () => {
    const client = await connect(custom.url, 'modern', { elicit: () => ({ action: 'accept', content: { approve: true } }) });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      name: 'resource_agent',
      description: 'Manage resources in words.',
      inputSchema: { properties: { request: { type: 'string', description: 'What to do with the resources.' } }, required: ['request'] },
    });
    const answer = await ask(client, { request: 'add resource mcp-custom with value 7' }, 'resource_agent');
    expect(answer.structured.waiting_approval).toBe(false);
    expect(resourceNames(join(custom.dir, 'resources.db'))).toEqual(['mcp-custom']);
  });

  it('answers 404 at /mcp when serve_mcp.enabled is false', async () => {
    const response = await post(`${disabled.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: expect.stringContaining('no route for POST /mcp') });
    expect((await get(`${disabled.url}/health`)).status).toBe(200);
  });
});
