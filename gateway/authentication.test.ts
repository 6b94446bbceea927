import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ResolveApprovalRequest } from '../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStatus, type AuditEntry } from '../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import type { Logger } from '../services/common/log.js';
import { FakeEventFeed } from '../test/support/fake-event-feed.js';
import { get, post, request } from '../test/support/http.js';
import { startTestIssuer, type TestIssuer, type TestKey } from '../test/support/jwks-issuer.js';
import { approvalRecord, conversationRecord } from '../test/support/store-records.js';
import type { Backends } from './app/backends.js';
import { createAgent } from './app/agent.js';
import { createGatewayApp } from './index.js';
import type { AppRouter } from './trpc/router.js';
import { setUpAuth } from './auth/index.js';

/**
 * Authentication on every face, over real HTTP on 127.0.0.1: the gateway's own
 * application (createGatewayApp) with the real application layer over an orchestrator and a
 * store in miniature, which record what they are asked. 401 without or with a bad token (with
 * WWW-Authenticate, in each face's error shape), 403 for a role that does not allow the action,
 * 200 with the right one — and a decision reaches the orchestrator with who made it and through
 * which face. Every refusal is in the audit, without the token.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

const TOKENS = {
  alice: 'alice-chat-approve-7d1e5a9c3b',
  chatty: 'chatty-chat-only-4f8e2d6a1c',
  approver: 'approver-only-9b3c7e1f5d2a',
  root: 'root-admin-token-2e6f0a4c8b',
};
const ENV = { ALICE_TOKEN: TOKENS.alice, CHATTY_TOKEN: TOKENS.chatty, APPROVER_TOKEN: TOKENS.approver, ROOT_TOKEN: TOKENS.root };
const APPROVAL = approvalRecord();
const REALM = 'Bearer realm="agent-stop-and-go"';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The orchestrator and store in miniature: conversation c1, chatty's, waits for APPROVAL. */
function miniature() {
  const decisions: ResolveApprovalRequest[] = [];
  const waiting = conversationRecord({
    owner: 'token:chatty',
    status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
    pendingApproval: APPROVAL,
    pendingApprovals: [APPROVAL],
    a2aOrigin: { dialect: 'v0.3', contextId: 'ctx-1' },
  });
  const done = conversationRecord();
  const orchestrator = {
    async createConversation() {
      return { conversation: done, result: { response: 'hi', waitingApproval: false } };
    },
    async sendMessage() {
      return { conversation: done, result: { response: 'hi', waitingApproval: false } };
    },
    async resolveApproval(request: ResolveApprovalRequest) {
      decisions.push(request);
      return { decided: true, approval: APPROVAL, conversation: done, result: { response: 'done', waitingApproval: false } };
    },
    async listTools() {
      return {
        tools: [{ name: 'resources_add', description: 'Adds', inputSchema: { type: 'object' }, destructive: true, server: 'resources' }],
      };
    },
  };
  const store = {
    async getConversation() {
      return { conversation: waiting };
    },
    async listConversations() {
      return { conversations: [], summary: undefined, nextPageToken: '' };
    },
    async listAudit() {
      return { entries: [], nextPageToken: '' };
    },
  };
  return { decisions, backends: { orchestrator, store } as unknown as Pick<Backends, 'orchestrator' | 'store'> };
}

interface Running {
  url: string;
  decisions: ResolveApprovalRequest[];
  audit: AuditEntry[];
  close(): Promise<void>;
}

