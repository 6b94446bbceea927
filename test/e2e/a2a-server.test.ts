/**
 * The A2A server end to end: the real mesh (`bin/asg up`), the real mcp-resources
 * server over stdio, a scripted Gemini model, and A2A callers of three kinds — raw JSON-RPC
 * in the type-parts dialect, and @a2a-js/sdk's own clients in v1.0 and v0.3.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
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

let rpcId = 0;

async function rpc(method: string, params: unknown, headers: Record<string, string> = {}) {
  const id = ++rpcId;
  const response = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id, method, params }, headers);
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ jsonrpc: '2.0', id });
  return response;
}

/** A type-parts `message/send`: parts `{"type": "text"}`, `taskId` beside the message. */
async function typePartsSend(text: string, taskId?: string) {
  const response = await rpc('message/send', { ...(taskId && { taskId }), message: { role: 'user', parts: [{ type: 'text', text }] } });
  expect(response.body.error).toBeUndefined();
  return response.body.result;
}

async function typePartsGet(id: string) {
  const response = await rpc('tasks/get', { id });
  expect(response.body.error).toBeUndefined();
  return response.body.result;
}

/** The approval uuid out of the approval line of a task's status. */
function approvalUuid(statusMessage: string): string {
  const match = /^Approval required \(id: ([0-9a-f-]{36})\): (.+)$/m.exec(statusMessage);
  expect(match, statusMessage).not.toBeNull();
  return match![1]!;
}

function sdkMessage(parts: unknown[], extra: Record<string, unknown> = {}) {
  return SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra } });
}

function asTask(result: unknown): Task {
  expect(result).toHaveProperty('status');
  return result as Task;
}

function artifactText(task: Task): string {
  return task.artifacts
    .flatMap((artifact) => artifact.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])))
    .join('\n');
}

