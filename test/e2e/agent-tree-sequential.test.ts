/**
 * Orchestrated mode, sequential pipelines end to end: the real mesh, the real
 * mcp-resources server and a scripted Gemini model that answers per node (each llm node
 * has its own system prompt). Data flow, pause and resume,
 * rejection, nested pauses, a restart while a pipeline waits, and a changed tree.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ModelRequest, type ScriptedModelServer } from '../support/scripted-model.js';
import { stringify } from 'yaml';

/** The node a request is for: every prompt below starts with "You are the <node>." */
const nodeOf = (request: ModelRequest) => /You are the ([\w-]+)\./.exec(request.system)?.[1];

/** The analyzer and reporters answer in text; the executor is the resource agent of simple mode. */
function pipelineScript(request: ModelRequest) {
  switch (nodeOf(request)) {
    case 'analyzer':
      return { text: `ANALYSIS(${request.lastUserText})` };
    case 'sleeper':
      return { hang: true as const };
    case 'reporter':
    case 'finisher':
      return { text: `${nodeOf(request)} saw: ${request.system}` };
    default:
      return resourceAgentScript(request);
  }
}

const flatTree = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', output_key: 'analysis', prompt: 'You are the analyzer. Analyze: {user_message}' },
    {
      name: 'executor',
      type: 'llm',
      model: 'gemini-2.5-pro',
      output_key: 'result',
      prompt: 'You are the executor. Execute based on: {analysis}',
    },
    { name: 'reporter', type: 'llm', prompt: 'You are the reporter. Report on: {result} {unknown_key}' },
  ],
};

const nestedTree = {
  name: 'outer',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', output_key: 'analysis', prompt: 'You are the analyzer. Analyze: {user_message}' },
    {
      name: 'inner',
      type: 'sequential',
      agents: [
        { name: 'executor', type: 'llm', output_key: 'result', prompt: 'You are the executor. Execute based on: {analysis}' },
        { name: 'reporter', type: 'llm', output_key: 'report', prompt: 'You are the reporter. Report on: {result}' },
      ],
    },
    { name: 'finisher', type: 'llm', prompt: 'You are the finisher. Finish with: {report}' },
  ],
};

let model: ScriptedModelServer;
let flat: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(pipelineScript);
  flat = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: flatTree } });
});

afterAll(async () => {
  await flat?.stop();
  await model?.close();
});

async function converse(agent: AgentProcess, message: string) {
  const response = await post(`${agent.url}/conversations`, { message });
  expect(response.status).toBe(201);
  return response.body;
}

const byNode = (messages: any[], node: string) => messages.filter((m) => m.node === node);

describe('sequential pipeline with data flow', () => {
  it('runs analyzer then executor; the executor gets the analysis in its prompt and runs resources_list', async () => {
    const before = model.requests.length;
    const { conversation, result } = await converse(flat, 'list all resources');
    expect(result.waiting_approval).toBe(false);
    expect(conversation.status).toBe('active');
    expect(conversation.pipeline_state).toBeUndefined();
    const requests = model.requests.slice(before);
    const executor = requests.filter((r) => nodeOf(r) === 'executor');
    expect(executor[0]!.system).toBe('You are the executor. Execute based on: ANALYSIS(list all resources)');
    // Per-node model: the executor's own, the analyzer the top-level one.
    expect(executor.every((r) => r.model === 'gemini-2.5-pro')).toBe(true);
    expect(requests.find((r) => nodeOf(r) === 'analyzer')!.model).toBe('gemini-2.5-flash');
    // Each node sees the user message and its own steps: the executor never got the analyzer's answer as a turn.
    expect((executor[0]!.body as any).contents).toEqual([{ role: 'user', parts: [{ text: 'list all resources' }] }]);
    expect(executor[0]!.lastUserText).toBe('list all resources');

    // The conversation shows which node produced each message; the orchestrated conversation has no system prompt.
    const messages = conversation.messages;
    expect(messages.map((m: any) => [m.role, m.node])).toEqual([
      ['user', undefined],
      ['assistant', 'analyzer'],
      ['assistant', 'executor'],
      ['tool', 'executor'],
      ['assistant', 'executor'],
      ['assistant', 'reporter'],
    ]);
    expect(byNode(messages, 'executor')[1].tool_call).toMatchObject({ name: 'resources_list', is_error: false });
    // The reporter got the executor's output; an unknown placeholder stays as written.
    expect(result.response).toMatch(/^reporter saw: You are the reporter\. Report on: Done\. resources_list: .* \{unknown_key\}$/s);
    await flat.waitForLine((line) => line.includes('placeholders without a value') && line.includes('unknown_key'));
  });
});