async function serve(
  settings: Record<string, unknown>,
  options: { sink?: (entry: AuditEntry) => Promise<unknown>; log?: Logger } = {},
): Promise<Running> {
  const config = configSlice(configSchema.parse({ host: '127.0.0.1', port: 0, ...settings }), 'gateway');
  const audit: AuditEntry[] = [];
  const { decisions, backends } = miniature();
  const auth = setUpAuth({
    config,
    audit: {
      appendAudit: async ({ entry }) => {
        audit.push(entry);
        return options.sink?.(entry);
      },
    },
    log: options.log ?? quiet,
    env: ENV,
    jwks: { cooldownMs: 0, timeoutMs: 2_000 },
  });
  const app = createGatewayApp({
    config,
    log: options.log ?? quiet,
    auth,
    agent: createAgent(backends),
    feed: new FakeEventFeed(),
    readiness: { check: async () => ({ status: 'ready' }) },
  });
  const server: Server = createServer(app);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    decisions,
    audit,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Reads an event stream's status and first bytes, then hangs up. */
async function openStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string | null; headers: Headers }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const answer = { status: response.status, type: response.headers.get('content-type'), headers: response.headers };
  controller.abort();
  return answer;
}

function expectNoToken(...texts: unknown[]): void {
  const all = texts.map((text) => (typeof text === 'string' ? text : JSON.stringify(text))).join('\n');
  for (const token of Object.values(TOKENS)) expect(all).not.toContain(token);
}

let issuer: TestIssuer;
let key: TestKey;
let gateway: Running;

