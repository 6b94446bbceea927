import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetTaskRequest, CancelTaskRequest, SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type A2aOrigin,
  type Conversation,
  type ConversationEvent,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { currentContext } from '../../services/common/context.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import type { ApprovalOutcome, Turn } from '../app/agent.js';
import type { Decision } from '../app/decision.js';
import { createHttpApp } from '../http/app.js';
import type { TaskBackend } from './backend.js';
import { a2aRouter } from './router.js';

/**
 * The A2A server over real HTTP on 127.0.0.1, in front of an in-memory stand-in for the
 * mesh, driven by raw JSON-RPC and by @a2a-js/sdk's own clients (v1.0 and v0.3). The
 * whole mesh is in test/e2e/a2a-server.test.ts.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

/** The orchestrator and store in miniature: "add NAME" stops for approval, anything else is echoed. */
class FakeMesh implements TaskBackend {
  readonly conversations = new Map<string, Conversation>();
  /** Tools that ran after an approval, by name argument. */
  readonly ran: string[] = [];
  /** The session id in the request context of each call, by operation. */
  readonly sessions: { op: string; sessionId: string | undefined }[] = [];
  failNext?: RpcError;

  private note(op: string): void {
    this.sessions.push({ op, sessionId: currentContext()?.sessionId || undefined });
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure) throw failure;
  }

  private message(conversation: Conversation, role: MessageRole, content: string): void {
    conversation.messages.push({ id: randomUUID(), role, content, createdAt: new Date(), seq: conversation.messages.length + 1 });
    conversation.updatedAt = new Date();
  }

  private approval(conversationId: string, name: string, remote = false): PendingApproval {
    return {
      uuid: randomUUID(),
      conversationId,
      toolName: 'resources_add',
      toolArgsJson: JSON.stringify({ name, value: 1 }),
      description: `resources_add on resources: {"name":"${name}","value":1}`,
      createdAt: new Date(),
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: '',
      toolCallId: 'call-1',
      updatedAt: new Date(),
      votes: [],
      agentChain: remote ? ['agent-b', 'agent-c'] : [],
    };
  }

  private turn(conversation: Conversation, text: string): TurnResult {
    const waiting = conversation.pendingApprovals[0];
    if (waiting) return { response: `waiting for ${waiting.uuid}`, waitingApproval: true, approval: waiting };
    this.message(conversation, MessageRole.MESSAGE_ROLE_USER, text);
    const add = /\badd (\S+)/.exec(text);
    if (add) {
      const names = text.includes(' and ') ? [add[1]!, 'second'] : [add[1]!];
      const approvals = names.map((name) => this.approval(conversation.id, name, text.includes('remote')));
      conversation.status = ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL;
      conversation.pendingApproval = approvals[0];
      conversation.pendingApprovals = approvals;
      return { response: `Approval required: ${approvals[0]!.uuid}`, waitingApproval: true, approval: approvals[0] };
    }
    const response = `echo: ${text}`;
    this.message(conversation, MessageRole.MESSAGE_ROLE_ASSISTANT, response);
    return { response, waitingApproval: false };
  }

  private snapshot(conversation: Conversation): Conversation {
    return structuredClone(conversation);
  }

  async createConversation(message: string | undefined, origin: A2aOrigin) {
    this.note('create');
    const conversation: Conversation = {
      id: randomUUID(),
      sessionId: currentContext()?.sessionId || 'f00dfeed',
      status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      messages: [],
      createdAt: new Date(),
      updatedAt: new Date(),
      messageCount: 0,
      usage: undefined,
      pendingApprovals: [],
      runRevision: 0,
      watched: false,
      a2aOrigin: origin,
    };
    this.conversations.set(conversation.id, conversation);
    const result = message === undefined ? undefined : this.turn(conversation, message);
    return { conversation: this.snapshot(conversation), result };
  }

  /** A conversation made over REST: no A2A origin. */
  restConversation(text: string): Conversation {
    const conversation: Conversation = {
      id: randomUUID(),
      sessionId: 'abcd1234',
      status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      messages: [],
      createdAt: new Date(),
      updatedAt: new Date(),
      messageCount: 0,
      usage: undefined,
      pendingApprovals: [],
      runRevision: 0,
      watched: false,
    };
    this.conversations.set(conversation.id, conversation);
    this.turn(conversation, text);
    return conversation;
  }

  private find(id: string): Conversation {
    const conversation = this.conversations.get(id);
    if (!conversation)
      throw new RpcError(GrpcStatus.NOT_FOUND, `conversation ${id} not found`, '/asg.store.v1.ConversationStoreService/GetConversation');
    return conversation;
  }

  async getConversation(id: string): Promise<Conversation> {
    this.note('get');
    return this.snapshot(this.find(id));
  }

  async sendMessage(conversationId: string, message: string): Promise<Turn> {
    this.note('send');
    const conversation = this.find(conversationId);
    const result = this.turn(conversation, message);
    return { conversation: this.snapshot(conversation), result };
  }

  async asksForInput(): Promise<boolean> {
    return false;
  }

  async resolveApproval(uuid: string, decision: Decision): Promise<ApprovalOutcome> {
    this.note(`resolve:${decision}`);
    const conversation = [...this.conversations.values()].find((candidate) =>
      candidate.pendingApprovals.some((approval) => approval.uuid === uuid),
    );
    if (!conversation)
      throw new RpcError(GrpcStatus.NOT_FOUND, `approval ${uuid} not found`, '/asg.orchestrator.v1.OrchestratorService/ResolveApproval');
    const approval = conversation.pendingApprovals.find((candidate) => candidate.uuid === uuid)!;
    conversation.pendingApprovals = [];
    conversation.pendingApproval = undefined;
    conversation.status = ConversationStatus.CONVERSATION_STATUS_ACTIVE;
    if (decision === 'rejected') {
      this.message(conversation, MessageRole.MESSAGE_ROLE_TOOL, 'Operation cancelled by user.');
      return {
        decided: true,
        conversation: this.snapshot(conversation),
        result: { response: 'Operation cancelled by user.', waitingApproval: false },
      };
    }
    const { name } = JSON.parse(approval.toolArgsJson) as { name?: string };
    this.ran.push(String(name));
    const response = `Done. resources_add: added ${String(name)}`;
    this.message(conversation, MessageRole.MESSAGE_ROLE_ASSISTANT, response);
    return { decided: true, conversation: this.snapshot(conversation), result: { response, waitingApproval: false } };
  }

  async listConversations({ limit, cursor }: { limit: number; cursor?: string }) {
    this.note('list');
    const all = [...this.conversations.values()].reverse();
    const start = cursor === undefined ? 0 : Number(cursor);
    const page = all.slice(start, start + limit);
    return {
      conversations: page.map((conversation) => ({
        ...this.snapshot(conversation),
        messages: [],
        title: conversation.messages.find((message) => message.role === MessageRole.MESSAGE_ROLE_USER)?.content ?? '',
      })),
      summary: { total: all.length, active: 0, waitingApproval: 0, completed: 0 },
      ...(start + limit < all.length && { nextCursor: String(start + limit) }),
    };
  }

  /** The fake's conversations change only inside a call: there is nothing to watch live. */
  watch(): AsyncIterable<ConversationEvent> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<ConversationEvent>>(() => undefined),
        return: async () => ({ done: true, value: undefined }),
      }),
    };
  }

  async listTools(): Promise<Tool[]> {
    this.note('tools');
    return [
      { name: 'resources_list', description: 'Lists resources', inputSchema: undefined, destructive: false, server: 'resources' },
      { name: 'a2a_helper', description: 'A helper agent', inputSchema: undefined, destructive: false, server: 'a2a' },
    ];
  }
}

