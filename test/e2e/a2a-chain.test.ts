/**
 * Agents delegating to agents, each a whole mesh in its own process, with one
 * scripted Gemini model that answers per agent (by the agent's system prompt): delegation
 * as the a2a_<name> tool (destructive delegation gated), a pipeline's a2a node (with a proxy
 * approval for the peer's destructive call), a pipeline served over A2A, a three-agent
 * chain where the approval given on A executes on C
 * and a rejection on A leaves C unchanged and not waiting, the session id travelling to the
 * last agent, and the loop guard stopping two agents that call each other.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { approvalDescription, startSdkAgent, type A2aTestPeer } from '../support/a2a-peers.js';
import { resourceNames } from '../support/resources-db.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ScriptedReply,
  type ScriptedModelServer,
} from '../support/scripted-model.js';

const agentOf = (request: ModelRequest) => /You are (agent-[a-z]+)\./.exec(request.system)?.[1];
/** Who each agent delegates to: the tool it is offered for that agent. */
const DELEGATES: Record<string, string> = {
  'agent-a': 'a2a_agent-b',
  'agent-b': 'a2a_agent-c',
  'agent-x': 'a2a_agent-y',
  'agent-y': 'a2a_agent-x',
};

/**
 * An agent with a delegate passes the user's message on and reports the answer; the last
 * agent of a chain (and any agent without the tool) is the resource agent of simple mode.
 */
function chainScript(request: ModelRequest): ScriptedReply | Promise<ScriptedReply> {
  const agent = agentOf(request) ?? '';
  const delegate = DELEGATES[agent];
  if (delegate && request.tools.includes(delegate)) {
    if (request.toolResults.length > 0) return { text: `${agent} reports: ${request.toolResults[0]!.output}` };
    return { toolCalls: [{ name: delegate, args: { message: request.lastUserText } }] };
  }
  if (agentOf(request) === undefined && /You are the analyzer\./.test(request.system)) return { text: 'ANALYZED' };
  return resourceAgentScript(request);
}

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(chainScript);
});

afterAll(async () => {
  await model?.close();
});

const agentConfig = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  prompt: `You are ${name}. Delegate resource work when you can.`,
  ...extra,
});
const a2aEntry = (name: string, peer: AgentProcess, extra: Record<string, unknown> = {}) => ({
  name,
  url: `${peer.url}/a2a`,
  description: `The agent ${name}`,
  ...extra,
});

async function converse(agent: AgentProcess, message: string, headers: Record<string, string> = {}) {
  const response = await post(`${agent.url}/conversations`, { message }, headers);
  expect(response.status).toBe(201);
  return response.body;
}

/** An agent's conversations, newest first, each with its messages (list items are summaries). */
async function conversationsOf(agent: AgentProcess): Promise<any[]> {
  const summaries = (await get(`${agent.url}/conversations`)).body.conversations as { id: string }[];
  return Promise.all(summaries.map(async ({ id }) => (await get(`${agent.url}/conversations/${id}`)).body.conversation));
}

