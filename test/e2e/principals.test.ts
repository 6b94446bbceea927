/**
 * Principals carry their source, end to end: `bin/asg up` with API tokens and JWTs from an
 * issuer whose JWKS is served on 127.0.0.1, the real mesh, the real mcp-resources server and a
 * scripted model. The API token named erin (`token:erin`) and a JWT whose subject is erin
 * (`jwt:<issuer>#erin`) are two principals: each sees only its own conversations on every face —
 * REST (list, read, send), tRPC, A2A (tasks/list, message/send into the other's task), MCP and
 * the OpenAI-compatible /v1 — and a decision records which of them decided, in the approval
 * record and the stored audit. `auth.jwt.token_principals` maps a JWT name to a token principal
 * on purpose: that JWT then owns what the token owns.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startTestIssuer, type TestIssuer, type TestKey } from '../support/jwks-issuer.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { trpcClient } from '../support/trpc-client.js';

const TOKENS = {
  ERIN_TOKEN: 'e2e-principal-erin-token-4c7a1e9d',
  CAROL_TOKEN: 'e2e-principal-carol-token-8b2f6d0a',
  FRANK_TOKEN: 'e2e-principal-frank-token-1e5c9a3f',
  ROOT_TOKEN: 'e2e-principal-root-token-7d3b5f1c',
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenErin = bearer(TOKENS.ERIN_TOKEN);
const tokenCarol = bearer(TOKENS.CAROL_TOKEN);
const tokenFrank = bearer(TOKENS.FRANK_TOKEN);
const root = bearer(TOKENS.ROOT_TOKEN);

let model: ScriptedModelServer;
let issuer: TestIssuer;
let key: TestKey;
let agent: AgentProcess;
let jwtErin: Record<string, string>;
let jwtCarol: Record<string, string>;
let jwtFrank: Record<string, string>;
/** Every JWT this suite sent: none may show up in a log line. */
const jwtsSent: string[] = [];
/** The conversation each erin created over REST. */
let tokensOwn: string;
let jwtsOwn: string;

async function signed(claims: Record<string, unknown>): Promise<Record<string, string>> {
  const jwt = await issuer.sign(key, claims);
  jwtsSent.push(jwt);
  return bearer(jwt);
}

beforeAll(async () => {
  model = await startScriptedModel();
  issuer = await startTestIssuer();
  key = await issuer.newKey('ES256', 'principals-1');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: TOKENS,
    config: {
      auth: {
        tokens: [
          { name: 'erin', token_env: 'ERIN_TOKEN', roles: ['chat'] },
          { name: 'carol', token_env: 'CAROL_TOKEN', roles: ['chat', 'approve'] },
          { name: 'frank', token_env: 'FRANK_TOKEN', roles: ['chat'] },
          { name: 'root', token_env: 'ROOT_TOKEN', roles: ['admin'] },
        ],
        jwt: {
          issuer: issuer.issuer,
          audience: issuer.audience,
          jwks_url: issuer.jwksUrl,
          token_principals: { 'frank@example.com': 'frank' },
        },
      },
    },
  });
  jwtErin = await signed({ sub: 'erin', roles: ['chat'] });
  jwtCarol = await signed({ sub: 'carol', roles: ['chat', 'approve'] });
  jwtFrank = await signed({ sub: 'frank@example.com', roles: ['chat'] });
  const byToken = await post(`${agent.url}/conversations`, { message: 'hello from the token' }, tokenErin);
  const byJwt = await post(`${agent.url}/conversations`, { message: 'hello from the jwt' }, jwtErin);
  expect([byToken.status, byJwt.status]).toEqual([201, 201]);
  tokensOwn = byToken.body.conversation.id;
  jwtsOwn = byJwt.body.conversation.id;
});

afterAll(async () => {
  await agent?.stop();
  await issuer?.close();
  await model?.close();
});

const ids = (conversations: { id: string }[]) => conversations.map((conversation) => conversation.id);
const jwtPrincipal = (name: string) => `jwt:${issuer.issuer}#${name}`;

/** The answer for an id nobody has, with the id taken out: what the other erin must get for one it does not own. */
async function unknownAnswer(headers: Record<string, string>, path: (id: string) => string, send?: unknown) {
  const id = randomUUID();
  const answer = send === undefined ? await get(`${agent.url}${path(id)}`, headers) : await post(`${agent.url}${path(id)}`, send, headers);
  return { status: answer.status, error: JSON.stringify(answer.body).replaceAll(id, '<id>') };
}

