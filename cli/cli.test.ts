/** The `asg` command line: config checks, usage, and a clear refusal of bad configuration. */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { ASG, REPO_ROOT, spawnProcess, startAgent, tempDir } from '../test/support/agent-process.js';
import { get } from '../test/support/http.js';
import { freePort } from '../test/support/ports.js';

function asg(...args: string[]) {
  const result = spawnSync(process.execPath, [ASG, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, out: result.stdout + result.stderr };
}

describe('asg config check', () => {
  it('accepts the example agent of config/agent.yaml', () => {
    const { code, out } = asg('config', 'check', 'config/agent.yaml');
    expect(code).toBe(0);
    expect(out).toContain('config/agent.yaml: valid (model gemini-2.5-flash, 1 MCP server(s)');
  });

  it('accepts the orchestrated example of config/sequential.yaml', () => {
    const { code, out } = asg('config', 'check', 'config/sequential.yaml');
    expect(code).toBe(0);
    expect(out).toContain('config/sequential.yaml: valid (model gemini-2.5-flash, 1 MCP server(s), 0 A2A agent(s), agent tree)');
  });

  it('names the file, the field and what was expected', () => {
    const file = join(tempDir(), 'bad.yaml');
    writeFileSync(file, 'port: eighty\nllm:\n  modle: x\nmcp_servers:\n  - name: a\n');
    const { code, out } = asg('config', 'check', file);
    expect(code).toBe(1);
    expect(out).toContain(`${file}:1:7: port: expected number, got string`);
    expect(out).toContain(`${file}:3:3: llm.modle: unknown field "modle" (did you mean "model"?)`);
    expect(out).toContain(`${file}:5:5: mcp_servers[0]: expected exactly one of "url" (Streamable HTTP) or "command" (stdio)`);
  });

  it('refuses to start with a bad configuration, and a missing file is named', () => {
    const file = join(tempDir(), 'dup.yaml');
    writeFileSync(file, 'mcp_servers:\n  - {name: a, url: "http://127.0.0.1:1/mcp"}\n  - {name: a, url: "http://127.0.0.1:2/mcp"}\n');
    const up = asg('up', '--config', file);
    expect(up.code).toBe(1);
    expect(up.out).toContain(`${file}:3:12: mcp_servers[1].name: expected a unique server name ("a" is used twice)`);
    const missing = asg('up', '--config', '/nonexistent/agent.yaml');
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('/nonexistent/agent.yaml: cannot read the configuration file (ENOENT)');
  });
});

describe('asg up: who may approve', () => {
  it('refuses a gateway beyond loopback without auth, and a token variable that is not set, before starting anything', () => {
    const dir = tempDir();
    const open = join(dir, 'open.yaml');
    writeFileSync(open, 'host: 0.0.0.0\nport: 0\n');
    const refused = asg('up', '--config', open);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain(`${open}:1:7: host: refusing to listen on 0.0.0.0 without authentication`);
    expect(refused.out).toContain('--insecure');
    expect(asg('serve', 'gateway', '--config', open).code).toBe(1);
    const unset = join(dir, 'unset.yaml');
    writeFileSync(
      unset,
      'host: 0.0.0.0\nport: 0\nauth:\n  tokens:\n    - {name: alice, token_env: ASG_TEST_UNSET_TOKEN, roles: [approve]}\n',
    );
    const missing = asg('up', '--config', unset);
    expect(missing.code).toBe(1);
    expect(missing.out).toContain(`${unset}:5:32: auth.tokens[0].token_env: the environment variable ASG_TEST_UNSET_TOKEN is not set`);
  });
});

describe('asg usage', () => {
  it('lists the commands and refuses unknown ones', () => {
    expect(asg('--help').out).toContain('serve [options] <service>');
    const unknown = asg('launch');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain("unknown command 'launch'");
    const service = asg('serve', 'nothing');
    expect(service.code).toBe(2);
    expect(service.out).toContain('Allowed choices are gateway, orchestrator, conversation-store');
    expect(asg('up', '--port', '70000').code).toBe(2);
    expect(asg('--log-format', 'xml', 'config', 'check').code).toBe(2);
  });

  it('--help works on every command and exits 0', () => {
    const commands = [
      [],
      ['up'],
      ['dev'],
      ['init'],
      ['serve'],
      ['migrate'],
      ['mcp-resources'],
      ['mcp-filesystem'],
      ['config'],
      ['config', 'check'],
      ['web'],
      ['approvals'],
      ['runs'],
    ];
    for (const command of commands) {
      const { code, out } = asg(...command, '--help');
      expect(code, command.join(' ')).toBe(0);
      expect(out, command.join(' ')).toMatch(
        command[0] === 'approvals' || command[0] === 'runs'
          ? new RegExp(`^Usage: asg ${command[0]} `)
          : new RegExp(`^Usage: asg ${command.join(' ')}`.trimEnd()),
      );
    }
    expect(asg('serve', '--help').out).toMatch(/--port <port>.*\(env: PORT\)/s);
    expect(asg('up', '--help').out).toMatch(/--config <file>.*env:\s+ASG_CONFIG/s);
    expect(asg('help', 'serve')).toMatchObject({ code: 0, out: expect.stringContaining('Usage: asg serve') });
    // Plain `asg` shows the help too, and succeeds.
    expect(asg()).toMatchObject({ code: 0, out: expect.stringContaining('Commands:') });
  });

  it('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(asg('--version')).toEqual({ code: 0, out: `${version}\n` });
  });

  it('config check reads --config, else ASG_CONFIG, else config/agent.yaml', () => {
    const withEnv = (env: Record<string, string>, ...args: string[]) => {
      const result = spawnSync(process.execPath, [ASG, ...args], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, ...env },
      });
      return { code: result.status, out: result.stdout + result.stderr };
    };
    const { ASG_CONFIG: _ignored, ...clean } = process.env;
    expect(
      spawnSync(process.execPath, [ASG, 'config', 'check'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000, env: clean }).stdout,
    ).toContain('config/agent.yaml: valid');
    expect(withEnv({ ASG_CONFIG: 'config/sequential.yaml' }, 'config', 'check').out).toContain('config/sequential.yaml: valid');
    expect(withEnv({ ASG_CONFIG: 'config/sequential.yaml' }, 'config', 'check', '--config', 'config/agent.yaml').out).toContain(
      'config/agent.yaml: valid',
    );
    const missing = withEnv({ ASG_CONFIG: '/nonexistent/agent.yaml' }, 'up');
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('/nonexistent/agent.yaml: cannot read the configuration file (ENOENT)');
  });

  it('--log-format and --log-level become LOG_FORMAT and LOG_LEVEL, wherever they stand (the logger reads those)', () => {
    const file = join(tempDir(), 'env.json');
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        join(REPO_ROOT, 'test', 'fixtures', 'record-log-env.mjs'),
        ASG,
        'config',
        'check',
        '--log-format',
        'pretty',
        'config/agent.yaml',
        '--log-level',
        'warn',
      ],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, LOG_ENV_FILE: file, LOG_FORMAT: 'json', LOG_LEVEL: 'info' },
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'warn' });
  });
});

