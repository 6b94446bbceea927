import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logLines, logLineWhere } from './log-lines.js';
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

export interface AgentProcess extends AsgProcess {
  url: string;
  dir: string;
  dataDir: string;
  configFile: string;
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
    // Real backoff (1 s, 2 s, 4 s) would only slow the suites that script provider errors.
    llm: { model: 'gemini-2.5-flash', retry: { initial_backoff: '10ms', max_backoff: '50ms' } },
    mcp_servers: [resourcesServer(join(dir, 'resources.db'))],
  };
}

/** A bin/asg (or npm) process of a test, its output captured, stopped with its process group. */
export interface AsgProcess {
  /** The spawned process (npm, or node for bin/asg), also the id of its process group. */
  pid: number;
  /** Its exit code (null when a signal ended it), once it has exited. */
  exited: Promise<number | null>;
  output(): string;
  /** Waits (up to `timeoutMs`) until a line of the output satisfies `predicate`: log lines are written after responses. */
  waitForLine(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  stop(): Promise<number | null>;
}

/** Starts a process in its own process group, so that stopping npm also stops the node process under it. */
export function spawnProcess(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT): AsgProcess {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  // The output pipes close only when every process writing to them is gone: with npm in
  // front, the node process under it may still be shutting down after npm itself exited.
  let closed = false;
  const streamsClosed = Promise.all([
    new Promise((done) => child.stdout.on('close', done)),
    new Promise((done) => child.stderr.on('close', done)),
  ]).then(() => {
    closed = true;
  });
  const stop = async (): Promise<number | null> => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* the whole group is gone already */
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 10_000);
    const code = await exited;
    await streamsClosed;
    clearTimeout(timer);
    return code;
  };
  const waitForLine = async (predicate: (line: string) => boolean, timeoutMs = 5000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = text.split('\n').find(predicate);
      if (line !== undefined) return line;
      if (closed)
        throw new Error(`process exited (${child.exitCode ?? child.signalCode}) before the expected output:\n${text.slice(-4000)}`);
      if (Date.now() > deadline) throw new Error(`no matching output line within ${timeoutMs} ms:\n${text.slice(-4000)}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    }
  };
  return { pid: child.pid!, exited, output: () => text, waitForLine, stop };
}

/** The process and every process below it, from /proc (Linux): what must be gone after a clean stop. */
export function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it exited meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(rootPid);
  return tree;
}

/** The command line of a process, or undefined once it is gone. */
export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Whether a process still exists (a zombie not yet reaped counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The environment of a test process: the caller's, with the scripted provider and overrides (`null` removes). */
export function testEnvironment(geminiBaseUrl: string, overrides: Record<string, string | null> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GEMINI_BASE_URL: geminiBaseUrl,
    GEMINI_API_KEY: TEST_GEMINI_KEY,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === null) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Starts the whole mesh as a real process, the way `npm start` does, and waits until it serves. */
export async function startAgent(options: AgentOptions): Promise<AgentProcess> {
  const dir = options.dir ?? tempDir();
  const configFile = join(dir, 'agent.yaml');
  const config = { ...defaultConfig(dir), ...options.config };
  mkdirSync(dir, { recursive: true });
  writeFileSync(configFile, stringify(config));
  const env = testEnvironment(options.geminiBaseUrl, options.env);
  const [command, args] = options.viaNpmStart
    ? ['npm', ['start', '--silent', '--', '--config', configFile]]
    : [process.execPath, [...(options.nodeArgs ?? []), ASG, 'up', '--config', configFile]];
  const agent = spawnProcess(command, args, env);
  try {
    const line = await agent.waitForLine(
      logLineWhere((candidate) => candidate.msg === 'agent up'),
      60_000,
    );
    const url = String(logLines(line)[0]!.url);
    return { ...agent, url, dir, dataDir: config.data_dir as string, configFile };
  } catch (error) {
    await agent.stop();
    throw error;
  }
}
