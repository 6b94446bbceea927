/**
 * A2A v1.0 and v0.3 complete: the real mesh (`bin/asg up`), a scripted
 * Gemini model whose slow answers wait for the test to release them (no timing), and callers
 * of both versions — @a2a-js/sdk's v1.0 client and its v0.3 LegacyJsonRpcTransport wherever
 * the SDK has the method, raw JSON-RPC otherwise and for the exact error codes.
 */
import { randomUUID } from 'node:crypto';
import {
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskState,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

/** Model answers to messages that start with "slow" wait while the gate is closed, until `release()`. */
class Gate {
  private opened: () => void = () => undefined;
  private promise = Promise.resolve();

  close(): void {
    this.promise = new Promise<void>((resolve) => (this.opened = resolve));
  }

  release(): void {
    this.opened();
  }

  wait(): Promise<void> {
    return this.promise;
  }
}

const gate = new Gate();
const SLOW_ANSWER = 'The slow answer.';

const script: ModelScript = async (request) => {
  if (request.toolResults.length === 0 && request.lastUserText.startsWith('slow')) {
    await gate.wait();
    return { text: `${SLOW_ANSWER} (${request.lastUserText})` };
  }
  return resourceAgentScript(request);
};

let model: ScriptedModelServer;
let agent: AgentProcess;
let v1: Client;
let v03: Client;

beforeAll(async () => {
  model = await startScriptedModel(script);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  v1 = await new ClientFactory().createFromUrl(agent.url);
  const card = await get(`${agent.url}/.well-known/agent.json`);
  const legacy = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
    }),
  );
  v03 = await legacy.createFromAgentCard(parseLegacyAgentCard(card.body));
});

afterAll(async () => {
  gate.release();
  await agent?.stop();
  await model?.close();
});

let rpcId = 0;

async function rpc(method: string, params: unknown, headers: Record<string, string> = {}) {
  const id = ++rpcId;
  const response = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id, method, params }, headers);
  expect(response.status).toBe(200);
  return response.body;
}

function message(parts: unknown[], extra: Record<string, unknown> = {}, configuration?: Record<string, unknown>) {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra },
    ...(configuration && { configuration }),
  });
}

const v03Message = (text: string, extra: Record<string, unknown> = {}) => ({
  kind: 'message',
  messageId: randomUUID(),
  role: 'user',
  parts: [{ kind: 'text', text }],
  ...extra,
});

function asTask(result: unknown): Task {
  expect(result).toHaveProperty('status');
  return result as Task;
}

function artifactText(task: Pick<Task, 'artifacts'>): string {
  return task.artifacts
    .flatMap((artifact) => artifact.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])))
    .join('\n');
}

const modelCallsFor = (text: string) => model.requests.filter((request) => request.lastUserText === text).length;

async function userMessages(taskId: string): Promise<number> {
  const conversation = await get(`${agent.url}/conversations/${taskId}`);
  return conversation.body.conversation.messages.filter((entry: any) => entry.role === 'user').length;
}

describe.each([
  ['v1.0', () => v1],
  ['v0.3', () => v03],
] as const)('%s: resubscribe after a dropped stream', (version, client) => {
  it('receives the rest of the task’s events: working, the artifact and the final completed status', async () => {
    gate.close();
    const text = `slow resubscribe ${version}`;
    const dropped = new AbortController();
    const stream = client().sendMessageStream(message([{ text }]), { signal: dropped.signal });
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    const taskId = first.value!.payload!.$case === 'task' ? first.value!.payload!.value.id : '';
    // The turn runs (the model has the request) when the connection drops.
    await until('the model to be asked', () => modelCallsFor(text) === 1);
    dropped.abort();
    await stream.return(undefined).catch(() => undefined);

    const resumed = client().resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: taskId }));
    const head = await resumed.next();
    expect(head.value?.payload?.$case).toBe('task');
    const now = head.value!.payload!.$case === 'task' ? head.value!.payload!.value : undefined;
    expect(now?.id).toBe(taskId);
    expect(now?.status?.state).toBe(TaskState.TASK_STATE_WORKING);

    gate.release();
    const rest: StreamResponse[] = [];
    for await (const event of resumed) rest.push(event);
    const artifact = rest.find((event) => event.payload?.$case === 'artifactUpdate');
    expect(artifact?.payload?.$case === 'artifactUpdate' && artifactText({ artifacts: [artifact.payload.value.artifact!] })).toContain(
      SLOW_ANSWER,
    );
    const last = rest.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The turn ran once: the resubscription only watched it.
    expect(modelCallsFor(text)).toBe(1);
  });
});

describe('subscribing to a task in a terminal state', () => {
  it('is -32004 in both versions (nothing more will happen to it); an unknown task is -32001', async () => {
    const done = asTask(await v1.sendMessage(message([{ text: 'hello there' }])));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await rpc('SubscribeToTask', { id: done.id }, { 'A2A-Version': '1.0' })).error).toMatchObject({
      code: -32004,
      message: expect.stringContaining('completed'),
    });
    expect((await rpc('tasks/resubscribe', { id: done.id })).error).toMatchObject({ code: -32004 });
    expect((await rpc('SubscribeToTask', { id: randomUUID() }, { 'A2A-Version': '1.0' })).error).toMatchObject({ code: -32001 });
    expect((await rpc('tasks/resubscribe', { id: randomUUID() })).error).toMatchObject({ code: -32001 });
  });
});

