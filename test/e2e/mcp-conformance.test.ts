/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.9) against
 * the agent's own MCP face (/mcp), the whole mesh running. The built-in servers (mcp-filesystem,
 * mcp-resources) are run through it in services/mcp-filesystem/conformance.test.ts.
 *
 * Scenarios that apply to the face, which offers one tool (`ask`) and keeps 2025-era sessions:
 * server-initialize, ping, tools-list, server-sse-multiple-streams. Left out, and why:
 * - tools-call-* , json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums:
 *   they call (or list) the suite's own fixture tools (test_simple_text, …); the face has `ask`.
 * - logging-set-level, completion-complete, resources-*, prompts-*: capabilities the face does
 *   not declare (it answers -32601, as it should).
 * - server-sse-polling: the suite runs no check against this face (0/0, with warnings: it wants
 *   a tool that streams for a while), so there is nothing to pass.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, type AgentProcess } from '../support/agent-process.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams'];
const run = promisify(execFile);

let model: ScriptedModelServer;
let agent: AgentProcess;
let scratch: string;

beforeAll(async () => {
  model = await startScriptedModel(async () => ({ text: 'ok' }));
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { mcp_servers: [] } });
  // The runner writes a results/ folder into its working directory.
  scratch = mkdtempSync(join(tmpdir(), 'agent-mcp-conformance-'));
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function conformance(scenario: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(
      join(REPO_ROOT, 'node_modules', '.bin', 'conformance'),
      ['server', '--url', `${agent.url}/mcp`, '--scenario', scenario],
      {
        cwd: scratch,
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe("MCP conformance suite against the agent's own /mcp", () => {
  it.each(SCENARIOS)(
    'passes %s',
    async (scenario) => {
      const { code, output } = await conformance(scenario);
      expect(code, output).toBe(0);
      const passed = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      expect(passed, output).not.toBeNull();
      expect(Number(passed![1]), output).toBeGreaterThan(0);
      expect(passed![1], output).toBe(passed![2]);
      expect(passed![3], output).toBe('0');
    },
    90_000,
  );

  it('fails a scenario for a capability the face does not declare (the runner has teeth)', async () => {
    const { code, output } = await conformance('prompts-list');
    expect(code).not.toBe(0);
    expect(output).toMatch(/Method not found/);
  }, 90_000);
});
