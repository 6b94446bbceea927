/**
 * `bin/asg web --config web.yaml`: the chat on its own
 * port in front of an agent at `agent_url`, with the earlier web server's /api routes, and tRPC (queries,
 * mutations and subscriptions) passed on to the agent.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
import { ASG, spawnProcess, startAgent, tempDir, testEnvironment, type AgentProcess, type AsgProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { rawRequest } from '../support/raw-http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { logLines, logLineWhere } from '../support/log-lines.js';
import { record, trpcClient } from '../support/trpc-client.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
let web: AsgProcess;
let webUrl: string;

function startWeb(config: Record<string, unknown>): AsgProcess {
  const file = join(tempDir('asg-web-'), 'web.yaml');
  writeFileSync(file, stringify(config));
  return spawnProcess(process.execPath, [ASG, 'web', '--config', file], testEnvironment(model.geminiBaseUrl));
}

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  web = startWeb({ host: '127.0.0.1', port: 0, agent_url: agent.url });
  const line = await web.waitForLine(
    logLineWhere((candidate) => candidate.msg === 'web up'),
    30_000,
  );
  webUrl = String(logLines(line)[0]!.url);
}, 120_000);

afterAll(async () => {
  await web?.stop();
  await agent?.stop();
  await model?.close();
});

describe('asg web', () => {
  it('serves the chat at /', async () => {
    const page = await fetch(`${webUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<div id="root">');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${webUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('POST /api/send, POST /api/approve and GET /api/conversation/:id talk to the agent’s REST API', async () => {
    const started = await post(`${webUrl}/api/send`, { message: 'add resource web-1 with value 5' });
    expect(started.status).toBe(201);
    expect(started.body.result.waiting_approval).toBe(true);
    const id = started.body.conversation.id;
    expect(started.headers.get('x-session-id')).toBe(started.body.conversation.session_id);

    const read = await get(`${webUrl}/api/conversation/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.conversation).toMatchObject({ id, status: 'waiting_approval', pending_approval: { tool_name: 'resources_add' } });

    const approved = await post(`${webUrl}/api/approve`, { uuid: started.body.result.approval.uuid, approved: true });
    expect(approved.status).toBe(200);
    expect(approved.body.result.response).toMatch(/^Done\. resources_add/);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('web-1');

    const again = await post(`${webUrl}/api/approve`, { uuid: started.body.result.approval.uuid, answer: 'no' });
    expect(again.status).toBe(409);

    const continued = await post(`${webUrl}/api/send`, { message: 'list resources', conversation_id: id });
    expect(continued.status).toBe(200);
    expect(continued.body.conversation.id).toBe(id);
  });

  it('answers bad /api requests with 400 and the agent’s errors as they are', async () => {
    expect(await post(`${webUrl}/api/send`, {})).toMatchObject({
      status: 400,
      body: { error: '"message" is required and must be a string' },
    });
    expect(await post(`${webUrl}/api/send`, '{not json')).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^malformed request body/) },
    });
    expect(await post(`${webUrl}/api/approve`, { approved: true })).toMatchObject({ status: 400 });
    expect((await get(`${webUrl}/api/conversation/6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13`)).status).toBe(404);
  });

  it('passes tRPC on to the agent: queries, and subscriptions as a stream', async () => {
    const client = trpcClient(webUrl);
    const { conversation } = await client.conversations.create.mutate({});
    const events = record<ConversationUpdate>((callbacks) =>
      client.conversation.events.subscribe({ conversationId: conversation.id }, callbacks),
    );
    try {
      await vi.waitFor(() => expect(events.items[0]?.data.kind).toBe('snapshot'), { timeout: 10_000 });
      await client.conversations.send.mutate({ conversationId: conversation.id, message: 'list resources' });
      await vi.waitFor(
        () =>
          expect(events.items.some((item) => item.data.kind === 'message_added' && item.data.message.content.startsWith('Done.'))).toBe(
            true,
          ),
        { timeout: 10_000 },
      );
    } finally {
      events.stop();
    }
    expect((await client.tools.list.query()).tools.map((tool) => tool.name)).toContain('resources_add');
  });

  it('guards its own port like the agent, and passes its pages’ requests on as a server-side client', async () => {
    // A page of the chat itself: its Origin is the web server's, not the agent's; the agent must still take the call.
    const own = { origin: webUrl };
    const sent = await post(`${webUrl}/api/send`, { message: 'add resource web-origin with value 1' }, own);
    expect(sent.status).toBe(201);
    const created = await post(`${webUrl}/trpc/conversations.create`, {}, own);
    expect(created.status).toBe(200);
    const approved = await post(`${webUrl}/trpc/approvals.resolve`, { uuid: sent.body.result.approval.uuid, approved: true }, own);
    expect(approved.status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('web-origin');

    const foreign = await post(`${webUrl}/trpc/conversations.create`, {}, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const plain = await fetch(`${webUrl}/api/send`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"message":"hi"}',
    });
    expect(plain.status).toBe(415);
    const rebound = await rawRequest(webUrl, { path: '/api/conversation/x', headers: { host: 'evil.example' } });
    expect(rebound.status).toBe(421);
    expect((await rawRequest(webUrl, { path: '/api/conversation/%zz' })).status).toBe(400);
  });

  it('refuses a bad configuration with the file, the field and what was expected', () => {
    const file = join(tempDir('asg-web-'), 'web.yaml');
    writeFileSync(file, stringify({ port: 'eighty', agent_url: 'ftp://agent' }));
    const run = spawnSync(process.execPath, [ASG, 'web', '--config', file], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`${file}:1:7: port: `);
    expect(run.stderr).toContain(`${file}:2:12: agent_url: expected an http:// or https:// URL`);
  });
});
