import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { runWithContext } from '../common/context.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus, RpcError, ServiceError } from '../common/grpc/errors.js';
import type { RunningService } from '../common/service.js';
import { serveMcpHttp, startMcpResourcesHttp, type McpHttpEndpoint } from '../mcp-resources/index.js';
import { ToolComposite } from './composite.js';
import { startToolBroker } from './index.js';
import { resourceNames } from '../../test/support/resources-db.js';
import { until } from '../../test/support/until.js';
import { lineLogger } from '../../test/support/line-logger.js';

/** Any non-empty approval id lets a destructive call through the broker's own check. */
const APPROVED = 'approval-under-test';

const STDIO_ENTRY = fileURLToPath(new URL('../mcp-resources/stdio-entry.ts', import.meta.url));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tool-broker-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

let counter = 0;
const freshDb = () => join(dir, `db${++counter}`, 'resources.db');
function dbPath(): string {
  const path = freshDb();
  mkdirSync(join(path, '..'), { recursive: true });
  return path;
}

/** Every line the broker logs, at every level, to check that secrets never show up. */

type ServerEntry = { name: string; url?: string; command?: string; args?: string[]; timeout?: string };

const stdioResources = (name: string, db: string): ServerEntry => ({
  name,
  command: process.execPath,
  args: ['--import', 'tsx', STDIO_ENTRY, '--db', db],
});

async function httpResources(db = dbPath(), port = 0): Promise<McpHttpEndpoint> {
  const endpoint = await startMcpResourcesHttp({ dbPath: db, port });
  cleanups.push(() => endpoint.close());
  return endpoint;
}

interface Broker {
  service: RunningService;
  client: PromiseClient<typeof ToolBrokerServiceService>;
  log: string[];
}

async function startBroker(servers: ServerEntry[], extra: Record<string, unknown> = {}): Promise<Broker> {
  const log = lineLogger();
  const service = await startToolBroker({
    config: configSlice(configSchema.parse({ mcp_servers: servers, ...extra }), 'toolBroker'),
    listen: '127.0.0.1:0',
    log,
  });
  cleanups.push(() => service.stop());
  // The calls' own budget: a restart spawns a process, which on a loaded machine takes seconds.
  const client = createPromiseClient(ToolBrokerServiceService, service.address, 'test', 30_000);
  cleanups.push(() => client.close());
  return { service, client, log: log.lines };
}

/** What a gRPC call failed with: its code and message. */
async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcError || error instanceof ServiceError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Live child processes of this test process whose command line mentions `marker`. */
function childProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A second, made-up MCP server over HTTP with tools of other names: `echo` (no annotations,
 * holds each call 150 ms so concurrent calls overlap, and records the Authorization header each
 * call arrived with), `wait` (read-only, answers after `ms`) and `picture` (text and an image).
 */
async function fixtureServer() {
  const calls: Array<{ text: string; authorization: string | null; startedAt: number; endedAt: number }> = [];
  const requests: Array<{ authorization: string | null }> = [];
  const endpoint = await serveMcpHttp(
    (ctx) => {
      requests.push({ authorization: ctx.requestInfo?.headers.get('authorization') ?? null });
      const server = new McpServer({ name: 'fixture', version: '1' }, { capabilities: { tools: {} } });
      server.registerTool(
        'echo',
        { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) },
        async ({ text }, toolCtx) => {
          const startedAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 150));
          calls.push({ text, authorization: toolCtx.http?.req?.headers.get('authorization') ?? null, startedAt, endedAt: Date.now() });
          return { content: [{ type: 'text', text }] };
        },
      );
      server.registerTool(
        'wait',
        { description: 'Answer after ms', inputSchema: z.object({ ms: z.number() }), annotations: { readOnlyHint: true } },
        async ({ ms }) => {
          await new Promise((resolve) => setTimeout(resolve, ms).unref());
          return { content: [{ type: 'text', text: 'waited' }] };
        },
      );
      server.registerTool('picture', { description: 'A picture', annotations: { destructiveHint: false } }, () => ({
        content: [
          { type: 'text', text: 'a red dot' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
      }));
      return server;
    },
    { port: 0 },
  );
  cleanups.push(() => endpoint.close());
  return { ...endpoint, calls, requests };
}

