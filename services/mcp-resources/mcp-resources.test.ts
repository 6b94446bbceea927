import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMcpResourcesHttp, type McpHttpEndpoint } from './index.js';
import { newResourceId } from './store.js';

const STDIO_ENTRY = fileURLToPath(new URL('./stdio-entry.ts', import.meta.url));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-resources-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

let dbCounter = 0;
const freshDb = () => join(dir, `r${++dbCounter}.db`);

async function httpServer(dbPath = freshDb()): Promise<McpHttpEndpoint> {
  const server = await startMcpResourcesHttp({ dbPath, port: 0 });
  cleanups.push(() => server.close());
  return server;
}

type Mode = 'auto' | 'legacy';

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport, mode: Mode = 'auto'): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

const overHttp = async (mode: Mode = 'auto') => connect(new StreamableHTTPClientTransport(new URL((await httpServer()).url)), mode);
const overStdio = async (mode: Mode = 'auto', dbPath = freshDb()) =>
  connect(
    new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', STDIO_ENTRY, '--db', dbPath], stderr: 'pipe' }),
    mode,
  );

function text(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

function json(result: CallToolResult): any {
  expect(result.isError, text(result)).toBeFalsy();
  const parsed = JSON.parse(text(result));
  expect(result.structuredContent).toEqual(parsed);
  return parsed;
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('resource ids', () => {
  it('are unique and sort in creation order', () => {
    const ids = Array.from({ length: 200 }, (_, i) => newResourceId(1_700_000_000_000 + i));
    expect(new Set(ids).size).toBe(200);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^res_[0-9a-z]{9}[0-9a-f]{12}$/);
    expect(newResourceId(5)).not.toBe(newResourceId(5));
  });
});

describe.each([
  ['Streamable HTTP, 2026-07-28', () => overHttp('auto')],
  ['Streamable HTTP, 2025 stateless fallback', () => overHttp('legacy')],
  ['stdio, 2026-07-28', () => overStdio('auto')],
  ['stdio, 2025 initialize', () => overStdio('legacy')],
])('mcp-resources over %s', (_label, open) => {
  it('lists the three tools with their annotations and schemas', async () => {
    const client = await open();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(['resources_add', 'resources_list', 'resources_remove']);
    expect(byName.resources_add!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.resources_remove!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.resources_list!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.resources_add!.inputSchema).toMatchObject({
      required: ['name', 'value'],
      properties: { name: { type: 'string' }, value: { type: 'integer' } },
    });
    expect(byName.resources_remove!.inputSchema.required ?? []).toEqual([]);
  });

  it('adds, lists by pattern and removes by id, by pattern and by both', async () => {
    const client = await open();
    const alpha = json(await call(client, 'resources_add', { name: 'alpha', value: 1 }));
    expect(alpha).toMatchObject({ name: 'alpha', value: 1 });
    expect(alpha.id).toMatch(/^res_/);
    expect(alpha.created_at).toBe(alpha.updated_at);
    const beta = json(await call(client, 'resources_add', { name: 'beta', value: -20 }));
    const gamma = json(await call(client, 'resources_add', { name: 'alphabet', value: 3 }));

    expect(json(await call(client, 'resources_list', {})).resources.map((r: any) => r.name)).toEqual(['alpha', 'beta', 'alphabet']);
    expect(json(await call(client, 'resources_list', { pattern: '^alpha' })).count).toBe(2);

    // Both given: the id is removed only when its name matches too.
    const mismatch = await call(client, 'resources_remove', { id: beta.id, pattern: '^alpha' });
    expect(mismatch.isError).toBe(true);
    expect(text(mismatch)).toContain(beta.id);
    expect(json(await call(client, 'resources_remove', { id: beta.id, pattern: '^be' }))).toEqual({ removed: 1, ids: [beta.id] });

    expect(json(await call(client, 'resources_remove', { pattern: '^alpha' }))).toEqual({ removed: 2, ids: [alpha.id, gamma.id] });
    expect(json(await call(client, 'resources_remove', { pattern: 'nothing-matches' }))).toEqual({ removed: 0, ids: [] });
    expect(json(await call(client, 'resources_list', {}))).toEqual({ resources: [], count: 0 });

    const delta = json(await call(client, 'resources_add', { name: 'delta', value: 4 }));
    expect(json(await call(client, 'resources_remove', { id: delta.id }))).toEqual({ removed: 1, ids: [delta.id] });
  });

  it('answers bad input with tool errors, not crashes', async () => {
    const client = await open();
    const neither = await call(client, 'resources_remove', {});
    expect(neither.isError).toBe(true);
    expect(text(neither)).toMatch(/needs "id" or "pattern"/);

    for (const tool of ['resources_list', 'resources_remove']) {
      const badRegex = await call(client, tool, { pattern: '(unclosed' });
      expect(badRegex.isError).toBe(true);
      expect(text(badRegex)).toMatch(/invalid regular expression "\(unclosed"/);
    }

    const unknownId = await call(client, 'resources_remove', { id: 'res_missing' });
    expect(unknownId.isError).toBe(true);
    expect(text(unknownId)).toContain('no resource with id "res_missing"');

    for (const args of [{ name: 'x', value: 1.5 }, { name: 'x' }, { value: 2 }, { name: '', value: 2 }, { name: 'x', value: '2' }]) {
      const invalid = await call(client, 'resources_add', args);
      expect(invalid.isError, JSON.stringify(args)).toBe(true);
    }
    // Still serving after all of that.
    expect(json(await call(client, 'resources_list', {})).count).toBe(0);
  });

  it('runs patterns in linear time (RE2) and names what RE2 does not support', async () => {
    const client = await open();
    const long = json(await call(client, 'resources_add', { name: `${'a'.repeat(50_000)}b`, value: 1 }));
    json(await call(client, 'resources_add', { name: 'aaa', value: 2 }));
    // Exponential for a backtracking engine on the long name; RE2 answers in one pass.
    expect(json(await call(client, 'resources_list', { pattern: '^(a+)+$' })).count).toBe(1);
    expect(json(await call(client, 'resources_remove', { pattern: '(a+)+b$' }))).toEqual({ removed: 1, ids: [long.id] });

    for (const [pattern, named] of [
      ['(a)\\1', /backreferences .*not supported/],
      ['a(?=b)', /lookahead .*not supported/],
      ['(?<!x)a', /lookbehind .*not supported/],
    ] as const) {
      const refused = await call(client, 'resources_list', { pattern });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(named);
      expect(text(refused)).toMatch(/RE2 syntax/);
    }
  });
});

describe('mcp-resources storage', () => {
  it('keeps data in a WAL-mode SQLite file across restarts and shares it between faces', async () => {
    const dbPath = freshDb();
    const first = await startMcpResourcesHttp({ dbPath, port: 0 });
    const client = await connect(new StreamableHTTPClientTransport(new URL(first.url)));
    const created = json(await call(client, 'resources_add', { name: 'kept', value: 7 }));
    await first.close();

    const stdioClient = await overStdio('auto', dbPath);
    expect(json(await call(stdioClient, 'resources_list', {})).resources).toEqual([created]);

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT id, name, value FROM resources').all()).toEqual([{ id: created.id, name: 'kept', value: 7 }]);
    } finally {
      db.close();
    }
  });
});

