/**
 * `approvals: required` keeps the human gate inside parallel and loop nodes.
 * The real mesh, the real mcp-resources server and a scripted Gemini model answering per
 * node. A gated branch waits while its siblings finish and keep their outputs; approval
 * resumes exactly that branch (or loop iteration, whose count survives); several pending
 * approvals of one pipeline are resolved one by one, in any order, or at once; a rejection
 * cancels the pipeline in every node type; a restart of the mesh between two approvals.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ScriptedReply,
  type ScriptedModelServer,
} from '../support/scripted-model.js';

const nodeOf = (request: ModelRequest) => /You are the ([\w-]+)\./.exec(request.system)?.[1];

/**
 * adder-<name> adds resource <name>-<user message> (each run its own resources); lister
 * lists; the summarizer and reporter show the prompt they were given.
 */
function treeScript(request: ModelRequest): ScriptedReply | Promise<ScriptedReply> {
  const node = nodeOf(request) ?? '';
  if (node === 'summarizer' || node === 'reporter') return { text: `${node.toUpperCase()}: ${request.system}` };
  if (node === 'lister') return request.toolResults.length > 0 ? { text: 'LISTED' } : { toolCalls: [{ name: 'resources_list', args: {} }] };
  const adder = /^adder-(.+)$/.exec(node);
  if (adder) {
    const name = `${adder[1]}-${request.lastUserText}`;
    if (request.toolResults.length > 0) return { text: `ADDED ${name}` };
    return { toolCalls: [{ name: 'resources_add', args: { name, value: 1 } }] };
  }
  return resourceAgentScript(request);
}

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(treeScript);
});

afterAll(async () => {
  await model?.close();
});

async function converse(agent: AgentProcess, message: string) {
  const response = await post(`${agent.url}/conversations`, { message });
  expect(response.status).toBe(201);
  return response.body;
}

const decide = (agent: AgentProcess, uuid: string, approved: boolean) => post(`${agent.url}/approvals/${uuid}`, { approved });
const requestsOf = (node: string, since = 0) => model.requests.slice(since).filter((request) => nodeOf(request) === node);
const summary = { name: 'summarizer', type: 'llm', prompt: 'You are the summarizer. First: {first} Second: {second}' };

