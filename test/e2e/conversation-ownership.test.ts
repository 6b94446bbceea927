/**
 * `chat` may talk and read its own conversations, end to end: `bin/asg up` with API
 * tokens, the real mesh over gRPC, the real mcp-resources server and a scripted model. A
 * conversation belongs to the principal that created it: another chat principal (bob) gets
 * exactly the answer of an unknown conversation on every face — REST (read, send, the event
 * stream, the list), tRPC, A2A (unknown task) and MCP — while an approver (carol) reads every
 * conversation but talks only to its own, and an admin (root) does everything. Conversations
 * created before `auth` was turned on belong to nobody: only approvers and admins see them.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { openSse } from '../support/sse-reader.js';
import { record, trpcClient } from '../support/trpc-client.js';

const TOKENS = {
  ALICE_TOKEN: 'e2e-own-alice-token-7c1e9a3f5b2d',
  BOB_TOKEN: 'e2e-own-bob-token-2d8f6b4a0c9e',
  CAROL_TOKEN: 'e2e-own-carol-token-9a5c3e1f7b4d',
  DAVE_TOKEN: 'e2e-own-dave-token-4f2b8d6a1c3e',
  ROOT_TOKEN: 'e2e-own-root-token-6e4a2c0f8d1b',
};
const AUTH = {
  tokens: [
    { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] },
    { name: 'bob', token_env: 'BOB_TOKEN', roles: ['chat'] },
    { name: 'carol', token_env: 'CAROL_TOKEN', roles: ['approve'] },
    { name: 'dave', token_env: 'DAVE_TOKEN', roles: ['chat', 'approve'] },
    { name: 'root', token_env: 'ROOT_TOKEN', roles: ['admin'] },
  ],
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alice = bearer(TOKENS.ALICE_TOKEN);
const bob = bearer(TOKENS.BOB_TOKEN);
const carol = bearer(TOKENS.CAROL_TOKEN);
const dave = bearer(TOKENS.DAVE_TOKEN);
const root = bearer(TOKENS.ROOT_TOKEN);

let model: ScriptedModelServer;
let agent: AgentProcess;
/** Alice's conversation, and bob's. */
let alices: string;
let bobs: string;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: TOKENS, config: { auth: AUTH } });
  const created = await post(`${agent.url}/conversations`, { message: 'hello there' }, alice);
  expect(created.status).toBe(201);
  alices = created.body.conversation.id;
  bobs = (await post(`${agent.url}/conversations`, { message: 'hi' }, bob)).body.conversation.id;
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

/** What the gateway answers for a conversation nobody has: what a stranger must get for one it has. */
async function unknownAnswer(path: (id: string) => string, send?: unknown) {
  const id = randomUUID();
  const answer = send === undefined ? await get(`${agent.url}${path(id)}`, bob) : await post(`${agent.url}${path(id)}`, send, bob);
  return { status: answer.status, error: (answer.body.error as string).replace(id, '<id>') };
}

const ids = (conversations: { id: string }[]) => conversations.map((conversation) => conversation.id);