describe('a chain of three agents: A → B → C, the call held by C', () => {
  let a: AgentProcess;
  let b: AgentProcess;
  let c: AgentProcess;
  let cDb: string;

  beforeAll(async () => {
    c = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-c') });
    b = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-b', { a2a: [a2aEntry('agent-c', c)] }) });
    a = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-a', { a2a: [a2aEntry('agent-b', b)] }) });
    cDb = join(c.dir, 'resources.db');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  });

  it('delegates a read through the chain; the answer comes back and nobody waits', async () => {
    const { result, conversation } = await converse(a, 'list all resources');
    expect(result.waiting_approval).toBe(false);
    expect(result.response).toMatch(/^agent-a reports: agent-b reports: Done\. resources_list/);
    const delegation = conversation.messages.find((m: any) => m.role === 'tool' && m.tool_call.name === 'a2a_agent-b');
    expect(delegation.tool_call.arguments).toEqual({ message: 'list all resources' });
    expect(delegation.tool_call.is_error).toBeFalsy();
    // B and C each got the task as a conversation of their own, and are done with it.
    for (const peer of [b, c]) {
      const [latest] = await conversationsOf(peer);
      expect(latest.status).toBe('active');
      expect(latest.messages.find((m: any) => m.role === 'user').content).toBe('list all resources');
    }
  });

  it('lists the peers as a2a_<name> tools (GET /tools)', async () => {
    const { body } = await get(`${a.url}/tools`);
    expect(body.tools.find((tool: any) => tool.name === 'a2a_agent-b')).toMatchObject({
      server: 'a2a',
      destructiveHint: false,
      inputSchema: { required: ['message'] },
    });
  });

  it('an approval given on A executes on C; every agent of the chain is active again', async () => {
    const stop = await converse(a, 'add resource chain-1 with value 7');
    expect(stop.result.waiting_approval).toBe(true);
    const approval = stop.result.approval;
    expect(approval).toMatchObject({ tool_name: 'a2a_agent-b', remote_agent_name: 'agent-b', agent_chain: ['agent-b', 'agent-c'] });
    expect(approval.description).toMatch(/^agent-b asks for approval: agent-c asks for approval: resources_add/);
    const [bWaiting] = await conversationsOf(b);
    expect(approval.remote_task_id).toBe(bWaiting.id);
    expect(bWaiting.status).toBe('waiting_approval');
    expect((await conversationsOf(c))[0].status).toBe('waiting_approval');
    expect(resourceNames(cDb)).not.toContain('chain-1');

    const go = await post(`${a.url}/approvals/${approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.result.waiting_approval).toBe(false);
    expect(go.body.conversation.status).toBe('active');
    expect(resourceNames(cDb)).toContain('chain-1');
    expect((await conversationsOf(b))[0].status).toBe('active');
    expect((await conversationsOf(c))[0].status).toBe('active');
    // C ran the call once.
    const cMessages = (await conversationsOf(c))[0].messages;
    expect(cMessages.filter((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_add')).toHaveLength(1);
  });

  it('a rejection on A reaches C: nothing runs, and no agent of the chain is left waiting', async () => {
    const stop = await converse(a, 'add resource chain-2 with value 8');
    const no = await post(`${a.url}/approvals/${stop.result.approval.uuid}`, { approved: false, reason: 'value too large' });
    expect(no.status).toBe(200);
    expect(no.body.result.response).toMatch(/^Operation cancelled by user\./);
    expect(resourceNames(cDb)).not.toContain('chain-2');
    expect((await conversationsOf(b))[0].status).toBe('active');
    const [cLatest] = await conversationsOf(c);
    expect(cLatest.status).toBe('active');
    // The reason given on A travels down the chain (the v0.3/v1.0 data part) to C's model.
    const cTool = cLatest.messages.filter((m: any) => m.role === 'tool').at(-1);
    expect(cTool.tool_call).toMatchObject({ name: 'resources_add', rejected: true, reason: 'value too large' });
    expect(cTool.content).toBe(
      'Rejected by a human: value too large. The call was not executed. Do not retry it unless the user asks you to.',
    );
  });

  it('carries the session id to the last agent of the chain', async () => {
    const sessionId = 'c0ffee42';
    await converse(a, 'list all resources', { 'X-Session-ID': sessionId });
    for (const peer of [b, c]) expect((await conversationsOf(peer))[0].session_id).toBe(sessionId);
  });
});

describe('a destructive A2A agent and an unreachable one', () => {
  let a: AgentProcess;
  let b: AgentProcess;

  beforeAll(async () => {
    b = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-b') });
    a = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-a', { a2a: [a2aEntry('agent-b', b, { destructiveHint: true })] }),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('asks before delegating, and delegates once approved', async () => {
    const before = (await conversationsOf(b)).length;
    const stop = await converse(a, 'list all resources');
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval).toMatchObject({ tool_name: 'a2a_agent-b', tool_args: { message: 'list all resources' } });
    expect(stop.result.approval.remote_task_id).toBeUndefined();
    expect(await conversationsOf(b)).toHaveLength(before);
    const go = await post(`${a.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
    expect(go.body.result.response).toMatch(/^agent-a reports: Done\. resources_list/);
    expect(await conversationsOf(b)).toHaveLength(before + 1);
  });

  it('reports an unreachable peer in the conversation as sub-agent unavailable', async () => {
    const gone = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-a', { a2a: [{ name: 'agent-b', url: 'http://127.0.0.1:9/a2a' }] }),
    });
    try {
      const { result, conversation } = await converse(gone, 'list all resources');
      expect(result.waiting_approval).toBe(false);
      const failed = conversation.messages.find((m: any) => m.role === 'tool' && m.tool_call.name === 'a2a_agent-b');
      expect(failed.tool_call.is_error).toBe(true);
      expect(failed.content).toMatch(/sub-agent unavailable/);
    } finally {
      await gone.stop();
    }
  });
});