beforeAll(async () => {
  issuer = await startTestIssuer();
  key = await issuer.newKey('RS256', 'k1');
  gateway = await serve({
    auth: {
      tokens: [
        { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat', 'approve'] },
        { name: 'chatty', token_env: 'CHATTY_TOKEN', roles: ['chat'] },
        { name: 'approver', token_env: 'APPROVER_TOKEN', roles: ['approve'] },
        { name: 'root', token_env: 'ROOT_TOKEN', roles: ['admin'] },
      ],
      jwt: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl },
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await issuer?.close();
});

afterEach(() => {
  gateway.decisions.length = 0;
  gateway.audit.length = 0;
});

describe('open routes', () => {
  it('answer without a token: the probes, the API reference and the agent card, which advertises the scheme', async () => {
    expect((await get(`${gateway.url}/health`)).status).toBe(200);
    expect((await get(`${gateway.url}/ready`)).status).toBe(200);
    expect((await get(`${gateway.url}/docs`)).status).toBe(200);
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
      const card = await get(`${gateway.url}${path}`);
      expect(card.status).toBe(200);
      expect(card.body.securitySchemes.bearer).toMatchObject({
        type: 'http',
        scheme: 'bearer',
        httpAuthSecurityScheme: { scheme: 'Bearer' },
      });
      expect(card.body.security).toEqual([{ bearer: [] }]);
      expect(card.body.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    }
    expect(gateway.audit).toEqual([]);
  });
});

describe('REST', () => {
  it('401 without a token, with a Bearer challenge and no error code; audited as "missing"', async () => {
    const answer = await get(`${gateway.url}/conversations`);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(REALM);
    expect(answer.body.error).toContain('Authorization: Bearer');
    expect(gateway.audit).toEqual([
      expect.objectContaining({
        kind: 'auth.failed',
        actor: 'anonymous',
        via: 'rest',
        subject: 'GET /conversations',
        detailJson: '{"reason":"missing"}',
      }),
    ]);
  });

  it('401 with error="invalid_token" for a token nobody has, error="invalid_request" for a header that is no bearer token', async () => {
    const bad = await get(`${gateway.url}/tools`, bearer('made-up-token-0123456789'));
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(`${REALM}, error="invalid_token"`);
    const basic = await get(`${gateway.url}/tools`, { authorization: 'Basic YWxpY2U6c2VjcmV0' });
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe(`${REALM}, error="invalid_request"`);
    expect(gateway.audit.map((entry) => JSON.parse(entry.detailJson).reason)).toEqual(['unknown token', 'malformed']);
    expectNoToken(gateway.audit, bad.body);
    expect(JSON.stringify(gateway.audit)).not.toContain('made-up-token');
  });

  it('403 for a chat-only token on POST /approvals/:uuid, nothing decided; audited with the name and the role needed', async () => {
    const answer = await post(`${gateway.url}/approvals/${APPROVAL.uuid}`, { approved: true }, bearer(TOKENS.chatty));
    expect(answer.status).toBe(403);
    expect(answer.headers.get('www-authenticate')).toBe(`${REALM}, error="insufficient_scope"`);
    expect(answer.body.error).toContain('chatty may not do this: POST /approvals/:uuid needs the approve role');
    expect(gateway.decisions).toEqual([]);
    expect(gateway.audit).toEqual([
      expect.objectContaining({
        actor: 'token:chatty',
        via: 'rest',
        subject: 'POST /approvals/:uuid',
        detailJson: '{"reason":"role","needed":"approve"}',
      }),
    ]);
  });

  it('200 with an approve token: the decision reaches the orchestrator as decided_by alice via rest (cli when the CLI says so)', async () => {
    const answer = await post(`${gateway.url}/approvals/${APPROVAL.uuid}`, { approved: true, reason: 'fine' }, bearer(TOKENS.alice));
    expect(answer.status).toBe(200);
    const cli = await post(
      `${gateway.url}/approvals/${APPROVAL.uuid}`,
      { approved: false },
      { ...bearer(TOKENS.approver), 'x-asg-via': 'cli' },
    );
    expect(cli.status).toBe(200);
    expect(gateway.decisions).toEqual([
      expect.objectContaining({ uuid: APPROVAL.uuid, approved: true, reason: 'fine', decidedBy: 'token:alice', via: 'rest' }),
      expect.objectContaining({ uuid: APPROVAL.uuid, approved: false, decidedBy: 'token:approver', via: 'cli' }),
    ]);
    expect(gateway.audit).toEqual([]);
  });

  it('roles are what the table says: approve alone reads conversations but cannot chat, chat cannot read the audit, admin may do everything', async () => {
    expect((await post(`${gateway.url}/conversations`, { message: 'hi' }, bearer(TOKENS.approver))).status).toBe(403);
    expect((await post(`${gateway.url}/conversations/c1/messages`, { message: 'hi' }, bearer(TOKENS.approver))).status).toBe(403);
    expect((await get(`${gateway.url}/conversations`, bearer(TOKENS.approver))).status).toBe(200);
    expect((await get(`${gateway.url}/conversations/c1`, bearer(TOKENS.approver))).status).toBe(200);
    expect((await get(`${gateway.url}/conversations`, bearer(TOKENS.chatty))).status).toBe(200);
    expect((await get(`${gateway.url}/audit`, bearer(TOKENS.chatty))).status).toBe(403);
    expect((await get(`${gateway.url}/audit`, bearer(TOKENS.root))).status).toBe(200);
    expect((await post(`${gateway.url}/approvals/${APPROVAL.uuid}`, { approved: true }, bearer(TOKENS.root))).status).toBe(200);
    // A route the table does not know needs admin: 403 for others, before the 404.
    expect((await get(`${gateway.url}/nothing-here`, bearer(TOKENS.alice))).status).toBe(403);
    expect((await get(`${gateway.url}/nothing-here`, bearer(TOKENS.root))).status).toBe(404);
    expect((await get(`${gateway.url}/nothing-here`)).status).toBe(401);
  });

  it('takes ?token= on the event stream only', async () => {
    const stream = await openStream(`${gateway.url}/conversations/c1/events?token=${TOKENS.chatty}`);
    expect(stream.status).toBe(200);
    expect(stream.type).toContain('text/event-stream');
    const elsewhere = await get(`${gateway.url}/conversations?token=${TOKENS.chatty}`);
    expect(elsewhere.status).toBe(401);
    expect((await openStream(`${gateway.url}/conversations/c1/events?token=wrong-token-000000000`)).status).toBe(401);
    expect((await openStream(`${gateway.url}/conversations/c1/events`, bearer(TOKENS.chatty))).status).toBe(200);
  });

  it('GET /auth/whoami says who the caller is', async () => {
    expect((await get(`${gateway.url}/auth/whoami`, bearer(TOKENS.alice))).body).toEqual({
      principal: 'token:alice',
      name: 'alice',
      roles: ['chat', 'approve'],
      authentication: 'on',
    });
    expect((await get(`${gateway.url}/auth/whoami`)).status).toBe(401);
  });
});

describe('JWTs', () => {
  it('a JWT of the issuer is as good as a token; its principal (issuer and subject) decides', async () => {
    const jwt = await issuer.sign(key, { sub: 'erin', roles: ['approve'] });
    const answer = await post(`${gateway.url}/approvals/${APPROVAL.uuid}`, { approved: true }, bearer(jwt));
    expect(answer.status).toBe(200);
    expect(gateway.decisions).toEqual([expect.objectContaining({ decidedBy: `jwt:${issuer.issuer}#erin`, via: 'rest' })]);
    expect((await get(`${gateway.url}/auth/whoami`, bearer(jwt))).body).toEqual({
      principal: `jwt:${issuer.issuer}#erin`,
      name: 'erin',
      roles: ['approve'],
      authentication: 'on',
    });
  });

  it("a JWT named as a token is not that token: the token's conversation is unknown to it", async () => {
    const jwt = await issuer.sign(key, { sub: 'chatty', roles: ['chat'] });
    // c1 is the token chatty's.
    expect((await get(`${gateway.url}/conversations/c1`, bearer(TOKENS.chatty))).status).toBe(200);
    expect((await get(`${gateway.url}/conversations/c1`, bearer(jwt))).status).toBe(404);
    expect((await post(`${gateway.url}/conversations/c1/messages`, { message: 'hi' }, bearer(jwt))).status).toBe(404);
  });

  it('expired, foreign-audience and unsigned JWTs are 401, audited with their reason and never with the token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const forged = [
      await issuer.sign(key, { exp: now - 60, iat: now - 3600 }),
      await issuer.sign(key, { aud: 'other' }),
      issuer.unsigned(),
      await issuer.hmacWithPublicKey(key),
    ];
    for (const jwt of forged) {
      const answer = await get(`${gateway.url}/tools`, bearer(jwt));
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(`${REALM}, error="invalid_token"`);
      expect(JSON.stringify(answer.body)).not.toContain(jwt.split('.')[1]);
    }
    expect(gateway.audit.map((entry) => [entry.actor, JSON.parse(entry.detailJson).reason])).toEqual([
      [`jwt:${issuer.issuer}#alice`, 'expired'],
      [`jwt:${issuer.issuer}#alice`, 'wrong audience'],
      ['anonymous', 'alg not allowed'],
      ['anonymous', 'alg not allowed'],
    ]);
    for (const jwt of forged)
      for (const part of jwt.split('.').filter((p) => p.length > 8)) expect(JSON.stringify(gateway.audit)).not.toContain(part);
  });

  it('503, not 401, while the issuer keys cannot be fetched', async () => {
    const rotated = await issuer.newKey('RS256', 'k-rotated');
    issuer.setDown(true);
    try {
      const answer = await get(`${gateway.url}/tools`, bearer(await issuer.sign(rotated)));
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(gateway.audit).toEqual([]);
    } finally {
      issuer.setDown(false);
    }
  });
});

describe('tRPC (the web chat)', () => {
  const client = (token?: string) => {
    const url = `${gateway.url}/trpc`;
    return createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (operation) => operation.type === 'subscription',
          // EventSource sends no headers: the token goes in the query, as the web chat sends it.
          true: httpSubscriptionLink({ url: token ? `${url}?token=${encodeURIComponent(token)}` : url, EventSource }),
          false: httpBatchLink({ url, headers: token ? bearer(token) : {} }),
        }),
      ],
    });
  };

  it('401 and 403 reach the tRPC client as errors with their HTTP status', async () => {
    const anonymous = await client()
      .conversations.list.query({ limit: 5 })
      .catch((error: unknown) => error);
    expect(anonymous).toBeInstanceOf(TRPCClientError);
    expect((anonymous as TRPCClientError<AppRouter>).data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    const chatOnly = await client(TOKENS.chatty)
      .approvals.resolve.mutate({ uuid: APPROVAL.uuid, approved: true })
      .catch((error: unknown) => error);
    expect((chatOnly as TRPCClientError<AppRouter>).data).toMatchObject({ code: 'FORBIDDEN', httpStatus: 403 });
    expect(gateway.decisions).toEqual([]);
    expect(gateway.audit.map((entry) => [entry.actor, entry.via, entry.subject])).toEqual([
      ['anonymous', 'web', 'GET /trpc/conversations.list'],
      ['token:chatty', 'web', 'POST /trpc/approvals.resolve'],
    ]);
  });

  it('a decision by alice is decided_by alice via web; whoami names her', async () => {
    const alice = client(TOKENS.alice);
    await alice.approvals.resolve.mutate({ uuid: APPROVAL.uuid, approved: true });
    expect(gateway.decisions).toEqual([expect.objectContaining({ decidedBy: 'token:alice', via: 'web' })]);
    expect(await alice.auth.whoami.query()).toEqual({
      principal: 'token:alice',
      name: 'alice',
      roles: ['chat', 'approve'],
      authentication: 'on',
    });
  });

  it('a batch needs every procedure’s role, and is refused in the batch shape', async () => {
    const input = encodeURIComponent(JSON.stringify({ 0: { limit: 5 }, 1: {} }));
    const answer = await get(`${gateway.url}/trpc/conversations.list,approvals.pending?batch=1&input=${input}`, bearer(TOKENS.chatty));
    expect(answer.status).toBe(403);
    expect(answer.body).toHaveLength(2);
    expect(answer.body[1].error.data).toMatchObject({ code: 'FORBIDDEN', httpStatus: 403, path: 'approvals.pending' });
  });

  it('subscriptions take the token from the query: the pending approvals stream opens for an approver', async () => {
    const input = encodeURIComponent(JSON.stringify({}));
    expect((await openStream(`${gateway.url}/trpc/approvals.pending?input=${input}&token=${TOKENS.approver}`)).status).toBe(200);
    expect((await openStream(`${gateway.url}/trpc/approvals.pending?input=${input}&token=${TOKENS.chatty}`)).status).toBe(403);
    expect((await openStream(`${gateway.url}/trpc/approvals.pending?input=${input}`)).status).toBe(401);
    // A query is no subscription: its token must come in the header.
    expect((await get(`${gateway.url}/trpc/tools.list?token=${TOKENS.chatty}`)).status).toBe(401);
  });
});

