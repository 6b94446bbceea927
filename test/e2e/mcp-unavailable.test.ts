/**
 * An MCP server that cannot start: The agent starts without its tools and
 * says so once, clearly (the command and why), in GET /tools and its log (GET /ready, open to
 * anyone, shows the state only); the server is retried in the background. With `required: true` the agent does not start at all.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const BAD_COMMAND = 'asg-no-such-mcp-server-7f3a';
const broken = { name: 'broken', command: BAD_COMMAND, args: ['--serve'] };

let model: ScriptedModelServer;
let agent: AgentProcess;

/** Lines of the agent's output above debug level that name the bad command. */
const reports = () =>
  agent
    .output()
    .split('\n')
    .filter((line) => line.includes(BAD_COMMAND) && !/level=debug|"level":"debug"|"level":20\b/.test(line));

beforeAll(async () => {
  model = await startScriptedModel(async (request) => ({ text: `tools offered: ${[...request.tools].sort().join(',')}` }));
  const dir = tempDir('asg-mcp-unavailable-');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    // Debug, so that the background retries show in the output and can be waited for.
    env: { ASG_LOG_LEVEL: 'debug', LOG_LEVEL: 'debug' },
    config: { mcp_servers: [resourcesServer(join(dir, 'resources.db')), broken] },
    dir,
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('an agent with an MCP server that cannot start', () => {
  it('starts, reports the server once with its command, and retries it in the background without repeating the report', async () => {
    await agent.waitForLine(
      (line) => line.includes('MCP server retry scheduled') && line.includes('broken') && /failures.{0,3}3/.test(line),
      30_000,
    );
    const lines = reports();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('MCP server unavailable');
    expect(lines[0]).toContain(`could not be started: command \`${BAD_COMMAND} --serve\` failed`);
  });

  it('answers /health and runs a turn with the tools it has', async () => {
    expect((await get(`${agent.url}/health`)).status).toBe(200);
    const turn = await post(`${agent.url}/conversations`, { message: 'which tools?' });
    expect(turn.status).toBe(201);
    expect(turn.body.result.response).toBe('tools offered: resources_add,resources_list,resources_remove');
  });

  it('marks the server unavailable in GET /tools, with why, and in GET /ready without it', async () => {
    const tools = await get(`${agent.url}/tools`);
    expect(tools.status).toBe(200);
    expect(tools.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'resources_add',
      'resources_list',
      'resources_remove',
    ]);
    expect(tools.body.servers).toEqual([
      { name: 'resources', status: 'available', required: false },
      {
        name: 'broken',
        status: 'unavailable',
        required: false,
        error: expect.stringContaining(`command \`${BAD_COMMAND} --serve\` failed: spawn ${BAD_COMMAND} ENOENT`),
      },
    ]);
    const ready = await get(`${agent.url}/ready`);
    expect(ready.status).toBe(200);
    // /ready is open to anyone: states and which server is down, in words; why is in the log and GET /tools.
    expect(ready.body).toEqual({
      status: 'ready',
      mcp_servers: tools.body.servers.map(({ error: _error, ...state }: { error?: string }) => state),
      warning: 'MCP server "broken" unavailable: the agent answers without its tools while it is retried; the log and GET /tools say why',
    });
  });
});

describe('a required MCP server that cannot start', () => {
  it('stops the agent from starting, with the same clear error', async () => {
    const dir = tempDir('asg-mcp-required-');
    const started = startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { mcp_servers: [{ ...broken, required: true }] }, dir });
    await expect(started).rejects.toThrow(
      new RegExp(
        `MCP server broken could not be started: command \`${BAD_COMMAND} --serve\` failed: .*ENOENT.*required: true, so the agent does not start without it`,
      ),
    );
  }, 60_000);
});