describe('the bearer token and session id reach the last agent of the chain', () => {
  let a: AgentProcess;
  let b: AgentProcess;
  let peer: A2aTestPeer;

  beforeAll(async () => {
    // The last agent is built with @a2a-js/sdk's own server; it asks for an approval first.
    peer = await startSdkAgent({ name: 'sdk-agent' });
    b = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-b', { a2a: [{ name: 'agent-c', url: peer.endpoint }] }),
    });
    a = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-a', { a2a: [a2aEntry('agent-b', b)] }) });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), peer?.close()]);
  });

  it("forwards Authorization and X-Session-ID over two hops, and the SDK agent's approval completes from A", async () => {
    const stop = await converse(a, 'list all resources', { Authorization: 'Bearer test-token-123', 'X-Session-ID': 'a11ce0b5' });
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval).toMatchObject({ agent_chain: ['agent-b', 'agent-c'] });
    // The SDK agent's own description travels up, nested in each agent's.
    expect(stop.result.approval.description).toBe(
      `agent-b asks for approval: agent-c asks for approval: ${approvalDescription('list all resources')}`,
    );
    const calls = peer.rpcRequests();
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.headers.authorization).toBe('Bearer test-token-123');
      expect(call.headers['x-session-id']).toBe('a11ce0b5');
      expect(call.headers['x-a2a-hops']).toBe('2');
    }
    const go = await post(
      `${a.url}/approvals/${stop.result.approval.uuid}`,
      { approved: true },
      { Authorization: 'Bearer test-token-123' },
    );
    expect(go.status).toBe(200);
    expect(go.body.result.response).toBe('agent-a reports: agent-b reports: done: list all resources');
    expect(peer.messages.map((message) => message.text)).toEqual(['list all resources', 'approved']);
  });

  it('forwards no token when none came in', async () => {
    const before = peer.rpcRequests().length;
    const stop = await converse(a, 'list all resources');
    const calls = peer.rpcRequests().slice(before);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.headers.authorization).toBeUndefined();
    await post(`${a.url}/approvals/${stop.result.approval.uuid}`, { approved: false });
  });
});

