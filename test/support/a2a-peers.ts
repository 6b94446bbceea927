import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { freePort } from './ports.js';
import { spawnProcess, type AsgProcess } from './agent-process.js';

/**
 * A2A peers for tests, all on 127.0.0.1 and all real HTTP:
 *
 * - `startSdkAgent`: an agent built with @a2a-js/sdk's own server (DefaultRequestHandler and
 *   its JSON-RPC express handler), speaking A2A v1.0 and, through the SDK's legacyCompat,
 *   v0.3 on the same endpoint.
 * - `startTypePartsAgent`: the early type-parts dialect (parts `{"type":"text"}`, one artifact, the
 *   status message a plain string) on plain node:http.
 * - `startHangingAgent`: serves a card, then never answers a JSON-RPC request.
 * - `startMockLlm`: @dwmkerr/mock-llm as a process, whose v0.3 echo agent answers with a Message.
 *
 * The SDK and type-parts agents behave alike: the first message of a task asks for an approval
 * (input-required, the text "Approval required (id: <uuid>): <description>" and, except in the
 * type-parts dialect, a data part `{"approval": {...}}`); "approved" (or a data part
 * `{"approved": true}`) completes the task with the artifact text `done: <first message>`,
 * "rejected" cancels it, and anything else leaves it waiting. Every HTTP request they receive
 * is recorded with its headers.
 */

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body of a POST, when there was one. */
  body?: unknown;
  /** startHangingAgent only: when the client gave up on the request (its connection closed). */
  closedAt?: number;
}

/** What the agent's logic saw in one message: its text and its data parts. */
interface ReceivedMessage {
  taskId: string;
  text: string;
  data: unknown[];
}

export interface A2aTestPeer {
  /** The base URL (origin) of the agent. */
  baseUrl: string;
  /** Where JSON-RPC requests go. */
  endpoint: string;
  /** Every HTTP request received, card fetches included, oldest first. */
  requests: RecordedRequest[];
  /** Only the JSON-RPC requests (POSTs). */
  rpcRequests(): RecordedRequest[];
  messages: ReceivedMessage[];
  close(): Promise<void>;
}

export const APPROVAL_TOOL = 'resources_remove';
export const APPROVAL_ARGS = { id: 'r-42' };

/** What the test agents put in their approval request, for assertions. */
export function approvalDescription(text: string): string {
  return `Remove resource r-42 (asked: ${text})`;
}

function approvalText(uuid: string, text: string): string {
  return `Approval required (id: ${uuid}): ${approvalDescription(text)}`;
}

/** `true` approve, `false` reject, `undefined` neither (the approval words an A2A server knows, in short). */
function decisionOf(text: string, data: unknown[]): boolean | undefined {
  for (const item of data) {
    if (item && typeof item === 'object' && typeof (item as { approved?: unknown }).approved === 'boolean')
      return (item as { approved: boolean }).approved;
  }
  const word = text.trim().toLowerCase();
  if (['yes', 'y', 'true', 'approve', 'approved', 'ok', 'confirm'].includes(word)) return true;
  if (['no', 'n', 'false', 'reject', 'rejected', 'deny', 'cancel'].includes(word)) return false;
  return undefined;
}

async function listenLoopback(server: Server, port = 0): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function rpcOnly(requests: RecordedRequest[]): () => RecordedRequest[] {
  return () => requests.filter((request) => request.method === 'POST');
}

// ---------------------------------------------------------------------------------------------
// The @a2a-js/sdk agent (v1.0, and v0.3 through legacyCompat)

export interface SdkAgentOptions {
  name?: string;
  /** Protocol versions the card declares and the endpoint accepts; default both. */
  versions?: Array<'1.0' | '0.3'>;
  /** Serve the agent card (default true); without it the bridge has to probe. */
  card?: boolean;
  /** Put the approval in a data part besides the text (default true). */
  approvalData?: boolean;
  /** The JSON-RPC endpoint's path (default /a2a). */
  path?: string;
  /** The card declares `capabilities.streaming` (default false): the SDK then serves the streaming methods and resubscribe. */
  streaming?: boolean;
  /**
   * Closes the connection of this many streaming sends (message/stream, SendStreamingMessage)
   * right after their first event, as a dropped network does; the task goes on at the agent.
   * An approved task then waits to finish until the client asks about it again (a resubscribe
   * or a read), so that what the client gets next is the rest of the task.
   */
  cutStreams?: number;
  /** Answers every resubscribe with A2A's "unsupported operation" (-32004): the client has to read the task instead. */
  refuseResubscribe?: boolean;
}

