/**
 * The run journal end to end: `bin/asg up` with API tokens, the real mesh over gRPC, the real
 * mcp-resources server and a scripted Gemini model answering per node of a three-node
 * sequential tree. A run is read back step by step (REST, tRPC, `asg runs`): each node
 * started and finished in order, the model calls with their token counts and the tool call
 * between them, an approval and the decision on it with the approved call, secrets in
 * arguments redacted; another chat user's token gets 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { runAsg } from '../support/asg-cli.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { pipelineScript, pipelineTree } from '../support/pipeline-tree.js';
import { trpcClient } from '../support/trpc-client.js';

const TOKENS = {
  ALICE_TOKEN: 'e2e-journal-alice-token-3b7d1f9a5c2e',
  BOB_TOKEN: 'e2e-journal-bob-token-8e2c6a4f0d1b',
  CAROL_TOKEN: 'e2e-journal-carol-token-5a9f3d7b1e6c',
};
const AUTH = {
  tokens: [
    { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] },
    { name: 'bob', token_env: 'BOB_TOKEN', roles: ['chat'] },
    { name: 'carol', token_env: 'CAROL_TOKEN', roles: ['approve'] },
  ],
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alice = bearer(TOKENS.ALICE_TOKEN);
const bob = bearer(TOKENS.BOB_TOKEN);
const carol = bearer(TOKENS.CAROL_TOKEN);

/** A provider key's shape: redacted wherever it appears, even never registered. */
const SECRET = 'sk-live-4f7a9c2e1b8d6f3a5c0e';

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(pipelineScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: TOKENS, config: { auth: AUTH, agent: pipelineTree } });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

interface Step {
  index: number;
  kind: string;
  node: string;
  started_at: string;
  duration_ms: number;
  [field: string]: unknown;
}

async function onlyRunOf(conversationId: string): Promise<{ run_id: string; status: string; steps: number }> {
  const listed = await get(`${agent.url}/conversations/${conversationId}/runs`, alice);
  expect(listed.status).toBe(200);
  expect(listed.body.runs).toHaveLength(1);
  return listed.body.runs[0];
}

describe('the run journal of a tree run', () => {
  let conversationId: string;
  let runId: string;

  beforeAll(async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'list all resources' }, alice);
    expect(created.status).toBe(201);
    expect(created.body.result.response).toBe('REPORT');
    conversationId = created.body.conversation.id;
    runId = (await onlyRunOf(conversationId)).run_id;
  });

  it('lists each node started and finished in order, and the llm node that called a tool: two model calls with tokens and the call between', async () => {
    const read = await get(`${agent.url}/runs/${runId}`, alice);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ run_id: runId, conversation_id: conversationId, status: 'completed', journal_version: 2 });
    const steps = read.body.steps as Step[];
    expect(steps.map((step) => step.index)).toEqual(steps.map((_, index) => index));
    expect(steps.map((step) => `${step.kind} ${step.node}`)).toEqual([
      'node_started pipeline',
      'node_started pipeline/analyzer',
      'model_call pipeline/analyzer',
      'node_finished pipeline/analyzer',
      'node_started pipeline/executor',
      'model_call pipeline/executor',
      'tool_call pipeline/executor',
      'model_call pipeline/executor',
      'node_finished pipeline/executor',
      'node_started pipeline/reporter',
      'model_call pipeline/reporter',
      'node_finished pipeline/reporter',
      'node_finished pipeline',
    ]);
    const [asking, answering] = steps.filter((step) => step.kind === 'model_call' && step.node === 'pipeline/executor');
    for (const call of [asking!, answering!]) {
      expect(call).toMatchObject({ model: 'gemini-2.5-flash', provider: 'gemini' });
      expect(call.input_tokens).toBeGreaterThan(0);
      expect(call.output_tokens).toBeGreaterThan(0);
    }
    expect(asking).toMatchObject({ finish_reason: 'tool-calls', tool_calls: ['resources_list'] });
    expect(answering).toMatchObject({ finish_reason: 'stop' });
    expect(steps.find((step) => step.kind === 'tool_call')).toMatchObject({
      tool: 'resources_list',
      server: 'resources',
      arguments: {},
      outcome: 'ok',
      args_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(steps.find((step) => step.kind === 'node_finished' && step.node === 'pipeline/analyzer')).toMatchObject({
      outcome: 'done',
      output_key: 'analysis',
    });
    // A node's finish spans the node: from its start, as long as the steps inside it took at least.
    for (const node of ['pipeline/analyzer', 'pipeline/executor', 'pipeline/reporter']) {
      const started = steps.find((step) => step.kind === 'node_started' && step.node === node)!;
      const finished = steps.find((step) => step.kind === 'node_finished' && step.node === node)!;
      const inside = steps.filter((step) => step.node === node && (step.kind === 'model_call' || step.kind === 'tool_call'));
      expect(finished.started_at).toBe(started.started_at);
      expect(finished.duration_ms).toBeGreaterThanOrEqual(Math.max(...inside.map((step) => step.duration_ms)));
    }
  });

  it('lists the runs of a conversation newest first, with their step counts', async () => {
    const second = await post(`${agent.url}/conversations/${conversationId}/messages`, { message: 'list all resources' }, alice);
    expect(second.status).toBe(200);
    const listed = await get(`${agent.url}/conversations/${conversationId}/runs?limit=1`, alice);
    expect(listed.status).toBe(200);
    expect(listed.body.runs).toHaveLength(1);
    expect(listed.body.runs[0]).toMatchObject({ status: 'completed', steps: 13, ended_at: expect.any(String) });
    expect(listed.body.runs[0].run_id).not.toBe(runId);
    const older = await get(`${agent.url}/conversations/${conversationId}/runs?limit=1&cursor=${listed.body.next_cursor}`, alice);
    expect(older.body.runs.map((run: { run_id: string }) => run.run_id)).toEqual([runId]);
    expect(older.body.next_cursor).toBeUndefined();
  });

  it("answers another chat user's token 404 for the run and for the conversation's runs, as for ones nobody has", async () => {
    const unknownRun = await get(`${agent.url}/runs/00000000-0000-4000-8000-000000000000`, bob);
    expect(unknownRun.status).toBe(404);
    const stranger = await get(`${agent.url}/runs/${runId}`, bob);
    expect(stranger).toMatchObject({ status: 404, body: { error: `run ${runId} not found` } });
    expect((await get(`${agent.url}/conversations/${conversationId}/runs`, bob)).status).toBe(404);
    // An approver reads every conversation, so every run.
    expect((await get(`${agent.url}/runs/${runId}`, carol)).status).toBe(200);
  });

  it('reads the same through tRPC and asg runs', async () => {
    const trpc = trpcClient(agent.url, alice);
    const viaTrpc = await trpc.runs.get.query({ runId });
    const viaRest = (await get(`${agent.url}/runs/${runId}`, alice)).body;
    expect(viaTrpc).toEqual(viaRest);
    expect((await trpc.runs.list.query({ conversationId })).runs.map((run) => run.run_id)).toContain(runId);

    const env = { ASG_URL: agent.url, ASG_TOKEN: TOKENS.ALICE_TOKEN };
    const shown = await runAsg(['runs', 'show', runId], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/tool_call\s+pipeline\/executor\s+.*resources_list \{\} → ok/);
    const listed = await runAsg(['runs', 'list', conversationId, '--json'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).runs.map((run: { run_id: string }) => run.run_id)).toContain(runId);
    const refused = await runAsg(['runs', 'show', runId], { ...env, ASG_TOKEN: TOKENS.BOB_TOKEN });
    expect(refused.code).toBe(5);
  });
});