describe('tool-broker over stdio and Streamable HTTP', () => {
  it("lists every server's tools with the destructive policy applied", async () => {
    const fixture = await fixtureServer();
    const { client } = await startBroker([stdioResources('local', dbPath()), { name: 'fixture', url: fixture.url }]);
    const { tools } = await client.listTools({});
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(tools.map((tool) => tool.name)).toEqual(['resources_add', 'resources_remove', 'resources_list', 'echo', 'wait', 'picture']);

    expect(byName.resources_add).toMatchObject({ server: 'local', destructive: true, destructiveHint: true, readOnlyHint: false });
    expect(byName.resources_remove).toMatchObject({ server: 'local', destructive: true });
    expect(byName.resources_list).toMatchObject({ server: 'local', destructive: false, readOnlyHint: true });
    expect(byName.resources_add!.inputSchema).toMatchObject({ type: 'object', required: ['name', 'value'] });
    expect(byName.resources_add!.description).toContain('Add a new resource');

    // No annotations at all: destructive, and the hints are absent rather than invented.
    expect(byName.echo).toMatchObject({ server: 'fixture', destructive: true });
    expect(byName.echo!.readOnlyHint).toBeUndefined();
    expect(byName.echo!.destructiveHint).toBeUndefined();
    expect(byName.wait).toMatchObject({ destructive: false, readOnlyHint: true });
    expect(byName.picture).toMatchObject({ destructive: false, destructiveHint: false });
  });

  it.each(['stdio', 'http'] as const)('adds, lists and removes resources over %s', async (kind) => {
    const server = kind === 'stdio' ? stdioResources('resources', dbPath()) : { name: 'resources', url: (await httpResources()).url };
    const { client } = await startBroker([server]);

    const added = await client.callTool({
      name: 'resources_add',
      argumentsJson: JSON.stringify({ name: 'server-1', value: 42 }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    expect(added).toMatchObject({ isError: false, server: 'resources' });
    expect(added.structuredContent).toMatchObject({ name: 'server-1', value: 42 });
    expect(JSON.parse(added.text)).toEqual(added.structuredContent);
    const id = added.structuredContent!.id as string;

    const listed = await client.callTool({
      name: 'resources_list',
      argumentsJson: JSON.stringify({ pattern: '^server-' }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    expect(listed.structuredContent).toMatchObject({ count: 1, resources: [{ id, name: 'server-1', value: 42 }] });

    const removed = await client.callTool({
      name: 'resources_remove',
      argumentsJson: JSON.stringify({ id }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    expect(removed.structuredContent).toEqual({ removed: 1, ids: [id] });
    expect(
      (await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }))
        .structuredContent,
    ).toEqual({ resources: [], count: 0 });
  });

  it('refuses a destructive call that comes without an approval, and runs safe ones without', async () => {
    const db = dbPath();
    const { client } = await startBroker([stdioResources('resources', db)]);
    expect(
      await failure(
        client.callTool({
          name: 'resources_add',
          argumentsJson: JSON.stringify({ name: 'sneaky', value: 1 }),
          approvalUuid: '',
          unapprovedReason: '',
        }),
      ),
    ).toEqual({
      code: GrpcStatus.FAILED_PRECONDITION,
      message: 'tool resources_add on server resources is destructive and was called without an approval; nothing was executed',
    });
    const listed = await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' });
    // The agent tree's policy inside parallel and loop nodes: an explicit reason instead of an approval.
    const exempt = await client.callTool({
      name: 'resources_add',
      argumentsJson: JSON.stringify({ name: 'in-a-loop', value: 1 }),
      approvalUuid: '',
      unapprovedReason: 'loop node "checker"',
    });
    expect(exempt.isError).toBe(false);
    expect(listed.structuredContent).toEqual({ resources: [], count: 0 });
  });

  it('applies rate_limits.tools: over the limit with no time to wait, RESOURCE_EXHAUSTED and nothing runs', async () => {
    const db = dbPath();
    const { client } = await startBroker([stdioResources('resources', db)], {
      rate_limits: { max_wait: '10ms', tools: { 'resources_*': { calls: 2, window: '1m' } } },
    });
    await client.callTool({
      name: 'resources_add',
      argumentsJson: JSON.stringify({ name: 'one', value: 1 }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' });
    const refused = await failure(
      client.callTool({
        name: 'resources_add',
        argumentsJson: JSON.stringify({ name: 'three', value: 3 }),
        approvalUuid: APPROVED,
        unapprovedReason: '',
      }),
    );
    expect(refused.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(refused.message).toContain('rule "resources_*": 2 calls per 1m');
    expect(resourceNames(db)).toEqual(['one']);
  });

  it('returns tool errors as results and unknown tools as NOT_FOUND', async () => {
    const { client } = await startBroker([{ name: 'resources', url: (await httpResources()).url }]);

    const neither = await client.callTool({ name: 'resources_remove', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' });
    expect(neither).toMatchObject({ isError: true, server: 'resources' });
    expect(neither.text).toMatch(/needs "id" or "pattern"/);
    expect(neither.structuredContent).toBeUndefined();

    const badRegex = await client.callTool({
      name: 'resources_list',
      argumentsJson: JSON.stringify({ pattern: '[' }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    expect(badRegex.isError).toBe(true);
    expect(badRegex.text).toMatch(/invalid regular expression/);

    // Arguments that do not fit the tool's inputSchema never reach the server.
    expect(
      await failure(
        client.callTool({
          name: 'resources_add',
          argumentsJson: JSON.stringify({ name: 'x', value: 1.5 }),
          approvalUuid: APPROVED,
          unapprovedReason: '',
        }),
      ),
    ).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message:
        'the arguments of tool resources_add on server resources do not match its inputSchema: arguments/value must be integer; nothing was executed',
    });

    expect(await failure(client.callTool({ name: 'nope', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }))).toEqual({
      code: GrpcStatus.NOT_FOUND,
      message: 'unknown tool nope',
    });
  });

  it('summarises non-text content', async () => {
    const fixture = await fixtureServer();
    const { client } = await startBroker([{ name: 'fixture', url: fixture.url }]);
    expect(await client.callTool({ name: 'picture', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' })).toMatchObject({
      text: 'a red dot\n[image image/png]',
      isError: false,
    });
  });
});

describe('tool-broker startup', () => {
  it('fails when two servers offer the same tool name, naming both, and leaves no process behind', async () => {
    const db = dbPath();
    const http = await httpResources();
    const started = startBroker([stdioResources('local', db), { name: 'remote', url: http.url }]);
    await expect(started).rejects.toThrow(/"resources_add" is offered by both MCP server "local" and MCP server "remote"/);
    expect(childProcesses(db)).toEqual([]);
  });

  it('starts without a server that is not up yet, and lists its tools once it is', async () => {
    const port = await freePort();
    const { client, log } = await startBroker([{ name: 'late', url: `http://127.0.0.1:${port}/mcp` }]);
    const first = await client.listTools({});
    expect(first.tools).toEqual([]);
    expect(first.servers).toEqual([
      expect.objectContaining({
        name: 'late',
        available: false,
        required: false,
        error: expect.stringMatching(/could not be reached: .*fetch failed/),
      }),
    ]);
    expect(log.filter((line) => line.includes('MCP server unavailable'))).toHaveLength(1);
    await httpResources(dbPath(), port);
    const listed = await until("the late server's tools", async () => {
      const answer = await client.listTools({});
      return answer.tools.length === 3 && answer;
    });
    expect(listed.servers).toEqual([{ name: 'late', available: true, required: false, error: '' }]);
    expect(log.some((line) => line.includes('MCP server is available again'))).toBe(true);
  });

  it('refuses to start without a required server, with the reason', async () => {
    const port = await freePort();
    const composite = ToolComposite.start(
      configSchema.parse({ mcp_servers: [{ name: 'gone', url: `http://127.0.0.1:${port}/mcp`, required: true }] }).mcp_servers,
      lineLogger(),
      { initialMs: 10, maxMs: 40, startupMs: 200 },
    );
    await expect(composite).rejects.toThrow(
      /MCP server gone \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached: .*fetch failed.*required: true/,
    );
  });

  it('runs with no MCP servers at all', async () => {
    const { client } = await startBroker([]);
    expect((await client.listTools({})).tools).toEqual([]);
  });
});

/** An HTTP front for `target` that answers 401 to one token and passes everything else through. */
async function tokenGate(target: string, refusedAuthorization: string): Promise<string> {
  const gate = createHttpServer((req, res) => {
    if (req.headers.authorization === refusedAuthorization) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      return;
    }
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const upstream = await fetch(target, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        gate.close(() => resolve());
        gate.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(gate.address() as { port: number }).port}/mcp`;
}

describe('tool-broker bearer forwarding', () => {
  it("turns an HTTP 401 for the caller's token into a tool error and keeps the connection", async () => {
    const gate = await tokenGate((await httpResources()).url, 'Bearer refused-token');
    const { client } = await startBroker([{ name: 'gated', url: gate }]);
    const refused = await runWithContext({ sessionId: 'abcd1234', authorization: 'Bearer refused-token' }, () =>
      client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }),
    );
    expect(refused).toMatchObject({
      isError: true,
      server: 'gated',
      text: 'MCP server gated refused the call of resources_list: HTTP 401',
    });
    const allowed = await runWithContext({ sessionId: 'abcd1234', authorization: 'Bearer good-token' }, () =>
      client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }),
    );
    expect(allowed).toMatchObject({ isError: false, structuredContent: { count: 0 } });
  });

  it("sends each call's Authorization to the HTTP server on that call only, and never logs it", async () => {
    const fixture = await fixtureServer();
    const { client, log } = await startBroker([{ name: 'fixture', url: fixture.url }]);
    const setupRequests = fixture.requests.length;
    expect(setupRequests).toBeGreaterThan(0);

    const callAs = (authorization: string | undefined, text: string) =>
      runWithContext({ sessionId: 'abcd1234', authorization }, () =>
        client.callTool({ name: 'echo', argumentsJson: JSON.stringify({ text }), approvalUuid: APPROVED, unapprovedReason: '' }),
      );
    const results = await Promise.all([
      callAs('Bearer t1-secret-one', 'one'),
      callAs('Bearer t2-secret-two', 'two'),
      callAs(undefined, 'three'),
    ]);
    expect(results.map((result) => result.text)).toEqual(['one', 'two', 'three']);
    // The calls were in the server at the same time, so a shared header would have mixed them up.
    expect(Math.max(...fixture.calls.map((call) => call.startedAt))).toBeLessThan(Math.min(...fixture.calls.map((call) => call.endedAt)));

    const seen = Object.fromEntries(fixture.calls.map((call) => [call.text, call.authorization]));
    expect(seen).toEqual({ one: 'Bearer t1-secret-one', two: 'Bearer t2-secret-two', three: null });
    // Connect and tools/list happened outside any call: no token there.
    expect(fixture.requests.slice(0, setupRequests).every((request) => request.authorization === null)).toBe(true);

    expect(log.join('\n')).not.toMatch(/t1-secret-one|t2-secret-two/);
  });

  it('keeps the tokens of calls started in the same tick apart', async () => {
    const fixture = await fixtureServer();
    const composite = await ToolComposite.start(
      configSchema.parse({ mcp_servers: [{ name: 'fixture', url: fixture.url }] }).mcp_servers,
      lineLogger(),
    );
    cleanups.push(() => composite.close());
    // Started synchronously one after the other: a token kept anywhere but in each call's own async context would leak into the other.
    const texts = ['a', 'b', 'c', 'd'];
    await Promise.all(
      texts.map((text) =>
        composite.callTool('echo', { text }, { authorization: `Bearer token-${text}`, approvalUuid: APPROVED, unapprovedReason: '' }),
      ),
    );
    expect(Object.fromEntries(fixture.calls.map((call) => [call.text, call.authorization]))).toEqual(
      Object.fromEntries(texts.map((text) => [text, `Bearer token-${text}`])),
    );
  });

  it('keeps the token out of error messages when the server is down', async () => {
    const fixture = await fixtureServer();
    const { client, log } = await startBroker([{ name: 'fixture', url: fixture.url }]);
    await fixture.close();
    const { code, message } = await failure(
      runWithContext({ sessionId: 'abcd1234', authorization: 'Bearer t3-secret-three' }, () =>
        client.callTool({ name: 'echo', argumentsJson: JSON.stringify({ text: 'x' }), approvalUuid: APPROVED, unapprovedReason: '' }),
      ),
    );
    expect(code).toBe(GrpcStatus.UNAVAILABLE);
    expect(message).toMatch(/^MCP server fixture is not running: /);
    expect(message + log.join('\n')).not.toContain('t3-secret-three');
  });
});

describe('tool-broker when servers fail', () => {
  it('restarts a stdio server that died between calls', async () => {
    const db = dbPath();
    const { client, log } = await startBroker([stdioResources('local', db)]);
    await client.callTool({
      name: 'resources_add',
      argumentsJson: JSON.stringify({ name: 'kept', value: 1 }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    const [first] = childProcesses(db);
    expect(first).toBeDefined();
    process.kill(first!, 'SIGKILL');
    await expect.poll(() => log.some((line) => line.includes('MCP server connection closed'))).toBe(true);

    const listed = await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' });
    expect(listed.structuredContent).toMatchObject({ count: 1, resources: [{ name: 'kept' }] });
    const restarted = childProcesses(db);
    expect(restarted).toHaveLength(1);
    expect(restarted[0]).not.toBe(first);
  });

  it('fails a call in flight at once when its stdio server dies, keeps serving the others, and restarts it on the next call', async () => {
    const db = dbPath();
    const fixture = await fixtureServer();
    const { client } = await startBroker([stdioResources('local', db), { name: 'fixture', url: fixture.url }]);
    const [pid] = childProcesses(db);
    // Frozen, the server cannot answer: the call is surely in flight when the process dies.
    process.kill(pid!, 'SIGSTOP');
    const inFlight = failure(
      client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(pid!, 'SIGKILL');
    expect(await inFlight).toEqual({
      code: GrpcStatus.UNAVAILABLE,
      message:
        'MCP server local is not running: its process exited during the call (the call may have run and is not retried); the next call restarts the server',
    });

    expect(
      (
        await client.callTool({
          name: 'echo',
          argumentsJson: JSON.stringify({ text: 'still here' }),
          approvalUuid: APPROVED,
          unapprovedReason: '',
        })
      ).text,
    ).toBe('still here');
    expect(
      (await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }))
        .structuredContent,
    ).toEqual({ resources: [], count: 0 });
    expect(childProcesses(db)).toHaveLength(1);
  });

  it('says UNAVAILABLE when a dead stdio server cannot be restarted', async () => {
    const db = dbPath();
    const fixture = await fixtureServer();
    const { client, log } = await startBroker([stdioResources('local', db), { name: 'fixture', url: fixture.url }]);
    // A file where its directory was: the database cannot open (nor its folder be made), so the restarted process exits at once.
    rmSync(join(db, '..'), { recursive: true, force: true });
    writeFileSync(join(db, '..'), '');
    for (const pid of childProcesses(db)) process.kill(pid, 'SIGKILL');
    await expect.poll(() => log.some((line) => line.includes('MCP server connection closed'))).toBe(true);

    const { code, message } = await failure(
      client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }),
    );
    expect(code).toBe(GrpcStatus.UNAVAILABLE);
    expect(message).toMatch(/^MCP server local is not running: restart failed: /);
    expect(
      (
        await client.callTool({
          name: 'echo',
          argumentsJson: JSON.stringify({ text: 'fine' }),
          approvalUuid: APPROVED,
          unapprovedReason: '',
        })
      ).text,
    ).toBe('fine');
    // Its tools stay listed: the next call tries the restart again.
    expect((await client.listTools({})).tools.filter((tool) => tool.server === 'local')).toHaveLength(3);
  });

  it('says UNAVAILABLE while an HTTP server is down and reconnects when it is back', async () => {
    const db = dbPath();
    const http = await httpResources(db);
    const { client } = await startBroker([{ name: 'remote', url: http.url }]);
    await client.callTool({
      name: 'resources_add',
      argumentsJson: JSON.stringify({ name: 'survivor', value: 1 }),
      approvalUuid: APPROVED,
      unapprovedReason: '',
    });
    await http.close();

    const down = await failure(
      client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }),
    );
    expect(down.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(down.message).toMatch(/^MCP server remote is not running: .*ECONNREFUSED/);

    await httpResources(db, http.port);
    expect(
      (await client.callTool({ name: 'resources_list', argumentsJson: '{}', approvalUuid: APPROVED, unapprovedReason: '' }))
        .structuredContent,
    ).toMatchObject({ count: 1, resources: [{ name: 'survivor' }] });
  });

  it('gives DEADLINE_EXCEEDED when a server does not answer within its timeout', async () => {
    const fixture = await fixtureServer();
    const { client } = await startBroker([{ name: 'slow', url: fixture.url, timeout: '500ms' }]);
    expect(
      await failure(
        client.callTool({ name: 'wait', argumentsJson: JSON.stringify({ ms: 10_000 }), approvalUuid: APPROVED, unapprovedReason: '' }),
      ),
    ).toEqual({
      code: GrpcStatus.DEADLINE_EXCEEDED,
      message: 'tool wait on server slow did not answer within 500ms',
    });
    // A slow answer is not a dead server: the next call goes through.
    expect(
      (await client.callTool({ name: 'wait', argumentsJson: JSON.stringify({ ms: 10 }), approvalUuid: APPROVED, unapprovedReason: '' }))
        .text,
    ).toBe('waited');
  });

  it("cuts a call short at the caller's deadline when it comes before the server timeout", async () => {
    const fixture = await fixtureServer();
    const servers = configSchema.parse({ mcp_servers: [{ name: 'slow', url: fixture.url }] }).mcp_servers;
    const composite = await ToolComposite.start(servers, lineLogger());
    cleanups.push(() => composite.close());
    const error = await composite.callTool('wait', { ms: 10_000 }, { deadline: Date.now() + 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect((error as ServiceError).message).toMatch(/^tool wait on server slow did not answer within \d+ms$/);

    const late = await composite.callTool('wait', { ms: 1 }, { deadline: Date.now() - 1 }).catch((e: unknown) => e);
    expect((late as ServiceError).code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
  });

  it('stops every child process on stop()', async () => {
    const db = dbPath();
    const { service } = await startBroker([stdioResources('local', db)]);
    expect(childProcesses(db)).toHaveLength(1);
    await service.stop();
    await expect.poll(() => childProcesses(db)).toEqual([]);
  });
});