/** The `{"approval": {...}}` data part of an input-required task's status message. */
function approvalData(task: Task): any {
  const part = task.status?.message?.parts.find((candidate) => candidate.content?.$case === 'data');
  return part?.content?.$case === 'data' ? part.content.value.approval : undefined;
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function finalState(events: StreamResponse[]): TaskState | undefined {
  const last = events.at(-1)?.payload;
  return last?.$case === 'statusUpdate' ? last.value.status?.state : undefined;
}

describe('agent card discovery', () => {
  it('serves the same card at /.well-known/agent.json and /.well-known/agent-card.json', async () => {
    const [legacy, modern] = await Promise.all([
      get(`${agent.url}/.well-known/agent.json`),
      get(`${agent.url}/.well-known/agent-card.json`),
    ]);
    expect(legacy.status).toBe(200);
    expect(modern.status).toBe(200);
    expect(modern.body).toEqual(legacy.body);
    const card = legacy.body;
    expect(card).toMatchObject({
      name: 'test-agent',
      description: 'An agent under test',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      url: `${agent.url}/a2a`,
      protocolVersion: '0.3.0',
      preferredTransport: 'JSONRPC',
      supportedInterfaces: [{ url: `${agent.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: true },
    });
    const skills = card.skills.map((skill: any) => skill.id);
    expect(skills).toEqual(expect.arrayContaining(['resources_list', 'resources_add', 'resources_remove']));
    expect(card.skills.find((skill: any) => skill.id === 'resources_list')).toMatchObject({
      name: 'resources_list',
      description: expect.any(String),
      tags: [],
    });
  });
});

describe('A2A message/send, non-destructive', () => {
  it('answers "list all resources" with a completed task and an artifact', async () => {
    const task = await typePartsSend('list all resources');
    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.status.state).toBe('completed');
    expect(task.artifact.parts[0]).toMatchObject({ type: 'text', text: expect.stringContaining('resources_list') });
  });
});

describe('A2A message/send, destructive', () => {
  it('stops at input-required, is approved over REST, and tasks/get then says completed', async () => {
    const task = await typePartsSend('add resource a2a-test-item with value 77');
    expect(task.status.state).toBe('input-required');
    const uuid = approvalUuid(task.status.message);
    expect(task.status.message).toContain('resources_add');
    expect(resourceNames(db)).not.toContain('a2a-test-item');

    const approved = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    expect(approved.status).toBe(200);
    expect(resourceNames(db)).toContain('a2a-test-item');

    const after = await typePartsGet(task.id);
    expect(after).toMatchObject({ id: task.id, status: { state: 'completed' } });
    expect(after.artifact.parts[0].text).toContain('a2a-test-item');
  });
});

describe('A2A tasks/get of a conversation made over REST', () => {
  it('maps the conversation id to the task id and answers completed with an artifact', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'list all resources' });
    expect(created.status).toBe(201);
    const id = created.body.conversation.id;
    const response = await rpc('tasks/get', { id });
    const task = response.body.result;
    expect(task.id).toBe(id);
    expect(task.status.state).toBe('completed');
    expect(task.artifact.parts[0]).toMatchObject({ type: 'text', text: created.body.result.response });
    // The conversation's session id comes back, as REST sends it.
    expect(response.headers.get('x-session-id')).toBe(created.body.conversation.session_id);
  });
});

describe('A2A continuation with taskId', () => {
  it('"approved" runs the tool and completes the task', async () => {
    const task = await typePartsSend('add resource continue-approved with value 1');
    expect(task.status.state).toBe('input-required');
    const done = await typePartsSend('approved', task.id);
    expect(done).toMatchObject({ id: task.id, status: { state: 'completed' } });
    expect(done.artifact.parts[0].text).toContain('continue-approved');
    expect(resourceNames(db)).toContain('continue-approved');
  });

  it('"rejected" cancels the task and the tool does not run', async () => {
    const task = await typePartsSend('add resource continue-rejected with value 2');
    const canceled = await typePartsSend('rejected', task.id);
    expect(canceled).toMatchObject({ id: task.id, status: { state: 'canceled' } });
    expect(resourceNames(db)).not.toContain('continue-rejected');
    const conversation = await get(`${agent.url}/conversations/${task.id}`);
    expect(conversation.body.conversation.status).toBe('active');
  });

  it('"maybe" leaves the task input-required, says what is expected, and sends nothing on', async () => {
    const task = await typePartsSend('add resource continue-maybe with value 3');
    const uuid = approvalUuid(task.status.message);
    const before = model.requests.length;
    const still = await typePartsSend('maybe', task.id);
    expect(still.status.state).toBe('input-required');
    expect(approvalUuid(still.status.message)).toBe(uuid);
    expect(still.status.message).toMatch(/approve.*reject/i);
    expect(model.requests.length).toBe(before);
    const conversation = await get(`${agent.url}/conversations/${task.id}`);
    expect(conversation.body.conversation).toMatchObject({ status: 'waiting_approval', pending_approval: { uuid } });
    expect(conversation.body.conversation.messages.some((message: any) => message.content === 'maybe')).toBe(false);
  });

  it('a message to a task that waits for nothing is the next turn of its conversation', async () => {
    const task = await typePartsSend('list all resources');
    const next = await typePartsSend('list all resources', task.id);
    expect(next).toMatchObject({ id: task.id, status: { state: 'completed' } });
    const conversation = await get(`${agent.url}/conversations/${task.id}`);
    expect(conversation.body.conversation.messages.filter((message: any) => message.role === 'user')).toHaveLength(2);
  });
});

describe('JSON-RPC errors', () => {
  it('-32601 for an unknown method', async () => {
    const response = await rpc('tasks/explode', { id: 'x' });
    expect(response.body.error).toMatchObject({ code: -32601, message: expect.stringContaining('tasks/explode') });
  });

  it('-32602 for bad params, naming the field', async () => {
    const response = await rpc('message/send', { message: { role: 'user', parts: [{ type: 'text', text: 42 }] } });
    expect(response.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('message.parts[0].text') });
  });

  it('-32001 for an unknown task', async () => {
    const id = randomUUID();
    expect((await rpc('tasks/get', { id })).body.error).toMatchObject({ code: -32001, message: expect.stringContaining(id) });
    expect((await rpc('tasks/get', { id: 'not-a-uuid' })).body.error.code).toBe(-32001);
  });

  it('-32700 for a body that is not JSON', async () => {
    const response = await post(`${agent.url}/a2a`, '{"jsonrpc":');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });
});

describe('tasks/cancel', () => {
  it('rejects the pending approval of a waiting task: canceled, nothing ran, the approval is decided', async () => {
    const task = await typePartsSend('add resource cancel-me with value 4');
    const uuid = approvalUuid(task.status.message);
    const canceled = await rpc('tasks/cancel', { id: task.id });
    expect(canceled.body.result).toMatchObject({ id: task.id, status: { state: 'canceled' } });
    expect(resourceNames(db)).not.toContain('cancel-me');
    const again = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    expect(again.status).toBe(409);
    expect(resourceNames(db)).not.toContain('cancel-me');
    // Now it waits for nothing: not cancelable.
    expect((await rpc('tasks/cancel', { id: task.id })).body.error.code).toBe(-32002);
  });
});

describe('A2A v1.0 interop: @a2a-js/sdk ClientFactory and its JSON-RPC transport', () => {
  let client: Client;

  beforeAll(async () => {
    client = await new ClientFactory().createFromUrl(agent.url);
  });

  it('reads the card and picks JSON-RPC 1.0', () => {
    expect(client.protocolVersion).toBe('1.0');
  });

  it('sends, stops at input-required with the approval data part, continues with approval, and gets the task', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add resource v1-item with value 5' }])));
    expect(stop.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(stop.contextId).not.toBe('');
    const approval = approvalData(stop);
    expect(approval).toMatchObject({
      uuid: expect.any(String),
      tool_name: 'resources_add',
      tool_args: { name: 'v1-item', value: 5 },
      description: expect.any(String),
      chain: [],
    });
    expect(resourceNames(db)).not.toContain('v1-item');

    const maybe = asTask(await client.sendMessage(sdkMessage([{ text: 'not sure' }], { taskId: stop.id })));
    expect(maybe.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const done = asTask(
      await client.sendMessage(
        sdkMessage([{ data: { approved: true, approval_uuid: approval.uuid } }], { taskId: stop.id, contextId: stop.contextId }),
      ),
    );
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.id).toBe(stop.id);
    expect(done.contextId).toBe(stop.contextId);
    expect(artifactText(done)).toContain('v1-item');
    expect(resourceNames(db)).toContain('v1-item');

    const got = await client.getTask(GetTaskRequest.fromJSON({ id: stop.id }));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.contextId).toBe(stop.contextId);
    expect(artifactText(got)).toContain('v1-item');
  });

  it('streams a turn to its final completed status', async () => {
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'list all resources' }])));
    expect(events[0]?.payload?.$case).toBe('task');
    expect(finalState(events)).toBe(TaskState.TASK_STATE_COMPLETED);
    const artifact = events.find((event) => event.payload?.$case === 'artifactUpdate')?.payload;
    expect(artifact?.$case === 'artifactUpdate' && artifact.value.artifact?.parts[0]?.content).toMatchObject({
      $case: 'text',
      value: expect.stringContaining('resources_list'),
    });
  });

  it('streams a destructive turn to input-required, then cancels the task', async () => {
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'add resource v1-stream with value 6' }])));
    expect(finalState(events)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const first = events[0]!.payload;
    if (first?.$case !== 'task') throw new Error('the stream did not start with the task');
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: first.value.id }));
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(resourceNames(db)).not.toContain('v1-stream');
  });
});

describe('A2A v0.3 interop: @a2a-js/sdk v0.3 card reader and LegacyJsonRpcTransport', () => {
  let client: Client;

  beforeAll(async () => {
    const card = await get(`${agent.url}/.well-known/agent.json`);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
      }),
    );
    client = await factory.createFromAgentCard(parseLegacyAgentCard(card.body));
  });

  it('speaks v0.3', () => {
    expect(client.protocolVersion).toBe('0.3');
  });

  it('sends, stops at input-required with the approval data part, continues with "yes", and gets the task', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add resource v03-item with value 8' }])));
    expect(stop.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(approvalData(stop)).toMatchObject({ tool_name: 'resources_add', tool_args: { name: 'v03-item', value: 8 } });

    const done = asTask(await client.sendMessage(sdkMessage([{ text: 'yes' }], { taskId: stop.id })));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(done)).toContain('v03-item');
    expect(resourceNames(db)).toContain('v03-item');

    const got = await client.getTask(GetTaskRequest.fromJSON({ id: stop.id }));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.contextId).toBe(stop.contextId);
    // Without the SDK: a headerless tasks/get is answered in the task's own dialect, v0.3.
    const raw = await rpc('tasks/get', { id: stop.id });
    expect(raw.body.result).toMatchObject({ kind: 'task', id: stop.id, contextId: stop.contextId, status: { state: 'completed' } });
  });

  it('streams to a final status', async () => {
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'list all resources' }])));
    expect(events[0]?.payload?.$case).toBe('task');
    expect(finalState(events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('rejects with a data part {"approved": false}: canceled', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add resource v03-rejected with value 9' }])));
    const canceled = asTask(await client.sendMessage(sdkMessage([{ data: { approved: false } }], { taskId: stop.id })));
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(resourceNames(db)).not.toContain('v03-rejected');
  });
});
