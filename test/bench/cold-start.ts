/**
 * Cold start and memory, on the built dist (`npm run build` first): how long
 * `asg --help` and `asg config check` take from spawn to exit, how long a built-in MCP server
 * (`asg mcp-resources` over stdio) takes from spawn to its answer to `tools/list` and how much
 * memory it holds then, how long `asg up` takes from spawn to a 200 from `/health`, and the
 * RSS of the whole process tree (the mesh and its MCP children) at rest. Each measure runs
 * several times; the table shows the median. No model is called: the scripted provider's
 * variables point at a closed port.
 *
 * Part of `npm run bench`; alone: `node --import tsx test/bench/cold-start.ts [--runs N]
 * [--baseline DIR]`, which writes bench-results/cold-start-<timestamp>.json. `--baseline` names
 * another built checkout (e.g. of the main branch): its runs alternate with this one's, so that
 * both see the same machine, and the table shows both.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import {
  defaultConfig,
  processTree,
  REPO_ROOT,
  spawnProcess,
  tempDir,
  testEnvironment,
  type AsgProcess,
} from '../support/agent-process.js';
import { freePort } from '../support/ports.js';
import { percentile } from './stats.js';
import { printRows } from './table.js';

const DEFAULT_RUNS = 5;
/**
 * When the tree's memory is read, after the first healthy answer: shortly after the start, and
 * at rest — V8 gives the pages of an idle process's heap back some 10 s after its last burst of
 * work (its memory reducer), which the start is.
 */
const JUST_STARTED_MS = 3000;
const AT_REST_MS = 15_000;
const START_DEADLINE_MS = 60_000;

export interface ColdStartResults {
  runs: number;
  /** Milliseconds, median over the runs. */
  help_ms: number;
  config_check_ms: number;
  mcp_child_ready_ms: number;
  up_to_health_ms: number;
  /** The same through `npm start -- --config FILE`. */
  npm_start_to_health_ms: number;
  /** Megabytes, median over the runs. */
  mcp_child_rss_mb: number;
  /** The tree JUST_STARTED_MS after its first healthy answer. */
  started_tree_rss_mb: number;
  /** At rest: AT_REST_MS after the first healthy answer. */
  mesh_rss_mb: number;
  mcp_children_rss_mb: number;
  tree_rss_mb: number;
  /** The tree's PSS: shared pages counted once. */
  tree_pss_mb: number;
  /** Processes in the tree at rest (the mesh and its MCP children). */
  tree_processes: number;
  samples: Record<string, number[]>;
}

/** VmRSS of one process in MB, 0 once it is gone. */
function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * PSS of one process in MB: its resident pages with each shared page (the node binary, the
 * libraries) divided among the processes that map it, so that a sum over a tree counts them once.
 */
function pssMb(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

function median(samples: readonly number[]): number {
  return Math.round(percentile(samples, 50) * 10) / 10;
}

/** `bin/asg` of the checkout at `root`. */
const asgOf = (root: string) => join(root, 'bin', 'asg');

/** Milliseconds from spawn to exit of `node bin/asg <args>` in `root`; fails on a non-zero exit. */
async function timeCommand(root: string, args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [asgOf(root), ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`asg ${args.join(' ')} exited ${code}: ${stderr}`);
  return ms;
}

/**
 * `asg mcp-resources` over stdio: milliseconds from spawn to the answer to `tools/list`
 * (after a 2025-era `initialize`), and its RSS at that moment.
 */
async function mcpChild(root: string, dir: string): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [asgOf(root), 'mcp-resources', '--db', join(dir, 'resources.db')], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines = createInterface({ input: child.stdout });
  const answers = new Map<number, (message: unknown) => void>();
  lines.on('line', (line) => {
    try {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') answers.get(message.id)?.(message);
    } catch {
      // not JSON-RPC: ignored, as a client would
    }
  });
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`mcp-resources did not answer ${method} within ${START_DEADLINE_MS} ms`)),
        START_DEADLINE_MS,
      );
      answers.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await request(2, 'tools/list', {});
    return { ms: performance.now() - started, rss: rssMb(child.pid!) };
  } finally {
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.stdin.end();
    await exited;
  }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url);
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

interface TreeMemory {
  mesh: number;
  children: number;
  pss: number;
  processes: number;
}

function treeMemory(root: number): TreeMemory {
  const [mesh, ...children] = processTree(root);
  return {
    mesh: rssMb(mesh!),
    children: children.reduce((sum, pid) => sum + rssMb(pid), 0),
    pss: [mesh!, ...children].reduce((sum, pid) => sum + pssMb(pid), 0),
    processes: 1 + children.length,
  };
}

