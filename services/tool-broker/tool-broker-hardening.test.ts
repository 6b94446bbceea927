/**
 * The broker against servers that misbehave, lie, change their tools, speak either MCP
 * generation, or lose their session — over real gRPC, with real MCP servers: the hand-written
 * test/fixtures/misbehaving-mcp-server.mjs (2025-era stdio), test/fixtures/modern-mcp-server.ts
 * (`@modelcontextprotocol/server@2.4.0`, stateless 2026-07-28) and a sessionful 2025-era HTTP
 * server made here.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lineLogger } from '../../test/support/line-logger.js';
import { z } from 'zod';
import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { startModernServer, type ModernServer } from '../../test/fixtures/modern-mcp-server.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus, RpcError, ServiceError } from '../common/grpc/errors.js';
import type { RunningService } from '../common/service.js';
import { startToolBroker } from './index.js';

const MISBEHAVING = fileURLToPath(new URL('../../test/fixtures/misbehaving-mcp-server.mjs', import.meta.url));
const MODERN = fileURLToPath(new URL('../../test/fixtures/modern-mcp-server.ts', import.meta.url));
const RECORD_START = fileURLToPath(new URL('../../test/fixtures/record-start.mjs', import.meta.url));
const APPROVED = 'approval-under-test';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tool-broker-hardening-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Broker {
  client: PromiseClient<typeof ToolBrokerServiceService>;
  log: string[];
  call(
    name: string,
    args?: Record<string, unknown>,
    approvalUuid?: string,
  ): ReturnType<PromiseClient<typeof ToolBrokerServiceService>['callTool']>;
  tools(): Promise<Record<string, { destructive: boolean; readOnlyHint?: boolean; destructiveHint?: boolean; server: string }>>;
}

async function startBroker(servers: Record<string, unknown>[]): Promise<Broker> {
  const log = lineLogger();
  const service: RunningService = await startToolBroker({
    config: configSlice(configSchema.parse({ mcp_servers: servers }), 'toolBroker'),
    listen: '127.0.0.1:0',
    log,
  });
  cleanups.push(() => service.stop());
  const client = createPromiseClient(ToolBrokerServiceService, service.address, 'test', 10_000);
  cleanups.push(() => client.close());
  return {
    client,
    log: log.lines,
    call: (name, args = {}, approvalUuid = '') =>
      client.callTool({ name, argumentsJson: JSON.stringify(args), approvalUuid, unapprovedReason: '' }),
    tools: async () => Object.fromEntries((await client.listTools({})).tools.map((tool) => [tool.name, tool])),
  };
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcError || error instanceof ServiceError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to fail');
}

let counter = 0;
/** The misbehaving server's config entry, with files that tell what it did. */
function misbehaving(extra: Record<string, unknown> = {}) {
  const n = ++counter;
  const files = {
    calls: join(dir, `calls-${n}.txt`),
    writes: join(dir, `writes-${n}.txt`),
    pid: join(dir, `pid-${n}.txt`),
    starts: join(dir, `starts-${n}.txt`),
  };
  const { env, ...rest } = extra as { env?: Record<string, string> };
  const entry = {
    name: 'wild',
    command: process.execPath,
    args: [MISBEHAVING],
    env: { CALLS_FILE: files.calls, WRITES_FILE: files.writes, PID_FILE: files.pid, STARTS_FILE: files.starts, ...env },
    timeout: '1s',
    ...rest,
  };
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);
  return {
    entry,
    /** The names of the tools that ran, in order. */
    calls: () => read(files.calls).map((line) => line.split(' ')[0]),
    writes: () => read(files.writes),
    pid: () => Number(readFileSync(files.pid, 'utf8')),
    /** The pids of the processes started, one per start. */
    starts: () => read(files.starts),
  };
}

async function modernServer(): Promise<ModernServer> {
  const server = await startModernServer({ port: 0 });
  cleanups.push(() => server.close());
  return server;
}

