import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

/** The repository root, for paths to bin/asg and fixtures. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ASG = join(REPO_ROOT, 'bin', 'asg');

/** Fake credentials with shapes that are easy to find if they ever leak. */
export const TEST_GEMINI_KEY = 'test-gemini-key-5f1c9a7e3b2d4c6e';
export const TEST_BEARER = 'bearer-token-9d8c7b6a5f4e3d2c';

export interface AgentOptions {
  /** Config fields merged over the test defaults (loopback, port 0, temp data_dir, mcp-resources over stdio). */
  config?: Record<string, unknown>;
  /** Extra environment; `null` removes a variable. */
  env?: Record<string, string | null>;
  /** Base URL of the scripted Gemini endpoint (GEMINI_BASE_URL). */
  geminiBaseUrl: string;
  /** Reuse a previous agent's directory (its data and config): a restart. */
  dir?: string;
  /** Start through `npm start -- --config FILE` instead of `bin/asg up`. */
  viaNpmStart?: boolean;
  /** Extra Node flags for the agent process (e.g. --cpu-prof for profiling). */
  nodeArgs?: string[];
}

export interface AgentProcess {
  url: string;
  dir: string;
  dataDir: string;
  configFile: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Waits (up to 5 s) until a line of the output satisfies `predicate`: log lines are written after responses. */
  waitForLine(predicate: (line: string) => boolean): Promise<string>;
  stop(): Promise<number | null>;
}

export function tempDir(prefix = 'asg-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The mcp-resources server as a stdio MCP server entry of the agent config. */
export function resourcesServer(dbPath: string, name = 'resources'): Record<string, unknown> {
  return { name, command: process.execPath, args: [ASG, 'mcp-resources', '--db', dbPath] };
}

export function defaultConfig(dir: string): Record<string, unknown> {
  return {
    name: 'test-agent',
    description: 'An agent under test',
    prompt: 'You manage resources.',
    host: '127.0.0.1',
    port: 0,
    data_dir: join(dir, 'data'),
    llm: { model: 'gemini-2.5-flash' },
    mcp_servers: [resourcesServer(join(dir, 'resources.db'))],
  };
}

function waitForUrl(child: ChildProcess, output: () => string, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => done(new Error(`agent did not start within ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    const check = () => {
      const match = /msg="agent up".* url=(http:\/\/\S+)/.exec(output());
      if (match) done(undefined, match[1]);
    };
    const onExit = (code: number | null) => done(new Error(`agent exited with code ${code} before it was up:\n${output()}`));
    const done = (error?: Error, url?: string) => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolvePromise(url!);
    };
    child.stdout?.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

/** Starts the whole mesh as a real process, the way `npm start` does, and waits until it serves. */
export async function startAgent(options: AgentOptions): Promise<AgentProcess> {
  const dir = options.dir ?? tempDir();
  const configFile = join(dir, 'agent.yaml');
  const config = { ...defaultConfig(dir), ...options.config };
  mkdirSync(dir, { recursive: true });
  writeFileSync(configFile, stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, GEMINI_BASE_URL: options.geminiBaseUrl, GEMINI_API_KEY: TEST_GEMINI_KEY, ASG_LOG_LEVEL: 'info' };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === null) delete env[key];
    else env[key] = value;
  }
  const [command, args] = options.viaNpmStart
    ? ['npm', ['start', '--silent', '--', '--config', configFile]]
    : [process.execPath, [...(options.nodeArgs ?? []), ASG, 'up', '--config', configFile]];
  // Its own process group, so that stopping npm also stops the node process under it.
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      return child.exitCode;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  try {
    const url = await waitForUrl(child, () => text, 60_000);
    const waitForLine = async (predicate: (line: string) => boolean): Promise<string> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const line = text.split('\n').find(predicate);
        if (line !== undefined) return line;
        if (Date.now() > deadline) throw new Error(`no matching output line within 5 s:\n${text.slice(-4000)}`);
        await new Promise((resolveWait) => setTimeout(resolveWait, 20));
      }
    };
    return { url, dir, dataDir: config.data_dir as string, configFile, output: () => text, waitForLine, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