describe('a peer that streams, and whose streams are cut mid-task', () => {
  let b: AgentProcess;
  let peer: A2aTestPeer;

  beforeAll(async () => {
    // @a2a-js/sdk's server with capabilities.streaming; the first two streams it answers are cut after their first event.
    peer = await startSdkAgent({ name: 'streamer', streaming: true, cutStreams: 2 });
    b = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-b', { a2a: [{ name: 'agent-c', url: peer.endpoint }] }),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([b?.stop(), peer?.close()]);
  });

  it("the turn still completes with the peer's final answer, and the peer acted on each message once", async () => {
    const stop = await converse(b, 'list all resources');
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval).toMatchObject({ remote_agent_name: 'agent-c', agent_chain: ['agent-c'] });
    const go = await post(`${b.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.result.response).toBe('agent-b reports: done: list all resources');
    expect(peer.messages.map((message) => message.text)).toEqual(['list all resources', 'approved']);
    const methods = peer.rpcRequests().map((request) => (request.body as { method: string }).method);
    expect(methods.filter((method) => method === 'SendStreamingMessage')).toHaveLength(2);
    expect(methods).toContain('SubscribeToTask');
  });
});

describe('a2a nodes in a pipeline', () => {
  let a: AgentProcess;
  let b: AgentProcess;
  let bDb: string;

  beforeAll(async () => {
    b = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: agentConfig('agent-b') });
    bDb = join(b.dir, 'resources.db');
    const tree = {
      name: 'pipeline',
      type: 'sequential',
      agents: [
        { name: 'analyzer', type: 'llm', output_key: 'analysis', prompt: 'You are the analyzer.' },
        { name: 'delegator', type: 'a2a', url: `${b.url}/a2a`, prompt: '{user_message}', output_key: 'answer' },
      ],
    };
    a = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('the a2a node delegates a read; no approval, A stays active', async () => {
    const { result, conversation } = await converse(a, 'list all resources');
    expect(result.waiting_approval).toBe(false);
    expect(result.response).toMatch(/^Done\. resources_list/);
    expect(conversation.status).toBe('active');
    expect(conversation.messages.filter((m: any) => m.node === 'delegator').map((m: any) => m.role)).toEqual(['assistant', 'tool']);
  });

  it("the peer's destructive call becomes a proxy approval on A; approving it runs the call on B", async () => {
    const stop = await converse(a, 'add resource chain-test with value 77');
    expect(stop.result.waiting_approval).toBe(true);
    const approval = stop.result.approval;
    const [bTask] = await conversationsOf(b);
    expect(approval).toMatchObject({ remote_task_id: bTask.id, remote_agent_name: 'delegator', tool_name: 'a2a_delegator' });
    expect(stop.conversation.pipeline_state.paused_node_path).toEqual([1]);
    expect(resourceNames(bDb)).not.toContain('chain-test');
    const go = await post(`${a.url}/approvals/${approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.conversation.status).toBe('active');
    expect(go.body.result.response).toMatch(/^Done\. resources_add/);
    expect(resourceNames(bDb)).toContain('chain-test');
    expect((await conversationsOf(b))[0].status).toBe('active');
  });

  it("a peer's approval holds in an llm node's own a2a tool, even inside a parallel node with approvals: auto", async () => {
    const tree = {
      name: 'fan',
      type: 'parallel',
      agents: [
        { name: 'delegating', type: 'llm', prompt: 'You are agent-a. Use agent-b.', a2a: [{ name: 'agent-b', url: `${b.url}/a2a` }] },
        { name: 'analyzer', type: 'llm', prompt: 'You are the analyzer.' },
      ],
    };
    const fan = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    try {
      const stop = await converse(fan, 'add resource node-proxy with value 3');
      expect(stop.result.waiting_approval).toBe(true);
      expect(stop.result.approval).toMatchObject({ tool_name: 'a2a_agent-b', remote_agent_name: 'agent-b', agent_chain: ['agent-b'] });
      expect(stop.conversation.pipeline_state.pauses[0].paused_node_path).toEqual([0]);
      expect(stop.conversation.pipeline_state.branch_outputs).toEqual({ '1': 'ANALYZED' });
      expect(resourceNames(bDb)).not.toContain('node-proxy');
      const go = await post(`${fan.url}/approvals/${stop.result.approval.uuid}`, { approved: true });
      expect(go.status).toBe(200);
      expect(go.body.result.response).toMatch(/^agent-a reports: Done\. resources_add[\s\S]*\n\nANALYZED$/);
      expect(resourceNames(bDb)).toContain('node-proxy');
    } finally {
      await fan.stop();
    }
  });

  it('the pipeline answers over A2A (type-parts dialect) with a completed task and an artifact', async () => {
    const response = await post(`${a.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', parts: [{ type: 'text', text: 'list all resources' }] } },
    });
    expect(response.status).toBe(200);
    expect(response.body.result.status.state).toBe('completed');
    expect(response.body.result.artifact.parts[0].text).toMatch(/^Done\. resources_list/);
    const conversation = (await get(`${a.url}/conversations/${response.body.result.id}`)).body.conversation;
    expect(new Set(conversation.messages.map((m: any) => m.node).filter(Boolean))).toEqual(new Set(['analyzer', 'delegator']));
  });
});

describe('the loop guard (a2a_max_depth)', () => {
  it('stops two agents that delegate to each other, with a clear error instead of an endless chain', async () => {
    // X and Y each send every request to the other; their URLs are known only once both run,
    // so Y points at a port X is then started on.
    const { freePort } = await import('../support/ports.js');
    const xPort = await freePort();
    const y = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-y', { a2a_max_depth: 3, a2a: [{ name: 'agent-x', url: `http://127.0.0.1:${xPort}/a2a` }] }),
    });
    const x = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: agentConfig('agent-x', { port: xPort, a2a_max_depth: 3, a2a: [a2aEntry('agent-y', y)] }),
    });
    try {
      const { result } = await converse(x, 'list all resources');
      expect(result.waiting_approval).toBe(false);
      // x → y → x → y, and the next hop is refused: the refusal travels back up as each agent's answer.
      expect(result.response).toMatch(/past a2a_max_depth \(3\)/);
      const yConversations = await conversationsOf(y);
      expect(yConversations).toHaveLength(2);
    } finally {
      await Promise.all([x.stop(), y.stop()]);
    }
  }, 120_000);
});