describe('approvals and decisions in the journal', () => {
  it('records the approval asked, who decided it and the approved call, with secrets in the arguments redacted', async () => {
    const created = await post(`${agent.url}/conversations`, { message: `add ${SECRET} with value 5` }, alice);
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(true);
    const uuid = created.body.result.approval.uuid as string;
    const conversationId = created.body.conversation.id as string;
    const decided = await post(`${agent.url}/approvals/${uuid}`, { approved: true, reason: 'fine' }, carol);
    expect(decided.status).toBe(200);

    const { run_id: runId, status } = await onlyRunOf(conversationId);
    expect(status).toBe('completed');
    const read = await get(`${agent.url}/runs/${runId}`, alice);
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    const steps = read.body.steps as Step[];
    expect(steps.map((step) => step.kind)).toEqual([
      'node_started',
      'node_started',
      'model_call',
      'node_finished',
      'node_started',
      'model_call',
      'approval',
      'node_finished',
      'node_finished',
      'decision',
      'tool_call',
      'node_started',
      'model_call',
      'node_finished',
      'node_started',
      'model_call',
      'node_finished',
      'node_finished',
    ]);
    expect(steps.find((step) => step.kind === 'approval')).toMatchObject({
      node: 'pipeline/executor',
      approval_uuid: uuid,
      tool: 'resources_add',
      arguments: { name: '[redacted]', value: 5 },
      asks: 'approval',
    });
    expect(steps.find((step) => step.kind === 'node_finished' && step.node === 'pipeline/executor')).toMatchObject({ outcome: 'paused' });
    expect(steps.find((step) => step.kind === 'decision')).toMatchObject({
      node: 'pipeline/executor',
      approval_uuid: uuid,
      approved: true,
      decided_by: 'token:carol',
      via: 'rest',
      reason: 'fine',
    });
    expect(steps.find((step) => step.kind === 'tool_call')).toMatchObject({
      tool: 'resources_add',
      // The server that ran it, as the broker said, though no tool list was loaded to decide it.
      server: 'resources',
      arguments: { name: '[redacted]', value: 5 },
      outcome: 'ok',
      approval_uuid: uuid,
    });
  });
});