let mesh: FakeMesh;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  mesh = new FakeMesh();
  // The card test below calls with Host agents.example.com, a name the server must be told it answers for.
  const site = { host: '127.0.0.1', server: { allowed_hosts: ['agents.example.com'], cors: { allowed_origins: [] } } };
  const app = createHttpApp(
    [a2aRouter({ backend: mesh, identity: { name: 'test-agent', description: 'An agent under test' }, log: quiet, version: '9.8.7' })],
    quiet,
    site,
  );
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  mesh.sessions.length = 0;
});

async function rpc(method: string, params?: unknown, headers: Record<string, string> = {}, id: string | number = 1) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
  return raw(body, headers);
}

async function raw(body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/a2a`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) as any };
}

const typePartsMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { role: 'user', parts: [{ type: 'text', text }] },
  ...extra,
});

function sdkMessage(parts: unknown[], extra: Record<string, unknown> = {}) {
  return SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra } });
}

function asTask(result: unknown): Task {
  expect(result).toHaveProperty('status');
  return result as Task;
}

function textOf(task: Task): string {
  return task.artifacts
    .flatMap((artifact) => artifact.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])))
    .join('\n');
}

function statusParts(task: Task) {
  return task.status?.message?.parts.map((part) => part.content) ?? [];
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function card(path = '/.well-known/agent-card.json', headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}${path}`, { headers });
  return { status: response.status, json: (await response.json()) as any };
}