describe('ListTasks', () => {
  const contextId = `list-${randomUUID()}`;
  const created: string[] = [];

  beforeAll(async () => {
    for (let index = 0; index < 25; index++) {
      const task = asTask(await v1.sendMessage(message([{ text: `hello number ${index}` }], { contextId })));
      created.push(task.id);
    }
  });

  it('v1.0 (the SDK’s listTasks): pages through all 25 tasks of a context, each once, newest first', async () => {
    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await v1.listTasks(ListTasksRequest.fromJSON({ contextId, pageSize: 10, ...(pageToken && { pageToken }) }));
      expect(page.pageSize).toBe(10);
      expect(page.tasks.length).toBeLessThanOrEqual(10);
      expect(page.totalSize).toBeGreaterThanOrEqual(25);
      for (const task of page.tasks) {
        expect(task.contextId).toBe(contextId);
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        // Artifacts only when asked for.
        expect(task.artifacts).toEqual([]);
      }
      seen.push(...page.tasks.map((task) => task.id));
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken !== '' && pages < 50);
    expect(pageToken).toBe('');
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual([...created].reverse());
  });

  it('filters by status, and carries artifacts and history when asked', async () => {
    const page = await v1.listTasks(
      ListTasksRequest.fromJSON({ contextId, pageSize: 5, status: 'TASK_STATE_COMPLETED', includeArtifacts: true, historyLength: 1 }),
    );
    expect(page.tasks).toHaveLength(5);
    expect(artifactText(page.tasks[0]!)).toBe('I can list, add and remove resources.');
    expect(page.tasks[0]!.history).toHaveLength(1);
    const none = await v1.listTasks(ListTasksRequest.fromJSON({ contextId, pageSize: 5, status: 'TASK_STATE_INPUT_REQUIRED' }));
    expect(none.tasks).toEqual([]);
  });

  it('tasks/list (v0.3 shapes) pages the same tasks; bad filters are -32602', async () => {
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const body = await rpc('tasks/list', { contextId, pageSize: 20, ...(pageToken && { pageToken }) });
      expect(body.error).toBeUndefined();
      for (const task of body.result.tasks) expect(task).toMatchObject({ kind: 'task', contextId, status: { state: 'completed' } });
      seen.push(...body.result.tasks.map((task: any) => task.id));
      pageToken = body.result.nextPageToken || undefined;
    } while (pageToken);
    expect(seen).toEqual([...created].reverse());
    expect((await rpc('ListTasks', { pageSize: 0 }, { 'A2A-Version': '1.0' })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('pageSize'),
    });
    expect((await rpc('ListTasks', { pageSize: 101 }, { 'A2A-Version': '1.0' })).error).toMatchObject({ code: -32602 });
    expect((await rpc('ListTasks', { status: 'DONE' }, { 'A2A-Version': '1.0' })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('status'),
    });
    expect((await rpc('tasks/list', { pageToken: 'not-a-token' })).error).toMatchObject({ code: -32602 });
  });
});

describe('a message to a completed task', () => {
  it('is refused (-32004) in both versions, and starts no turn: the model is not called again', async () => {
    const text = 'hello immutable';
    const done = asTask(await v1.sendMessage(message([{ text }])));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const calls = model.requests.length;

    await expect(
      v1.sendMessage(message([{ text: 'and another thing' }], { taskId: done.id, contextId: done.contextId })),
    ).rejects.toMatchObject({ name: 'UnsupportedOperationError' });
    await expect(v03.sendMessage(message([{ text: 'and another thing' }], { taskId: done.id }))).rejects.toMatchObject({
      name: 'UnsupportedOperationError',
    });
    const raw1 = await rpc(
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'again' }], taskId: done.id } },
      { 'A2A-Version': '1.0' },
    );
    expect(raw1.error).toMatchObject({ code: -32004, message: expect.stringContaining('terminal') });
    const raw03 = await rpc('message/send', { message: v03Message('again', { taskId: done.id }) });
    expect(raw03.error).toMatchObject({ code: -32004 });
    const stream03 = await rpc('message/stream', { message: v03Message('again', { taskId: done.id }) });
    expect(stream03.error).toMatchObject({ code: -32004 });

    expect(model.requests.length).toBe(calls);
    expect(await userMessages(done.id)).toBe(1);
  });
});

