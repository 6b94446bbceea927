/**
 * Issue 13 acceptance: an approval that was pending before an upgrade still resolves after it.
 * The fixtures are stores written by the release before issue 12 (commit b8c5b1b, store schema
 * 7: no list summaries, running-turn marks, decision reasons or turn timestamps), each holding
 * one pending `resources_add` approval: in simple mode, and paused in a sequential agent tree.
 * The current build opens them (migrations 8–11 run at start), and the approval resolves:
 * approved once, the stored call runs once, a second decision is 409, the conversation goes on.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'store-before-issue-12');

const cases = [
  {
    name: 'simple mode',
    file: 'simple.db',
    config: {},
    conversation: '27202871-f868-4762-8781-f6ceb77281b6',
    approval: 'd5d93f64-8683-4a2f-a50d-c2acc96d814e',
    resource: 'upgrade-simple',
  },
  {
    name: 'a sequential agent tree paused at its llm node',
    file: 'tree.db',
    config: { agent: { name: 'pipeline', type: 'sequential', agents: [{ name: 'worker', type: 'llm', prompt: '{user_message}' }] } },
    conversation: 'b82d93cb-c5c7-4354-accd-8dddd991d7e7',
    approval: '071f2a54-e1a1-43a8-9e08-74dfa2ac3655',
    resource: 'upgrade-tree',
  },
];

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
});

afterAll(async () => {
  await model?.close();
});

describe.each(cases)('a store written before issue 12: $name', (fixture) => {
  let agent: AgentProcess;

  beforeAll(async () => {
    const dir = tempDir('asg-upgrade-');
    mkdirSync(join(dir, 'data'), { recursive: true });
    // A copy: the migrations write to the database they open.
    copyFileSync(join(FIXTURES, fixture.file), join(dir, 'data', 'conversations.db'));
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir, config: fixture.config });
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('still shows the approval pending after the upgrade', async () => {
    const { status, body } = await get(`${agent.url}/conversations/${fixture.conversation}`);
    expect(status).toBe(200);
    expect(body.conversation.status).toBe('waiting_approval');
    expect(body.conversation.pending_approval).toMatchObject({ uuid: fixture.approval, tool_name: 'resources_add', tool_args: { name: fixture.resource, value: 7 } });
    const list = await get(`${agent.url}/conversations`);
    expect(list.body.conversations[0]).toMatchObject({ id: fixture.conversation, pending_approvals: 1, title: `add resource ${fixture.resource} with value 7` });
  });

  it('resolves it: the stored call runs once, a second decision is 409, and the conversation goes on', async () => {
    const approved = await post(`${agent.url}/approvals/${fixture.approval}`, { approved: true });
    expect(approved.status).toBe(200);
    expect(approved.body.result.waiting_approval).toBe(false);
    expect(approved.body.conversation.status).toBe('active');
    expect(resourceNames(join(agent.dir, 'resources.db'))).toEqual([fixture.resource]);

    const again = await post(`${agent.url}/approvals/${fixture.approval}`, { approved: false });
    expect(again.status).toBe(409);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toEqual([fixture.resource]);

    const next = await post(`${agent.url}/conversations/${fixture.conversation}/messages`, { message: 'list resources' });
    expect(next.status).toBe(200);
    expect(next.body.result.waiting_approval).toBe(false);
    expect(next.body.result.response).toContain(fixture.resource);
  });
});