describe('pause and resume in a sequential pipeline', () => {
  it('pauses at the executor with the pipeline state, and approval resumes and completes the pipeline', async () => {
    const db = join(flat.dir, 'resources.db');
    const stop = await converse(flat, 'add resource seq-test with value 42');
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval).toMatchObject({ tool_name: 'resources_add', tool_args: { name: 'seq-test', value: 42 } });
    expect(stop.conversation.status).toBe('waiting_approval');
    expect(stop.conversation.pipeline_state).toEqual({
      paused_node_path: [1],
      paused_node_output_key: 'result',
      session_state: { analysis: 'ANALYSIS(add resource seq-test with value 42)' },
      user_message: 'add resource seq-test with value 42',
      pauses: [{ approval_uuid: stop.result.approval.uuid, paused_node_path: [1], paused_node_output_key: 'result', loop_iterations: {} }],
      branch_outputs: {},
    });
    expect(byNode(stop.conversation.messages, 'reporter')).toEqual([]);
    expect(resourceNames(db)).not.toContain('seq-test');

    const go = await post(`${flat.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(resourceNames(db)).toContain('seq-test');
    const after = go.body.conversation;
    expect(after.status).toBe('active');
    expect(after.pipeline_state).toBeUndefined();
    const executor = byNode(after.messages, 'executor');
    expect(executor.find((m: any) => m.role === 'tool').tool_call).toMatchObject({
      name: 'resources_add',
      arguments: { name: 'seq-test', value: 42 },
      is_error: false,
    });
    // The executor's loop went on from its own steps, then the reporter ran with its output.
    expect(executor.at(-1).content).toMatch(/^Done\. resources_add: /);
    expect(go.body.result.response).toContain('reporter saw: You are the reporter. Report on: Done. resources_add:');
  });

  it('rejection cancels the pipeline: nothing runs and the later nodes are skipped', async () => {
    const db = join(flat.dir, 'resources.db');
    const stop = await converse(flat, 'add resource rejected-one with value 1');
    const before = model.requests.length;
    const no = await post(`${flat.url}/approvals/${stop.result.approval.uuid}`, { approved: false });
    expect(no.status).toBe(200);
    expect(no.body.result).toMatchObject({ response: 'Operation cancelled by user.', waiting_approval: false });
    expect(no.body.conversation.status).toBe('active');
    expect(no.body.conversation.pipeline_state).toBeUndefined();
    expect(resourceNames(db)).not.toContain('rejected-one');
    expect(model.requests.length).toBe(before);
    expect(no.body.conversation.messages.at(-1)).toMatchObject({
      role: 'tool',
      node: 'executor',
      content: 'Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.',
      tool_call: { rejected: true },
    });
    expect(byNode(no.body.conversation.messages, 'reporter')).toEqual([]);
    // The conversation goes on with a fresh run.
    const next = await post(`${flat.url}/conversations/${no.body.conversation.id}/messages`, { message: 'list all resources' });
    expect(next.body.result.response).toContain('reporter saw:');
  });
});

describe('nested sequential pauses, restarts and changed trees', () => {
  it('resumes inside a nested sequential, then runs the rest of both levels', async () => {
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: nestedTree } });
    try {
      const stop = await converse(agent, 'add resource nested-one with value 7');
      expect(stop.conversation.pipeline_state).toMatchObject({ paused_node_path: [1, 0], paused_node_output_key: 'result' });
      const go = await post(`${agent.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
      expect(go.status).toBe(200);
      expect(resourceNames(join(agent.dir, 'resources.db'))).toEqual(['nested-one']);
      const nodes = go.body.conversation.messages.map((m: any) => m.node).filter(Boolean);
      expect([...new Set(nodes)]).toEqual(['analyzer', 'executor', 'reporter', 'finisher']);
      // The finisher got the reporter's output, which got the executor's.
      expect(go.body.result.response).toMatch(
        /^finisher saw: You are the finisher\. Finish with: reporter saw: You are the reporter\. Report on: Done\. resources_add:/,
      );
    } finally {
      await agent.stop();
    }
  });

  it('resumes after the whole mesh restarts while the pipeline waits', async () => {
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: nestedTree } });
    let second: AgentProcess | undefined;
    try {
      const stop = await converse(first, 'add resource restarted-one with value 3');
      expect(await first.stop()).toBe(0);
      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: first.dir, config: { agent: nestedTree } });
      const waiting = await get(`${second.url}/conversations/${stop.conversation.id}`);
      expect(waiting.body.conversation.pipeline_state).toMatchObject({ paused_node_path: [1, 0] });
      const go = await post(`${second.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
      expect(go.status).toBe(200);
      expect(resourceNames(join(first.dir, 'resources.db'))).toEqual(['restarted-one']);
      expect(go.body.result.response).toMatch(/^finisher saw:/);
      expect(go.body.conversation.pipeline_state).toBeUndefined();
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  it('refuses to resume with 409 when the tree changed so the path leads elsewhere, and runs nothing', async () => {
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: nestedTree } });
    let second: AgentProcess | undefined;
    try {
      const stop = await converse(first, 'add resource changed-one with value 9');
      const uuid = stop.result.approval.uuid;
      expect(await first.stop()).toBe(0);
      // The inner sequence's children swapped: [1, 0] is now the reporter.
      const changed = structuredClone(nestedTree);
      changed.agents[1]!.agents!.reverse();
      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: first.dir, config: { agent: changed } });
      const before = model.requests.length;
      const go = await post(`${second.url}/approvals/${uuid}`, { approved: true });
      expect(go.status).toBe(409);
      expect(go.body.error).toContain(
        `approval ${uuid} cannot resume its pipeline: the agent tree changed since it paused at agent.agents[1].agents[0]`,
      );
      expect(resourceNames(join(first.dir, 'resources.db'))).toEqual([]);
      expect(model.requests.length).toBe(before);
      const still = await get(`${second.url}/conversations/${stop.conversation.id}`);
      expect(still.body.conversation.status).toBe('waiting_approval');
      expect(still.body.conversation.pending_approval.uuid).toBe(uuid);
      // Rejecting still works: it runs nothing and cancels the pipeline.
      const no = await post(`${second.url}/approvals/${uuid}`, { approved: false });
      expect(no.status).toBe(200);
      expect(no.body.conversation.pipeline_state).toBeUndefined();
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

describe('config errors with node paths', () => {
  it('refuses to start a tree with an llm node that has children, naming the node', async () => {
    const dir = flat.dir;
    const file = join(dir, 'bad-tree.yaml');
    const bad = {
      ...defaultConfig(dir),
      agent: {
        ...nestedTree,
        agents: [
          nestedTree.agents[0],
          { ...nestedTree.agents[1], agents: [{ name: 'executor', type: 'llm', agents: [{ name: 'x', type: 'llm' }] }] },
        ],
      },
    };
    writeFileSync(file, stringify(bad));
    const { spawnSync } = await import('node:child_process');
    const { ASG, REPO_ROOT } = await import('../support/agent-process.js');
    const run = spawnSync(process.execPath, [ASG, 'config', 'check', file], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    const out = run.stdout + run.stderr;
    // Where in the file (line and column), then the node's path and name.
    expect(out.split('\n').find((line) => line.startsWith(`${file}:`))).toMatch(
      /^.*:\d+:\d+: agent\.agents\[1\]\.agents\[0\] \(node "executor"\): "agents" is a field of sequential, parallel and loop nodes, not of an llm node$/,
    );
  });
});

describe('per-node timeout (llm.timeout also settable per node)', () => {
  it("ends a node's model call at the node's own timeout, well before llm.timeout, and the pipeline goes on", async () => {
    const tree = {
      name: 'napping',
      type: 'sequential',
      agents: [
        { name: 'sleeper', type: 'llm', timeout: '500ms', output_key: 'nap', prompt: 'You are the sleeper.' },
        { name: 'reporter', type: 'llm', prompt: 'You are the reporter. Report on: {nap}' },
      ],
    };
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    try {
      const { conversation, result } = await converse(agent, 'take a nap');
      const sleeper = byNode(conversation.messages, 'sleeper');
      expect(sleeper.at(-1).content).toMatch(/model gemini-2\.5-flash did not answer within 500ms/);
      expect(result.response).toMatch(/^reporter saw: You are the reporter\. Report on: The model could not answer \(transient error\): /);
    } finally {
      await agent.stop();
    }
  });
});