/** The protocol version the broker negotiated with a server, from its log. */
function protocolOf(log: string[], server: string): string | undefined {
  const line = log.find((entry) => entry.startsWith('info MCP server connected') && entry.includes(`"mcp_server":"${server}"`));
  return line ? (JSON.parse(line.slice(line.indexOf('{'))) as { protocol?: string }).protocol : undefined;
}

const subscriptionsOpened = (log: string[]) => log.filter((line) => line.includes('MCP tools/list_changed subscription open')).length;

describe('approval policy from annotations and config', () => {
  it('catches a server that lies about a tool with approval: always, and keeps the advertised hints', async () => {
    const wild = misbehaving({ approval: { peek: 'always' } });
    const broker = await startBroker([wild.entry]);
    const tools = await broker.tools();
    // The advertised annotation says read-only; the effective policy says it needs an approval.
    expect(tools.peek).toMatchObject({ destructive: true, readOnlyHint: true, server: 'wild' });
    expect(tools.echo).toMatchObject({ destructive: false, readOnlyHint: true });
    expect(broker.log.some((line) => line.includes('approval policy set by config') && line.includes('"needs_approval":"peek"'))).toBe(
      true,
    );

    expect(await failure(broker.call('peek', { note: 'sneaky' }))).toEqual({
      code: GrpcStatus.FAILED_PRECONDITION,
      message: 'tool peek on server wild is destructive and was called without an approval; nothing was executed',
    });
    expect(wild.calls()).toEqual([]);
    expect(await broker.call('peek', { note: 'approved' }, APPROVED)).toMatchObject({ isError: false, text: 'looked (and wrote)' });
    expect(wild.writes()).toEqual(['approved']);
  });

  it('trust_annotations: false makes every tool need an approval unless a rule says never; the first matching rule wins', async () => {
    const wild = misbehaving({
      trust_annotations: false,
      approval: { 'ech?': 'never', 'bad_*': 'auto', bad_shape: 'always', 'late*': 'never' },
    });
    const broker = await startBroker([wild.entry]);
    const tools = await broker.tools();
    expect(tools.echo!.destructive).toBe(false); // rule "ech?": never
    expect(tools.peek!.destructive).toBe(true); // no rule, annotations not trusted
    expect(tools.bad_shape!.destructive).toBe(true); // "bad_*": auto comes first; auto with untrusted annotations → true
    expect(tools.add_tool!.destructive).toBe(true);
    expect(await failure(broker.call('peek', { note: 'x' }))).toMatchObject({ code: GrpcStatus.FAILED_PRECONDITION });
    expect(wild.writes()).toEqual([]);
    expect((await broker.call('echo', { text: 'hi' })).text).toBe('hi');
  });
});