describe('approvals: required in a parallel node', () => {
  const tree = {
    name: 'pipeline',
    type: 'sequential',
    agents: [
      {
        name: 'fanout',
        type: 'parallel',
        approvals: 'required',
        agents: [
          { name: 'adder-web', type: 'llm', output_key: 'first', prompt: 'You are the adder-web.' },
          { name: 'lister', type: 'llm', output_key: 'second', prompt: 'You are the lister.' },
        ],
      },
      summary,
    ],
  };
  let agent: AgentProcess;
  let db: string;

  beforeAll(async () => {
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    db = join(agent.dir, 'resources.db');
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('one branch waits, the other finishes and keeps its output, approval completes the pipeline', async () => {
    const stop = await converse(agent, 'p1');
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval.tool_name).toBe('resources_add');
    expect(stop.conversation.status).toBe('waiting_approval');
    expect(stop.conversation.pending_approvals.map((p: any) => p.uuid)).toEqual([stop.result.approval.uuid]);
    expect(stop.conversation.pipeline_state.pauses).toEqual([
      { approval_uuid: stop.result.approval.uuid, paused_node_path: [0, 0], paused_node_output_key: 'first', loop_iterations: {} },
    ]);
    expect(stop.conversation.pipeline_state.paused_node_path).toEqual([0, 0]);
    // The lister finished while the adder waited; its output is kept for the join.
    expect(stop.conversation.pipeline_state.branch_outputs).toEqual({ '0.1': 'LISTED' });
    expect(stop.conversation.pipeline_state.session_state).toEqual({ second: 'LISTED' });
    expect(resourceNames(db)).toEqual([]);

    const listerCalls = requestsOf('lister').length;
    const go = await decide(agent, stop.result.approval.uuid, true);
    expect(go.status).toBe(200);
    expect(go.body.result.waiting_approval).toBe(false);
    expect(go.body.result.response).toBe('SUMMARIZER: You are the summarizer. First: ADDED web-p1 Second: LISTED');
    expect(go.body.conversation.status).toBe('active');
    expect(go.body.conversation.pipeline_state).toBeUndefined();
    expect(go.body.conversation.pending_approvals).toBeUndefined();
    // The finished branch did not run again.
    expect(requestsOf('lister')).toHaveLength(listerCalls);
    expect(resourceNames(db)).toEqual(['web-p1']);
    const results = go.body.conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_add');
    expect(results).toHaveLength(1);
    expect(results[0].node).toBe('adder-web');
  });

  it('rejection cancels the pipeline: the call never runs and the summarizer is skipped', async () => {
    const stop = await converse(agent, 'p2');
    const summaries = requestsOf('summarizer').length;
    const no = await decide(agent, stop.result.approval.uuid, false);
    expect(no.status).toBe(200);
    expect(no.body.result.response).toBe('Operation cancelled by user.');
    expect(no.body.conversation.status).toBe('active');
    expect(no.body.conversation.pipeline_state).toBeUndefined();
    expect(requestsOf('summarizer')).toHaveLength(summaries);
    expect(resourceNames(db)).not.toContain('web-p2');
  });
});

describe('two pending approvals in one pipeline', () => {
  const tree = {
    name: 'pipeline',
    type: 'sequential',
    agents: [
      {
        name: 'fanout',
        type: 'parallel',
        approvals: 'required',
        agents: [
          { name: 'adder-a', type: 'llm', output_key: 'first', prompt: 'You are the adder-a.' },
          { name: 'adder-b', type: 'llm', output_key: 'second', prompt: 'You are the adder-b.' },
        ],
      },
      summary,
    ],
  };
  let agent: AgentProcess;
  let db: string;

  beforeAll(async () => {
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    db = join(agent.dir, 'resources.db');
  });

  afterAll(async () => {
    await agent?.stop();
  });

  /** A run that waits for a-<tag> and b-<tag>; approvals by the letter. */
  async function twoWaiting(tag: string) {
    const stop = await converse(agent, tag);
    expect(stop.result.waiting_approval).toBe(true);
    const pending = stop.conversation.pending_approvals;
    expect(pending).toHaveLength(2);
    expect(stop.conversation.pending_approval.uuid).toBe(pending[0].uuid);
    expect(stop.result.response.split('\n')).toHaveLength(2);
    const byName = new Map<string, string>(pending.map((p: any) => [p.tool_args.name, p.uuid]));
    expect([...byName.keys()].sort()).toEqual([`a-${tag}`, `b-${tag}`]);
    expect(resourceNames(db).filter((name) => name.endsWith(`-${tag}`))).toEqual([]);
    return { conversationId: stop.conversation.id as string, a: byName.get(`a-${tag}`)!, b: byName.get(`b-${tag}`)! };
  }

  for (const order of [
    ['a', 'b'],
    ['b', 'a'],
  ] as const) {
    it(`resolves each on its own in the order ${order.join(' then ')}; the pipeline goes on after the last`, async () => {
      const tag = `o${order.join('')}`;
      const waiting = await twoWaiting(tag);
      const summaries = requestsOf('summarizer').length;
      const [first, second] = order;

      const one = await decide(agent, waiting[first], true);
      expect(one.status).toBe(200);
      expect(one.body.result.waiting_approval).toBe(true);
      expect(one.body.result.approval.uuid).toBe(waiting[second]);
      expect(one.body.conversation.status).toBe('waiting_approval');
      expect(one.body.conversation.pending_approvals.map((p: any) => p.uuid)).toEqual([waiting[second]]);
      expect(one.body.conversation.pipeline_state.pauses.map((p: any) => p.approval_uuid)).toEqual([waiting[second]]);
      expect(resourceNames(db)).toContain(`${first}-${tag}`);
      expect(resourceNames(db)).not.toContain(`${second}-${tag}`);
      expect(requestsOf('summarizer')).toHaveLength(summaries);
      // A resolved approval cannot be resolved again, whichever way.
      expect((await decide(agent, waiting[first], false)).status).toBe(409);

      const two = await decide(agent, waiting[second], true);
      expect(two.status).toBe(200);
      expect(two.body.result.waiting_approval).toBe(false);
      expect(two.body.result.response).toBe(`SUMMARIZER: You are the summarizer. First: ADDED a-${tag} Second: ADDED b-${tag}`);
      expect(two.body.conversation.status).toBe('active');
      expect(two.body.conversation.pipeline_state).toBeUndefined();
      expect(requestsOf('summarizer')).toHaveLength(summaries + 1);
      expect(resourceNames(db)).toEqual(expect.arrayContaining([`a-${tag}`, `b-${tag}`]));
    });
  }

  it('both approved at the same moment: each call runs once and the pipeline goes on exactly once', async () => {
    const waiting = await twoWaiting('both');
    const summaries = requestsOf('summarizer').length;
    const [one, two] = await Promise.all([decide(agent, waiting.a, true), decide(agent, waiting.b, true)]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const finished = [one, two].filter((response) => response.body.result.response.startsWith('SUMMARIZER'));
    expect(finished).toHaveLength(1);
    expect(requestsOf('summarizer')).toHaveLength(summaries + 1);
    const conversation = (await get(`${agent.url}/conversations/${waiting.conversationId}`)).body.conversation;
    expect(conversation.status).toBe('active');
    expect(conversation.pipeline_state).toBeUndefined();
    const adds = conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_add');
    expect(adds.map((m: any) => m.tool_call.arguments.name).sort()).toEqual(['a-both', 'b-both']);
    expect(resourceNames(db)).toEqual(expect.arrayContaining(['a-both', 'b-both']));
  });

  it('rejecting one cancels the pipeline with the other waiting call, which never runs', async () => {
    const waiting = await twoWaiting('rej');
    const summaries = requestsOf('summarizer').length;
    const no = await decide(agent, waiting.b, false);
    expect(no.status).toBe(200);
    expect(no.body.conversation.status).toBe('active');
    expect(no.body.conversation.pipeline_state).toBeUndefined();
    const results = no.body.conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_add').slice(-2);
    expect(results.map((m: any) => [m.tool_call.arguments.name, m.content])).toEqual(
      expect.arrayContaining([
        ['b-rej', 'Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.'],
        [
          'a-rej',
          `Cancelled: the pipeline was cancelled when approval ${waiting.b} (resources_add) was rejected by a human; resources_add was not run. The call was not executed. Do not retry it unless the user asks you to.`,
        ],
      ]),
    );
    expect(results.every((m: any) => m.tool_call.is_error === true && m.tool_call.rejected === true)).toBe(true);
    expect((await decide(agent, waiting.a, true)).status).toBe(409);
    expect(requestsOf('summarizer')).toHaveLength(summaries);
    expect(resourceNames(db).filter((name) => name.endsWith('-rej'))).toEqual([]);
  });

  it('goes on after the whole mesh restarts between the two approvals', async () => {
    const waiting = await twoWaiting('restart');
    expect((await decide(agent, waiting.a, true)).body.result.waiting_approval).toBe(true);
    expect(await agent.stop()).toBe(0);
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: agent.dir, config: { agent: tree } });
    const two = await decide(agent, waiting.b, true);
    expect(two.status).toBe(200);
    expect(two.body.result.response).toBe('SUMMARIZER: You are the summarizer. First: ADDED a-restart Second: ADDED b-restart');
    expect(resourceNames(db)).toEqual(expect.arrayContaining(['a-restart', 'b-restart']));
  });
});

