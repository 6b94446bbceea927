/**
 * MCP interoperability through the whole mesh: the reference servers from npm —
 * server-everything over stdio and over Streamable HTTP (2025-era sessions), server-filesystem,
 * server-memory — and a stateless 2026-07-28 server built with @modelcontextprotocol/server
 * (test/fixtures/modern-mcp-server.ts). GET /tools shows their tools with destructiveHint as
 * the MCP spec reads the annotations (or as the config overrides it), a read tool runs at once,
 * a destructive one stops for approval and runs once after it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { everythingStdio, filesystemStdio, memoryStdio, startHttpPeer, type HttpPeer } from '../fixtures/mcp-peers.js';
import { logLines } from '../support/log-lines.js';
import { startModernServer, type ModernServer } from '../fixtures/modern-mcp-server.js';

/**
 * The user's message says which tool to call: `{"call": name, "args": {...}}`. After the tool
 * result the model answers `result: <what the tool said>`.
 */
const callWhatTheUserSays: ModelScript = (request) => {
  if (request.toolResults.length > 0) return { text: `result: ${request.toolResults.map((result) => result.output).join(' | ')}` };
  const { call, args } = JSON.parse(request.lastUserText) as { call: string; args?: Record<string, unknown> };
  return { toolCalls: [{ name: call, args: args ?? {} }] };
};

let model: ScriptedModelServer;
let modern: ModernServer;
let everythingHttp: HttpPeer;
let agent: AgentProcess;
let httpAgent: AgentProcess;
let duplicate: Promise<AgentProcess>;
let files: string;
let memoryFile: string;
let notesFile: string;

beforeAll(async () => {
  const dir = tempDir('asg-mcp-interop-');
  files = join(dir, 'files');
  memoryFile = join(dir, 'memory.jsonl');
  notesFile = join(dir, 'notes.txt');
  mkdirSync(files);
  writeFileSync(join(files, 'hello.txt'), 'hello from disk\n');
  [model, modern, everythingHttp] = await Promise.all([
    startScriptedModel(callWhatTheUserSays),
    startModernServer({ port: 0, notesFile }),
    startHttpPeer('everything'),
  ]);
  const start = (config: Record<string, unknown>) => startAgent({ geminiBaseUrl: model.geminiBaseUrl, config });
  // Two agents: server-everything over stdio and over HTTP offer the same tool names, which
  // cannot share one agent (the third start proves it).
  [agent, httpAgent] = await Promise.all([
    start({
      mcp_servers: [
        // Every tool of server-everything is annotated safe; the config holds two of them to approval.
        everythingStdio('everything', { approval: { 'toggle-*': 'always' } }),
        filesystemStdio(files),
        memoryStdio(memoryFile),
        { name: 'modern', url: modern.url },
      ],
    }),
    start({ mcp_servers: [{ name: 'everything-http', url: everythingHttp.url }] }),
  ]);
  duplicate = start({ mcp_servers: [everythingStdio('everything'), { name: 'everything-http', url: everythingHttp.url }] });
  duplicate.catch(() => undefined);
}, 60_000);

afterAll(async () => {
  await Promise.all([
    agent?.stop(),
    httpAgent?.stop(),
    duplicate?.then(
      (extra) => extra.stop(),
      () => undefined,
    ),
  ]);
  await Promise.all([modern?.close(), everythingHttp?.stop(), model?.close()]);
});

async function tools(of: AgentProcess): Promise<Record<string, { destructiveHint: boolean; server: string; inputSchema: unknown }>> {
  const response = await get(`${of.url}/tools`);
  expect(response.status).toBe(200);
  return Object.fromEntries(response.body.tools.map((tool: { name: string }) => [tool.name, tool]));
}

/** Sends `{"call": tool, "args": args}` as a new conversation's first message. */
async function ask(of: AgentProcess, tool: string, args: Record<string, unknown> = {}) {
  const response = await post(`${of.url}/conversations`, { message: JSON.stringify({ call: tool, args }) });
  expect(response.status).toBe(201);
  return response.body;
}

async function approve(of: AgentProcess, uuid: string) {
  const response = await post(`${of.url}/approvals/${uuid}`, { approved: true });
  expect(response.status).toBe(200);
  return response.body;
}

interface Message {
  role: string;
  content: string;
  tool_call: { name: string; is_error?: boolean };
}
const toolMessages = (conversation: { messages: Message[] }): Message[] =>
  conversation.messages.filter((message) => message.role === 'tool');