describe('tool lists follow the server', () => {
  it('sees a tool a 2025-era server adds (notifications/tools/list_changed) without a restart', async () => {
    const wild = misbehaving();
    const broker = await startBroker([wild.entry]);
    expect(protocolOf(broker.log, 'wild')).toMatch(/^2025-/);
    const pid = wild.pid();
    expect(Object.keys(await broker.tools())).not.toContain('late_tool');
    await broker.call('add_tool');
    await expect.poll(async () => Object.keys(await broker.tools()), { timeout: 3000 }).toContain('late_tool');
    expect((await broker.call('late_tool')).text).toBe('late but here');
    expect(wild.pid()).toBe(pid);
    expect(broker.log.some((line) => line.includes('MCP server tools changed') && line.includes('"added":"late_tool"'))).toBe(true);
  });

  it('sees a tool a stateless 2026-07-28 server adds, through its subscriptions/listen stream', async () => {
    const modern = await modernServer();
    const broker = await startBroker([{ name: 'modern', url: modern.url }]);
    expect(protocolOf(broker.log, 'modern')).toBe('2026-07-28');
    const tools = await broker.tools();
    expect(tools.notes_read).toMatchObject({ destructive: false, readOnlyHint: true });
    expect(tools.notes_write!.destructive).toBe(true); // no annotations at all
    expect(tools.notes_write!.readOnlyHint).toBeUndefined();
    // The subscription opens in the background, after connecting.
    await expect.poll(() => subscriptionsOpened(broker.log)).toBe(1);
    modern.addTool('notes_extra');
    await expect.poll(async () => Object.keys(await broker.tools()), { timeout: 3000 }).toContain('notes_extra');
    expect((await broker.call('notes_extra')).text).toBe('notes_extra is here');
  });

  it('a tool name that a second server adds later stays with the server that had it first', async () => {
    const modern = await modernServer();
    const wild = misbehaving();
    const broker = await startBroker([wild.entry, { name: 'modern', url: modern.url }]);
    await expect.poll(() => subscriptionsOpened(broker.log)).toBe(1);
    modern.addTool('late_tool');
    await expect.poll(async () => (await broker.tools()).late_tool?.server, { timeout: 3000 }).toBe('modern');
    await broker.call('add_tool');
    await expect
      .poll(() =>
        broker.log.some(
          (line) => line.includes('tool name offered by two MCP servers; the first keeps it') && line.includes('"ignored":"wild"'),
        ),
      )
      .toBe(true);
    expect((await broker.tools()).late_tool!.server).toBe('modern');
    expect(await broker.call('late_tool')).toMatchObject({ text: 'late_tool is here', server: 'modern' });
    expect(wild.calls()).toEqual(['add_tool']);
  });

  it('speaks 2026-07-28 to an SDK server over stdio, and keeps structuredContent (as text when there is no text)', async () => {
    const wild = misbehaving();
    const broker = await startBroker([
      { name: 'modern-stdio', command: process.execPath, args: ['--import', 'tsx', MODERN, '--stdio'] },
      wild.entry,
    ]);
    expect(protocolOf(broker.log, 'modern-stdio')).toBe('2026-07-28');
    expect(await broker.call('notes_write', { text: 'one' }, APPROVED)).toMatchObject({ text: 'wrote note 1', server: 'modern-stdio' });
    expect(await broker.call('notes_stats')).toMatchObject({ text: '{"count":1}', structuredContent: { count: 1 }, isError: false });
    expect(await broker.call('structured_only')).toMatchObject({
      text: '{"count":3}',
      structuredContent: { count: 3 },
      isError: false,
      server: 'wild',
    });
  }, 20_000);
});