describe('approvals: required in a loop node', () => {
  const tree = {
    name: 'pipeline',
    type: 'sequential',
    agents: [
      {
        name: 'grower',
        type: 'loop',
        approvals: 'required',
        max_iterations: 3,
        agents: [{ name: 'step', type: 'llm', prompt: 'You are the step.' }],
      },
      { name: 'reporter', type: 'llm', prompt: 'You are the reporter.' },
    ],
  };
  let agent: AgentProcess;
  let db: string;
  /** Iterations the step node started (model calls without a tool result). */
  let iterations: number;

  beforeAll(async () => {
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    db = join(agent.dir, 'resources.db');
    // Iteration 2 adds a resource (gated); iterations 1 and 3 only answer.
    model.setScript((request) => {
      if (nodeOf(request) !== 'step') return treeScript(request);
      if (request.toolResults.length > 0) return { text: `iteration ${iterations} added` };
      iterations += 1;
      if (iterations === 2) return { toolCalls: [{ name: 'resources_add', args: { name: `loop-${request.lastUserText}`, value: 2 } }] };
      return { text: `iteration ${iterations} done` };
    });
  });

  afterAll(async () => {
    model.setScript(treeScript);
    await agent?.stop();
  });

  it('pauses at iteration 2; approval runs the rest of iteration 2 and iteration 3 only, then the next node', async () => {
    iterations = 0;
    const stop = await converse(agent, 'one');
    expect(stop.result.waiting_approval).toBe(true);
    expect(iterations).toBe(2);
    expect(stop.conversation.pipeline_state.pauses[0].loop_iterations).toEqual({ '0': 2 });
    expect(resourceNames(db)).toEqual([]);

    const since = model.requests.length;
    const go = await decide(agent, stop.result.approval.uuid, true);
    expect(go.status).toBe(200);
    expect(go.body.result.response).toBe('REPORTER: You are the reporter.');
    expect(resourceNames(db)).toEqual(['loop-one']);
    // After the approval: iteration 2's answer to the call's result, then iteration 3, then the reporter.
    expect(requestsOf('step', since).map((request) => request.toolResults.length > 0)).toEqual([true, false]);
    expect(iterations).toBe(3);
    expect(requestsOf('reporter', since)).toHaveLength(1);
    const steps = go.body.conversation.messages.filter((m: any) => m.node === 'step' && m.role === 'assistant' && !m.tool_call);
    expect(steps.map((m: any) => m.content)).toEqual(['iteration 1 done', 'iteration 2 added', 'iteration 3 done']);
  });

  it('rejection at iteration 2 ends the pipeline: no iteration 3, no reporter', async () => {
    iterations = 0;
    const stop = await converse(agent, 'two');
    const since = model.requests.length;
    const no = await decide(agent, stop.result.approval.uuid, false);
    expect(no.status).toBe(200);
    expect(no.body.result.response).toBe('Operation cancelled by user.');
    expect(model.requests.length).toBe(since);
    expect(iterations).toBe(2);
    expect(resourceNames(db)).not.toContain('loop-two');
  });
});
