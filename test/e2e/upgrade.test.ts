/**
 * An approval that was pending before an upgrade still resolves after it.
 * The fixtures are stores written by earlier releases, each holding pending `resources_add`
 * approvals: in simple mode, and paused in a sequential agent tree:
 *  - store-before-issue-12: a release with store schema 7 (commit b8c5b1b: no list
 *    summaries, running-turn marks, decision reasons or turn timestamps);
 *  - store-before-issue-13: the release before the run became a value (main at 0d6c1b0, schema
 *    11), whose agent-tree pauses are a pipeline-state JSON column and whose simple-mode pauses
 *    store no state at all; its parallel.db waits at two branches of a parallel node at once.
 * The current build opens them (the store's migrations move a pipeline state into the `runs`
 * table unread, as schema version 0, which the orchestrator migrates when it reads it), and
 * the approval resolves: approved once, the stored call runs once, a second decision is 409,
 * the conversation goes on.
 *
 * store-before-principals/owned.db was written with authentication on, by the release whose
 * owners were bare names (SQLite schema 16): the API token carol (roles chat, approve) created
 * a conversation waiting for the approval of `resources_add` upgrade-owned and one that is
 * active, the token erin (chat) one. After the upgrade they belong to the token principals
 * (`token:carol`, `token:erin`), not to a JWT that carries the name.
 *
 * store-before-json-limits holds JSON values that the release before JSON values were bounded
 * and carried as text (main at 2375517) stored but could not read back: an approval approved
 * with edited arguments 33 levels deep (its decision stored, the answer a 500, and from then on
 * every list of approvals a 500), and a pending approval whose model arguments are 32 levels
 * deep. Written by that release's own bin/asg with a scripted model: the REST calls as in the
 * test below, then a clean stop. The current build reads every one of them back whole.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startTestIssuer, type TestIssuer } from '../support/jwks-issuer.js';
import { openSse } from '../support/sse-reader.js';
import { trpcClient } from '../support/trpc-client.js';
import { until } from '../support/until.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');
const TREE = {
  agent: { name: 'pipeline', type: 'sequential', agents: [{ name: 'worker', type: 'llm', prompt: '{user_message}', output_key: 'work' }] },
};

const cases = [
  {
    name: 'with schema 7, in simple mode',
    release: 'store-before-issue-12',
    file: 'simple.db',
    config: {},
    conversation: '27202871-f868-4762-8781-f6ceb77281b6',
    approval: 'd5d93f64-8683-4a2f-a50d-c2acc96d814e',
    resource: 'upgrade-simple',
  },
  {
    name: 'with schema 7, a sequential agent tree paused at its llm node',
    release: 'store-before-issue-12',
    file: 'tree.db',
    config: { agent: { name: 'pipeline', type: 'sequential', agents: [{ name: 'worker', type: 'llm', prompt: '{user_message}' }] } },
    conversation: 'b82d93cb-c5c7-4354-accd-8dddd991d7e7',
    approval: '071f2a54-e1a1-43a8-9e08-74dfa2ac3655',
    resource: 'upgrade-tree',
    pipeline: { paused_node_path: [0], paused_node_output_key: '', session_state: {} },
  },
  {
    name: 'with schema 11, in simple mode',
    release: 'store-before-issue-13',
    file: 'simple.db',
    config: {},
    conversation: 'f3c0a3fb-6cbc-4098-b55f-cefd91a5b1bf',
    approval: '3ed3c6cd-f99a-4eb3-89f2-1b9322314fbf',
    resource: 'upgrade-simple',
  },
  {
    name: 'with schema 11, a sequential agent tree paused at its llm node',
    release: 'store-before-issue-13',
    file: 'tree.db',
    config: TREE,
    conversation: 'd76d54a7-57b4-4b4e-a1b7-527129f515ec',
    approval: '90dd0bb1-3a22-49be-81ca-86022b252dde',
    resource: 'upgrade-tree',
    pipeline: {
      paused_node_path: [0],
      paused_node_output_key: 'work',
      session_state: {},
      user_message: 'add resource upgrade-tree with value 7',
    },
  },
];

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
});

afterAll(async () => {
  await model?.close();
});

describe.each(cases)('a store written $name', (fixture) => {
  let agent: AgentProcess;

  beforeAll(async () => {
    const dir = tempDir('asg-upgrade-');
    mkdirSync(join(dir, 'data'), { recursive: true });
    // A copy: the migrations write to the database they open.
    copyFileSync(join(FIXTURES, fixture.release, fixture.file), join(dir, 'data', 'conversations.db'));
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir, config: fixture.config });
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('still shows the approval pending after the upgrade', async () => {
    const { status, body } = await get(`${agent.url}/conversations/${fixture.conversation}`);
    expect(status).toBe(200);
    expect(body.conversation.status).toBe('waiting_approval');
    expect(body.conversation.pending_approval).toMatchObject({
      uuid: fixture.approval,
      tool_name: 'resources_add',
      tool_args: { name: fixture.resource, value: 7 },
    });
    // The old pipeline state, read through the orchestrator (schema version 0), shows as before.
    if ('pipeline' in fixture) expect(body.conversation.pipeline_state).toMatchObject(fixture.pipeline!);
    else expect(body.conversation.pipeline_state).toBeUndefined();
    const list = await get(`${agent.url}/conversations`);
    expect(list.body.conversations[0]).toMatchObject({
      id: fixture.conversation,
      pending_approvals: 1,
      title: `add resource ${fixture.resource} with value 7`,
    });
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

describe('a store written before owners named their source', () => {
  const carols = { waiting: '7175a556-3d58-4152-ae2a-0ed19b47a587', active: 'ac0f2f82-a5f7-440b-b129-b05c2b8e940b' };
  const erins = 'cf9588bd-2900-49fd-8cb0-946c24145d70';
  const approval = '4ea80989-cd6c-4016-9a44-d5f0334cd957';
  const TOKENS = {
    CAROL_TOKEN: 'upgrade-carol-token-5e2a8c1f',
    ERIN_TOKEN: 'upgrade-erin-token-9d4b7f3a',
    DAVE_TOKEN: 'upgrade-dave-token-2c6e0a8d',
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const carol = bearer(TOKENS.CAROL_TOKEN);
  const erin = bearer(TOKENS.ERIN_TOKEN);
  const dave = bearer(TOKENS.DAVE_TOKEN);
  let issuer: TestIssuer;
  let jwtCarol: Record<string, string>;
  let agent: AgentProcess;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    const key = await issuer.newKey('ES256', 'upgrade-1');
    jwtCarol = bearer(await issuer.sign(key, { sub: 'carol', roles: ['chat'] }));
    const dir = tempDir('asg-upgrade-');
    mkdirSync(join(dir, 'data'), { recursive: true });
    copyFileSync(join(FIXTURES, 'store-before-principals', 'owned.db'), join(dir, 'data', 'conversations.db'));
    agent = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      dir,
      env: TOKENS,
      config: {
        auth: {
          // carol chats only now, so that her listing shows what she owns, not all she may read.
          tokens: [
            { name: 'carol', token_env: 'CAROL_TOKEN', roles: ['chat'] },
            { name: 'erin', token_env: 'ERIN_TOKEN', roles: ['chat'] },
            { name: 'dave', token_env: 'DAVE_TOKEN', roles: ['approve'] },
          ],
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl },
        },
      },
    });
  });

  afterAll(async () => {
    await agent?.stop();
    await issuer?.close();
  });

  it("keeps the token carol's conversations hers, with their counts; a JWT named carol sees none of them", async () => {
    const listed = await get(`${agent.url}/conversations`, carol);
    expect(listed.status).toBe(200);
    expect(listed.body.conversations.map((conversation: { id: string }) => conversation.id).sort()).toEqual(
      [carols.waiting, carols.active].sort(),
    );
    expect(listed.body.summary).toEqual({ total: 2, active: 1, waiting_approval: 1, completed: 0 });
    expect((await get(`${agent.url}/conversations/${carols.waiting}`, carol)).body.conversation).toMatchObject({
      owner: 'token:carol',
      status: 'waiting_approval',
    });
    expect((await get(`${agent.url}/conversations/${erins}`, erin)).body.conversation.owner).toBe('token:erin');
    expect((await get(`${agent.url}/conversations/${erins}`, carol)).status).toBe(404);

    const stranger = await get(`${agent.url}/conversations`, jwtCarol);
    expect(stranger.body).toMatchObject({ conversations: [], summary: { total: 0 } });
    for (const id of Object.values(carols)) expect((await get(`${agent.url}/conversations/${id}`, jwtCarol)).status).toBe(404);
  });

  it('resolves the approval pending from before, decided by a principal that names its source; carol goes on talking', async () => {
    expect((await post(`${agent.url}/approvals/${approval}`, { approved: true }, dave)).status).toBe(200);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toEqual(['upgrade-owned']);
    expect((await get(`${agent.url}/approvals/${approval}`, dave)).body).toMatchObject({ status: 'approved', decided_by: 'token:dave' });
    const next = await post(`${agent.url}/conversations/${carols.waiting}/messages`, { message: 'list resources' }, carol);
    expect(next.status).toBe(200);
    expect(next.body.result.response).toContain('upgrade-owned');
    expect((await post(`${agent.url}/conversations/${carols.waiting}/messages`, { message: 'list resources' }, jwtCarol)).status).toBe(404);
  });
});

describe('a store written with schema 11: an agent tree waiting at two parallel branches', () => {
  const conversation = 'b74c6bdc-6302-45a1-acdd-86ee9aa4e308';
  const approvals = { a: 'd4b11231-7289-4e6e-8eca-19846615c16b', b: 'b78f7bf6-eb18-43a0-b42c-5cbbdd095a82' };
  const config = {
    agent: {
      name: 'pipeline',
      type: 'sequential',
      agents: [
        {
          name: 'fan',
          type: 'parallel',
          approvals: 'required',
          agents: [
            { name: 'adder-a', type: 'llm', prompt: 'You are the adder-a. {user_message}', output_key: 'a' },
            { name: 'adder-b', type: 'llm', prompt: 'You are the adder-b. {user_message}', output_key: 'b' },
          ],
        },
        { name: 'reporter', type: 'llm', prompt: 'Report: {a} / {b}' },
      ],
    },
  };
  let agent: AgentProcess;
  let reporting: ScriptedModelServer;

  beforeAll(async () => {
    // The reporter answers with the joined outputs; the branches go on as the resource agent does.
    reporting = await startScriptedModel((request) =>
      request.system.startsWith('Report:') ? { text: request.system } : resourceAgentScript(request),
    );
    const dir = tempDir('asg-upgrade-');
    mkdirSync(join(dir, 'data'), { recursive: true });
    copyFileSync(join(FIXTURES, 'store-before-issue-13', 'parallel.db'), join(dir, 'data', 'conversations.db'));
    agent = await startAgent({ geminiBaseUrl: reporting.geminiBaseUrl, dir, config });
  });

  afterAll(async () => {
    await agent?.stop();
    await reporting?.close();
  });

  it('shows both pauses, resumes each branch once, and joins them after the second approval', async () => {
    const before = await get(`${agent.url}/conversations/${conversation}`);
    expect(
      before.body.conversation.pipeline_state.pauses.map((pause: { approval_uuid: string; paused_node_path: number[] }) => [
        pause.approval_uuid,
        pause.paused_node_path,
      ]),
    ).toEqual([
      [approvals.a, [0, 0]],
      [approvals.b, [0, 1]],
    ]);

    const first = await post(`${agent.url}/approvals/${approvals.a}`, { approved: true });
    expect(first.status).toBe(200);
    // Branch a is done; the run still waits for branch b, and says so.
    expect(first.body.result.waiting_approval).toBe(true);
    expect(first.body.result.approval.uuid).toBe(approvals.b);
    expect(first.body.conversation.pipeline_state.pauses.map((pause: { approval_uuid: string }) => pause.approval_uuid)).toEqual([
      approvals.b,
    ]);
    expect(Object.keys(first.body.conversation.pipeline_state.branch_outputs)).toEqual(['0.0']);

    const second = await post(`${agent.url}/approvals/${approvals.b}`, { approved: true });
    expect(second.status).toBe(200);
    expect(second.body.result.waiting_approval).toBe(false);
    expect(second.body.conversation.status).toBe('active');
    expect(second.body.conversation.pipeline_state).toBeUndefined();
    // The reporter saw both branches' outputs: the one stored while b waited, and b's own.
    expect(second.body.result.response).toMatch(
      /^Report: Done\. resources_add: .*upgrade-par-a.* \/ Done\. resources_add: .*upgrade-par-b/s,
    );
    expect(resourceNames(join(agent.dir, 'resources.db')).sort()).toEqual(['upgrade-par-a', 'upgrade-par-b']);
  });
});

describe('a store written before JSON values were bounded: values nested deeper than its readers could decode', () => {
  const edited = { conversation: 'f3070904-4fb0-4cc0-b51b-64e33b68c94b', approval: '87999172-9f1c-445f-b1cd-4b0a03489090' };
  const fromModel = { conversation: 'dbb65f0f-e779-4c1b-b85a-acc274365ea9', approval: 'e7730fa2-4917-45ae-8d19-93acdaf17627' };
  /** `levels` objects nested as that release's writer nested them: `{"a": … {"leaf": "end"}}`. */
  const deep = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { leaf: 'end' };
    for (let level = 1; level < levels; level++) value = { a: value };
    return value;
  };
  const editedArgs = { name: 'deep-edit', value: 7, extra: deep(32) };
  const modelArgs = { name: 'deep-model', value: 8, extra: deep(31) };
  let agent: AgentProcess;

  beforeAll(async () => {
    const dir = tempDir('asg-upgrade-');
    mkdirSync(join(dir, 'data'), { recursive: true });
    copyFileSync(join(FIXTURES, 'store-before-json-limits', 'deep-values.db'), join(dir, 'data', 'conversations.db'));
    // The approved call's turn was left marked running by that release's orchestrator: a short lease lets this one take it over.
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir, config: { runs: { lease_ttl: '1s' } } });
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('answers every list and get with 200 and the values whole', async () => {
    const list = await get(`${agent.url}/approvals`);
    expect(list.status).toBe(200);
    const byUuid = new Map(list.body.approvals.map((approval: { uuid: string }) => [approval.uuid, approval]));
    expect(byUuid.get(edited.approval)).toMatchObject({
      status: 'approved',
      decided_by: 'anonymous',
      via: 'rest',
      tool_args: { name: 'deep-edit', value: 7 },
      edited_args: editedArgs,
    });
    expect(byUuid.get(fromModel.approval)).toMatchObject({ status: 'pending', tool_args: modelArgs });
    for (const status of ['pending', 'approved']) expect((await get(`${agent.url}/approvals?status=${status}`)).status).toBe(200);
    expect((await get(`${agent.url}/approvals/${edited.approval}`)).body).toMatchObject({ uuid: edited.approval, edited_args: editedArgs });
    expect((await get(`${agent.url}/approvals/${fromModel.approval}`)).body).toMatchObject({
      uuid: fromModel.approval,
      tool_args: modelArgs,
    });

    const conversations = await get(`${agent.url}/conversations`);
    expect(conversations.status).toBe(200);
    expect(conversations.body.conversations.map((conversation: { id: string }) => conversation.id).sort()).toEqual(
      [edited.conversation, fromModel.conversation].sort(),
    );
    const waiting = await get(`${agent.url}/conversations/${fromModel.conversation}`);
    expect(waiting.status).toBe(200);
    expect(waiting.body.conversation.pending_approval).toMatchObject({ uuid: fromModel.approval, tool_args: modelArgs });
    expect(waiting.body.conversation.messages.find((message: { tool_call?: unknown }) => message.tool_call).tool_call.arguments).toEqual(
      modelArgs,
    );

    const approvals = await trpcClient(agent.url).approvals.list.query({});
    expect(approvals.approvals.map((approval) => approval.uuid).sort()).toEqual([edited.approval, fromModel.approval].sort());

    // The stored events replay: the decision, and the model's call with its arguments.
    const replay = async (conversation: string, kind: string) => {
      const stream = await openSse(`${agent.url}/conversations/${conversation}/events`, { 'Last-Event-ID': '1' });
      try {
        expect(stream.status).toBe(200);
        const found = await until(`${kind} replayed`, () =>
          stream.events.find((event) => event.event === kind && (kind !== 'message_added' || event.data.includes('"tool_call"'))),
        );
        return JSON.parse(found.data);
      } finally {
        stream.close();
      }
    };
    expect(await replay(edited.conversation, 'approval_resolved')).toMatchObject({
      approval: { uuid: edited.approval, tool_args: { name: 'deep-edit', value: 7 } },
      decision: 'approved',
    });
    expect((await replay(fromModel.conversation, 'message_added')).message.tool_call.arguments).toEqual(modelArgs);
  });

  it('goes on: the approved call runs with its edited arguments once taken over, and the pending one is decided', async () => {
    await until('the approved call ran', () => resourceNames(join(agent.dir, 'resources.db')).includes('deep-edit'));
    const approved = await post(`${agent.url}/approvals/${fromModel.approval}`, { approved: true });
    expect(approved.status).toBe(200);
    expect(approved.body.result.waiting_approval).toBe(false);
    expect(resourceNames(join(agent.dir, 'resources.db')).sort()).toEqual(['deep-edit', 'deep-model']);
    expect((await get(`${agent.url}/approvals`)).status).toBe(200);
  });
});