/** The test configuration (mcp-resources over stdio) on a free port, written to a new directory. */
async function testConfig(root: string): Promise<{ configFile: string; port: number }> {
  const dir = tempDir('asg-bench-cold-');
  const port = await freePort();
  const configFile = join(dir, 'agent.yaml');
  const resources = {
    name: 'resources',
    command: process.execPath,
    args: [asgOf(root), 'mcp-resources', '--db', join(dir, 'resources.db')],
  };
  writeFileSync(configFile, stringify({ ...defaultConfig(dir), port, mcp_servers: [resources] }));
  return { configFile, port };
}

/** Polls /health every 10 ms until it answers 200; the moment it did. */
async function untilHealthy(port: number, agent: AsgProcess, what: string): Promise<number> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await healthy(`http://127.0.0.1:${port}/health`))) {
    if (Date.now() > deadline)
      throw new Error(`${what} did not answer /health within ${START_DEADLINE_MS} ms:\n${agent.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now();
}

/** `npm start -- --config FILE` as a user runs it (npm in front of `asg up`): milliseconds from spawn to the first 200 from /health. */
async function npmStartToHealth(root: string): Promise<number> {
  const { configFile, port } = await testConfig(root);
  const started = performance.now();
  const agent = spawnProcess(
    'npm',
    ['--prefix', root, 'start', '--silent', '--', '--config', configFile],
    testEnvironment('http://127.0.0.1:9'),
  );
  try {
    return (await untilHealthy(port, agent, 'npm start')) - started;
  } finally {
    await agent.stop();
  }
}

/**
 * `asg up` with the test configuration (mcp-resources over stdio): milliseconds from spawn to
 * the first 200 from /health (polled every 10 ms), then the memory of its tree JUST_STARTED_MS
 * and AT_REST_MS later, with no request in between.
 */
async function upToHealth(root: string): Promise<{ ms: number; started: TreeMemory; rest: TreeMemory }> {
  const { configFile, port } = await testConfig(root);
  const started = performance.now();
  const agent = spawnProcess(process.execPath, [asgOf(root), 'up', '--config', configFile], testEnvironment('http://127.0.0.1:9'));
  try {
    const healthyAt = await untilHealthy(port, agent, 'asg up');
    const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, healthyAt + ms - performance.now())));
    await after(JUST_STARTED_MS);
    const justStarted = treeMemory(agent.pid);
    await after(AT_REST_MS);
    return { ms: healthyAt - started, started: justStarted, rest: treeMemory(agent.pid) };
  } finally {
    await agent.stop();
  }
}

type Samples = Record<string, number[]>;

function emptySamples(): Samples {
  return {
    help: [],
    config_check: [],
    mcp_child_ready: [],
    mcp_child_rss: [],
    up_to_health: [],
    npm_start_to_health: [],
    started_tree_rss: [],
    mesh_rss: [],
    mcp_children_rss: [],
    tree_rss: [],
    tree_pss: [],
    tree_processes: [],
  };
}

/** One run of every measure on the checkout at `root`, added to `samples`. */
async function measureOnce(root: string, samples: Samples, dir: string): Promise<void> {
  samples.help!.push(await timeCommand(root, ['--help']));
  samples.config_check!.push(await timeCommand(root, ['config', 'check', join(REPO_ROOT, 'config', 'agent.yaml')]));
  const child = await mcpChild(root, dir);
  samples.mcp_child_ready!.push(child.ms);
  samples.mcp_child_rss!.push(child.rss);
  const up = await upToHealth(root);
  samples.up_to_health!.push(up.ms);
  samples.npm_start_to_health!.push(await npmStartToHealth(root));
  samples.started_tree_rss!.push(up.started.mesh + up.started.children);
  samples.mesh_rss!.push(up.rest.mesh);
  samples.mcp_children_rss!.push(up.rest.children);
  samples.tree_rss!.push(up.rest.mesh + up.rest.children);
  samples.tree_pss!.push(up.rest.pss);
  samples.tree_processes!.push(up.rest.processes);
}

function resultsOf(runs: number, samples: Samples): ColdStartResults {
  return {
    runs,
    help_ms: median(samples.help!),
    config_check_ms: median(samples.config_check!),
    mcp_child_ready_ms: median(samples.mcp_child_ready!),
    up_to_health_ms: median(samples.up_to_health!),
    npm_start_to_health_ms: median(samples.npm_start_to_health!),
    mcp_child_rss_mb: median(samples.mcp_child_rss!),
    started_tree_rss_mb: median(samples.started_tree_rss!),
    mesh_rss_mb: median(samples.mesh_rss!),
    mcp_children_rss_mb: median(samples.mcp_children_rss!),
    tree_rss_mb: median(samples.tree_rss!),
    tree_pss_mb: median(samples.tree_pss!),
    tree_processes: median(samples.tree_processes!),
    samples,
  };
}

/**
 * Every measure `runs` times on this checkout and, when `baseline` names another built
 * checkout, as often on that one, the two alternating run by run.
 */
export async function coldStartBenchmarks(
  runs = DEFAULT_RUNS,
  baseline?: string,
): Promise<{ current: ColdStartResults; baseline?: ColdStartResults }> {
  const current = emptySamples();
  const before = emptySamples();
  const dir = tempDir('asg-bench-cold-');
  // One untimed round first: the file system cache, not the code, would otherwise be measured.
  await timeCommand(REPO_ROOT, ['--help']);
  if (baseline) await timeCommand(baseline, ['--help']);
  for (let run = 0; run < runs; run++) {
    if (baseline) await measureOnce(baseline, before, dir);
    await measureOnce(REPO_ROOT, current, dir);
  }
  return { current: resultsOf(runs, current), ...(baseline && { baseline: resultsOf(runs, before) }) };
}

const ROWS: Array<{ label: string; key: string; median: keyof ColdStartResults; digits: number; goal: string }> = [
  { label: 'asg --help, spawn to exit (ms)', key: 'help', median: 'help_ms', digits: 0, goal: '< 200' },
  {
    label: 'asg config check config/agent.yaml, spawn to exit (ms)',
    key: 'config_check',
    median: 'config_check_ms',
    digits: 0,
    goal: '< 200',
  },
  {
    label: 'asg mcp-resources (stdio), spawn to tools/list answered (ms)',
    key: 'mcp_child_ready',
    median: 'mcp_child_ready_ms',
    digits: 0,
    goal: '',
  },
  { label: 'asg mcp-resources RSS then (MB)', key: 'mcp_child_rss', median: 'mcp_child_rss_mb', digits: 1, goal: '' },
  { label: 'asg up, spawn to /health 200 (ms)', key: 'up_to_health', median: 'up_to_health_ms', digits: 0, goal: '< 1500' },
  {
    label: 'npm start -- --config FILE, spawn to /health 200 (ms)',
    key: 'npm_start_to_health',
    median: 'npm_start_to_health_ms',
    digits: 0,
    goal: '< 1500',
  },
  {
    label: `RSS ${JUST_STARTED_MS / 1000} s after /health: the whole tree (MB)`,
    key: 'started_tree_rss',
    median: 'started_tree_rss_mb',
    digits: 1,
    goal: '',
  },
  {
    label: `RSS at rest (${AT_REST_MS / 1000} s after): the mesh process (MB)`,
    key: 'mesh_rss',
    median: 'mesh_rss_mb',
    digits: 1,
    goal: '',
  },
  { label: 'RSS at rest: its MCP children (MB)', key: 'mcp_children_rss', median: 'mcp_children_rss_mb', digits: 1, goal: '' },
  { label: 'RSS at rest: the whole tree (MB)', key: 'tree_rss', median: 'tree_rss_mb', digits: 1, goal: '< 200' },
  { label: 'PSS at rest: the whole tree, shared pages once (MB)', key: 'tree_pss', median: 'tree_pss_mb', digits: 1, goal: '' },
  { label: 'processes in the tree at rest', key: 'tree_processes', median: 'tree_processes', digits: 0, goal: '' },
];

/** The medians (and ranges) of this checkout, beside the baseline's when there is one. */
export function printColdStartTable(results: { current: ColdStartResults; baseline?: ColdStartResults }): void {
  const cell = (of: ColdStartResults, row: (typeof ROWS)[number]) => {
    const values = of.samples[row.key]!;
    const value = of[row.median] as number;
    return [value.toFixed(row.digits), `${Math.min(...values).toFixed(row.digits)}–${Math.max(...values).toFixed(row.digits)}`];
  };
  const { current, baseline } = results;
  printRows(
    ['cold start and memory', ...(baseline ? ['baseline', 'range'] : []), 'median', 'range', 'goal'],
    ROWS.map((row) => [row.label, ...(baseline ? cell(baseline, row) : []), ...cell(current, row), row.goal]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: String(DEFAULT_RUNS) }, baseline: { type: 'string' } } });
  const runs = Number(values.runs);
  const results = await coldStartBenchmarks(runs, values.baseline);
  console.log(
    `cold start (${runs} runs${values.baseline ? `, alternating with the baseline ${values.baseline}` : ''}; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}):`,
  );
  printColdStartTable(results);
  const outDir = join(REPO_ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `cold-start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cores: cpus().length,
        load: loadavg()[0],
        baseline_dir: values.baseline ?? null,
        cold_start: results,
      },
      null,
      2,
    ),
  );
  console.log(`written: ${file}`);
}