describe('whose conversation — REST', () => {
  it('gives the new conversation its creator as owner', async () => {
    const read = await get(`${agent.url}/conversations/${alices}`, alice);
    expect(read.status).toBe(200);
    expect(read.body.conversation.owner).toBe('token:alice');
    expect((await post(`${agent.url}/conversations/${alices}/messages`, { message: 'and again' }, alice)).status).toBe(200);
  });

  it("answers bob 404 for alice's conversation, word for word as for an id nobody has: read, send, event stream", async () => {
    const read = await get(`${agent.url}/conversations/${alices}`, bob);
    expect({ status: read.status, error: read.body.error.replace(alices, '<id>') }).toEqual(
      await unknownAnswer((id) => `/conversations/${id}`),
    );

    const before = (await get(`${agent.url}/conversations/${alices}`, alice)).body.conversation.messages.length;
    const send = await post(`${agent.url}/conversations/${alices}/messages`, { message: 'list all resources' }, bob);
    expect({ status: send.status, error: send.body.error.replace(alices, '<id>') }).toEqual(
      await unknownAnswer((id) => `/conversations/${id}/messages`, { message: 'list all resources' }),
    );
    expect((await get(`${agent.url}/conversations/${alices}`, alice)).body.conversation.messages).toHaveLength(before);

    const stream = await openSse(`${agent.url}/conversations/${alices}/events`, bob);
    stream.close();
    expect(stream.status).toBe(404);
    expect(JSON.parse(stream.text!).error.replace(alices, '<id>')).toBe((await unknownAnswer((id) => `/conversations/${id}/events`)).error);
    const own = await openSse(`${agent.url}/conversations/${alices}/events?token=${TOKENS.ALICE_TOKEN}`);
    await vi.waitFor(() => expect(own.events[0]?.event).toBe('snapshot'));
    own.close();
  });

  it("lists only the caller's own conversations to a chat principal, with counts of its own", async () => {
    const bobsList = await get(`${agent.url}/conversations`, bob);
    expect(ids(bobsList.body.conversations)).toEqual([bobs]);
    expect(bobsList.body.summary.total).toBe(1);
    const alicesList = await get(`${agent.url}/conversations`, alice);
    expect(ids(alicesList.body.conversations)).toContain(alices);
    expect(ids(alicesList.body.conversations)).not.toContain(bobs);
  });

  it("lets carol, an approver, read alice's conversation, its event stream and every listing, but not talk to it", async () => {
    const read = await get(`${agent.url}/conversations/${alices}`, carol);
    expect(read.status).toBe(200);
    expect(read.body.conversation.messages.map((message: { content: string }) => message.content)).toContain('hello there');
    expect(ids((await get(`${agent.url}/conversations`, carol)).body.conversations)).toEqual(expect.arrayContaining([alices, bobs]));
    const stream = await openSse(`${agent.url}/conversations/${alices}/events?token=${TOKENS.CAROL_TOKEN}`);
    await vi.waitFor(() => expect(stream.events[0]?.event).toBe('snapshot'));
    stream.close();
    // Without chat she may not talk at all; dave, an approver who chats, may not talk to alice's.
    expect((await post(`${agent.url}/conversations/${alices}/messages`, { message: 'hi' }, carol)).status).toBe(403);
    const refused = await post(`${agent.url}/conversations/${alices}/messages`, { message: 'hi' }, dave);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain(`token:dave may read conversation ${alices} but not send to it: it belongs to token:alice`);
  });

  it('lets root, an admin, see and talk to everything', async () => {
    expect(ids((await get(`${agent.url}/conversations?limit=500`, root)).body.conversations)).toEqual(
      expect.arrayContaining([alices, bobs]),
    );
    expect((await get(`${agent.url}/conversations/${alices}`, root)).status).toBe(200);
    expect((await post(`${agent.url}/conversations/${bobs}/messages`, { message: 'hi from root' }, root)).status).toBe(200);
  });
});

describe('whose conversation — tRPC', () => {
  it("answers bob NOT_FOUND for alice's conversation on get, send and the events subscription, and lists only his", async () => {
    const client = trpcClient(agent.url, bob);
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: { data?: { code?: string }; message: string }) => error,
      );
    const read = await failure(client.conversations.get.query({ id: alices }));
    expect(read).toMatchObject({ data: { code: 'NOT_FOUND' }, message: `conversation ${alices} not found` });
    expect(await failure(client.conversations.send.mutate({ conversationId: alices, message: 'hi' }))).toMatchObject({
      data: { code: 'NOT_FOUND' },
    });
    expect(ids((await client.conversations.list.query({ limit: 500 })).conversations)).toEqual([bobs]);

    const watch = record<ConversationUpdate>((callbacks) => client.conversation.events.subscribe({ conversationId: alices }, callbacks));
    await vi.waitFor(() => expect(watch.errors).toHaveLength(1), { timeout: 10_000 });
    watch.stop();
    expect(watch.errors[0]!.data?.code).toBe('NOT_FOUND');
    expect(watch.items).toEqual([]);
  });

  it("lets carol read alice's conversation and watch it", async () => {
    const client = trpcClient(agent.url, carol);
    expect((await client.conversations.get.query({ id: alices })).conversation.owner).toBe('token:alice');
    const watch = record<ConversationUpdate>((callbacks) => client.conversation.events.subscribe({ conversationId: alices }, callbacks));
    await vi.waitFor(() => expect(watch.items[0]?.data.kind).toBe('snapshot'), { timeout: 10_000 });
    watch.stop();
  });
});