describe('agent card', () => {
  it('is served at both well-known paths, the same JSON', async () => {
    const [modern, legacy] = await Promise.all([card('/.well-known/agent-card.json'), card('/.well-known/agent.json')]);
    expect(modern.status).toBe(200);
    expect(legacy.json).toEqual(modern.json);
    expect(modern.json).toMatchObject({
      name: 'test-agent',
      description: 'An agent under test',
      version: '9.8.7',
      url: `${baseUrl}/a2a`,
      protocolVersion: '0.3.0',
      preferredTransport: 'JSONRPC',
      supportedInterfaces: [{ url: `${baseUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
    });
    expect(modern.json.skills).toEqual([
      { id: 'resources_list', name: 'resources_list', description: 'Lists resources', tags: [] },
      { id: 'a2a_helper', name: 'a2a_helper', description: 'A helper agent', tags: [] },
    ]);
  });

  it('names the endpoint by the Host the caller used', async () => {
    // fetch may not set Host; node:http may.
    const json = await new Promise<any>((resolve, reject) => {
      const req = request(`${baseUrl}/.well-known/agent.json`, { headers: { host: 'agents.example.com:8443' } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(JSON.parse(text)));
      });
      req.on('error', reject);
      req.end();
    });
    expect(json.url).toBe('http://agents.example.com:8443/a2a');
    expect(json.supportedInterfaces[0].url).toBe('http://agents.example.com:8443/a2a');
  });

  it('answers 503 with {"error"} when the tools cannot be listed', async () => {
    mesh.failNext = new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', '/asg.orchestrator.v1.OrchestratorService/ListTools');
    const response = await card();
    expect(response.status).toBe(503);
    expect(response.json.error).toContain('ListTools');
  });
});

describe('type-parts dialect', () => {
  it('answers message/send with the type-parts task shape and the session id header', async () => {
    const response = await rpc('message/send', typePartsMessage('hello'), { 'X-Session-ID': 'ABCDEF12' }, 'req-1');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-session-id')).toBe('abcdef12');
    expect(response.json).toEqual({
      jsonrpc: '2.0',
      id: 'req-1',
      result: { id: expect.any(String), status: { state: 'completed' }, artifact: { parts: [{ type: 'text', text: 'echo: hello' }] } },
    });
    expect(mesh.sessions).toEqual([{ op: 'create', sessionId: 'abcdef12' }]);
    // Stored under "seed", the code stored conversations already carry.
    expect(mesh.conversations.get(response.json.result.id)?.a2aOrigin).toEqual({ dialect: 'seed', contextId: expect.any(String) });
  });

  it('makes a session id at the entry when the caller sent none, and echoes it', async () => {
    const response = await rpc('message/send', typePartsMessage('hello'));
    const sid = response.headers.get('x-session-id');
    expect(sid).toMatch(/^[0-9a-f]{8}$/);
    expect(mesh.sessions).toEqual([{ op: 'create', sessionId: sid }]);
  });

  it('stops at input-required with the approval text, continues with "approved", and tasks/get says completed', async () => {
    const stop = await rpc('message/send', typePartsMessage('add typed-item'));
    const task = stop.json.result;
    const approval = mesh.conversations.get(task.id)!.pendingApprovals[0]!;
    expect(task.status).toEqual({ state: 'input-required', message: `Approval required (id: ${approval.uuid}): ${approval.description}` });
    expect(task.artifact).toBeUndefined();

    const unclear = await rpc('message/send', typePartsMessage('maybe', { taskId: task.id }));
    expect(unclear.json.result.status.state).toBe('input-required');
    expect(unclear.json.result.status.message).toContain(`Approval required (id: ${approval.uuid})`);
    expect(unclear.json.result.status.message).toContain('"maybe" is neither an approval nor a rejection');
    expect(mesh.sessions.map((s) => s.op)).not.toContain('resolve:approved');

    const go = await rpc('message/send', typePartsMessage(' Approved ', { taskId: task.id }));
    expect(go.headers.get('x-session-id')).toBe(mesh.conversations.get(task.id)!.sessionId);
    expect(go.json.result).toEqual({
      id: task.id,
      status: { state: 'completed' },
      artifact: { parts: [{ type: 'text', text: 'Done. resources_add: added typed-item' }] },
    });
    expect(mesh.ran).toContain('typed-item');

    const got = await rpc('tasks/get', { id: task.id });
    expect(got.json.result).toEqual(go.json.result);
  });

  it('cancels with "no": the task is canceled and nothing ran', async () => {
    const stop = await rpc('message/send', typePartsMessage('add never-item'));
    const rejected = await rpc('message/send', typePartsMessage('NO', { taskId: stop.json.result.id }));
    expect(rejected.json.result.status).toEqual({ state: 'canceled', message: 'Operation cancelled by user.' });
    expect(mesh.ran).not.toContain('never-item');
  });

  it('answers tasks/get of a conversation made over REST in the type-parts dialect', async () => {
    const conversation = mesh.restConversation('list everything');
    const got = await rpc('tasks/get', { id: conversation.id });
    expect(got.json.result).toEqual({
      id: conversation.id,
      status: { state: 'completed' },
      artifact: { parts: [{ type: 'text', text: 'echo: list everything' }] },
    });
    expect(got.headers.get('x-session-id')).toBe('abcd1234');
  });

  it('decides with a data part {"approved": false}', async () => {
    const stop = await rpc('message/send', typePartsMessage('add data-item'));
    const answer = await rpc('message/send', {
      taskId: stop.json.result.id,
      message: { parts: [{ type: 'data', data: { approved: false } }] },
    });
    expect(answer.json.result.status.state).toBe('canceled');
  });
});

describe('v0.3 dialect (raw)', () => {
  it('answers with kind-tagged tasks, a context id, artifacts[] and the approval data part', async () => {
    const response = await rpc('message/send', {
      message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'add v03-item' }], contextId: 'ctx-9' },
    });
    const task = response.json.result;
    expect(task).toMatchObject({ kind: 'task', contextId: 'ctx-9', status: { state: 'input-required', timestamp: expect.any(String) } });
    const approval = mesh.conversations.get(task.id)!.pendingApprovals[0]!;
    expect(task.status.message).toMatchObject({
      kind: 'message',
      role: 'agent',
      taskId: task.id,
      contextId: 'ctx-9',
      parts: [
        { kind: 'text', text: `Approval required (id: ${approval.uuid}): ${approval.description}` },
        {
          kind: 'data',
          data: {
            approval: {
              uuid: approval.uuid,
              tool_name: 'resources_add',
              tool_args: { name: 'v03-item', value: 1 },
              description: approval.description,
              chain: [],
            },
          },
        },
      ],
    });
    // tasks/get without a header: the task's own dialect.
    const got = await rpc('tasks/get', { id: task.id, historyLength: 5 });
    expect(got.json.result).toMatchObject({ kind: 'task', id: task.id, contextId: 'ctx-9', status: { state: 'input-required' } });
    expect(got.json.result.history).toEqual([
      {
        kind: 'message',
        messageId: expect.any(String),
        role: 'user',
        parts: [{ kind: 'text', text: 'add v03-item' }],
        taskId: task.id,
        contextId: 'ctx-9',
      },
    ]);
  });

  it('lists every pending approval and lets approval_uuid pick one', async () => {
    const response = await rpc('message/send', {
      message: { kind: 'message', messageId: 'm2', role: 'user', parts: [{ kind: 'text', text: 'add one and two' }] },
    });
    const task = response.json.result;
    const [first, second] = mesh.conversations.get(task.id)!.pendingApprovals;
    const data = task.status.message.parts[1].data;
    expect(data.approval.uuid).toBe(first!.uuid);
    expect(data.approvals.map((a: any) => a.uuid)).toEqual([first!.uuid, second!.uuid]);
    expect(task.status.message.parts[0].text.split('\n')).toHaveLength(2);

    const wrong = await rpc('message/send', {
      message: {
        kind: 'message',
        messageId: 'm3',
        role: 'user',
        taskId: task.id,
        parts: [{ kind: 'data', data: { approved: true, approval_uuid: 'nope' } }],
      },
    });
    expect(wrong.json.error.code).toBe(-32602);
    expect(wrong.json.error.message).toContain('approval_uuid "nope"');

    mesh.sessions.length = 0;
    await rpc('message/send', {
      message: {
        kind: 'message',
        messageId: 'm4',
        role: 'user',
        taskId: task.id,
        parts: [{ kind: 'data', data: { approved: true, approval_uuid: second!.uuid } }],
      },
    });
    expect(mesh.ran.at(-1)).toBe('second');
  });
});

describe('A2A v1.0 through @a2a-js/sdk ClientFactory', () => {
  let client: Client;

  beforeAll(async () => {
    client = await new ClientFactory().createFromUrl(baseUrl);
  });

  it('picks the JSON-RPC v1.0 interface from the card', () => {
    expect(client.protocolVersion).toBe('1.0');
  });

  it('sends, stops at input-required with the data part, continues with approval, and gets the task', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add v1-item via remote' }])));
    expect(stop.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(stop.contextId).not.toBe('');
    const approval = mesh.conversations.get(stop.id)!.pendingApprovals[0]!;
    expect(mesh.conversations.get(stop.id)!.a2aOrigin).toEqual({ dialect: 'v1.0', contextId: stop.contextId });
    expect(statusParts(stop)).toEqual([
      { $case: 'text', value: `Approval required (id: ${approval.uuid}): ${approval.description}` },
      {
        $case: 'data',
        value: {
          approval: {
            uuid: approval.uuid,
            tool_name: 'resources_add',
            tool_args: { name: 'v1-item', value: 1 },
            description: approval.description,
            chain: ['agent-b', 'agent-c'],
          },
        },
      },
    ]);

    const maybe = asTask(await client.sendMessage(sdkMessage([{ text: 'maybe' }], { taskId: stop.id })));
    expect(maybe.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const done = asTask(
      await client.sendMessage(sdkMessage([{ data: { approved: true } }], { taskId: stop.id, contextId: stop.contextId })),
    );
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.contextId).toBe(stop.contextId);
    expect(textOf(done)).toBe('Done. resources_add: added v1-item');

    const got = await client.getTask(GetTaskRequest.fromJSON({ id: stop.id, historyLength: 10 }));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(got)).toBe('Done. resources_add: added v1-item');
    expect(got.history.map((message) => message.role)).toEqual([1, 2]);
  });

  it('streams: the task, working, the artifact, then the final completed status', async () => {
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'stream me' }])));
    expect(events.map((event) => event.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const first = events[0]!.payload;
    const last = events.at(-1)!.payload;
    if (first?.$case !== 'task' || last?.$case !== 'statusUpdate') throw new Error('unexpected events');
    expect(first.value.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last.value.taskId).toBe(first.value.id);
    const artifact = events[2]!.payload;
    if (artifact?.$case !== 'artifactUpdate') throw new Error('no artifact');
    expect(artifact.value.artifact?.parts[0]?.content).toEqual({ $case: 'text', value: 'echo: stream me' });
  });

  it('streams a continuation that stops again at input-required', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add stream-item' }])));
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'hmm' }], { taskId: stop.id })));
    const last = events.at(-1)!.payload;
    if (last?.$case !== 'statusUpdate') throw new Error('no final status');
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('cancels a waiting task by rejecting its approval; a finished one is not cancelable (-32002)', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add cancel-item' }])));
    mesh.sessions.length = 0;
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: stop.id }));
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(mesh.sessions.map((s) => s.op)).toEqual(['get', 'resolve:rejected']);
    expect(mesh.ran).not.toContain('cancel-item');
    await expect(client.cancelTask(CancelTaskRequest.fromJSON({ id: stop.id }))).rejects.toMatchObject({ envelopeCode: -32002 });
  });

  it('reports an unknown task as -32001', async () => {
    await expect(client.getTask(GetTaskRequest.fromJSON({ id: randomUUID() }))).rejects.toMatchObject({ envelopeCode: -32001 });
  });

  it('forwards the caller session id', async () => {
    await client.sendMessage(sdkMessage([{ text: 'hello' }]), { serviceParameters: { 'X-Session-ID': '0badc0de' } });
    expect(mesh.sessions).toEqual([{ op: 'create', sessionId: '0badc0de' }]);
  });
});

describe('A2A v0.3 through @a2a-js/sdk (its v0.3 card reader and LegacyJsonRpcTransport)', () => {
  let client: Client;

  beforeAll(async () => {
    const { json } = await card('/.well-known/agent.json');
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
      }),
    );
    // What a v0.3 client reads of the card: url, preferredTransport, protocolVersion.
    client = await factory.createFromAgentCard(parseLegacyAgentCard(json));
  });

  it('speaks v0.3 (A2A-Version 0.3, slash-named methods)', () => {
    expect(client.protocolVersion).toBe('0.3');
  });

  it('sends, stops at input-required with the data part, continues with approval, and gets the task', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add legacy-item' }])));
    expect(stop.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(mesh.conversations.get(stop.id)!.a2aOrigin?.dialect).toBe('v0.3');
    const approval = mesh.conversations.get(stop.id)!.pendingApprovals[0]!;
    expect(statusParts(stop)[1]).toEqual({
      $case: 'data',
      value: { approval: expect.objectContaining({ uuid: approval.uuid, chain: [] }) },
    });

    const done = asTask(await client.sendMessage(sdkMessage([{ text: 'yes' }], { taskId: stop.id })));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done)).toBe('Done. resources_add: added legacy-item');

    const got = await client.getTask(GetTaskRequest.fromJSON({ id: stop.id }));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.contextId).toBe(stop.contextId);
  });

  it('streams with final: true on the last status-update', async () => {
    const events = await collect(client.sendMessageStream(sdkMessage([{ text: 'stream legacy' }])));
    expect(events.map((event) => event.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const last = events.at(-1)!.payload;
    if (last?.$case !== 'statusUpdate') throw new Error('no final status');
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The SDK's v0.3 reader drops `final`; the raw stream below checks it.
  });

  it('cancels a waiting task', async () => {
    const stop = asTask(await client.sendMessage(sdkMessage([{ text: 'add legacy-cancel' }])));
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: stop.id }));
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe('streams on the wire', () => {
  async function sse(method: string, params: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    });
    const text = await response.text();
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => JSON.parse(block.slice('data: '.length)) as any);
    return { response, events };
  }

  it('v0.3: status-update events carry final, the last one true, all with the request id', async () => {
    const { response, events } = await sse('message/stream', {
      message: { kind: 'message', messageId: 's1', role: 'user', parts: [{ kind: 'text', text: 'add wire-item' }] },
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-session-id')).toMatch(/^[0-9a-f]{8}$/);
    expect(events.every((event) => event.jsonrpc === '2.0' && event.id === 7)).toBe(true);
    expect(events.map((event) => event.result.kind)).toEqual(['task', 'status-update', 'status-update']);
    expect(events[0].result.status.state).toBe('submitted');
    expect(events[1].result).toMatchObject({ status: { state: 'working' }, final: false });
    expect(events[2].result).toMatchObject({ status: { state: 'input-required' }, final: true });
  });

  it('v1.0: statusUpdate and task events in ProtoJSON', async () => {
    const { events } = await sse(
      'SendStreamingMessage',
      { message: { messageId: 's2', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      { 'A2A-Version': '1.0' },
    );
    expect(events.map((event) => Object.keys(event.result)[0])).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(events[0].result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(events[1].result.statusUpdate.status.state).toBe('TASK_STATE_WORKING');
    expect(events[3].result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('refuses a stream for an unknown task with a plain JSON-RPC error', async () => {
    const response = await rpc('message/stream', {
      message: { kind: 'message', messageId: 's3', role: 'user', taskId: randomUUID(), parts: [{ kind: 'text', text: 'x' }] },
    });
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.json.error.code).toBe(-32001);
  });

  it('refuses a stream whose task cannot be created with a plain JSON-RPC error', async () => {
    mesh.failNext = new RpcError(
      GrpcStatus.UNAVAILABLE,
      'No connection established',
      '/asg.orchestrator.v1.OrchestratorService/CreateConversation',
    );
    const response = await rpc('message/stream', {
      message: { kind: 'message', messageId: 's5', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
    });
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.json.error).toMatchObject({ code: -32603, message: expect.stringContaining('CreateConversation') });
  });

  it('ends the stream with a JSON-RPC error event when the turn fails after it started', async () => {
    const stop = await rpc('message/send', typePartsMessage('add fail-item'));
    const id = stop.json.result.id;
    // The continuation is checked (one read), then the approval call fails.
    mesh.sessions.length = 0;
    const original = mesh.resolveApproval.bind(mesh);
    mesh.resolveApproval = async () => {
      throw new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', '/asg.orchestrator.v1.OrchestratorService/ResolveApproval');
    };
    try {
      const { events } = await sse('message/stream', {
        message: { kind: 'message', messageId: 's4', role: 'user', taskId: id, parts: [{ kind: 'text', text: 'ok' }] },
      });
      expect(events.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32603, message: expect.stringContaining('service unavailable: ResolveApproval on the orchestrator failed') },
      });
    } finally {
      mesh.resolveApproval = original;
    }
  });
});

describe('JSON-RPC errors (HTTP 200)', () => {
  it('-32700 for a body that is not JSON', async () => {
    const response = await raw('{"jsonrpc": "2.0", "method": ');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('-32600 for a request that is not JSON-RPC 2.0', async () => {
    expect((await raw('{"jsonrpc": "1.0", "id": 3, "method": "tasks/get"}')).json).toMatchObject({ id: 3, error: { code: -32600 } });
    expect((await raw('[{"jsonrpc": "2.0", "id": 3, "method": "tasks/get"}]')).json.error.code).toBe(-32600);
  });

  it('-32601 for an unknown method, naming it', async () => {
    const response = await rpc('tasks/frobnicate', { id: 'x' }, {}, 42);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      jsonrpc: '2.0',
      id: 42,
      error: { code: -32601, message: expect.stringContaining('tasks/frobnicate') },
    });
  });

  it('-32602 for bad params, naming the field', async () => {
    const noParts = await rpc('message/send', { message: { role: 'user', parts: [] } });
    expect(noParts.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('message.parts') });
    const badKind = await rpc('message/send', { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'video' }] } });
    expect(badKind.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('message.parts[0].kind') });
    const noId = await rpc('tasks/get', {});
    expect(noId.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('id') });
    const emptyText = await rpc('message/send', typePartsMessage('   '));
    expect(emptyText.json.error.code).toBe(-32602);
  });

  it('-32001 for an unknown task, in get, send and cancel', async () => {
    const id = randomUUID();
    expect((await rpc('tasks/get', { id })).json.error).toMatchObject({ code: -32001, message: `task not found: ${id}` });
    expect((await rpc('message/send', typePartsMessage('yes', { taskId: id }))).json.error.code).toBe(-32001);
    expect((await rpc('CancelTask', { id }, { 'A2A-Version': '1.0' })).json.error.code).toBe(-32001);
  });

  it('-32002 for cancelling a task that waits for nothing', async () => {
    const done = await rpc('message/send', typePartsMessage('hello'));
    expect((await rpc('tasks/cancel', { id: done.json.result.id })).json.error).toMatchObject({
      code: -32002,
      message: expect.stringContaining('not cancelable'),
    });
  });

  it('-32003 for push notification configuration, -32009 for an A2A version this agent does not speak', async () => {
    expect((await rpc('tasks/pushNotificationConfig/set', {})).json.error.code).toBe(-32003);
    expect((await rpc('CreateTaskPushNotificationConfig', {}, { 'A2A-Version': '1.0' })).json.error.code).toBe(-32003);
    expect((await rpc('SendMessage', {}, { 'A2A-Version': '2.0' })).json.error.code).toBe(-32009);
  });

  it('-32603 with the failing call named when a backend is down, without secrets', async () => {
    mesh.failNext = new RpcError(
      GrpcStatus.UNAVAILABLE,
      'connect failed with Bearer abc.def.ghi',
      '/asg.orchestrator.v1.OrchestratorService/CreateConversation',
    );
    const response = await rpc('message/send', typePartsMessage('hello'));
    expect(response.json.error.code).toBe(-32603);
    expect(response.json.error.message).toContain('CreateConversation on the orchestrator');
    expect(response.json.error.message).not.toContain('abc.def.ghi');
  });

  it('-32602 for INVALID_ARGUMENT from the orchestrator', async () => {
    mesh.failNext = new RpcError(
      GrpcStatus.INVALID_ARGUMENT,
      'message must be a non-empty string',
      '/asg.orchestrator.v1.OrchestratorService/CreateConversation',
    );
    expect((await rpc('message/send', typePartsMessage('hello'))).json.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('non-empty'),
    });
  });
});