describe('what listens: --host and --port, else PORT, else the file', () => {
  /** Whether something accepts TCP connections on 127.0.0.1:port. */
  const accepts = (port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, timeout: 1000 });
      socket.once('connect', () => resolve(socket.destroy() !== undefined));
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => resolve(socket.destroy() === undefined));
    });

  it("asg up puts the gateway on PORT over the file's port 0", async () => {
    const port = await freePort();
    const agent = await startAgent({ geminiBaseUrl: 'http://127.0.0.1:9', env: { PORT: String(port) } });
    try {
      expect(new URL(agent.url).port).toBe(String(port));
      expect((await get(`${agent.url}/health`)).status).toBe(200);
    } finally {
      expect(await agent.stop()).toBe(0);
    }
  }, 60_000);

  it('asg serve puts a service on --host and --port, which beat PORT', async () => {
    const dir = tempDir();
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, `data_dir: ${JSON.stringify(join(dir, 'data'))}\nservices:\n  conversation_store: 127.0.0.1:1\n`);
    const [port, other] = [await freePort(), await freePort()];
    const served = spawnProcess(
      process.execPath,
      [ASG, 'serve', 'conversation-store', '--config', file, '--host', '127.0.0.1', '--port', String(port)],
      { ...process.env, PORT: String(other) },
    );
    try {
      // Logged once it listens and stops on a signal.
      await served.waitForLine((line) => line.includes('service up'), 30_000);
      expect(await accepts(port)).toBe(true);
      expect(await accepts(other)).toBe(false);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 60_000);
});

