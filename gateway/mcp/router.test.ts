import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, type ElicitRequestFormParams, type ElicitResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../../services/common/config/schema.js';
import { currentContext } from '../../services/common/context.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import type { ApprovalOutcome, Turn } from '../app/agent.js';
import type { Decision } from '../app/decision.js';
import { rawRequest } from '../../test/support/raw-http.js';
import { createHttpApp } from '../http/app.js';
import { mcpRouter } from './router.js';
import type { TurnAgent } from './turns.js';

/**
 * The agent served as an MCP tool: the MCP face over real HTTP on
 * 127.0.0.1, in front of an in-memory stand-in for the mesh, driven by the real MCP SDK client
 * in both protocol generations — 2026-07-28 (stateless, elicitation by input_required and a
 * retry) and 2025 (a session, elicitation as a server→client request). The whole mesh is in
 * test/e2e/mcp-face.test.ts.
 */

/** The request log lines (msg "request") of the gateways under test. */
const requestLines: Record<string, unknown>[] = [];
const quiet: Logger = {
  debug() {},
  info(msg, fields) {
    if (msg === 'request' && fields) requestLines.push(fields);
  },
  warn() {},
  error() {},
  child: () => quiet,
};

/** The orchestrator and store in miniature: "add A" stops for approval, "add A then B" stops twice, anything else is echoed. */
class FakeMesh implements TurnAgent {
  readonly conversations = new Map<string, Conversation>();
  /** Names of the calls that ran after an approval. */
  readonly ran: string[] = [];
  /** Every operation with the session id and authorization in its request context. */
  readonly calls: { op: string; sessionId: string | undefined; authorization: string | undefined }[] = [];
  /** Approvals still to ask for after the current one, by conversation. */
  private readonly queued = new Map<string, string[]>();

  private note(op: string): void {
    const context = currentContext();
    this.calls.push({ op, sessionId: context?.sessionId || undefined, authorization: context?.authorization });
  }

  private message(conversation: Conversation, role: MessageRole, content: string): void {
    conversation.messages.push({ id: randomUUID(), role, content, createdAt: new Date(), seq: conversation.messages.length + 1 });
  }

  private stop(conversation: Conversation, name: string): TurnResult {
    const approval: PendingApproval = {
      uuid: randomUUID(),
      conversationId: conversation.id,
      toolName: 'resources_add',
      toolArgsJson: JSON.stringify({ name, value: 1 }),
      description: `resources_add on resources: {"name":"${name}","value":1}`,
      createdAt: new Date(),
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: '',
      toolCallId: `call-${name}`,
      updatedAt: new Date(),
      votes: [],
      agentChain: [],
    };
    conversation.status = ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL;
    conversation.pendingApproval = approval;
    conversation.pendingApprovals = [approval];
    return { response: '', waitingApproval: true, approval };
  }

  private turn(conversation: Conversation, text: string): TurnResult {
    const waiting = conversation.pendingApprovals[0];
    if (waiting) return { response: `still waiting for ${waiting.uuid}`, waitingApproval: true, approval: waiting };
    this.message(conversation, MessageRole.MESSAGE_ROLE_USER, text);
    const add = /\badd (\S+)(?: then (\S+))?/.exec(text);
    if (add) {
      if (add[2]) this.queued.set(conversation.id, [add[2]]);
      return this.stop(conversation, add[1]!);
    }
    const response = `echo: ${text}`;
    this.message(conversation, MessageRole.MESSAGE_ROLE_ASSISTANT, response);
    return { response, waitingApproval: false };
  }

  private find(id: string): Conversation {
    const conversation = this.conversations.get(id);
    if (!conversation)
      throw new RpcError(GrpcStatus.NOT_FOUND, `conversation ${id} not found`, '/asg.store.v1.ConversationStoreService/GetConversation');
    return conversation;
  }