describe('A2A', () => {
  const rpc = (method: string, params: unknown, headers: Record<string, string> = {}) =>
    post(`${gateway.url}/a2a`, { jsonrpc: '2.0', id: 7, method, params }, headers);

  it('401 is a JSON-RPC error inside HTTP 401, with the challenge', async () => {
    const answer = await rpc('tasks/get', { id: 'c1' });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(REALM);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(gateway.audit).toEqual([expect.objectContaining({ via: 'a2a', subject: 'POST /a2a' })]);
  });

  it('a decision through A2A needs the approve role: cancelling a waiting task with a chat-only token is 403', async () => {
    const refused = await rpc('tasks/cancel', { id: 'c1' }, bearer(TOKENS.chatty));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(`${REALM}, error="insufficient_scope"`);
    expect(refused.body.error).toMatchObject({ code: -32000, message: expect.stringContaining('chatty may not decide approvals') });
    expect(gateway.decisions).toEqual([]);
    expect(gateway.audit).toEqual([
      expect.objectContaining({
        actor: 'token:chatty',
        via: 'a2a',
        subject: `POST /a2a (approval ${APPROVAL.uuid})`,
        detailJson: '{"reason":"role","needed":"approve"}',
      }),
    ]);

    const allowed = await rpc('tasks/cancel', { id: 'c1' }, bearer(TOKENS.alice));
    expect(allowed.status).toBe(200);
    expect(gateway.decisions).toEqual([expect.objectContaining({ approved: false, decidedBy: 'token:alice', via: 'a2a' })]);
  });
});

