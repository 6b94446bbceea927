/**
 * Orchestrated mode, parallel and loop nodes end to end: parallel branches run
 * concurrently and their outputs reach the summarizer, a loop that
 * adds resources until exit_loop (destructive calls running without approval), the
 * max_iterations cap, and a lone llm node behaving as simple mode.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { logLineWhere } from '../support/log-lines.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ModelScript,
  type ScriptedModelServer,
} from '../support/scripted-model.js';

const nodeOf = (request: ModelRequest) => /You are the ([\w-]+)\./.exec(request.system)?.[1];

let model: ScriptedModelServer;
let current: ModelScript = resourceAgentScript;

beforeAll(async () => {
  model = await startScriptedModel((request) => current(request));
});

afterAll(async () => {
  await model?.close();
});

async function converse(agent: AgentProcess, message: string) {
  const response = await post(`${agent.url}/conversations`, { message });
  expect(response.status).toBe(201);
  return response.body;
}

describe('parallel execution', () => {
  let agent: AgentProcess;
  const tree = {
    name: 'overview',
    type: 'sequential',
    agents: [
      {
        name: 'gather',
        type: 'parallel',
        agents: [
          { name: 'list-all', type: 'llm', output_key: 'data', prompt: 'You are the list-all. List every resource.' },
          { name: 'count-analysis', type: 'llm', output_key: 'metadata', prompt: 'You are the count-analysis. Count them.' },
        ],
      },
      { name: 'summarizer', type: 'llm', prompt: 'You are the summarizer. Data: {data} Metadata: {metadata}' },
    ],
  };

  beforeAll(async () => {
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('runs both branches concurrently and the summarizer receives both outputs', async () => {
    // Each branch's first model call waits until the other branch has called too: with
    // branches run one after the other, neither would ever see the other (and says so).
    const arrived = new Map<string, () => void>();
    const waits = new Map<string, Promise<void>>();
    for (const name of ['list-all', 'count-analysis']) waits.set(name, new Promise<void>((resolve) => arrived.set(name, resolve)));
    const other = (name: string) => (name === 'list-all' ? 'count-analysis' : 'list-all');
    current = async (request) => {
      const node = nodeOf(request);
      if (node === 'summarizer') return { text: `SUMMARY of ${request.system}` };
      if (!node || !waits.has(node)) return resourceAgentScript(request);
      if (request.toolResults.length > 0) return { text: `${node} result: ${request.toolResults[0]!.name}` };
      arrived.get(node)!();
      const together = await Promise.race([
        waits.get(other(node))!.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
      ]);
      if (!together) return { text: `${node} ran alone` };
      return { toolCalls: [{ name: 'resources_list', args: {} }] };
    };
    try {
      const { conversation, result } = await converse(agent, 'give me an overview of all resources');
      expect(result.waiting_approval).toBe(false);
      expect(conversation.status).toBe('active');
      expect(result.response).toBe(
        'SUMMARY of You are the summarizer. Data: list-all result: resources_list Metadata: count-analysis result: resources_list',
      );
      const nodes = new Set(conversation.messages.map((m: any) => m.node));
      expect(nodes).toEqual(new Set([undefined, 'list-all', 'count-analysis', 'summarizer']));
      expect(conversation.messages.filter((m: any) => m.role === 'tool' && m.tool_call.name === 'resources_list')).toHaveLength(2);
    } finally {
      current = resourceAgentScript;
    }
  });

  it('joins the outputs in declaration order when the parallel node is the root', async () => {
    const root = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree.agents[0] } });
    try {
      // The first branch answers last: declaration order, not completion order, decides.
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      current = async (request) => {
        if (nodeOf(request) === 'list-all') {
          await released;
          return { text: 'LIST' };
        }
        release();
        return { text: 'COUNT' };
      };
      const { result } = await converse(root, 'overview');
      expect(result.response).toBe('LIST\n\nCOUNT');
    } finally {
      current = resourceAgentScript;
      await root.stop();
    }
  });
});

describe('loop with exit condition', () => {
  let agent: AgentProcess;
  let db: string;
  const tree = {
    name: 'ensure',
    type: 'loop',
    max_iterations: 5,
    agents: [
      {
        name: 'checker',
        type: 'llm',
        can_exit_loop: true,
        prompt: 'You are the checker. Add resources until there are 2, then call exit_loop.',
      },
    ],
  };

  beforeAll(async () => {
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } });
    db = join(agent.dir, 'resources.db');
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('adds a resource per iteration without approval and exits via exit_loop', async () => {
    const before = model.requests.length;
    // Asked for the answer after an add, the model first looks whether the add is already in
    // the conversation: a step that ran a destructive call unapproved is written at once.
    const storedBeforeNodeEnded: boolean[] = [];
    current = async (request) => {
      if (request.toolResults.length > 0) {
        const { id } = (await get(`${agent.url}/conversations`)).body.conversations[0];
        const newest = (await get(`${agent.url}/conversations/${id}`)).body.conversation;
        const added = JSON.parse(request.toolResults[0]!.output).name;
        storedBeforeNodeEnded.push(newest.messages.some((m: any) => m.role === 'tool' && m.tool_call?.arguments?.name === added));
        return { text: `added (${request.toolResults[0]!.name})` };
      }
      const count = resourceNames(db).length;
      if (count >= 2) return { text: 'Enough resources.', toolCalls: [{ name: 'exit_loop', args: {} }] };
      return { toolCalls: [{ name: 'resources_add', args: { name: `loop-${count + 1}`, value: count } }] };
    };
    try {
      const { conversation, result } = await converse(agent, 'ensure we have at least 2 resources');
      expect(result.waiting_approval).toBe(false);
      expect(conversation.status).toBe('active');
      expect(resourceNames(db)).toEqual(['loop-1', 'loop-2']);
      expect(result.response).toBe('Enough resources.');
      expect(storedBeforeNodeEnded).toEqual([true, true]);
      const requests = model.requests.slice(before);
      // Three iterations: two adds (two model calls each), then the exit; never past max_iterations.
      expect(requests.filter((r) => r.toolResults.length === 0)).toHaveLength(3);
      expect(requests.every((r) => r.tools.includes('exit_loop'))).toBe(true);
      const calls = conversation.messages.filter((m: any) => m.role === 'assistant' && m.tool_call);
      expect(calls.map((m: any) => m.tool_call.name)).toEqual(['resources_add', 'resources_add', 'exit_loop']);
      // Destructive calls that ran without approval are marked in the conversation and logged.
      expect(calls[0].content).toContain('ran without approval');
      expect(calls.every((m: any) => m.node === 'checker')).toBe(true);
      await agent.waitForLine(
        logLineWhere((line) => line.msg.includes('destructive call ran without approval') && line.tool === 'resources_add'),
      );
    } finally {
      current = resourceAgentScript;
    }
  });

  it('stops after max_iterations when nothing calls exit_loop', async () => {
    const before = model.requests.length;
    current = (request) =>
      request.toolResults.length > 0 ? { text: 'still going' } : { toolCalls: [{ name: 'resources_list', args: {} }] };
    try {
      const { result } = await converse(agent, 'never stop');
      expect(result.response).toBe('still going');
      expect(model.requests.slice(before).filter((r) => r.toolResults.length === 0)).toHaveLength(5);
    } finally {
      current = resourceAgentScript;
    }
  });
});

describe('a lone llm node behaves as simple mode', () => {
  it('uses its own prompt and model, keeps the conversation history and gates destructive calls', async () => {
    const agent = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { agent: { name: 'solo', type: 'llm', model: 'gemini-2.5-pro', prompt: 'You are the solo node.' } },
    });
    try {
      const before = model.requests.length;
      const { conversation } = await converse(agent, 'list all resources');
      expect(conversation.messages[0]).toMatchObject({ role: 'system', content: 'You are the solo node.' });
      expect(model.requests.slice(before).every((r) => r.model === 'gemini-2.5-pro' && r.system === 'You are the solo node.')).toBe(true);
      const stop = await post(`${agent.url}/conversations/${conversation.id}/messages`, { message: 'add resource solo-one with value 1' });
      expect(stop.body.result.waiting_approval).toBe(true);
      expect(stop.body.conversation.pipeline_state).toBeUndefined();
      // Simple mode: the second turn's model call saw the first turn too.
      expect(JSON.stringify(model.requests.at(-1)!.body)).toContain('list all resources');
    } finally {
      await agent.stop();
    }
  });
});