  async createConversation(message?: string) {
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
    };
    this.conversations.set(conversation.id, conversation);
    const result = message === undefined ? undefined : this.turn(conversation, message);
    return { conversation: structuredClone(conversation), result };
  }

  async getConversation(id: string): Promise<Conversation> {
    this.note('get');
    return structuredClone(this.find(id));
  }

  async sendMessage(conversationId: string, message: string): Promise<Turn> {
    this.note('send');
    const conversation = this.find(conversationId);
    const result = this.turn(conversation, message);
    return { conversation: structuredClone(conversation), result };
  }

  async resolveApproval(uuid: string, decision: Decision): Promise<ApprovalOutcome> {
    this.note(`resolve:${decision}`);
    const conversation = [...this.conversations.values()].find((candidate) =>
      candidate.pendingApprovals.some((approval) => approval.uuid === uuid),
    );
    if (!conversation) {
      const decided = this.decided.get(uuid);
      if (decided)
        return { decided: false, approval: decided.approval, decision: decided.decision, decidedAt: new Date('2026-01-02T03:04:05Z') };
      throw new RpcError(GrpcStatus.NOT_FOUND, `approval ${uuid} not found`, '/asg.orchestrator.v1.OrchestratorService/ResolveApproval');
    }
    const approval = conversation.pendingApprovals[0]!;
    this.decided.set(uuid, { approval, decision });
    conversation.pendingApprovals = [];
    conversation.pendingApproval = undefined;
    conversation.status = ConversationStatus.CONVERSATION_STATUS_ACTIVE;
    if (decision === 'rejected') {
      this.queued.delete(conversation.id);
      return {
        decided: true,
        conversation: structuredClone(conversation),
        result: { response: 'Operation cancelled by user.', waitingApproval: false },
      };
    }
    const name = String((JSON.parse(approval.toolArgsJson) as { name?: string }).name);
    this.ran.push(name);
    const next = this.queued.get(conversation.id)?.shift();
    if (next) return { decided: true, conversation: structuredClone(conversation), result: this.stop(conversation, next) };
    const response = `Done. resources_add: added ${name}`;
    this.message(conversation, MessageRole.MESSAGE_ROLE_ASSISTANT, response);
    return { decided: true, conversation: structuredClone(conversation), result: { response, waitingApproval: false } };
  }

  private readonly decided = new Map<string, { approval: PendingApproval; decision: Decision }>();

  /** Decides an approval as another caller would (REST), bypassing the MCP face. */
  async decideElsewhere(uuid: string, decision: Decision): Promise<void> {
    await this.resolveApproval(uuid, decision);
  }
}

interface Gateway {
  url: string;
  close(): Promise<void>;
}

async function startGateway(mesh: FakeMesh, overrides: Record<string, unknown> = {}): Promise<Gateway> {
  const config = configSchema.parse({ name: 'test-agent', description: 'An agent under test', host: '127.0.0.1', port: 0, ...overrides });
  const app = createHttpApp([mcpRouter({ agent: mesh, config, log: quiet, version: '9.8.7' })], quiet);
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Era = 'modern' | 'legacy';
const ERAS: Era[] = ['modern', 'legacy'];

interface ConnectOptions {
  /** Declares the elicitation capability and answers every question with this. */
  elicit?: (params: ElicitRequestFormParams) => ElicitResult | Promise<ElicitResult>;
  headers?: Record<string, string>;
}

const clients: Client[] = [];

async function connect(url: string, era: Era, options: ConnectOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'mcp-face-test', version: '1.0.0' },
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
  expect(client.getNegotiatedProtocolVersion()! >= '2026-07-28').toBe(era === 'modern');
  return client;
}

function text(result: { content?: unknown }): string {
  const content = result.content as { type: string; text?: string }[];
  return content.map((block) => block.text ?? '').join('\n');
}

let mesh: FakeMesh;
let gateway: Gateway;

beforeAll(async () => {
  mesh = new FakeMesh();
  gateway = await startGateway(mesh);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await gateway.close();
});

beforeEach(() => {
  mesh.ran.length = 0;
  mesh.calls.length = 0;
});

