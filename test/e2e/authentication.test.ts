/**
 * Who may approve, end to end: `bin/asg up` with `auth` (API tokens from the
 * environment and JWTs from an issuer whose JWKS is served on 127.0.0.1), the real mesh, the
 * real mcp-resources server and a scripted model. Without a token 401, with a chat-only token
 * 403 on approve; a decision by alice is recorded as her token's (GET /approvals/:uuid, the
 * audit: `token:alice`), a JWT's as `jwt:<issuer>#<subject>`; malformed and forged tokens and JWTs (bad signature, expired, wrong
 * audience, alg none) are 401 and in the audit; no token in any answer or log line; and the
 * gateway refuses to listen beyond loopback without auth.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASG, spawnProcess, startAgent, tempDir, testEnvironment, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startTestIssuer, type TestIssuer, type TestKey } from '../support/jwks-issuer.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { logLines } from '../support/log-lines.js';
import { stringify } from 'yaml';

const TOKENS = {
  ALICE_TOKEN: 'e2e-alice-token-3f9a1c7e5b2d',
  CHATTY_TOKEN: 'e2e-chatty-token-8b6d4f2a0c1e',
  ROOT_TOKEN: 'e2e-root-token-5c3e1a9f7d2b',
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alice = bearer(TOKENS.ALICE_TOKEN);
const chatty = bearer(TOKENS.CHATTY_TOKEN);
const root = bearer(TOKENS.ROOT_TOKEN);

let model: ScriptedModelServer;
let issuer: TestIssuer;
let key: TestKey;
let agent: AgentProcess;
/** Every JWT this suite sent: none may show up in an answer or a log line. */
const jwtsSent: string[] = [];

