/**
 * The bound of a stored JSON value (services/common/json-value.ts: 32 levels of objects and
 * arrays, 1 MiB of JSON text), end to end. Edited arguments nested deeper than that were once
 * decided and stored although the answer was a 500, and from then on every read of approvals
 * failed. Now: a value over the bound is refused where it enters — REST and tRPC with a 400
 * naming the limit, the model's call with an error result it reads — and nothing of it is
 * stored; a value at the bound is stored and read back whole, through every reader.
 */
import { join } from 'node:path';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ModelRequest, type ScriptedModelServer } from '../support/scripted-model.js';
import { openSse } from '../support/sse-reader.js';
import { trpcClient } from '../support/trpc-client.js';
import { until } from '../support/until.js';

const LIMIT = 32;
const DEPTH_REFUSED = /must not nest objects and arrays more than 32 levels deep \(the limit of a stored JSON value\)/;

/** `levels` objects, each in the one before: `{"a": {"a": … {"leaf": 1}}}`. */
function nestedObjects(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
}

/** `levels` arrays, each in the one before: `[[… [1]]]`. */
function nestedArrays(levels: number): unknown[] {
  let value: unknown[] = [1];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

/** resources_add's own arguments, with `extra` beside them (the tool's schema allows more properties). */
const addArguments = (name: string, extra: unknown) => ({ name, value: 1, extra });

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel((request: ModelRequest) => {
    if (request.toolResults.length > 0) return { text: `Told: ${request.toolResults.map((result) => result.output).join(' | ')}` };
    if (request.lastUserText === 'deep arguments')
      return { toolCalls: [{ name: 'resources_add', args: addArguments('too-deep', nestedObjects(LIMIT)) }] };
    if (request.lastUserText === 'deep array arguments')
      return { toolCalls: [{ name: 'resources_add', args: addArguments('too-deep-array', nestedArrays(60)) }] };
    if (request.lastUserText === 'huge arguments')
      return { toolCalls: [{ name: 'resources_add', args: addArguments('too-big', 'x'.repeat(1024 * 1024)) }] };
    return resourceAgentScript(request);
  });
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

async function pendingApproval(name: string): Promise<{ uuid: string; conversation: string }> {
  const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value 1` });
  expect(created.status).toBe(201);
  return { uuid: created.body.result.approval.uuid, conversation: created.body.conversation.id };
}

describe('edited arguments', () => {
  it('over the bound: 400 naming the limit, nothing decided, and every read of approvals still answers', async () => {
    const { uuid } = await pendingApproval('edit-refused');
    // A body of a few hundred bytes: arguments 33 levels deep.
    const body = `{"approved":true,"arguments":${JSON.stringify(nestedObjects(LIMIT + 1))}}`;
    expect(Buffer.byteLength(body)).toBeLessThan(300);
    const refused = await request(`${agent.url}/approvals/${uuid}`, 'POST', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(DEPTH_REFUSED);
    for (const args of [addArguments('edit-refused', nestedArrays(55)), addArguments('edit-refused', nestedObjects(200))]) {
      const again = await post(`${agent.url}/approvals/${uuid}`, { approved: true, arguments: args });
      expect(again.status).toBe(400);
      expect(again.body.error).toMatch(DEPTH_REFUSED);
    }
    // The answer to an MCP server's question is bounded the same way.
    const input = await post(`${agent.url}/approvals/${uuid}`, { approved: true, input: { answer: nestedObjects(LIMIT) } });
    expect(input.status).toBe(400);
    expect(input.body.error).toMatch(DEPTH_REFUSED);

    const record = await get(`${agent.url}/approvals/${uuid}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ status: 'pending' });
    expect(record.body.edited_args).toBeUndefined();
    for (const path of ['/approvals', '/approvals?status=pending', '/approvals?status=approved', '/conversations'])
      expect((await get(`${agent.url}${path}`)).status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain('edit-refused');
  });

  it('at the bound: decided, run with them, and read back whole by lists, gets and the event stream', async () => {
    const { uuid, conversation } = await pendingApproval('edit-deep');
    const edited = addArguments('edit-deep', nestedObjects(LIMIT - 1));
    const decided = await post(`${agent.url}/approvals/${uuid}`, { approved: true, arguments: edited });
    expect(decided.status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('edit-deep');

    expect((await get(`${agent.url}/approvals/${uuid}`)).body).toMatchObject({ status: 'approved', edited_args: edited });
    const listed = (await get(`${agent.url}/approvals?status=approved`)).body.approvals.find(
      (approval: { uuid: string }) => approval.uuid === uuid,
    );
    expect(listed.edited_args).toEqual(edited);
    const read = await get(`${agent.url}/conversations/${conversation}`);
    expect(read.status).toBe(200);
    const ran = read.body.conversation.messages.find(
      (message: { role: string; tool_call?: { arguments: unknown } }) => message.role === 'tool',
    );
    expect(ran.tool_call.arguments).toEqual(edited);
    const approvals = await trpcClient(agent.url).approvals.list.query({ conversationId: conversation });
    expect(approvals.approvals[0]).toMatchObject({ uuid, edited_args: edited });

    const stream = await openSse(`${agent.url}/conversations/${conversation}/events`, { 'Last-Event-ID': '1' });
    try {
      await until('the decision in the event stream', () =>
        stream.events.some((event) => event.event === 'approval_resolved' && event.data.includes(uuid)),
      );
      expect(stream.events.some((event) => event.event === 'stream_error')).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('over tRPC: BAD_REQUEST naming the limit, nothing decided', async () => {
    const { uuid } = await pendingApproval('edit-trpc');
    const client = trpcClient(agent.url);
    const error = await client.approvals.resolve
      .mutate({ uuid, approved: true, arguments: addArguments('edit-trpc', nestedObjects(LIMIT)) })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<never>).data).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect((error as TRPCClientError<never>).message).toMatch(DEPTH_REFUSED);
    expect((await client.approvals.get.query({ uuid })).status).toBe('pending');
    expect((await client.approvals.list.query({})).approvals.length).toBeGreaterThan(0);
  });
});