describe.each(ERAS)('the agent as an MCP server (%s protocol)', (era) => {
  it('lists one tool named, described and shaped by serve_mcp.tool', async () => {
    const client = await connect(gateway.url, era);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(1);
    const [tool] = tools;
    expect(tool).toMatchObject({
      name: 'ask',
      title: 'test-agent',
      description: expect.stringContaining('approval'),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    });
    expect(tool!.inputSchema).toMatchObject({
      type: 'object',
      properties: {
        message: { type: 'string', description: 'What to ask the agent, in plain language.' },
        conversation_id: { type: 'string' },
      },
      required: ['message'],
    });
    expect((tool!.inputSchema.properties as Record<string, { description: string }>).conversation_id!.description).toContain('continue');
    expect(tool!.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['conversation_id', 'response', 'waiting_approval']),
    });
    expect(client.getServerVersion()).toMatchObject({ name: 'test-agent', version: '9.8.7' });
  });

  it('runs a read turn in a new conversation and answers with text and structuredContent', async () => {
    const client = await connect(gateway.url, era);
    const result = await client.callTool({ name: 'ask', arguments: { message: 'list all resources' } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('echo: list all resources');
    const structured = result.structuredContent as Record<string, unknown>;
    expect(structured).toEqual({ conversation_id: expect.any(String), response: 'echo: list all resources', waiting_approval: false });
    expect(mesh.conversations.has(structured.conversation_id as string)).toBe(true);
  });

  it('continues a conversation when called with its conversation_id', async () => {
    const client = await connect(gateway.url, era);
    const first = await client.callTool({ name: 'ask', arguments: { message: 'hello' } });
    const id = (first.structuredContent as { conversation_id: string }).conversation_id;
    const second = await client.callTool({ name: 'ask', arguments: { message: 'again', conversation_id: id } });
    expect(second.structuredContent).toEqual({ conversation_id: id, response: 'echo: again', waiting_approval: false });
    const users = mesh.conversations
      .get(id)!
      .messages.filter((m) => m.role === MessageRole.MESSAGE_ROLE_USER)
      .map((m) => m.content);
    expect(users).toEqual(['hello', 'again']);
  });

  it('stops for approval, asks through elicitation, and goes on after a yes', async () => {
    const asked: ElicitRequestFormParams[] = [];
    const client = await connect(gateway.url, era, {
      elicit: (params) => {
        asked.push(params);
        return { action: 'accept', content: { approve: true } };
      },
    });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add alpha' } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('Done. resources_add: added alpha');
    expect(result.structuredContent).toMatchObject({ response: 'Done. resources_add: added alpha', waiting_approval: false });
    expect(mesh.ran).toEqual(['alpha']);
    expect(asked).toHaveLength(1);
    const question = asked[0]!;
    expect(question.message).toMatch(
      /^The agent wants to run a tool that needs your approval\.\nApproval required \(id: [0-9a-f-]{36}\): resources_add on resources/,
    );
    expect(question.message).toContain('Tool: resources_add');
    expect(question.message).toContain('Arguments: {"name":"alpha","value":1}');
    expect(question.requestedSchema).toEqual({
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve', description: expect.stringContaining('resources_add'), default: false } },
      required: ['approve'],
    });
  });

  it('asks again when the turn stops again after a yes', async () => {
    let questions = 0;
    const client = await connect(gateway.url, era, {
      elicit: () => {
        questions += 1;
        return { action: 'accept', content: { approve: true } };
      },
    });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add first then second' } });
    expect(text(result)).toBe('Done. resources_add: added second');
    expect(questions).toBe(2);
    expect(mesh.ran).toEqual(['first', 'second']);
  });

  it.each([
    ['declined', { action: 'decline' }],
    ['cancelled', { action: 'cancel' }],
    ['answered approve: false', { action: 'accept', content: { approve: false } }],
  ] as [string, ElicitResult][])('rejects the approval when the question is %s, and runs nothing', async (_how, answer) => {
    const client = await connect(gateway.url, era, { elicit: () => answer });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add beta' } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('Operation cancelled by user.');
    expect(result.structuredContent).toMatchObject({ waiting_approval: false });
    expect(mesh.ran).toEqual([]);
    expect(mesh.calls.map((call) => call.op)).toContain('resolve:rejected');
  });

  it('returns the approval when the client cannot elicit; "yes" with the conversation_id approves it', async () => {
    const client = await connect(gateway.url, era);
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add gamma' } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { conversation_id: string; waiting_approval: boolean; approval: { uuid: string } };
    expect(structured).toMatchObject({
      waiting_approval: true,
      approval: {
        uuid: expect.any(String),
        tool_name: 'resources_add',
        tool_args: { name: 'gamma', value: 1 },
        description: expect.stringContaining('resources_add'),
      },
    });
    const uuid = structured.approval.uuid;
    expect(text(result)).toMatch(new RegExp(`^Approval required \\(id: ${uuid}\\): resources_add on resources`));
    expect(text(result)).toContain('did not declare the elicitation capability');
    expect(text(result)).toContain(`POST /approvals/${uuid}`);
    expect(mesh.ran).toEqual([]);

    const unclear = await client.callTool({
      name: 'ask',
      arguments: { message: 'what now?', conversation_id: structured.conversation_id },
    });
    expect(text(unclear)).toContain('was not sent to the agent; answer "yes" or "no"');
    expect(unclear.structuredContent).toMatchObject({ waiting_approval: true, approval: { uuid } });

    const yes = await client.callTool({ name: 'ask', arguments: { message: 'yes', conversation_id: structured.conversation_id } });
    expect(text(yes)).toBe('Done. resources_add: added gamma');
    expect(mesh.ran).toEqual(['gamma']);
  });

  it('"no" with the conversation_id rejects a waiting approval', async () => {
    const client = await connect(gateway.url, era);
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add delta' } });
    const id = (result.structuredContent as { conversation_id: string }).conversation_id;
    const no = await client.callTool({ name: 'ask', arguments: { message: 'No', conversation_id: id } });
    expect(text(no)).toBe('Operation cancelled by user.');
    expect(mesh.ran).toEqual([]);
  });

  it('says so when someone else decided the approval first, and runs nothing twice', async () => {
    const client = await connect(gateway.url, era, {
      elicit: async () => {
        // While the user looks at the question, an operator approves over REST.
        const waiting = [...mesh.conversations.values()].find((c) => c.pendingApprovals[0]?.toolArgsJson.includes('"epsilon"'))!;
        await mesh.decideElsewhere(waiting.pendingApprovals[0]!.uuid, 'approved');
        return { action: 'accept', content: { approve: false } };
      },
    });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add epsilon' } });
    expect(text(result)).toMatch(
      /Approval [0-9a-f-]{36} had already been approved at 2026-01-02T03:04:05.000Z; nothing was run this time\./,
    );
    expect(mesh.ran).toEqual(['epsilon']);
  });

  it('answers an unknown conversation_id and an empty message with tool errors', async () => {
    const client = await connect(gateway.url, era);
    const unknown = await client.callTool({ name: 'ask', arguments: { message: 'hi', conversation_id: 'no-such-conversation' } });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toBe('conversation no-such-conversation not found');
    const empty = await client.callTool({ name: 'ask', arguments: { message: '   ' } });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toContain('"message" must contain some text');
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const client = await connect(gateway.url, era);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Tool nope not found/);
  });

  it("forwards the caller's X-Session-ID and Authorization to the mesh", async () => {
    const client = await connect(gateway.url, era, { headers: { 'X-Session-ID': 'cafe1234', Authorization: 'Bearer token-for-mcp' } });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'who am i' } });
    const id = (result.structuredContent as { conversation_id: string }).conversation_id;
    expect(mesh.conversations.get(id)!.sessionId).toBe('cafe1234');
    expect(mesh.calls).toContainEqual({ op: 'create', sessionId: 'cafe1234', authorization: 'Bearer token-for-mcp' });
  });
});

