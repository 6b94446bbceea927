/**
 * MCP servers that fail under a running agent: a stdio server killed during a call,
 * an HTTP server that hangs, HTTP servers restarted in the middle of a turn — one with 2025-era
 * sessions (server-everything), one stateless 2026-07-28 (test/fixtures/modern-mcp-server.ts).
 * Each failure is a clear error in the conversation, nothing runs twice, and the next call
 * finds the server again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { MISBEHAVING, startHttpPeer, type HttpPeer } from '../fixtures/mcp-peers.js';

interface Instruction {
  call: string;
  args?: Record<string, unknown>;
  /** Restart this HTTP server after the first tool result, then make the second call. */
  restart?: 'everything' | 'modern';
  then?: { call: string; args?: Record<string, unknown> };
}

let model: ScriptedModelServer;
let everything: HttpPeer;
let modern: HttpPeer;
let agent: AgentProcess;
let callsFile: string;
let pidFile: string;

const peers = () => ({ everything, modern });
const restarted = new Set<string>();

/** The user's message is an Instruction; after the last tool result the model says `result: <outputs>`. */
const script: ModelScript = async (request) => {
  const instruction = JSON.parse(request.lastUserText) as Instruction;
  if (request.toolResults.length === 0) return { toolCalls: [{ name: instruction.call, args: instruction.args ?? {} }] };
  if (instruction.restart && instruction.then && !restarted.has(request.lastUserText)) {
    restarted.add(request.lastUserText);
    await peers()[instruction.restart].restart();
    return { toolCalls: [{ name: instruction.then.call, args: instruction.then.args ?? {} }] };
  }
  return { text: `result: ${request.toolResults.map((result) => result.output).join(' | ')}` };
};

beforeAll(async () => {
  const dir = tempDir('asg-mcp-crash-');
  callsFile = join(dir, 'calls.txt');
  pidFile = join(dir, 'wild.pid');
  [model, everything, modern] = await Promise.all([startScriptedModel(script), startHttpPeer('everything'), startHttpPeer('modern')]);
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: {
      mcp_servers: [
        {
          name: 'wild',
          command: process.execPath,
          args: [MISBEHAVING],
          env: { TOOL_PREFIX: 'wild_', CALLS_FILE: callsFile, PID_FILE: pidFile },
          timeout: '20s',
        },
        { name: 'everything', url: everything.url, timeout: '2s' },
        { name: 'modern', url: modern.url, timeout: '2s' },
      ],
    },
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all([everything?.stop(), modern?.stop(), model?.close()]);
});

async function turn(instruction: Instruction) {
  const response = await post(`${agent.url}/conversations`, { message: JSON.stringify(instruction) });
  expect(response.status).toBe(201);
  return response.body;
}

const toolResults = (body: {
  conversation: { messages: Array<{ role: string; content: string; tool_call?: { name: string; is_error?: boolean } }> };
}) => body.conversation.messages.filter((message) => message.role === 'tool');
const wildCalls = () =>
  existsSync(callsFile)
    ? readFileSync(callsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ')[0])
    : [];
const wildPid = () => Number(readFileSync(pidFile, 'utf8'));

describe('a stdio server killed during a call', () => {
  it('the turn gets a clear error, the call is not sent again, and the next call restarts the server', async () => {
    const pid = wildPid();
    const pending = turn({ call: 'wild_slow', args: { ms: 15_000 } });
    await expect.poll(wildCalls, { timeout: 5000, interval: 20 }).toContain('slow');
    process.kill(pid, 'SIGKILL');
    const body = await pending;

    const [result] = toolResults(body);
    expect(result!.tool_call).toMatchObject({ name: 'wild_slow', is_error: true });
    expect(result!.content).toContain(
      'MCP server wild is not running: its process exited during the call (the call may have run and is not retried); the next call restarts the server',
    );
    expect(body.result).toMatchObject({ waiting_approval: false, response: expect.stringContaining('its process exited during the call') });
    expect(body.conversation.status).toBe('active');

    const next = await turn({ call: 'wild_echo', args: { text: 'back again' } });
    expect(next.result.response).toBe('result: back again');
    expect(wildPid()).not.toBe(pid);
    expect(wildCalls()).toEqual(['slow', 'echo']);
  });
});

describe('an HTTP server that hangs', () => {
  it('the call ends at its deadline with a clear error, the broker serves the other servers meanwhile, and the server is used again when it answers', async () => {
    everything.freeze();
    let frozen: Awaited<ReturnType<typeof turn>>;
    try {
      let settled = false;
      const pending = turn({ call: 'echo', args: { message: 'into the void' } }).finally(() => (settled = true));
      // Meanwhile, the other servers answer, while the frozen call is still waiting.
      expect((await turn({ call: 'wild_echo', args: { text: 'not stuck' } })).result.response).toBe('result: not stuck');
      expect((await turn({ call: 'notes_read' })).result.response).toBe('result: (no notes)');
      expect(settled).toBe(false);
      frozen = await pending;
    } finally {
      everything.thaw();
    }
    const [result] = toolResults(frozen);
    expect(result!.tool_call).toMatchObject({ name: 'echo', is_error: true });
    expect(result!.content).toContain('tool echo on server everything did not answer within 2s');

    expect((await turn({ call: 'echo', args: { message: 'awake' } })).result.response).toBe('result: Echo: awake');
  });
});

describe('HTTP servers restarted during a turn', () => {
  it('server-everything (2025-era session): the next call opens a new session and goes through', async () => {
    const pid = everything.pid();
    const body = await turn({
      call: 'echo',
      args: { message: 'before' },
      restart: 'everything',
      then: { call: 'echo', args: { message: 'after' } },
    });
    expect(everything.pid()).not.toBe(pid);
    expect(toolResults(body).map((message) => [message.tool_call!.name, message.tool_call!.is_error, message.content])).toEqual([
      ['echo', false, 'Echo: before'],
      ['echo', false, 'Echo: after'],
    ]);
    expect(body.result.response).toBe('result: Echo: after');
    expect(agent.output()).toMatch(/MCP session lost/);
  });

  it('the stateless 2026-07-28 server: the next call reaches the new process', async () => {
    const pid = modern.pid();
    const body = await turn({ call: 'notes_stats', restart: 'modern', then: { call: 'notes_read' } });
    expect(modern.pid()).not.toBe(pid);
    expect(toolResults(body).map((message) => [message.tool_call!.name, message.tool_call!.is_error, message.content])).toEqual([
      ['notes_stats', false, '{"count":0}'],
      ['notes_read', false, '(no notes)'],
    ]);
  });
});
