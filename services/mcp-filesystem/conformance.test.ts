import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpResourcesHttp, type McpHttpEndpoint } from '../mcp-resources/index.js';
import { startFilesystemHttp, type FilesystemHttpServer } from './index.js';
import { makeFixture, type Fixture } from './testing/fixture.js';

/**
 * Outside tools against both built-in MCP servers (mcp-filesystem and mcp-resources), over
 * Streamable HTTP: the MCP conformance suite's server scenarios, and the MCP Inspector's CLI.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO_ROOT, 'node_modules', '.bin');
const STDIO_ENTRY = fileURLToPath(new URL('./stdio-entry.ts', import.meta.url));
const run = promisify(execFile);

interface Outcome {
  code: number;
  output: string;
}

async function runTool(command: string, args: string[], cwd: string): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(join(BIN, command), args, {
      cwd,
      timeout: 40_000,
      maxBuffer: 8 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

let fx: Fixture;
let scratch: string;
let filesystem: FilesystemHttpServer;
let resources: McpHttpEndpoint;
beforeAll(async () => {
  fx = makeFixture();
  // The conformance runner writes a results/ folder into its working directory: a scratch one.
  scratch = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  filesystem = await startFilesystemHttp(fx.config, { port: 0 });
  resources = await startMcpResourcesHttp({ dbPath: join(scratch, 'resources.db'), port: 0 });
});
afterAll(async () => {
  await filesystem?.close();
  await resources?.close();
  fx?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * The server scenarios of @modelcontextprotocol/conformance@0.1.9 that apply to a server with
 * tools only (`conformance list`). Left out, and why:
 * - tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging,
 *   -error, -with-progress, -sampling, -elicitation, json-schema-2020-12,
 *   elicitation-sep1034-defaults, elicitation-sep1330-enums: each calls (or lists) a fixture tool
 *   of the suite's own reference server (test_simple_text, test_error_handling, …); a real server
 *   has its own tools. Tool calls are covered below by the Inspector and in protocol.test.ts.
 * - logging-set-level, completion-complete: capabilities these servers do not declare.
 * - resources-*, prompts-*: these servers have no resources or prompts.
 * - server-sse-polling, server-sse-multiple-streams: they need a session (Mcp-Session-Id) to
 *   resume SSE streams; both servers are stateless by design, and the suite then runs no check
 *   at all (0/0 with a warning), so there is nothing to pass.
 */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list'];

describe('MCP conformance suite', () => {
  const servers = () => [
    ['mcp-filesystem', filesystem.url],
    ['mcp-resources', resources.url],
  ];

  it('passes every applicable server scenario, against both servers', async () => {
    const runs = servers().flatMap(([name, url]) =>
      SCENARIOS.map(async (scenario) => ({
        name,
        scenario,
        ...(await runTool('conformance', ['server', '--url', url!, '--scenario', scenario], scratch)),
      })),
    );
    for (const { name, scenario, code, output } of await Promise.all(runs)) {
      const where = `${name} ${scenario}:\n${output}`;
      expect(code, where).toBe(0);
      const passed = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      expect(passed, where).not.toBeNull();
      expect(Number(passed![1]), where).toBeGreaterThan(0);
      expect(passed![1], where).toBe(passed![2]);
      expect(passed![3], where).toBe('0');
    }
  });

  it('does fail a scenario that does not apply (the runner has teeth)', async () => {
    const { code, output } = await runTool(
      'conformance',
      ['server', '--url', filesystem.url, '--scenario', 'tools-call-simple-text'],
      scratch,
    );
    expect(code).not.toBe(0);
    expect(output).toMatch(/Tool test_simple_text not found/);
  });
});

/**
 * @modelcontextprotocol/inspector-cli@1.0.3 reads its own package.json through a path that works
 * only when `../package.json` exists relative to the working directory; from `services/` it does.
 * The same directory lets a stdio server it starts resolve `tsx` from the repository.
 */
const INSPECTOR_CWD = join(REPO_ROOT, 'services');
const inspect = async (args: string[]) => {
  const outcome = await runTool('mcp-inspector-cli', ['--cli', ...args], INSPECTOR_CWD);
  expect(outcome.code, outcome.output).toBe(0);
  // The JSON result is on stdout; a deprecation notice goes to stderr, which runTool appends after it.
  const json = outcome.output.slice(0, outcome.output.lastIndexOf('}') + 1);
  return JSON.parse(json.slice(json.indexOf('{')));
};

describe('MCP Inspector CLI', () => {
  it('lists and calls the tools of mcp-filesystem over Streamable HTTP and stdio', async () => {
    const [listed, read, refused, overStdio] = await Promise.all([
      inspect([filesystem.url, '--transport', 'http', '--method', 'tools/list']),
      inspect([
        filesystem.url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'read_file',
        '--tool-arg',
        'root=workspace',
        'path=sub/note.md',
      ]),
      inspect([
        filesystem.url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'read_file',
        '--tool-arg',
        'root=workspace',
        'path=../../outside/secret.txt',
      ]),
      inspect([
        '--method',
        'tools/call',
        '--tool-name',
        'list_roots',
        '--',
        process.execPath,
        '--import',
        'tsx',
        STDIO_ENTRY,
        '--config',
        fx.configFile,
      ]),
    ]);
    expect(listed.tools).toHaveLength(15);
    const byName = Object.fromEntries(listed.tools.map((tool: any) => [tool.name, tool]));
    expect(byName.read_file.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.remove_folder.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(read.structuredContent).toMatchObject({ path: 'sub/note.md', content: '# note\nline two\n' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/outside root "workspace"/);
    expect(JSON.stringify(refused)).not.toContain(fx.token);
    expect(overStdio.structuredContent.roots.map((root: any) => root.name)).toEqual(['workspace', 'readonly', 'restricted', 'dest']);
  });

  it('lists and calls the tools of mcp-resources over Streamable HTTP', async () => {
    const [listed, added] = await Promise.all([
      inspect([resources.url, '--transport', 'http', '--method', 'tools/list']),
      inspect([
        resources.url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'resources_add',
        '--tool-arg',
        'name=inspected',
        'value=3',
      ]),
    ]);
    expect(listed.tools.map((tool: any) => tool.name).sort()).toEqual(['resources_add', 'resources_list', 'resources_remove']);
    expect(listed.tools.find((tool: any) => tool.name === 'resources_list').annotations).toMatchObject({ readOnlyHint: true });
    expect(added.structuredContent).toMatchObject({ name: 'inspected', value: 3 });
  });
});