describe('the MCP face over plain HTTP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  /** The JSON-RPC answer of a response, whether sent as JSON or as server-sent events. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const rpcAnswer = async (response: Response): Promise<any> => {
    const body = await response.text();
    if (!response.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(body);
    const data = body.split('\n').filter((line) => line.startsWith('data: ') && line.length > 6);
    return JSON.parse(data.at(-1)!.slice(6));
  };

  it("echoes the conversation's session id when the answer is plain JSON (2026-07-28), and logs it", async () => {
    const seen: (string | null)[] = [];
    const client = new Client({ name: 'header-watcher', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (typeof init?.body === 'string' && init.body.includes('tools/call')) seen.push(response.headers.get('x-session-id'));
      return response;
    };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { fetch: watching }));
    clients.push(client);
    const result = await client.callTool({ name: 'ask', arguments: { message: 'plain' } });
    const sessionId = mesh.conversations.get((result.structuredContent as { conversation_id: string }).conversation_id)!.sessionId;
    expect(sessionId).toMatch(/^[0-9a-f]{8}$/);
    expect(seen).toEqual([sessionId]);
    expect(requestLines.some((line) => line.path === '/mcp' && line.session_id === sessionId)).toBe(true);
  });

  it("logs the conversation's session id also when the answer streams (2025 SSE)", async () => {
    const response = await post({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'ask', arguments: { message: 'streamed' } },
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const answer = await rpcAnswer(response);
    const sessionId = mesh.conversations.get(answer.result.structuredContent.conversation_id)!.sessionId;
    await expect.poll(() => requestLines.some((line) => line.path === '/mcp' && line.session_id === sessionId)).toBe(true);
  });

  it('serves a 2025 call without a session statelessly: the approval comes back in the result', async () => {
    const response = await post({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'ask', arguments: { message: 'add zeta' } },
    });
    const answer = await rpcAnswer(response);
    expect(answer.result.structuredContent).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'resources_add', tool_args: { name: 'zeta', value: 1 } },
    });
    expect(answer.result.content[0].text).toMatch(/^Approval required \(id: [0-9a-f-]{36}\): /);
    expect(mesh.ran).toEqual([]);
  });

  it('opens a 2025 session on initialize and refuses an unknown session with 404', async () => {
    const opened = await post(initialize);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    await opened.text();
    const unknown = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': 'not-a-session', 'mcp-protocol-version': '2025-06-18' },
    );
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      error: { code: -32001, message: expect.stringContaining('send initialize to open a new one') },
    });
  });

  it('refuses a requestState it did not make with -32602', async () => {
    const client = await connect(gateway.url, 'modern');
    const refused = client.callTool({ name: 'ask', arguments: { message: 'hi' }, requestState: 'forged' } as never);
    await expect(refused).rejects.toThrow(/Invalid or expired requestState/);
  });

  it('refuses a foreign Origin (403) and, on a loopback listener, a foreign Host (421: DNS rebinding) — the gateway-wide guard', async () => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify(initialize),
    });
    expect(response.status).toBe(403);
    const rebound = await rawRequest(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(rebound.status).toBe(421);
    const plain = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(plain.status).toBe(415);
  });
});