describe('mcp-resources HTTP face', () => {
  it('binds to 127.0.0.1 by default and serves only /mcp', async () => {
    const server = await httpServer();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
    const response = await fetch(`http://127.0.0.1:${server.port}/other`);
    expect(response.status).toBe(404);
  });

  it('refuses a foreign Host header on a loopback bind (DNS rebinding)', async () => {
    const server = await httpServer();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const post = (host: string) =>
      new Promise<number>((resolve, reject) => {
        // fetch() drops a Host header set by hand; node:http sends it as given.
        const req = request(
          server.url,
          { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post('evil.example')).toBe(403);
    expect(await post(`localhost:${server.port}`)).toBe(200);
  });

  it('answers TRACE with 405 and the methods it serves, and goes on serving (a web Request cannot carry TRACE)', async () => {
    const server = await httpServer();
    const trace = await new Promise<{ status: number; allow: unknown }>((resolve, reject) => {
      const req = request(server.url, { method: 'TRACE' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow });
      });
      req.on('error', reject);
      req.end();
    });
    expect(trace).toEqual({ status: 405, allow: 'GET, POST, DELETE' });
    const client = await connect(new StreamableHTTPClientTransport(new URL(server.url)), 'auto');
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('port 0 gives distinct free ports', async () => {
    const [a, b] = await Promise.all([httpServer(), httpServer()]);
    expect(a.port).not.toBe(b.port);
    expect(a.port).toBeGreaterThan(0);
  });
});

describe('mcp-resources stdio face', () => {
  it('writes nothing but JSON-RPC to stdout and exits when stdin closes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', STDIO_ENTRY, '--db', freshDb()], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'resources_add', arguments: { name: 'raw', value: 1 } } });
    await expect.poll(() => lines.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    child.stdin.end();
    expect(await exited).toBe(0);

    const messages = lines.map((line) => JSON.parse(line));
    for (const message of messages) expect(message.jsonrpc).toBe('2.0');
    expect(messages.find((m) => m.id === 2).result.structuredContent).toMatchObject({ name: 'raw', value: 1 });
  });
});