const STREAMING_SENDS = new Set(['message/stream', 'SendStreamingMessage']);
const RESUBSCRIBES = new Set(['tasks/resubscribe', 'SubscribeToTask']);
const TASK_FOLLOW_UPS = new Set([...RESUBSCRIBES, 'tasks/get', 'GetTask']);

const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const dataPart = (data: unknown): Part => ({ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: '' });

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The approval flow of the test agents, on the SDK's executor interface. */
class ApprovalExecutor implements AgentExecutor {
  private readonly firstText = new Map<string, string>();

  constructor(
    private readonly messages: ReceivedMessage[],
    private readonly approvalData: boolean,
    /** Resolves when the approved task may finish (startSdkAgent's cutStreams). */
    private readonly mayFinish: (taskId: string) => Promise<void> = async () => undefined,
  ) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const parts = context.userMessage.parts;
    const text = parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join('\n');
    const data = parts.flatMap((part) => (part.content?.$case === 'data' ? [part.content.value as unknown] : []));
    this.messages.push({ taskId, text, data });
    const status = (state: TaskState, message: Message) =>
      AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined });

    if (!context.task) {
      this.firstText.set(taskId, text);
      const uuid = randomUUID();
      const approval = { uuid, tool_name: APPROVAL_TOOL, tool_args: APPROVAL_ARGS, description: approvalDescription(text), chain: [] };
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const messageParts = [textPart(approvalText(uuid, text)), ...(this.approvalData ? [dataPart({ approval })] : [])];
      bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, messageParts)));
      bus.finished();
      return;
    }

    // The SDK wants a task or a message as the first event of every execution, follow-ups too.
    bus.publish(AgentEvent.task(context.task));
    const decision = decisionOf(text, data);
    if (decision === true) {
      bus.publish(status(TaskState.TASK_STATE_WORKING, agentMessage(taskId, contextId, [textPart('working on it')])));
      await this.mayFinish(taskId);
      const answer = `done: ${this.firstText.get(taskId) ?? ''}`;
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: randomUUID(),
            name: 'result',
            description: '',
            parts: [textPart(answer)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(status(TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, [textPart('approved and done')])));
    } else if (decision === false) {
      bus.publish(status(TaskState.TASK_STATE_CANCELED, agentMessage(taskId, contextId, [textPart('rejected: nothing was done')])));
    } else {
      bus.publish(
        status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, [textPart('Please answer "approved" or "rejected".')])),
      );
    }
    bus.finished();
  }

  async cancelTask(): Promise<void> {}
}