describe('the faces that store no JSON value of the caller', () => {
  it('A2A, MCP and OpenAI refuse deep values in their own way, decide nothing, and approvals still read', async () => {
    const { uuid, conversation } = await pendingApproval('other-faces');
    const deep = nestedObjects(200);
    // A2A: a data part that says neither yes nor no leaves the task waiting; its depth changes nothing.
    const a2a = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          role: 'user',
          messageId: 'm-1',
          taskId: conversation,
          parts: [{ kind: 'data', data: { deep } }],
          metadata: { deep },
        },
      },
    });
    expect(a2a.status).toBe(200);
    expect(a2a.body.result).toMatchObject({ kind: 'task', id: conversation, status: { state: 'input-required' } });
    // MCP: arguments that are not the tool's are an error result.
    const mcp = await request(
      `${agent.url}/mcp`,
      'POST',
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: { deep } } }),
      {
        accept: 'application/json, text/event-stream',
      },
    );
    expect(mcp.status).toBe(200);
    expect(mcp.body).toMatch(/"isError":true/);
    // OpenAI: a message content that is no text is a 400 in OpenAI's error shape.
    const openai = await post(`${agent.url}/v1/chat/completions`, { model: 'test-agent', messages: [{ role: 'user', content: deep }] });
    expect(openai.status).toBe(400);
    expect(openai.body.error.type).toBe('invalid_request_error');

    expect((await get(`${agent.url}/approvals/${uuid}`)).body.status).toBe('pending');
    expect((await get(`${agent.url}/approvals`)).status).toBe(200);
  });
});

describe("the model's arguments", () => {
  it.each([
    ['deep arguments', DEPTH_REFUSED],
    ['deep array arguments', DEPTH_REFUSED],
    ['huge arguments', /must be at most 1048576 bytes of JSON \(the limit of a stored JSON value\), not \d+/],
  ])('%s: the call is refused with an error result the model reads; no approval, nothing stored of them', async (message, refusal) => {
    const created = await post(`${agent.url}/conversations`, { message });
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(false);
    expect(created.body.result.response).toMatch(refusal);
    const id = created.body.conversation.id;
    const read = await get(`${agent.url}/conversations/${id}`);
    expect(read.status).toBe(200);
    const result = read.body.conversation.messages.find((entry: { role: string }) => entry.role === 'tool');
    expect(result.tool_call).toMatchObject({ name: 'resources_add', arguments: {}, is_error: true });
    expect(result.content).toMatch(refusal);
    expect(
      (await get(`${agent.url}/approvals?status=pending`)).body.approvals.some(
        (approval: { conversation_id: string }) => approval.conversation_id === id,
      ),
    ).toBe(false);
    expect((await get(`${agent.url}/approvals`)).status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db')).some((name) => name.startsWith('too-'))).toBe(false);
  });
});