describe('whose task — A2A', () => {
  let rpcId = 0;
  async function rpc(method: string, params: unknown, headers: Record<string, string>) {
    const answer = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: ++rpcId, method, params }, headers);
    expect(answer.status).toBe(200);
    return answer.body;
  }
  const message = (text: string, taskId?: string) => ({
    message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...(taskId && { taskId }) },
  });

  it("answers bob's tasks/get, message/send, message/stream and tasks/cancel on alice's task as an unknown task (-32001)", async () => {
    const task = await rpc('message/send', message('add e2e-owned with value 3'), alice);
    const taskId = task.result.id as string;
    expect(task.result.status.state).toBe('input-required');

    for (const [method, params] of [
      ['tasks/get', { id: taskId }],
      ['tasks/cancel', { id: taskId }],
      ['message/send', message('yes', taskId)],
    ] as const) {
      const answer = await rpc(method, params, bob);
      expect(answer.error, method).toEqual({ code: -32001, message: `task not found: ${taskId}` });
    }
    const stream = await post(
      `${agent.url}/a2a`,
      { jsonrpc: '2.0', id: ++rpcId, method: 'message/stream', params: message('yes', taskId) },
      { ...bob, accept: 'text/event-stream' },
    );
    expect(JSON.stringify(stream.body)).toContain('"code":-32001');
    // A2A v1.0's TaskNotFound.
    const v1 = await post(
      `${agent.url}/a2a`,
      { jsonrpc: '2.0', id: ++rpcId, method: 'GetTask', params: { id: taskId } },
      { ...bob, 'a2a-version': '1.0' },
    );
    expect(v1.body.error.code).toBe(-32001);

    // Still waiting, undecided: alice's own view, and dave's (an approver who chats) read of it.
    expect((await rpc('tasks/get', { id: taskId }, alice)).result.status.state).toBe('input-required');
    expect((await rpc('tasks/get', { id: taskId }, dave)).result.status.state).toBe('input-required');
    expect((await get(`${agent.url}/conversations/${taskId}`, carol)).body.conversation.status).toBe('waiting_approval');
  });
});

describe('whose conversation — MCP', () => {
  it("answers bob's turn on alice's conversation as one on an unknown conversation", async () => {
    const client = new Client({ name: 'ownership-e2e', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: bob } }));
    try {
      const ask = async (conversationId: string) => {
        const result = await client.callTool({
          name: 'ask',
          arguments: { message: 'list all resources', conversation_id: conversationId },
        });
        return { isError: result.isError, text: (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n') };
      };
      const unknown = randomUUID();
      const stranger = await ask(alices);
      expect(stranger.isError).toBe(true);
      expect(stranger.text.replace(alices, '<id>')).toBe((await ask(unknown)).text.replace(unknown, '<id>'));
      expect(stranger.text).toContain('not found');
    } finally {
      await client.close();
    }
  });
});

describe('conversations from before auth', () => {
  it('belong to nobody: only approvers and admins see them once auth is on', async () => {
    let open: AgentProcess | undefined = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
    let restarted: AgentProcess | undefined;
    try {
      const created = await post(`${open.url}/conversations`, { message: 'before auth' });
      expect(created.status).toBe(201);
      expect(created.body.conversation).not.toHaveProperty('owner');
      const id = created.body.conversation.id as string;
      const { dir } = open;
      await open.stop();
      open = undefined;
      restarted = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir, env: TOKENS, config: { auth: AUTH } });
      expect((await get(`${restarted.url}/conversations/${id}`, alice)).status).toBe(404);
      expect(ids((await get(`${restarted.url}/conversations`, alice)).body.conversations)).toEqual([]);
      expect((await get(`${restarted.url}/conversations/${id}`, carol)).status).toBe(200);
      expect((await get(`${restarted.url}/conversations/${id}`, root)).status).toBe(200);
      expect(ids((await get(`${restarted.url}/conversations`, carol)).body.conversations)).toEqual([id]);
    } finally {
      await open?.stop();
      await restarted?.stop();
    }
  });
});

describe('tokens stay secret', () => {
  it('no token in any log line', () => {
    const output = agent.output();
    for (const token of Object.values(TOKENS)) expect(output).not.toContain(token);
  });
});