export async function startSdkAgent(options: SdkAgentOptions = {}): Promise<A2aTestPeer> {
  const versions = options.versions ?? ['1.0', '0.3'];
  const path = options.path ?? '/a2a';
  const requests: RecordedRequest[] = [];
  const messages: ReceivedMessage[] = [];
  const card: AgentCard = {
    name: options.name ?? 'sdk-agent',
    description: 'A test agent that asks for an approval before it acts',
    // Filled in once the port is known.
    supportedInterfaces: [],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: options.streaming ?? false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'remove',
        name: 'Remove resources',
        description: 'Removes resources, after an approval',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  // cutStreams: an approved task finishes once the client asks about it after its stream was cut.
  let cutsLeft = options.cutStreams ?? 0;
  const followed = new Map<string, () => void>();
  const asked = new Set<string>();
  const mayFinish = (taskId: string) =>
    options.cutStreams === undefined || asked.has(taskId)
      ? Promise.resolve()
      : new Promise<void>((resolve) => followed.set(taskId, resolve));
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new ApprovalExecutor(messages, options.approvalData ?? true, mayFinish),
  );
  const legacyCompat = { enabled: versions.includes('0.3') };
  const app = express();
  app.use(express.json(), (req, res, next) => {
    requests.push({ method: req.method, path: req.path, headers: req.headers, body: req.method === 'POST' ? req.body : undefined });
    const method = (req.body as { method?: unknown } | undefined)?.method;
    if (typeof method === 'string' && TASK_FOLLOW_UPS.has(method)) {
      const id = String((req.body as { params?: { id?: unknown } }).params?.id ?? '');
      const release = () => {
        asked.add(id);
        followed.get(id)?.();
      };
      if (RESUBSCRIBES.has(method) && options.refuseResubscribe) {
        res.json({
          jsonrpc: '2.0',
          id: (req.body as { id?: unknown }).id ?? null,
          error: { code: -32004, message: 'resubscribe is not supported here' },
        });
        return;
      }
      if (!RESUBSCRIBES.has(method)) release();
      else {
        // Once the resubscribed stream has sent the task as it stands: the rest of its events follow on it.
        const write = res.write.bind(res) as (...args: unknown[]) => boolean;
        (res as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]) => {
          const written = write(...args);
          if (String(args[0]).includes('data:')) release();
          return written;
        };
      }
    }
    if (typeof method === 'string' && STREAMING_SENDS.has(method) && cutsLeft > 0) {
      cutsLeft -= 1;
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      (res as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]) => {
        const written = write(...args);
        // After the first event is on its way: the connection drops, the task goes on here.
        if (String(args[0]).includes('data:')) setImmediate(() => res.socket?.destroy());
        return written;
      };
    }
    next();
  });
  if (options.card ?? true)
    app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat, cache: { maxAge: 0 } }));
  app.use(path, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  const server = createServer(app);
  const port = await listenLoopback(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  card.supportedInterfaces = versions.map((protocolVersion) => ({
    url: `${baseUrl}${path}`,
    protocolBinding: 'JSONRPC',
    tenant: '',
    protocolVersion,
  }));
  return { baseUrl, endpoint: `${baseUrl}${path}`, requests, rpcRequests: rpcOnly(requests), messages, close: () => closeServer(server) };
}

// ---------------------------------------------------------------------------------------------
// The type-parts dialect on plain node:http

interface TypePartsTask {
  id: string;
  state: string;
  message: string;
  artifactText?: string;
  firstText: string;
}

export async function startTypePartsAgent(options: { name?: string } = {}): Promise<A2aTestPeer> {
  const requests: RecordedRequest[] = [];
  const messages: ReceivedMessage[] = [];
  const tasks = new Map<string, TypePartsTask>();
  let baseUrl = '';

  const toResult = (task: TypePartsTask) => ({
    id: task.id,
    status: { state: task.state, message: task.message },
    ...(task.artifactText !== undefined ? { artifact: { parts: [{ type: 'text', text: task.artifactText }] } } : {}),
  });

  const rpc = (body: { id?: unknown; method?: unknown; params?: Record<string, unknown> }): Record<string, unknown> => {
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id: body.id ?? null, result });
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id: body.id ?? null, error: { code, message } });
    const params = body.params ?? {};
    if (body.method === 'message/send') {
      const message = params.message as { parts?: Array<{ type?: string; text?: string }> } | undefined;
      if (!message || !Array.isArray(message.parts) || message.parts.some((part) => part.type !== 'text'))
        return fail(-32602, 'params.message.parts must be text parts {"type":"text","text"}');
      const text = message.parts.map((part) => part.text ?? '').join('\n');
      const taskId = typeof params.taskId === 'string' ? params.taskId : undefined;
      messages.push({ taskId: taskId ?? '', text, data: [] });
      if (taskId === undefined) {
        const task: TypePartsTask = {
          id: randomUUID(),
          state: 'input-required',
          message: approvalText(randomUUID(), text),
          firstText: text,
        };
        tasks.set(task.id, task);
        return reply(toResult(task));
      }
      const task = tasks.get(taskId);
      if (!task) return fail(-32001, `task not found: ${taskId}`);
      const decision = decisionOf(text, []);
      if (decision === true)
        Object.assign(task, { state: 'completed', message: 'approved and done', artifactText: `done: ${task.firstText}` });
      else if (decision === false) Object.assign(task, { state: 'canceled', message: 'rejected: nothing was done' });
      else task.message = 'Please answer "approved" or "rejected".';
      return reply(toResult(task));
    }
    if (body.method === 'tasks/get') {
      const id = typeof params.id === 'string' ? params.id : '';
      const task = tasks.get(id);
      return task ? reply(toResult(task)) : fail(-32001, `task not found: ${id}`);
    }
    return fail(-32601, `method not found: ${String(body.method)}`);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', baseUrl).pathname;
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      // A type-parts agent serves its card at agent.json only: the bridge's fallback path.
      if (req.method === 'GET' && path === '/.well-known/agent.json') {
        return send(200, {
          name: options.name ?? 'type-parts-agent',
          description: 'A type-parts test agent',
          url: baseUrl,
          skills: [{ id: 'resources_remove', name: 'resources_remove', description: 'Removes a resource' }],
        });
      }
      if (req.method === 'POST' && path === '/a2a') {
        if (body === undefined || typeof body !== 'object')
          return send(200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
        return send(200, rpc(body as Parameters<typeof rpc>[0]));
      }
      send(404, { error: 'not found' });
    });
  });
  const port = await listenLoopback(server);
  baseUrl = `http://127.0.0.1:${port}`;
  return { baseUrl, endpoint: `${baseUrl}/a2a`, requests, rpcRequests: rpcOnly(requests), messages, close: () => closeServer(server) };
}