describe('bad input', () => {
  it('refuses arguments that do not fit the inputSchema with INVALID_ARGUMENT, without calling the server', async () => {
    const wild = misbehaving();
    const broker = await startBroker([wild.entry]);
    expect(await failure(broker.call('echo', { text: 5 }))).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message:
        'the arguments of tool echo on server wild do not match its inputSchema: arguments/text must be string; nothing was executed',
    });
    expect(await failure(broker.call('echo', { text: 'a', extra: true }))).toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('must NOT have additional properties'),
    });
    expect(await failure(broker.call('echo', {}))).toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining("must have required property 'text'"),
    });
    expect(wild.calls()).toEqual([]);
  });

  it('turns results of the wrong shape into clear tool errors, once, and keeps the connection', async () => {
    const wild = misbehaving();
    const broker = await startBroker([wild.entry]);
    const pid = wild.pid();
    expect(await broker.call('bad_shape')).toMatchObject({
      isError: true,
      text: 'MCP server wild answered the call of bad_shape with a result that is not valid MCP (content: Invalid input: expected array, received string); the call may have run and is not retried',
    });
    expect(await broker.call('bad_block')).toMatchObject({
      isError: true,
      text: expect.stringContaining('(content.0.text: Invalid input: expected string, received undefined)'),
    });
    expect(await broker.call('bad_structured')).toMatchObject({
      isError: true,
      text: "MCP server wild answered the call of bad_structured with a result that does not match the tool's outputSchema (structuredContent/count must be integer); the call ran and is not retried",
    });
    expect((await broker.call('bad_structured')).structuredContent).toBeUndefined();
    expect((await broker.call('echo', { text: 'still fine' })).text).toBe('still fine');
    expect(wild.calls()).toEqual(['bad_shape', 'bad_block', 'bad_structured', 'bad_structured', 'echo']);
    expect(wild.pid()).toBe(pid);
  });

  it('survives garbage on stdout; an answer lost in garbage ends at the deadline, and the connection still serves', async () => {
    const wild = misbehaving();
    const broker = await startBroker([wild.entry]);
    const pid = wild.pid();
    expect((await broker.call('garbage')).text).toBe('answered after garbage');
    expect(broker.log.filter((line) => line.includes('not JSON-RPC'))).toHaveLength(1);
    expect(await failure(broker.call('garbled_reply'))).toEqual({
      code: GrpcStatus.DEADLINE_EXCEEDED,
      message: 'tool garbled_reply on server wild did not answer within 1s',
    });
    expect((await broker.call('echo', { text: 'after the noise' })).text).toBe('after the noise');
    expect(wild.pid()).toBe(pid);
    expect(wild.calls()).toEqual(['garbage', 'garbled_reply', 'echo']);
  });

  it('a server that hangs gets DEADLINE_EXCEEDED while the broker keeps serving it and the others', async () => {
    const modern = await modernServer();
    const wild = misbehaving();
    const broker = await startBroker([wild.entry, { name: 'modern', url: modern.url, timeout: '500ms' }]);
    const hanging = [failure(broker.call('hang')), failure(broker.call('notes_hang'))];
    expect((await broker.call('notes_read')).text).toBe('(no notes)');
    expect((await broker.call('echo', { text: 'meanwhile' })).text).toBe('meanwhile');
    expect(await Promise.all(hanging)).toEqual([
      { code: GrpcStatus.DEADLINE_EXCEEDED, message: 'tool hang on server wild did not answer within 1s' },
      { code: GrpcStatus.DEADLINE_EXCEEDED, message: 'tool notes_hang on server modern did not answer within 500ms' },
    ]);
    expect((await broker.call('echo', { text: 'after' })).text).toBe('after');
  });

  it('a stdio server that dies mid-call: a clear error, the call is not sent again, the next call restarts it', async () => {
    const wild = misbehaving();
    const broker = await startBroker([wild.entry]);
    const pid = wild.pid();
    expect(await failure(broker.call('crash'))).toEqual({
      code: GrpcStatus.UNAVAILABLE,
      message:
        'MCP server wild is not running: its process exited during the call (the call may have run and is not retried); the next call restarts the server',
    });
    expect((await broker.call('echo', { text: 'back' })).text).toBe('back');
    expect(wild.pid()).not.toBe(pid);
    expect(wild.calls()).toEqual(['crash', 'echo']);
  });
});

/**
 * A 2025-era sessionful Streamable HTTP server (`echo` counts its calls), and `forgetSessions`,
 * which is what a restart looks like to a client: its session id gets 404.
 */
async function sessionfulServer() {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const calls: string[] = [];
  const http = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers(
        Object.entries(req.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value] as [string, string]] : [])),
      );
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      });
      const id = req.headers['mcp-session-id'] as string | undefined;
      let transport = id ? sessions.get(id) : undefined;
      if (!transport && !id) {
        const server = new McpServer({ name: 'sessionful', version: '1' }, { capabilities: { tools: {} } });
        server.registerTool('count_echo', { description: 'Echo', inputSchema: z.object({ text: z.string() }) }, ({ text }) => {
          calls.push(text);
          return { content: [{ type: 'text', text }] };
        });
        const created = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, created),
          enableJsonResponse: true,
        });
        await server.connect(created);
        transport = created;
      }
      if (!transport) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const response = await transport.handleRequest(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls, forgetSessions: () => sessions.clear(), sessions };
}