describe('a JWT and an API token with the same name are two principals', () => {
  it('say who they are: token:erin and jwt:<issuer>#erin', async () => {
    expect((await get(`${agent.url}/auth/whoami`, tokenErin)).body).toEqual({
      principal: 'token:erin',
      name: 'erin',
      roles: ['chat'],
      authentication: 'on',
    });
    expect((await get(`${agent.url}/auth/whoami`, jwtErin)).body).toEqual({
      principal: jwtPrincipal('erin'),
      name: 'erin',
      roles: ['chat'],
      authentication: 'on',
    });
  });

  it("REST: each owns, lists and reads only its own; the other's is answered as an unknown id, on read and on send", async () => {
    expect((await get(`${agent.url}/conversations/${tokensOwn}`, tokenErin)).body.conversation.owner).toBe('token:erin');
    expect((await get(`${agent.url}/conversations/${jwtsOwn}`, jwtErin)).body.conversation.owner).toBe(jwtPrincipal('erin'));
    for (const [headers, own, other] of [
      [tokenErin, tokensOwn, jwtsOwn],
      [jwtErin, jwtsOwn, tokensOwn],
    ] as const) {
      const list = await get(`${agent.url}/conversations?limit=500`, headers);
      expect(ids(list.body.conversations)).toContain(own);
      expect(ids(list.body.conversations)).not.toContain(other);
      const read = await get(`${agent.url}/conversations/${other}`, headers);
      expect({ status: read.status, error: JSON.stringify(read.body).replaceAll(other, '<id>') }).toEqual(
        await unknownAnswer(headers, (id) => `/conversations/${id}`),
      );
      const send = await post(`${agent.url}/conversations/${other}/messages`, { message: 'list resources' }, headers);
      expect({ status: send.status, error: JSON.stringify(send.body).replaceAll(other, '<id>') }).toEqual(
        await unknownAnswer(headers, (id) => `/conversations/${id}/messages`, { message: 'list resources' }),
      );
    }
    // Nothing of the stranger's send reached either conversation.
    for (const [headers, id] of [
      [tokenErin, tokensOwn],
      [jwtErin, jwtsOwn],
    ] as const) {
      const messages = (await get(`${agent.url}/conversations/${id}`, headers)).body.conversation.messages as {
        role: string;
        content: string;
      }[];
      expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toHaveLength(1);
    }
  });

  it("tRPC: each lists only its own; the other's is NOT_FOUND", async () => {
    const byToken = trpcClient(agent.url, tokenErin);
    const byJwt = trpcClient(agent.url, jwtErin);
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: { data?: { code?: string } }) => error.data?.code,
      );
    expect(ids((await byToken.conversations.list.query({ limit: 500 })).conversations)).not.toContain(jwtsOwn);
    expect(ids((await byJwt.conversations.list.query({ limit: 500 })).conversations)).not.toContain(tokensOwn);
    expect(await failure(byToken.conversations.get.query({ id: jwtsOwn }))).toBe('NOT_FOUND');
    expect(await failure(byJwt.conversations.get.query({ id: tokensOwn }))).toBe('NOT_FOUND');
    expect(await failure(byJwt.conversations.send.mutate({ conversationId: tokensOwn, message: 'hi' }))).toBe('NOT_FOUND');
    expect((await byJwt.conversations.get.query({ id: jwtsOwn })).conversation.owner).toBe(jwtPrincipal('erin'));
  });

  it("A2A: tasks/list shows each its own tasks only, and a message into the other's task is an unknown task that runs nothing", async () => {
    let rpcId = 0;
    const rpc = async (method: string, params: unknown, headers: Record<string, string>) => {
      const answer = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: ++rpcId, method, params }, headers);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const message = (text: string, taskId?: string) => ({
      message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...(taskId && { taskId }) },
    });
    const tokensTask = (await rpc('message/send', message('add resource principal-a2a with value 3'), tokenErin)).result;
    expect(tokensTask.status.state).toBe('input-required');
    const jwtsTask = (await rpc('message/send', message('hello over a2a'), jwtErin)).result;

    const listed = async (headers: Record<string, string>) =>
      ((await rpc('tasks/list', { pageSize: 100 }, headers)).result.tasks as { id: string }[]).map((task) => task.id);
    const tokens = await listed(tokenErin);
    const jwts = await listed(jwtErin);
    expect(tokens).toEqual(expect.arrayContaining([tokensTask.id, tokensOwn]));
    expect(jwts).toEqual(expect.arrayContaining([jwtsTask.id, jwtsOwn]));
    for (const id of [jwtsTask.id, jwtsOwn]) expect(tokens).not.toContain(id);
    for (const id of [tokensTask.id, tokensOwn]) expect(jwts).not.toContain(id);

    // "yes" into the token's waiting task, from the JWT: unknown, nothing approved, nothing run.
    const intruding = await rpc('message/send', message('yes', tokensTask.id), jwtErin);
    expect(intruding.error).toEqual({ code: -32001, message: `task not found: ${tokensTask.id}` });
    expect((await rpc('tasks/get', { id: tokensTask.id }, jwtErin)).error.code).toBe(-32001);
    expect((await rpc('tasks/get', { id: tokensTask.id }, tokenErin)).result.status.state).toBe('input-required');
    expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain('principal-a2a');
  });

  it("MCP: a turn on the other's conversation is answered as one on an unknown conversation", async () => {
    const client = new Client({ name: 'principals-e2e', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: jwtErin } }));
    try {
      const ask = async (conversationId: string) => {
        const result = await client.callTool({ name: 'ask', arguments: { message: 'list resources', conversation_id: conversationId } });
        return { isError: result.isError, text: (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n') };
      };
      const unknown = randomUUID();
      const stranger = await ask(tokensOwn);
      expect(stranger.isError).toBe(true);
      expect(stranger.text.replace(tokensOwn, '<id>')).toBe((await ask(unknown)).text.replace(unknown, '<id>'));
      expect((await ask(jwtsOwn)).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("/v1: a completion naming the other's conversation is 404 as for an unknown one; its own conversation continues", async () => {
    const complete = (headers: Record<string, string>, conversationId?: string) =>
      post(
        `${agent.url}/v1/chat/completions`,
        { model: 'test-agent', messages: [{ role: 'user', content: 'list resources' }] },
        { ...headers, ...(conversationId && { 'x-conversation-id': conversationId }) },
      );
    const unknown = randomUUID();
    const stranger = await complete(jwtErin, tokensOwn);
    const nobody = await complete(jwtErin, unknown);
    expect(stranger.status).toBe(404);
    expect(JSON.stringify(stranger.body).replaceAll(tokensOwn, '<id>')).toBe(JSON.stringify(nobody.body).replaceAll(unknown, '<id>'));
    const own = await complete(tokenErin, tokensOwn);
    expect(own.status).toBe(200);
    expect(own.body.conversation_id).toBe(tokensOwn);
    // A new conversation from /v1 belongs to its caller.
    const fresh = await complete(jwtErin);
    expect((await get(`${agent.url}/conversations/${fresh.body.conversation_id}`, jwtErin)).body.conversation.owner).toBe(
      jwtPrincipal('erin'),
    );
    expect((await get(`${agent.url}/conversations/${fresh.body.conversation_id}`, tokenErin)).status).toBe(404);
  });

  it('a decision records which carol decided — the record and the stored audit', async () => {
    const stop = async (name: string) => {
      const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value 2` }, tokenErin);
      expect(created.body.result.waiting_approval).toBe(true);
      return created.body.result.approval.uuid as string;
    };
    const byJwt = await stop('principal-jwt-decides');
    const byToken = await stop('principal-token-decides');
    expect((await post(`${agent.url}/approvals/${byJwt}`, { approved: true }, jwtCarol)).status).toBe(200);
    expect((await post(`${agent.url}/approvals/${byToken}`, { approved: false, reason: 'not this one' }, tokenCarol)).status).toBe(200);
    expect((await get(`${agent.url}/approvals/${byJwt}`, tokenCarol)).body).toMatchObject({
      status: 'approved',
      decided_by: jwtPrincipal('carol'),
      via: 'rest',
    });
    expect((await get(`${agent.url}/approvals/${byToken}`, jwtCarol)).body).toMatchObject({
      status: 'rejected',
      decided_by: 'token:carol',
      via: 'rest',
    });
    const audit = (await get(`${agent.url}/audit?kind=approval.decided&limit=500`, root)).body.entries as {
      subject: string;
      actor: string;
    }[];
    expect(audit.find((entry) => entry.subject === byJwt)).toMatchObject({ actor: jwtPrincipal('carol') });
    expect(audit.find((entry) => entry.subject === byToken)).toMatchObject({ actor: 'token:carol' });
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('principal-jwt-decides');
    expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain('principal-token-decides');
  });
});

describe('auth.jwt.token_principals: a JWT mapped to a token principal on purpose', () => {
  it('owns what the token owns, both ways, and says so in whoami', async () => {
    expect((await get(`${agent.url}/auth/whoami`, jwtFrank)).body).toEqual({
      principal: 'token:frank',
      name: 'frank@example.com',
      roles: ['chat'],
      authentication: 'on',
    });
    const byToken = (await post(`${agent.url}/conversations`, { message: 'hello from the token' }, tokenFrank)).body.conversation
      .id as string;
    const byJwt = (await post(`${agent.url}/conversations`, { message: 'hello from the jwt' }, jwtFrank)).body.conversation;
    expect(byJwt.owner).toBe('token:frank');
    expect(ids((await get(`${agent.url}/conversations`, jwtFrank)).body.conversations).sort()).toEqual([byToken, byJwt.id].sort());
    expect(ids((await get(`${agent.url}/conversations`, tokenFrank)).body.conversations).sort()).toEqual([byToken, byJwt.id].sort());
    expect((await post(`${agent.url}/conversations/${byToken}/messages`, { message: 'list resources' }, jwtFrank)).status).toBe(200);
    // Only the mapped name: a JWT whose subject is frank himself is another principal.
    const plainFrank = await signed({ sub: 'frank', roles: ['chat'] });
    expect((await get(`${agent.url}/conversations/${byToken}`, plainFrank)).status).toBe(404);
  });
});

describe('secrets', () => {
  it('no token or JWT in any log line', () => {
    const output = agent.output();
    for (const secret of [...Object.values(TOKENS), ...jwtsSent]) {
      expect(output).not.toContain(secret);
      for (const part of secret.split('.').filter((p) => p.length > 16)) expect(output).not.toContain(part);
    }
  });
});
