/**
 * A2A push notifications: the real mesh with `a2a_push.allow_private_networks` (the
 * receiver is on 127.0.0.1), a scripted model, @a2a-js/sdk clients of both versions for the
 * config methods, and a receiver that fails twice before it takes a notification. Delivery is
 * the orchestrator's outbox (the store's events, a leased cursor, retries with backoff).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  SendMessageRequest,
  StreamResponse,
  TaskPushNotificationConfig,
  TaskState,
  type Task,
} from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

interface Receipt {
  path: string;
  status: number;
  token: string | undefined;
  body: any;
}

/** Answers 500 to the first `failures` notifications of each path, then 200; records every one. */
async function startReceiver(failures: number): Promise<{ url: string; receipts: Receipt[]; close(): Promise<void> }> {
  const receipts: Receipt[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const earlier = receipts.filter((receipt) => receipt.path === path).length;
      const status = earlier < failures ? 500 : 200;
      const token = req.headers['x-a2a-notification-token'];
      receipts.push({
        path,
        status,
        token: Array.isArray(token) ? token[0] : token,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    receipts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let model: ScriptedModelServer;
let agent: AgentProcess;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let v1: Client;
let v03: Client;

beforeAll(async () => {
  receiver = await startReceiver(2);
  model = await startScriptedModel(() => ({ text: 'Pushed answer.' }));
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { a2a_push: { allow_private_networks: true } } });
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
  await agent?.stop();
  await model?.close();
  await receiver?.close();
});

function message(text: string, configuration?: Record<string, unknown>) {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
    ...(configuration && { configuration }),
  });
}

const accepted = (path: string) => receiver.receipts.filter((receipt) => receipt.path === path && receipt.status === 200);