describe('HTTP servers that drop', () => {
  it('a lost 2025-era session (a restarted server answers 404) is reopened and the call sent once more, which the server never ran', async () => {
    const server = await sessionfulServer();
    const broker = await startBroker([{ name: 'sessionful', url: server.url }]);
    expect(protocolOf(broker.log, 'sessionful')).toMatch(/^2025-/);
    expect((await broker.call('count_echo', { text: 'one' }, APPROVED)).text).toBe('one');
    expect(server.sessions.size).toBe(1);
    server.forgetSessions();
    expect((await broker.call('count_echo', { text: 'two' }, APPROVED)).text).toBe('two');
    expect(server.calls).toEqual(['one', 'two']);
    expect(server.sessions.size).toBe(1);
    expect(broker.log.some((line) => line.includes('MCP session lost'))).toBe(true);
  });

  it('a stateless 2026-07-28 server that restarts is reached again by the next call, and its list_changed stream reopened', async () => {
    const first = await modernServer();
    const broker = await startBroker([{ name: 'modern', url: first.url }]);
    expect((await broker.call('notes_write', { text: 'before' }, APPROVED)).text).toBe('wrote note 1');
    await first.close();
    const down = await failure(broker.call('notes_read'));
    expect(down.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(down.message).toMatch(/^MCP server modern is not running: .*ECONNREFUSED/);

    const second = await startModernServer({ port: first.port });
    cleanups.push(() => second.close());
    expect((await broker.call('notes_read')).text).toBe('(no notes)'); // a new process: its notes are gone
    await expect.poll(() => subscriptionsOpened(broker.log)).toBe(2);
    second.addTool('notes_extra');
    await expect.poll(async () => Object.keys(await broker.tools()), { timeout: 3000 }).toContain('notes_extra');
    expect(first.calls.concat(second.calls).filter((name) => name === 'notes_write')).toHaveLength(1);
  });
});

describe('starting stdio servers', () => {
  it('starts each stdio server once per connection, whichever MCP generation it speaks', async () => {
    const wild = misbehaving();
    const modernStarts = join(dir, `modern-starts-${++counter}.txt`);
    const broker = await startBroker([
      {
        name: 'modern-stdio',
        command: process.execPath,
        args: ['--import', 'tsx', '--import', RECORD_START, MODERN, '--stdio'],
        env: { STARTS_FILE: modernStarts },
      },
      wild.entry,
    ]);
    expect(protocolOf(broker.log, 'modern-stdio')).toBe('2026-07-28');
    expect(protocolOf(broker.log, 'wild')).toMatch(/^2025-/);
    expect(readFileSync(modernStarts, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    expect(wild.starts()).toEqual([String(wild.pid())]);
    // A restart after a crash is one start too.
    await failure(broker.call('crash'));
    expect((await broker.call('echo', { text: 'back' })).text).toBe('back');
    expect(wild.starts()).toHaveLength(2);
  }, 20_000);

  it('a server that exits at the protocol probe is started again for a 2025-era initialize, and without the probe from then on', async () => {
    const wild = misbehaving({ env: { EXIT_BEFORE_INITIALIZE: '1' } });
    const broker = await startBroker([wild.entry]);
    expect(protocolOf(broker.log, 'wild')).toMatch(/^2025-/);
    expect(wild.starts()).toHaveLength(2);
    expect(broker.log.filter((line) => line.includes('MCP server exited at the protocol probe'))).toHaveLength(1);
    expect((await broker.call('echo', { text: 'hello' })).text).toBe('hello');
    await failure(broker.call('crash'));
    expect((await broker.call('echo', { text: 'back' })).text).toBe('back');
    expect(wild.starts()).toHaveLength(3);
    expect(wild.calls()).toEqual(['echo', 'crash', 'echo']);
  });
});