describe('MCP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  };
  const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

  it('401 as the MCP authorization spec says: the challenge names the protected-resource metadata, which names the issuer', async () => {
    const answer = await post(`${gateway.url}/mcp`, initialize, MCP_HEADERS);
    expect(answer.status).toBe(401);
    const metadata = `${gateway.url}/.well-known/oauth-protected-resource/mcp`;
    expect(answer.headers.get('www-authenticate')).toBe(`${REALM}, resource_metadata="${metadata}"`);
    expect(answer.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    const resource = await get(metadata);
    expect(resource.status).toBe(200);
    expect(resource.body).toMatchObject({
      resource: `${gateway.url}/mcp`,
      authorization_servers: [issuer.issuer],
      bearer_methods_supported: ['header'],
    });
  });

  it('a chat token opens a session, which only its owner may use', async () => {
    const opened = await request(`${gateway.url}/mcp`, 'POST', initialize, { ...MCP_HEADERS, ...bearer(TOKENS.chatty) });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    expect((await post(`${gateway.url}/mcp`, ping, { ...headers, ...bearer(TOKENS.chatty) })).status).toBe(200);
    expect((await post(`${gateway.url}/mcp`, ping, { ...headers, ...bearer(TOKENS.alice) })).status).toBe(404);
    // Nor a JWT that carries its name.
    expect(
      (await post(`${gateway.url}/mcp`, ping, { ...headers, ...bearer(await issuer.sign(key, { sub: 'chatty', roles: ['chat'] })) }))
        .status,
    ).toBe(404);
  });
});