describe('a wrong contextId for an existing task', () => {
  it('is -32602 in both versions, and decides nothing', async () => {
    const stop = asTask(await v1.sendMessage(message([{ text: 'add resource ctx-item with value 3' }])));
    expect(stop.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    await expect(v1.sendMessage(message([{ text: 'yes' }], { taskId: stop.id, contextId: 'some-other-context' }))).rejects.toMatchObject({
      name: 'RequestMalformedError',
    });
    const raw1 = await rpc(
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'yes' }], taskId: stop.id, contextId: 'elsewhere' } },
      { 'A2A-Version': '1.0' },
    );
    expect(raw1.error).toMatchObject({ code: -32602, message: expect.stringContaining(stop.contextId) });
    const raw03 = await rpc('message/send', { message: v03Message('yes', { taskId: stop.id, contextId: 'elsewhere' }) });
    expect(raw03.error).toMatchObject({ code: -32602, message: expect.stringContaining('contextId') });

    const still = await v1.getTask(GetTaskRequest.fromJSON({ id: stop.id }));
    expect(still.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // The right context goes on.
    const done = asTask(await v1.sendMessage(message([{ text: 'no' }], { taskId: stop.id, contextId: stop.contextId })));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe('a non-blocking send', () => {
  it('v1.0 returnImmediately: answers with the task while the model has not answered, and the task then completes', async () => {
    gate.close();
    const text = 'slow non-blocking v1';
    const task = asTask(await v1.sendMessage(message([{ text }], {}, { returnImmediately: true })));
    // The model cannot have answered: it waits for the gate.
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status?.state);
    await until('the model to be asked', () => modelCallsFor(text) === 1);
    expect((await v1.getTask(GetTaskRequest.fromJSON({ id: task.id }))).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    gate.release();
    const done = await until('the task to complete', async () => {
      const got = await v1.getTask(GetTaskRequest.fromJSON({ id: task.id }));
      return got.status?.state === TaskState.TASK_STATE_COMPLETED && got;
    });
    expect(artifactText(done)).toContain(SLOW_ANSWER);
  });

  it('v0.3 configuration.blocking false: the same', async () => {
    gate.close();
    const text = 'slow non-blocking v03';
    const body = await rpc('message/send', { message: v03Message(text), configuration: { blocking: false } });
    expect(body.error).toBeUndefined();
    expect(['submitted', 'working']).toContain(body.result.status.state);
    gate.release();
    const done = await until('the task to complete', async () => {
      const got = await rpc('tasks/get', { id: body.result.id });
      return got.result.status.state === 'completed' && got.result;
    });
    expect(done.artifacts[0].parts[0].text).toContain(SLOW_ANSWER);
  });
});

describe('strict requests: the spec’s error codes in both versions', () => {
  it('-32600 for a request without id or with unknown members, -32601 for an unknown method', async () => {
    const noId = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', method: 'GetTask', params: { id: 'x' } });
    expect(noId.body.error).toMatchObject({ code: -32600 });
    const extra = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' }, extra: true });
    expect(extra.body).toMatchObject({ id: 1, error: { code: -32600 } });
    expect((await rpc('tasks/frobnicate', {})).error).toMatchObject({ code: -32601 });
    expect((await rpc('FrobnicateTask', {}, { 'A2A-Version': '1.0' })).error).toMatchObject({ code: -32601 });
  });

  it('-32602 for a message without messageId or role, or with a bad configuration', async () => {
    const v1NoId = await rpc('SendMessage', { message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } }, { 'A2A-Version': '1.0' });
    expect(v1NoId.error).toMatchObject({ code: -32602, message: expect.stringContaining('messageId') });
    const v1Agent = await rpc(
      'SendMessage',
      { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } },
      { 'A2A-Version': '1.0' },
    );
    expect(v1Agent.error).toMatchObject({ code: -32602, message: expect.stringContaining('role') });
    const v03NoRole = await rpc('message/send', { message: { kind: 'message', messageId: 'm', parts: [{ kind: 'text', text: 'x' }] } });
    expect(v03NoRole.error).toMatchObject({ code: -32602, message: expect.stringContaining('role') });
    const v03Blocking = await rpc('message/send', { message: v03Message('x'), configuration: { blocking: 'no' } });
    expect(v03Blocking.error).toMatchObject({ code: -32602, message: expect.stringContaining('blocking') });
  });

  it('a push-notification url on a private network is refused by default (SSRF), in both versions (-32602)', async () => {
    const card = await get(`${agent.url}/.well-known/agent-card.json`);
    expect(card.body.capabilities.pushNotifications).toBe(true);
    const task = asTask(await v1.sendMessage(message([{ text: 'hello ssrf' }])));
    for (const url of [
      'http://127.0.0.1:1/hook',
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://localhost/hook',
    ]) {
      const set03 = await rpc('tasks/pushNotificationConfig/set', { taskId: task.id, pushNotificationConfig: { url } });
      expect(set03.error, url).toMatchObject({ code: -32602, message: expect.stringContaining('private') });
      const set1 = await rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url }, { 'A2A-Version': '1.0' });
      expect(set1.error, url).toMatchObject({ code: -32602 });
    }
    const inMessage = await rpc('message/send', {
      message: v03Message('x'),
      configuration: { pushNotificationConfig: { url: 'http://127.0.0.1:1/hook' } },
    });
    expect(inMessage.error).toMatchObject({ code: -32602 });
  });
});