/** The protocol version the broker logged for a server. */
function protocolOf(of: AgentProcess, server: string): string | undefined {
  const line = logLines(of.output()).find((candidate) => candidate.msg === 'MCP server connected' && candidate.mcp_server === server);
  return line?.protocol === undefined ? undefined : String(line.protocol);
}

describe("GET /tools: the servers' tools with destructiveHint as the MCP spec reads their annotations", () => {
  it("lists every server's tools under its name", async () => {
    const byName = await tools(agent);
    const count = (server: string) => Object.values(byName).filter((tool) => tool.server === server).length;
    // The broker declares form elicitation, so the everything server adds its elicitation tool.
    expect([count('everything'), count('filesystem'), count('memory'), count('modern')]).toEqual([14, 14, 9, 5]);
    expect(byName.read_text_file!.inputSchema).toMatchObject({ type: 'object', required: ['path'] });
  });

  it('server-filesystem: readOnlyHint tools are safe; write, edit and move are destructive; create_directory says destructiveHint: false', async () => {
    const byName = await tools(agent);
    for (const name of [
      'read_file',
      'read_text_file',
      'read_media_file',
      'read_multiple_files',
      'list_directory',
      'list_directory_with_sizes',
      'directory_tree',
      'search_files',
      'get_file_info',
      'list_allowed_directories',
    ]) {
      expect(byName[name], name).toMatchObject({ destructiveHint: false, server: 'filesystem' });
    }
    for (const name of ['write_file', 'edit_file', 'move_file'])
      expect(byName[name], name).toMatchObject({ destructiveHint: true, server: 'filesystem' });
    expect(byName.create_directory!.destructiveHint).toBe(false);
  });

  it('server-memory: deletes are destructive, reads and creations are not', async () => {
    const byName = await tools(agent);
    for (const name of ['delete_entities', 'delete_observations', 'delete_relations'])
      expect(byName[name], name).toMatchObject({ destructiveHint: true, server: 'memory' });
    for (const name of ['read_graph', 'search_nodes', 'open_nodes', 'create_entities', 'create_relations', 'add_observations'])
      expect(byName[name], name).toMatchObject({ destructiveHint: false });
  });

  it('server-everything: all annotated safe, except where the config says approval: always', async () => {
    const byName = await tools(agent);
    expect(byName.echo).toMatchObject({ destructiveHint: false, server: 'everything' });
    expect(byName['get-sum']!.destructiveHint).toBe(false);
    expect(byName['toggle-simulated-logging']!.destructiveHint).toBe(true);
    expect(byName['toggle-subscriber-updates']!.destructiveHint).toBe(true);
  });

  it('the 2026-07-28 server: a tool without annotations is destructive', async () => {
    const byName = await tools(agent);
    expect(byName.notes_read).toMatchObject({ destructiveHint: false, server: 'modern' });
    expect(byName.notes_write).toMatchObject({ destructiveHint: true, server: 'modern' });
  });

  it("speaks each server's generation: 2025-era with the reference servers, 2026-07-28 with the SDK v2 server", () => {
    expect(protocolOf(agent, 'everything')).toMatch(/^2025-/);
    expect(protocolOf(agent, 'filesystem')).toMatch(/^2025-/);
    expect(protocolOf(agent, 'memory')).toMatch(/^2025-/);
    expect(protocolOf(agent, 'modern')).toBe('2026-07-28');
    expect(protocolOf(httpAgent, 'everything-http')).toMatch(/^2025-/);
  });
});

describe('read tools run at once', () => {
  it.each([
    ['read_text_file (filesystem)', () => ['read_text_file', { path: join(files, 'hello.txt') }] as const, 'hello from disk'],
    ['echo (everything, stdio)', () => ['echo', { message: 'hi there' }] as const, 'Echo: hi there'],
    ['get-sum (everything, stdio)', () => ['get-sum', { a: 2, b: 3 }] as const, '5'],
    ['read_graph (memory)', () => ['read_graph', {}] as const, '"entities"'],
    ['notes_read (2026-07-28)', () => ['notes_read', {}] as const, '(no notes)'],
  ])('%s', async (_label, call, expected) => {
    const [tool, args] = call();
    const body = await ask(agent, tool, args);
    expect(body.result.waiting_approval).toBe(false);
    const [result] = toolMessages(body.conversation);
    expect(result!.tool_call).toMatchObject({ name: tool, is_error: false });
    expect(body.result.response).toContain(expected);
  });

  it('echo over Streamable HTTP (server-everything, 2025-era session)', async () => {
    const body = await ask(httpAgent, 'echo', { message: 'over http' });
    expect(body.result).toMatchObject({ waiting_approval: false, response: 'result: Echo: over http' });
  });

  it('structured content reaches the model (server-everything get-structured-content)', async () => {
    const body = await ask(agent, 'get-structured-content', { location: 'New York' });
    expect(body.result.waiting_approval).toBe(false);
    expect(body.result.response).toMatch(/temperature/);
  });
});