describe('the audit', () => {
  it('never delays nor fails a refusal: a store that hangs or fails still gets a 401 at once', async () => {
    const warnings: string[] = [];
    const log: Logger = { ...quiet, warn: (msg) => void warnings.push(msg), child: () => log };
    const settings = { auth: { tokens: [{ name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] }] } };
    const hanging = await serve(settings, { sink: () => new Promise(() => undefined) });
    const failing = await serve(settings, { sink: async () => Promise.reject(new Error('store down')), log });
    try {
      expect((await get(`${hanging.url}/tools`)).status).toBe(401);
      expect((await get(`${failing.url}/tools`)).status).toBe(401);
      const deadline = Date.now() + 5_000;
      while (!warnings.includes('an authentication failure could not be written to the audit') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(warnings).toContain('an authentication failure could not be written to the audit');
    } finally {
      await hanging.close();
      await failing.close();
    }
  });
});

describe('without auth', () => {
  it('nobody is asked, and a decision is anonymous, through its face', async () => {
    const open = await serve({});
    try {
      expect((await get(`${open.url}/conversations`)).status).toBe(200);
      expect((await post(`${open.url}/approvals/${APPROVAL.uuid}`, { approved: true })).status).toBe(200);
      expect(open.decisions).toEqual([expect.objectContaining({ decidedBy: 'anonymous', via: 'rest' })]);
      expect((await get(`${open.url}/auth/whoami`)).body).toEqual({
        principal: 'anonymous',
        name: 'anonymous',
        roles: ['admin'],
        authentication: 'off',
      });
      const card = await get(`${open.url}/.well-known/agent-card.json`);
      expect(card.body.securitySchemes).toBeUndefined();
    } finally {
      await open.close();
    }
  });
});