describe('what a command loads', () => {
  const RECORD_MODULES = join(REPO_ROOT, 'test', 'fixtures', 'record-modules.mjs');
  /** The services' code and the packages only they use: gRPC, OpenTelemetry, the AI SDK, HTTP frameworks, drivers. */
  const SERVICE_CODE = [
    /\/dist\/gateway\//,
    /\/dist\/services\/(orchestrator|llm-gateway|tool-broker|conversation-store|a2a-bridge)\//,
    // log-settings.js is the log levels and formats alone (the config schema names them); log.js is the logger.
    /\/dist\/services\/common\/(grpc\/|telemetry|log\.js|context)/,
    /\/node_modules\/(@grpc|@opentelemetry|ai|@ai-sdk|express|@trpc|pg|@nats-io|gpt-tokenizer|@modelcontextprotocol\/client)\//,
  ];

  /** The module URLs `asg <args>` loaded, with `input` on its stdin (which then ends). */
  function modulesOf(args: string[], input = ''): string[] {
    const file = join(tempDir(), 'modules.txt');
    const result = spawnSync(process.execPath, ['--import', RECORD_MODULES, ASG, ...args], {
      cwd: REPO_ROOT,
      input,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, MODULES_FILE: file },
    });
    expect(result.status, result.stderr).toBe(0);
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  }
  const serviceCode = (modules: string[]) => modules.filter((url) => SERVICE_CODE.some((pattern) => pattern.test(url)));

  it('asg --help loads no package but commander, and config check no service', () => {
    for (const args of [['--help'], ['serve', '--help'], ['dev', '--help'], ['--version']]) {
      const help = modulesOf(args);
      expect(help).toContainEqual(expect.stringMatching(/\/dist\/cli\/usage\.js$/));
      expect(help.filter((url) => url.includes('/node_modules/') && !url.includes('/node_modules/commander/'))).toEqual([]);
    }
    // asg init writes three files with Node's own modules.
    const init = modulesOf(['init', tempDir()]);
    expect(init).toContainEqual(expect.stringMatching(/\/dist\/cli\/init\.js$/));
    expect(init.filter((url) => url.includes('/node_modules/') && !url.includes('/node_modules/commander/'))).toEqual([]);
    const check = modulesOf(['config', 'check', 'config/agent.yaml']);
    expect(check).toContainEqual(expect.stringMatching(/\/dist\/services\/common\/config\/schema\.js$/));
    expect(serviceCode(check)).toEqual([]);
  });

  it('the built-in MCP servers over stdio load their own modules and none of the services', () => {
    const dir = tempDir();
    const session = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]
      .map((message) => `${JSON.stringify(message)}\n`)
      .join('');
    const resources = modulesOf(['mcp-resources', '--db', join(dir, 'resources.db')], session);
    expect(resources).toContainEqual(expect.stringMatching(/\/dist\/services\/mcp-resources\/tools\.js$/));
    expect(resources).toContainEqual(expect.stringContaining('/node_modules/@modelcontextprotocol/server/'));
    expect(serviceCode(resources)).toEqual([]);
    const config = join(dir, 'filesystem.yaml');
    writeFileSync(config, `roots:\n  - {name: workspace, path: ${JSON.stringify(dir)}}\n`);
    const filesystem = modulesOf(['mcp-filesystem', '--config', config, '--stdio'], session);
    expect(filesystem).toContainEqual(expect.stringMatching(/\/dist\/services\/mcp-filesystem\/server\.js$/));
    expect(serviceCode(filesystem)).toEqual([]);
  });

  it('asg up loads no OpenAI encoding, regular expression engine, tracing SDK or PostgreSQL and NATS client before something needs one', async () => {
    const modules = join(tempDir(), 'modules.txt');
    const agent = await startAgent({
      geminiBaseUrl: 'http://127.0.0.1:9',
      nodeArgs: ['--import', RECORD_MODULES],
      env: { MODULES_FILE: modules },
    });
    expect(await agent.stop()).toBe(0);
    const loaded = readFileSync(modules, 'utf8').split('\n').filter(Boolean);
    expect(loaded).toContainEqual(expect.stringMatching(/\/dist\/services\/orchestrator\/domain\/tokens\.js$/));
    expect(loaded).toContainEqual(expect.stringContaining('/node_modules/@grpc/grpc-js/'));
    // @opentelemetry/resources comes with the metrics SDK, which every service sets up as it starts.
    expect(
      loaded.filter((url) =>
        /\/node_modules\/(gpt-tokenizer|re2-wasm|@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-http)|pg|@nats-io\/[^/]+)\//.test(url),
      ),
    ).toEqual([]);
  }, 60_000);
});