describe('asking is bounded by the turn deadline (chat.turn_timeout)', () => {
  let slow: Gateway;
  beforeAll(async () => {
    slow = await startGateway(mesh, { chat: { turn_timeout: '300ms' } });
  });
  afterAll(() => slow.close());

  const lateYes = async (): Promise<ElicitResult> => {
    await new Promise((resolve) => setTimeout(resolve, 450));
    return { action: 'accept', content: { approve: true } };
  };

  it('2026-07-28: a yes after the deadline is applied, but the next stop is handed back, not asked', async () => {
    let questions = 0;
    const client = await connect(slow.url, 'modern', {
      elicit: () => {
        questions += 1;
        return lateYes();
      },
    });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add late1 then late2' } });
    expect(questions).toBe(1);
    expect(mesh.ran).toEqual(['late1']);
    expect(result.structuredContent).toMatchObject({ waiting_approval: true, approval: { tool_args: { name: 'late2' } } });
    expect(text(result)).toContain('the turn deadline (chat.turn_timeout) of this call has passed');
  });

  it('2025: a question unanswered by the deadline hands the approval back, undecided', async () => {
    const client = await connect(slow.url, 'legacy', { elicit: lateYes });
    const result = await client.callTool({ name: 'ask', arguments: { message: 'add late3' } });
    expect(mesh.ran).toEqual([]);
    expect(result.structuredContent).toMatchObject({ waiting_approval: true, approval: { tool_args: { name: 'late3' } } });
    expect(text(result)).toMatch(/The approval question got no answer \(.*timed out.*\), so nothing was decided\./i);
  });
});