beforeAll(async () => {
  model = await startScriptedModel();
  issuer = await startTestIssuer();
  key = await issuer.newKey('ES256', 'e2e-1');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: TOKENS,
    config: {
      auth: {
        tokens: [
          { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat', 'approve'] },
          { name: 'chatty', token_env: 'CHATTY_TOKEN', roles: ['chat'] },
          { name: 'root', token_env: 'ROOT_TOKEN', roles: ['admin'] },
        ],
        jwt: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl },
      },
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await issuer?.close();
  await model?.close();
});

async function stopAt(message: string, headers: Record<string, string>) {
  const created = await post(`${agent.url}/conversations`, { message }, headers);
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return created.body.result.approval.uuid as string;
}

async function auditEntries(kind: string): Promise<any[]> {
  const answer = await get(`${agent.url}/audit?kind=${kind}&limit=500`, root);
  expect(answer.status).toBe(200);
  return answer.body.entries;
}

/** Polls until `check` passes: the audit of a refusal is written after the refusal is answered. */
async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('who may approve', () => {
  it('401 without a token, 403 for a chat-only token on approve; alice decides and the record says so', async () => {
    const anonymous = await post(`${agent.url}/conversations`, { message: 'add e2e-anon with value 1' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="agent-stop-and-go"');
    expect((await get(`${agent.url}/health`)).status).toBe(200);
    expect((await get(`${agent.url}/.well-known/agent-card.json`)).body.securitySchemes.bearer.scheme).toBe('bearer');

    const uuid = await stopAt('add e2e-alice with value 7', chatty);
    const refused = await post(`${agent.url}/approvals/${uuid}`, { approved: true }, chatty);
    expect(refused.status).toBe(403);
    expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain('e2e-alice');

    const approved = await post(`${agent.url}/approvals/${uuid}`, { approved: true, reason: 'checked the value' }, alice);
    expect(approved.status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('e2e-alice');

    const record = await get(`${agent.url}/approvals/${uuid}`, alice);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ uuid, decided_by: 'token:alice', via: 'rest', reason: 'checked the value' });
    const decisions = await auditEntries('approval.decided');
    expect(decisions.find((entry) => entry.subject === uuid)).toMatchObject({ actor: 'token:alice', via: 'rest' });
    await eventually(async () => {
      const failures = await auditEntries('auth.failed');
      expect(failures).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ actor: 'anonymous', via: 'rest', subject: 'POST /conversations', detail: { reason: 'missing' } }),
          expect.objectContaining({
            actor: 'token:chatty',
            via: 'rest',
            subject: 'POST /approvals/:uuid',
            detail: { reason: 'role', needed: 'approve' },
          }),
        ]),
      );
    });
  });

  it('a JWT of the issuer decides as its principal (issuer and subject); forged and malformed credentials are 401 and audited', async () => {
    const erin = await issuer.sign(key, { sub: 'erin', roles: ['chat', 'approve'] });
    jwtsSent.push(erin);
    const uuid = await stopAt('add e2e-erin with value 3', bearer(erin));
    expect((await post(`${agent.url}/approvals/${uuid}`, { approved: false, reason: 'not today' }, bearer(erin))).status).toBe(200);
    expect((await get(`${agent.url}/approvals/${uuid}`, bearer(erin))).body).toMatchObject({
      decided_by: `jwt:${issuer.issuer}#erin`,
      via: 'rest',
      status: 'rejected',
    });

    const now = Math.floor(Date.now() / 1000);
    const stranger = await issuer.newKey('ES256', 'e2e-1', false);
    const forged: Array<[string, string]> = [
      ['bad signature', await issuer.sign(stranger, { sub: 'mallory' })],
      ['expired', await issuer.sign(key, { sub: 'erin', exp: now - 60, iat: now - 3600 })],
      ['wrong audience', await issuer.sign(key, { sub: 'erin', aud: 'another-agent' })],
      ['alg not allowed', issuer.unsigned({ sub: 'mallory' })],
      ['alg not allowed', await issuer.hmacWithPublicKey(key, { sub: 'mallory' })],
    ];
    for (const [reason, jwt] of forged) {
      jwtsSent.push(jwt);
      const answer = await post(`${agent.url}/approvals/${uuid}`, { approved: true }, bearer(jwt));
      expect(answer.status, reason).toBe(401);
      expect(answer.headers.get('www-authenticate'), reason).toBe('Bearer realm="agent-stop-and-go", error="invalid_token"');
    }
    expect((await get(`${agent.url}/tools`, { authorization: 'Token abc' })).status).toBe(401);
    expect((await get(`${agent.url}/tools`, bearer('nobody-has-this-token-0000'))).status).toBe(401);

    await eventually(async () => {
      const reasons = (await auditEntries('auth.failed')).map((entry) => entry.detail.reason);
      for (const reason of ['bad signature', 'expired', 'wrong audience', 'alg not allowed', 'malformed', 'unknown token'])
        expect(reasons).toContain(reason);
    });
  });

  it('a decision through A2A and the tRPC face records its face; a chat-only A2A decision is 403', async () => {
    const uuid = await stopAt('add e2e-web with value 2', alice);
    const resolved = await post(`${agent.url}/trpc/approvals.resolve`, { uuid, approved: true }, alice);
    expect(resolved.status).toBe(200);
    expect((await get(`${agent.url}/approvals/${uuid}`, alice)).body).toMatchObject({ decided_by: 'token:alice', via: 'web' });

    const task = await post(
      `${agent.url}/a2a`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            role: 'user',
            messageId: crypto.randomUUID(),
            parts: [{ kind: 'text', text: 'add e2e-a2a with value 4' }],
          },
        },
      },
      chatty,
    );
    expect(task.status).toBe(200);
    const taskId = task.body.result.id as string;
    const cancel = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { id: taskId } }, chatty);
    expect(cancel.status).toBe(403);
    expect(cancel.body.error.code).toBe(-32000);
    const canceled = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: { id: taskId } }, alice);
    expect(canceled.status).toBe(200);
    const approvals = await get(`${agent.url}/approvals?conversation_id=${taskId}`, alice);
    expect(approvals.body.approvals[0]).toMatchObject({ decided_by: 'token:alice', via: 'a2a', status: 'rejected' });
  });

  it('no token or JWT in any answer above or any log line', () => {
    const output = agent.output();
    for (const secret of [...Object.values(TOKENS), ...jwtsSent]) {
      expect(output).not.toContain(secret);
      for (const part of secret.split('.').filter((p) => p.length > 16)) expect(output).not.toContain(part);
    }
  });
});

describe('the bind rule', () => {
  it('refuses to listen beyond loopback without auth; --insecure lets it try, with a loud warning', async () => {
    const dir = tempDir();
    const configFile = join(dir, 'agent.yaml');
    // The port is taken on 127.0.0.1, so that the insecure start gets as far as listening and no
    // further: nothing of this suite ever listens beyond loopback.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    writeFileSync(configFile, stringify({ host: '0.0.0.0', port, data_dir: join(dir, 'data'), mcp_servers: [] }));
    try {
      const refused = spawnProcess(process.execPath, [ASG, 'up', '--config', configFile], testEnvironment(model.geminiBaseUrl));
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toContain('host: refusing to listen on 0.0.0.0 without authentication');

      const insecure = spawnProcess(
        process.execPath,
        [ASG, 'serve', 'gateway', '--config', configFile, '--insecure'],
        testEnvironment(model.geminiBaseUrl),
      );
      expect(await insecure.exited).toBe(1);
      expect(
        logLines(insecure.output()).some(
          (line) => line.level === 'warn' && line.msg.startsWith('INSECURE: listening beyond loopback without authentication'),
        ),
      ).toBe(true);
      expect(insecure.output()).toContain(`gateway cannot listen on 0.0.0.0:${port}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