describe('destructive tools stop for approval and run once after it', () => {
  it('write_file (filesystem)', async () => {
    const target = join(files, 'approved.txt');
    const stop = await ask(agent, 'write_file', { path: target, content: 'written once' });
    expect(stop.result.waiting_approval).toBe(true);
    expect(stop.result.approval).toMatchObject({ tool_name: 'write_file', tool_args: { path: target, content: 'written once' } });
    expect(existsSync(target)).toBe(false);
    const go = await approve(agent, stop.result.approval.uuid);
    expect(go.result.waiting_approval).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('written once');
    expect(toolMessages(go.conversation)).toHaveLength(1);
    expect(toolMessages(go.conversation)[0]!.tool_call).toMatchObject({ name: 'write_file', is_error: false });
    expect((await post(`${agent.url}/approvals/${stop.result.approval.uuid}`, { approved: true })).status).toBe(409);
  });

  it('create_entities runs at once; delete_entities waits (memory)', async () => {
    const created = await ask(agent, 'create_entities', {
      entities: [{ name: 'kettle', entityType: 'device', observations: ['boils water'] }],
    });
    expect(created.result.waiting_approval).toBe(false);
    expect(readFileSync(memoryFile, 'utf8')).toContain('kettle');

    const stop = await ask(agent, 'delete_entities', { entityNames: ['kettle'] });
    expect(stop.result.waiting_approval).toBe(true);
    expect(readFileSync(memoryFile, 'utf8')).toContain('kettle');
    const go = await approve(agent, stop.result.approval.uuid);
    expect(toolMessages(go.conversation)).toHaveLength(1);
    expect(toolMessages(go.conversation)[0]!.tool_call.is_error).toBe(false);
    expect(readFileSync(memoryFile, 'utf8')).not.toContain('kettle');
  });

  it('notes_write (2026-07-28 server, no annotations)', async () => {
    const stop = await ask(agent, 'notes_write', { text: 'only once' });
    expect(stop.result.waiting_approval).toBe(true);
    expect(existsSync(notesFile)).toBe(false);
    const go = await approve(agent, stop.result.approval.uuid);
    expect(go.result.response).toBe('result: wrote note 1');
    expect(readFileSync(notesFile, 'utf8')).toBe('only once\n');
  });

  it('a tool the config holds to approval (server-everything toggle-simulated-logging)', async () => {
    const stop = await ask(agent, 'toggle-simulated-logging');
    expect(stop.result.waiting_approval).toBe(true);
    const go = await approve(agent, stop.result.approval.uuid);
    expect(toolMessages(go.conversation)[0]!.tool_call).toMatchObject({ name: 'toggle-simulated-logging', is_error: false });
  });
});

describe('the tool list follows the server', () => {
  it('a tool the 2026-07-28 server adds shows up in GET /tools and can be called, without a restart', async () => {
    expect(Object.keys(await tools(agent))).not.toContain('notes_extra');
    const added = await ask(agent, 'notes_add_tool');
    expect(added.result.response).toBe('result: added notes_extra');
    // The broker re-lists at once; the orchestrator's copy of the list lives 2 s.
    await expect.poll(async () => Object.keys(await tools(agent)), { timeout: 5000, interval: 200 }).toContain('notes_extra');
    const body = await ask(agent, 'notes_extra');
    expect(body.result.response).toBe('result: notes_extra is here');
  });
});

describe('startup', () => {
  it('stops with both servers named when two offer the same tool name', async () => {
    const error = await duplicate.then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    // The error carries the process's output: its "failed to start" line names both servers.
    const failed = logLines(error?.message ?? '').find((line) => line.msg === 'failed to start');
    expect(failed?.error).toMatch(/is offered by both MCP server "everything" and MCP server "everything-http"/);
  });
});