describe('2025-era sessions are bounded', () => {
  const open = async (url: string): Promise<string> => {
    const response = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
      }),
    });
    await response.text();
    return response.headers.get('mcp-session-id')!;
  };
  const ping = async (url: string, sessionId: string): Promise<number> => {
    const response = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    await response.text();
    return response.status;
  };

  async function gatewayWith(sessions: { max?: number; idleMs?: number }): Promise<Gateway> {
    const config = configSchema.parse({
      name: 'test-agent',
      host: '127.0.0.1',
      port: 0,
      serve_mcp: { sessions: { ...(sessions.max !== undefined && { max: sessions.max }) } },
    });
    const server: Server = createServer(
      createHttpApp([mcpRouter({ agent: mesh, config, log: quiet, sessionIdleMs: sessions.idleMs })], quiet),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it('closes the session unused the longest to make room for a new one', async () => {
    const small = await gatewayWith({ max: 2 });
    try {
      const first = await open(small.url);
      const second = await open(small.url);
      expect(await ping(small.url, first)).toBe(200);
      const third = await open(small.url);
      expect(await ping(small.url, second)).toBe(404);
      expect(await ping(small.url, first)).toBe(200);
      expect(await ping(small.url, third)).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('closes a session unused for idleMs', async () => {
    const brief = await gatewayWith({ idleMs: 100 });
    try {
      const session = await open(brief.url);
      expect(await ping(brief.url, session)).toBe(200);
      // Unused for four times idleMs: the sweep (every idleMs) has closed it.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await ping(brief.url, session)).toBe(404);
    } finally {
      await brief.close();
    }
  });
});

describe('serve_mcp configuration', () => {
  it('names the tool and its argument as configured', async () => {
    const custom = await startGateway(mesh, {
      serve_mcp: {
        tool: {
          name: 'delegate',
          description: 'Hand a task to the resource agent.',
          argument_name: 'task',
          argument_description: 'The task, in words.',
        },
      },
    });
    try {
      for (const era of ERAS) {
        const client = await connect(custom.url, era);
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(['delegate']);
        expect(tools[0]).toMatchObject({
          description: 'Hand a task to the resource agent.',
          inputSchema: { properties: { task: { description: 'The task, in words.' } }, required: ['task'] },
        });
        const result = await client.callTool({ name: 'delegate', arguments: { task: 'hello there' } });
        expect(text(result)).toBe('echo: hello there');
        const waiting = await client.callTool({ name: 'delegate', arguments: { task: 'add eta' } });
        expect(text(waiting)).toContain('call delegate again with conversation_id');
        expect(text(waiting)).toContain('and task "yes" or "no"');
      }
    } finally {
      await custom.close();
    }
  });

  it('is not served when serve_mcp.enabled is false: /mcp is 404', async () => {
    const disabled = await startGateway(mesh, { serve_mcp: { enabled: false } });
    try {
      const response = await fetch(`${disabled.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: expect.stringContaining('no route for POST /mcp') });
    } finally {
      await disabled.close();
    }
  });

  it('refuses conversation_id as the argument name at startup', async () => {
    await expect(startGateway(mesh, { serve_mcp: { tool: { argument_name: 'conversation_id' } } })).rejects.toThrow(
      /must not be "conversation_id"/,
    );
  });
});
