/**
 * The published package: `npm pack` of the built tree, installed from the
 * tarball into an empty folder the way `npm install -g` or `npx` would, and run from there — no
 * path into this repository. Install scripts are skipped: they would only compile
 * better-sqlite3, which neither `--version` nor `config check` loads, and would make this test
 * a native build. Set ASG_TEST_NODE22 to a Node 22 binary to run the installed CLI with it too.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../support/agent-process.js';

const INSTALL_TIMEOUT_MS = 5 * 60_000;
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; private?: boolean };

/** npm without the settings of an npm that may have started this run (`npm test` sets npm_config_*). */
function npm(args: string[], cwd: string, timeout: number) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
  const result = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout });
  expect(result.status, `npm ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

let files: string[];
let installed: string;

beforeAll(() => {
  const dir = tempDir('asg-package-');
  // The tree is built already (the e2e tests run bin/asg from dist/); `prepare` would build it again.
  const [packed] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO_ROOT, 120_000)) as {
    filename: string;
    files: { path: string }[];
  }[];
  files = packed!.files.map((file) => file.path);
  installed = join(dir, 'app');
  npm(
    ['install', '--prefix', installed, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed!.filename)],
    dir,
    INSTALL_TIMEOUT_MS,
  );
}, INSTALL_TIMEOUT_MS + 150_000);

describe('the npm package', () => {
  it('is publishable and ships what runs, without sources or tests', () => {
    expect(pkg.private).toBeUndefined();
    for (const file of [
      'bin/asg',
      'dist/cli/main.js',
      'dist/gen/ts/asg/orchestrator/v1/orchestrator.js',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/client/openapi.d.ts',
      'docs/client.md',
      'web/dist/index.html',
      // /docs offline: Scalar's bundle, copied into the build.
      'dist/gateway/openapi/scalar-api-reference.js',
      'config/agent.yaml',
      'README.md',
      'LICENSE',
      'package.json',
    ])
      expect(files, file).toContain(file);
    expect(
      files.filter(
        (file) => /\.test\.|^(cli|services|gateway|test|deploy)\//.test(file) || (file.endsWith('.ts') && !file.endsWith('.d.ts')),
      ),
    ).toEqual([]);
  });

  it('holds no test code: no shipped file imports vitest or a test helper', () => {
    // Conformance suites and test helpers live beside the store's code but are kept out of the
    // build; a file that imports vitest in the tarball would fail at run time where vitest is absent.
    const shipped = join(installed, 'node_modules', pkg.name);
    const importsTestCode = (file: string) =>
      /from\s*['"](?:vitest|vitest\/[^'"]*)['"]|import\(\s*['"]vitest['"]\s*\)|require\(\s*['"]vitest['"]\s*\)/.test(
        readFileSync(join(shipped, file), 'utf8'),
      );
    const code = files.filter((file) => /\.(?:m?js|cjs)$/.test(file));
    expect(code.length).toBeGreaterThan(100);
    expect(code.filter(importsTestCode)).toEqual([]);
    expect(files.filter((file) => /-conformance\.js$|\/testing\//.test(file))).toEqual([]);
  });

  it('exports the typed client as agent-stop-and-go/client, for import by an installed project', () => {
    const result = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createAgentClient } = await import('${pkg.name}/client');
         const agent = createAgentClient({ baseUrl: 'http://127.0.0.1:9' });
         console.log(typeof createAgentClient, typeof agent.GET, typeof agent.POST);`,
      ],
      { cwd: installed, encoding: 'utf8', timeout: 30_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('function function function');
  });

  const nodes = [process.execPath, ...(process.env.ASG_TEST_NODE22 ? [process.env.ASG_TEST_NODE22] : [])];
  it.each(nodes)('runs asg --version and config check from the installed tarball (%s)', (node) => {
    const asg = (args: string[], cwd = installed) => {
      // Through the link npm made, as a user's shell would; cwd is the empty folder unless said.
      const result = spawnSync(node, [join(installed, 'node_modules', '.bin', 'asg'), ...args], {
        cwd,
        encoding: 'utf8',
        timeout: 30_000,
      });
      return { code: result.status, out: result.stdout + result.stderr };
    };
    expect(asg(['--version'])).toEqual({ code: 0, out: `${pkg.version}\n` });
    expect(asg(['serve', '--help']).code).toBe(0);
    const root = join(installed, 'node_modules', pkg.name);
    for (const config of ['agent.yaml', 'sequential.yaml']) {
      const file = join(root, 'config', config);
      // From the package's folder, where their MCP server's script bin/asg is, they are valid.
      const check = asg(['config', 'check', file], root);
      expect(check.out).toContain(`${file}: valid`);
      expect(check.code).toBe(0);
      // From elsewhere they are refused, saying why, rather than started without their tools.
      const elsewhere = asg(['config', 'check', file]);
      expect(elsewhere.out).toContain(`mcp_servers[0].args[0]: "bin/asg" does not exist in ${installed}`);
      expect(elsewhere.code).toBe(1);
    }
  });

  it('asg init from the installed tarball names the installed package: its tool server and schema, whatever folder starts it', () => {
    const shipped = join(installed, 'node_modules', pkg.name);
    const result = spawnSync(process.execPath, [join(installed, 'node_modules', '.bin', 'asg'), 'init', 'my-agent'], {
      cwd: installed,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status, result.stderr).toBe(0);
    const file = join(installed, 'my-agent', 'agent.yaml');
    const yaml = readFileSync(file, 'utf8');
    expect(yaml).toContain(`$schema=${pathToFileURL(join(shipped, 'config', 'agent.schema.json')).href}\n`);
    expect(existsSync(join(shipped, 'config', 'agent.schema.json'))).toBe(true);
    expect(yaml).toContain(`args: [${JSON.stringify(join(shipped, 'bin', 'asg'))}, "mcp-resources"`);
    const check = spawnSync(process.execPath, [join(shipped, 'bin', 'asg'), 'config', 'check', file], {
      cwd: tempDir(),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(check.stdout).toContain(`${file}: valid (model gemini-2.5-flash, 1 MCP server(s)`);
  });
});
