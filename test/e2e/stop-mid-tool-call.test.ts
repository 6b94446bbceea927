/**
 * A stop signal sent to the whole process group (Ctrl-C, a process manager's group kill) while
 * a turn waits on a stdio MCP server: the server runs in a process group of its own, so the
 * signal does not reach it; the turn finishes in the drain with the tool's real result, and the
 * broker stops the server after it. However the agent ends — drained, a second signal, or
 * killed outright — no MCP server process is left behind.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandLine, isRunning, processTree, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { logLineWhere } from '../support/log-lines.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const HELD = fileURLToPath(new URL('../fixtures/held-mcp-server.mjs', import.meta.url));

let model: ScriptedModelServer;

beforeAll(async () => {
  // One call of held_echo with the message's text, then an answer that quotes what the tool said.
  model = await startScriptedModel((request) =>
    request.toolResults.length > 0
      ? { text: `done: ${request.toolResults[0]!.output}` }
      : { toolCalls: [{ name: 'held_echo', args: { text: request.lastUserText } }] },
  );
});

afterAll(async () => {
  await model?.close();
});

interface HeldCall {
  agent: AgentProcess;
  /** The MCP server's pid, as it wrote it when the call arrived. */
  serverPid: number;
  /** The agent's process tree while the call is held: the MCP server is in it. */
  tree: number[];
  answer: Promise<{ status: number; body: any } | 'cut'>;
  release(): void;
}

/** An agent whose one MCP server is the held fixture, with a turn waiting on its tool call. */
async function turnHeldAtTheTool(stubborn = false): Promise<HeldCall> {
  const dir = tempDir();
  const callFile = join(dir, 'call');
  const releaseFile = join(dir, 'release');
  const held = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    dir,
    config: {
      mcp_servers: [
        {
          name: 'held',
          command: process.execPath,
          args: [HELD],
          env: { CALL_FILE: callFile, RELEASE_FILE: releaseFile, ...(stubborn && { STUBBORN: '1' }) },
        },
      ],
    },
  });
  const conversation = (await post(`${held.url}/conversations`, {})).body.conversation.id as string;
  const answer = post(`${held.url}/conversations/${conversation}/messages`, { message: 'hello' }).then(
    (response) => ({ status: response.status, body: response.body }),
    () => 'cut' as const,
  );
  await until('the tool call at the MCP server', () => existsSync(callFile));
  const serverPid = Number(readFileSync(callFile, 'utf8'));
  const tree = processTree(held.pid);
  expect(tree).toContain(serverPid);
  expect(commandLine(serverPid)).toContain('held-mcp-server');
  return { agent: held, serverPid, tree, answer, release: () => writeFileSync(releaseFile, '') };
}

async function expectNothingLeft(tree: number[]): Promise<void> {
  await until('every process of the tree gone', () => tree.every((pid) => !isRunning(pid)), 5_000).catch(() => {
    throw new Error(
      `processes left: ${tree
        .filter(isRunning)
        .map((pid) => `${pid} ${commandLine(pid)}`)
        .join('; ')}`,
    );
  });
}

describe('a stop signal to the process group during a stdio MCP tool call', () => {
  it('leaves the MCP server running through the drain: the turn answers 200 with the tool’s result, then the agent exits 0 with no process left', async () => {
    const { agent, serverPid, tree, answer, release } = await turnHeldAtTheTool();
    try {
      process.kill(-agent.pid, 'SIGTERM');
      await agent.waitForLine(logLineWhere((line) => line.msg === 'gateway draining'));
      // The group's signal has been delivered (the agent acted on it): the server did not get it.
      expect(isRunning(serverPid)).toBe(true);
      release();
      const answered = await answer;
      expect(answered).not.toBe('cut');
      const { status, body } = answered as { status: number; body: any };
      expect(status).toBe(200);
      expect(body.result.response).toBe('done: echo hello');
      expect(JSON.stringify(body)).not.toContain('not running');
      expect(await agent.exited).toBe(0);
      await expectNothingLeft(tree);
    } finally {
      release();
      await agent.stop();
    }
  });

  it('a second signal exits at once (130), and the MCP server goes with it even when it ignores SIGTERM and its closed stdin', async () => {
    const { agent, tree, answer, release } = await turnHeldAtTheTool(true);
    try {
      process.kill(-agent.pid, 'SIGTERM');
      await agent.waitForLine(logLineWhere((line) => line.msg === 'gateway draining'));
      // Past the window in which a repeat counts as the echo of the first signal (cli/stop.ts: 500 ms),
      // counted from when the agent acted on it (it logs the drain after), not from when it was sent:
      // on a loaded machine the agent may act on a signal hundreds of milliseconds after it was sent.
      const handled = Date.now();
      await until('past the window of a repeated signal', () => Date.now() - handled > 600, 2_000);
      process.kill(agent.pid, 'SIGTERM');
      expect(await agent.exited).toBe(130);
      expect(await answer).toBe('cut');
      await expectNothingLeft(tree);
    } finally {
      release();
      await agent.stop();
    }
  });

  it('after kill -9 of the agent’s group the MCP server, outside that group, exits at its closed stdin', async () => {
    const { agent, serverPid, tree, release } = await turnHeldAtTheTool();
    try {
      process.kill(-agent.pid, 'SIGKILL');
      await agent.exited;
      await until('the MCP server gone', () => !isRunning(serverPid), 5_000);
      await expectNothingLeft(tree);
    } finally {
      release();
      await agent.stop();
    }
  });
});