describe('push notifications', () => {
  it('the card offers them', async () => {
    const card = await get(`${agent.url}/.well-known/agent-card.json`);
    expect(card.body.capabilities.pushNotifications).toBe(true);
  });

  it('a receiver gets the terminal state once, after failing twice first, with its token', async () => {
    const path = '/hooks/first';
    const task = (await v1.sendMessage(
      message('hello push', { taskPushNotificationConfig: { url: `${receiver.url}${path}`, token: 'tok-first' } }),
    )) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    await until('the notification to be taken', () => accepted(path).length === 1, 30_000);
    const tries = receiver.receipts.filter((receipt) => receipt.path === path);
    expect(tries.map((receipt) => receipt.status)).toEqual([500, 500, 200]);
    const [taken] = accepted(path);
    expect(taken!.token).toBe('tok-first');
    const pushed = StreamResponse.fromJSON(taken!.body);
    expect(pushed.payload?.$case).toBe('task');
    const value = pushed.payload?.$case === 'task' ? pushed.payload.value : undefined;
    expect(value).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(value?.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'Pushed answer.' });

    // A later task's notification is delivered after it (one cursor, in order): by then a
    // second delivery of the first would have come.
    const laterPath = '/hooks/later';
    await v1.sendMessage(message('hello again', { taskPushNotificationConfig: { url: `${receiver.url}${laterPath}` } }));
    await until('the later notification', () => accepted(laterPath).length === 1, 30_000);
    expect(accepted(path)).toHaveLength(1);
    expect(accepted(laterPath)[0]!.token).toBeUndefined();
  });

  it('v1.0 config methods through the SDK: create, get, list, delete; a v0.3 receiver gets the v0.3 Task', async () => {
    const task = (await v1.sendMessage(message('hello configs'))) as Task;
    const created = await v1.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'cfg-1', url: `${receiver.url}/hooks/cfg-1`, token: 't1' }),
    );
    expect(created).toMatchObject({ taskId: task.id, id: 'cfg-1', url: `${receiver.url}/hooks/cfg-1`, token: 't1' });
    const got = await v1.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'cfg-1' }));
    expect(got.url).toBe(`${receiver.url}/hooks/cfg-1`);
    const listed = await v1.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
    expect(listed.configs.map((config) => config.id)).toEqual(['cfg-1']);
    await v1.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'cfg-1' }));
    expect((await v1.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }))).configs).toEqual(
      [],
    );
    await expect(
      v1.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'cfg-1' })),
    ).rejects.toMatchObject({ name: 'TaskNotFoundError' });
    await expect(
      v1.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: randomUUID(), url: `${receiver.url}/x` })),
    ).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });

  it('v0.3 config methods (the SDK’s legacy transport and raw tasks/pushNotificationConfig/*), delivered as the v0.3 Task', async () => {
    const task = (await v03.sendMessage(message('hello v03'))) as Task;
    const created = await v03.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'v03-cfg', url: `${receiver.url}/hooks/v03`, token: 'tv03' }),
    );
    expect(created).toMatchObject({ taskId: task.id, id: 'v03-cfg', token: 'tv03' });
    const raw = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tasks/pushNotificationConfig/list',
      params: { id: task.id },
    });
    expect(raw.body.result).toEqual([
      { taskId: task.id, pushNotificationConfig: { id: 'v03-cfg', url: `${receiver.url}/hooks/v03`, token: 'tv03' } },
    ]);
    const one = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tasks/pushNotificationConfig/get',
      params: { id: task.id, pushNotificationConfigId: 'v03-cfg' },
    });
    expect(one.body.result.pushNotificationConfig.id).toBe('v03-cfg');

    // The task is completed (immutable): a new task in v0.3 carries its config in the message's configuration.
    const send = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 3,
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hello v03 push' }] },
        configuration: { pushNotificationConfig: { url: `${receiver.url}/hooks/v03-send`, token: 'tv03-send' } },
      },
    });
    expect(send.body.result.status.state).toBe('completed');
    await until('the v0.3 notification', () => accepted('/hooks/v03-send').length === 1, 30_000);
    const [taken] = accepted('/hooks/v03-send');
    expect(taken!.token).toBe('tv03-send');
    expect(taken!.body).toMatchObject({
      kind: 'task',
      id: send.body.result.id,
      status: { state: 'completed' },
      artifacts: [{ parts: [{ kind: 'text', text: 'Pushed answer.' }] }],
    });

    const deleted = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tasks/pushNotificationConfig/delete',
      params: { id: task.id, pushNotificationConfigId: 'v03-cfg' },
    });
    expect(deleted.body).toMatchObject({ id: 4, result: null });
  });

  it('refuses credentials, a non-http url, and a config for a task in neither version (-32602, -32001)', async () => {
    const task = (await v1.sendMessage(message('hello refusals'))) as Task;
    const rpc = async (method: string, params: unknown, headers: Record<string, string> = {}) =>
      (await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 9, method, params }, headers)).body;
    expect(
      (await rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url: 'file:///etc/passwd' }, { 'A2A-Version': '1.0' })).error,
    ).toMatchObject({ code: -32602, message: expect.stringContaining('http or https') });
    expect(
      (
        await rpc(
          'CreateTaskPushNotificationConfig',
          { taskId: task.id, url: `${receiver.url}/x`, authentication: { scheme: 'Bearer', credentials: 'secret' } },
          { 'A2A-Version': '1.0' },
        )
      ).error,
    ).toMatchObject({ code: -32602, message: expect.stringContaining('credentials') });
    expect(
      (await rpc('tasks/pushNotificationConfig/set', { taskId: task.id, pushNotificationConfig: { url: 'http://user:pw@127.0.0.1/' } }))
        .error,
    ).toMatchObject({ code: -32602 });
    expect(
      (await rpc('tasks/pushNotificationConfig/set', { taskId: randomUUID(), pushNotificationConfig: { url: `${receiver.url}/x` } })).error,
    ).toMatchObject({ code: -32001 });
  });
});
