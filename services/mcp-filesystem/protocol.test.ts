import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFilesystemHttp, type FilesystemHttpServer } from './index.js';
import { makeFixture, type Fixture } from './testing/fixture.js';

/** mcp-filesystem over the real protocol, with the SDK's client: Streamable HTTP and stdio, both protocol generations. */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STDIO_ENTRY = fileURLToPath(new URL('./stdio-entry.ts', import.meta.url));
const CLI = join(REPO_ROOT, 'cli', 'main.ts');

let fx: Fixture;
let http: FilesystemHttpServer;
beforeAll(async () => {
  fx = makeFixture();
  http = await startFilesystemHttp(fx.config, { port: 0 });
});
afterAll(async () => {
  await http.close();
  fx.cleanup();
});

type Mode = 'auto' | 'legacy';

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport, mode: Mode): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  return client;
}

const overHttp = (mode: Mode) => connect(new StreamableHTTPClientTransport(new URL(http.url)), mode);
const overStdio = (mode: Mode) =>
  connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', STDIO_ENTRY, '--config', fx.configFile],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    }),
    mode,
  );

const text = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

const READ_ONLY = ['list_roots', 'list_folder', 'read_file', 'stat_file', 'hash_file', 'permissions_file', 'grep', 'glob'];
const DESTRUCTIVE = ['write_file', 'remove_file', 'patch_file', 'create_folder', 'remove_folder', 'copy', 'move'];

describe.each([
  ['Streamable HTTP, 2026-07-28', () => overHttp('auto')],
  ['Streamable HTTP, 2025 stateless fallback', () => overHttp('legacy')],
  ['stdio, 2026-07-28', () => overStdio('auto')],
  ['stdio, 2025 initialize', () => overStdio('legacy')],
])('mcp-filesystem over %s', (label, connectClient) => {
  // One connection for the block: a stdio server is a child process, and starting one costs seconds under tsx.
  let shared: Client | undefined;
  const open = async () => (shared ??= await connectClient());
  afterAll(async () => {
    await shared?.close();
  });

  it('lists the 15 tools: read tools read-only, write tools destructive', async () => {
    const client = await open();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual([...READ_ONLY, ...DESTRUCTIVE].sort());
    for (const name of READ_ONLY) expect(byName[name]!.annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    for (const name of DESTRUCTIVE) expect(byName[name]!.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.read_file!.inputSchema).toMatchObject({ type: 'object', required: ['root', 'path'], additionalProperties: false });
    expect(byName.copy!.inputSchema.required).toEqual(['source_root', 'source_path', 'dest_root', 'dest_path']);
    expect(byName.write_file!.inputSchema.properties!.mode).toMatchObject({ enum: ['overwrite', 'append', 'create_only'] });
  });

  it('reads, writes, and refuses an escape', async () => {
    const client = await open();
    const read = await call(client, 'read_file', { root: 'workspace', path: 'file.txt' });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ path: 'file.txt', content: 'hello workspace\n' });

    const name = `written-${label.replace(/\W+/g, '-')}.txt`;
    const written = await call(client, 'write_file', { root: 'workspace', path: `out/${name}`, content: 'over the wire' });
    expect(written.structuredContent).toMatchObject({ path: `out/${name}`, created: true });
    expect(readFileSync(join(fx.roots.workspace, 'out', name), 'utf8')).toBe('over the wire');

    for (const args of [
      { root: 'workspace', path: '../../outside/secret.txt' },
      { root: 'workspace', path: 'link_out_dir/secret.txt' },
    ]) {
      const refused = await call(client, 'read_file', args);
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/outside root "workspace"/);
      expect(text(refused)).not.toContain(fx.token);
      expect(text(refused)).not.toContain(fx.base);
    }
    const escapedWrite = await call(client, 'write_file', { root: 'workspace', path: 'link_out_dir/planted.txt', content: 'x' });
    expect(escapedWrite.isError).toBe(true);
    expect(existsSync(join(fx.outside, 'planted.txt'))).toBe(false);

    const invalid = await call(client, 'read_file', { root: 'workspace' });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/path/);
  });
});

describe('the HTTP face', () => {
  it('binds to 127.0.0.1, answers /health and serves only /mcp', async () => {
    expect(http.url).toBe(`http://127.0.0.1:${http.port}/mcp`);
    const health = await fetch(`http://127.0.0.1:${http.port}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`http://127.0.0.1:${http.port}/other`)).status).toBe(404);
  });

  it('refuses a foreign Host header on a loopback bind (DNS rebinding)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const post = (host: string) =>
      new Promise<number>((resolve, reject) => {
        // fetch() drops a hand-set Host header; node:http sends it as given.
        const req = request(
          http.url,
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
    expect(await post(`127.0.0.1:${http.port}`)).toBe(200);
  });

  it('answers TRACE with 405 and the methods it serves, and goes on serving (a web Request cannot carry TRACE)', async () => {
    const trace = await new Promise<{ status: number; allow: unknown }>((resolve, reject) => {
      const req = request(http.url, { method: 'TRACE' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow });
      });
      req.on('error', reject);
      req.end();
    });
    expect(trace).toEqual({ status: 405, allow: 'GET, POST, DELETE' });
    expect((await fetch(`http://127.0.0.1:${http.port}/health`)).status).toBe(200);
  });
});

describe('bin/asg mcp-filesystem (cli/main.ts)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function runCli(args: string[]) {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'mcp-filesystem', ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  // One run: each loads the whole CLI under tsx, which takes seconds. Bad configurations are covered in sandbox.test.ts.
  it('serves Streamable HTTP on --port and stops on SIGTERM', async () => {
    const served = runCli(['--config', fx.configFile, '--port', '0']);

    await expect.poll(() => /listening url=(\S+)/.exec(served.output())?.[1], { timeout: 25_000, interval: 100 }).toBeTruthy();
    const url = /listening url=(\S+)/.exec(served.output())![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.output()).toContain('roots=workspace,readonly,restricted,dest');
    const client = await connect(new StreamableHTTPClientTransport(new URL(url)), 'auto');
    const listed = await call(client, 'list_folder', { root: 'readonly' });
    expect(listed.structuredContent).toMatchObject({ entries: [{ name: 'readme.txt', type: 'file' }] });
    await client.close();
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  }, 45_000);
});