// ---------------------------------------------------------------------------------------------
// A peer that never answers, and an address where nobody listens

/** Serves a v0.3 card at once, then holds every POST open without ever answering. */
export async function startHangingAgent(): Promise<A2aTestPeer> {
  const requests: RecordedRequest[] = [];
  let baseUrl = '';
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', baseUrl).pathname;
    const recorded: RecordedRequest = { method: req.method ?? '', path, headers: req.headers };
    requests.push(recorded);
    res.on('close', () => (recorded.closedAt = Date.now()));
    if (req.method === 'GET' && path === '/.well-known/agent-card.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ name: 'hanging', description: 'never answers', url: `${baseUrl}/a2a`, protocolVersion: '0.3.0', skills: [] }),
      );
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(404).end();
      return;
    }
    // Read the body and keep the response open: the bridge's deadline has to end it.
    req.resume();
  });
  const port = await listenLoopback(server);
  baseUrl = `http://127.0.0.1:${port}`;
  return { baseUrl, endpoint: `${baseUrl}/a2a`, requests, rpcRequests: rpcOnly(requests), messages: [], close: () => closeServer(server) };
}

/** A loopback URL with nobody listening (the port was free a moment ago). */
export async function unreachableUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/a2a`;
}

// ---------------------------------------------------------------------------------------------
// @dwmkerr/mock-llm and its v0.3 agents

export interface MockLlm {
  baseUrl: string;
  /** The URL of one of its A2A agents: `echo-agent`, `countdown-agent`, `message-counter-agent`. */
  agentUrl(agent: string): string;
  process: AsgProcess;
  stop(): Promise<void>;
}

/** Starts mock-llm on 127.0.0.1 and a free port; its A2A agents speak v0.3 (@a2a-js/sdk 0.3). */
export async function startMockLlm(): Promise<MockLlm> {
  const port = await freePort();
  const entry = new URL('../../node_modules/@dwmkerr/mock-llm/dist/main.js', import.meta.url).pathname;
  const child = spawnProcess(process.execPath, [entry], { ...process.env, HOST: '127.0.0.1', PORT: String(port) });
  try {
    await child.waitForLine((line) => line.includes('server running on'), 15_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    agentUrl: (agent) => `${baseUrl}/a2a/agents/${agent}`,
    process: child,
    stop: async () => {
      await child.stop();
    },
  };
}
