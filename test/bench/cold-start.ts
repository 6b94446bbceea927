/**
 * Cold start and memory (issue 16), on the built dist (`npm run build` first): how long
 * `asg --help` and `asg config check` take from spawn to exit, how long a built-in MCP server
 * (`asg mcp-resources` over stdio) takes from spawn to its answer to `tools/list` and how much
 * memory it holds then, how long `asg up` takes from spawn to a 200 from `/health`, and the
 * RSS of the whole process tree (the mesh and its MCP children) at rest. Each measure runs
 * several times; the table shows the median. No model is called: the scripted provider's
 * variables point at a closed port.
 *
 * Part of `npm run bench`; alone: `node --import tsx test/bench/cold-start.ts [runs]`, which
 * writes bench-results/cold-start-<timestamp>.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { ASG, defaultConfig, processTree, REPO_ROOT, spawnProcess, tempDir, testEnvironment } from '../support/agent-process.js';
import { freePort } from '../support/ports.js';
import { percentile } from './stats.js';
import { printRows } from './table.js';

const DEFAULT_RUNS = 5;
/** How long the mesh is left alone after its first healthy answer before its memory is read. */
const REST_MS = 3000;
const START_DEADLINE_MS = 60_000;

export interface ColdStartResults {
  runs: number;
  /** Milliseconds, median over the runs. */
  help_ms: number;
  config_check_ms: number;
  mcp_child_ready_ms: number;
  up_to_health_ms: number;
  /** Megabytes, median over the runs. */
  mcp_child_rss_mb: number;
  mesh_rss_mb: number;
  mcp_children_rss_mb: number;
  tree_rss_mb: number;
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

function median(samples: readonly number[]): number {
  return Math.round(percentile(samples, 50) * 10) / 10;
}

/** Milliseconds from spawn to exit of `node bin/asg <args>`; fails on a non-zero exit. */
async function timeCommand(args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [ASG, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
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
async function mcpChild(dir: string): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [ASG, 'mcp-resources', '--db', join(dir, 'resources.db')], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
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
      const timer = setTimeout(() => reject(new Error(`mcp-resources did not answer ${method} within ${START_DEADLINE_MS} ms`)), START_DEADLINE_MS);
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

/**
 * `asg up` with the test configuration (mcp-resources over stdio): milliseconds from spawn to
 * the first 200 from /health (polled every 10 ms), then the RSS of its tree after REST_MS.
 */
async function upToHealth(): Promise<{ ms: number; mesh: number; children: number; processes: number }> {
  const dir = tempDir('asg-bench-cold-');
  const port = await freePort();
  const configFile = join(dir, 'agent.yaml');
  writeFileSync(configFile, stringify({ ...defaultConfig(dir), port }));
  const started = performance.now();
  const agent = spawnProcess(process.execPath, [ASG, 'up', '--config', configFile], testEnvironment('http://127.0.0.1:9'));
  try {
    const deadline = Date.now() + START_DEADLINE_MS;
    while (!(await healthy(`http://127.0.0.1:${port}/health`))) {
      if (Date.now() > deadline) throw new Error(`asg up did not answer /health within ${START_DEADLINE_MS} ms:\n${agent.output().slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, REST_MS));
    const [mesh, ...children] = processTree(agent.pid);
    return { ms, mesh: rssMb(mesh!), children: children.reduce((sum, pid) => sum + rssMb(pid), 0), processes: 1 + children.length };
  } finally {
    await agent.stop();
  }
}

export async function coldStartBenchmarks(runs = DEFAULT_RUNS): Promise<ColdStartResults> {
  const samples: Record<string, number[]> = { help: [], config_check: [], mcp_child_ready: [], mcp_child_rss: [], up_to_health: [], mesh_rss: [], mcp_children_rss: [], tree_rss: [], tree_processes: [] };
  const dir = tempDir('asg-bench-cold-');
  const configFile = join(REPO_ROOT, 'config', 'agent.yaml');
  // One untimed round first: the file system cache, not the code, would otherwise be measured.
  await timeCommand(['--help']);
  for (let run = 0; run < runs; run++) {
    samples.help!.push(await timeCommand(['--help']));
    samples.config_check!.push(await timeCommand(['config', 'check', configFile]));
    const child = await mcpChild(dir);
    samples.mcp_child_ready!.push(child.ms);
    samples.mcp_child_rss!.push(child.rss);
    const up = await upToHealth();
    samples.up_to_health!.push(up.ms);
    samples.mesh_rss!.push(up.mesh);
    samples.mcp_children_rss!.push(up.children);
    samples.tree_rss!.push(up.mesh + up.children);
    samples.tree_processes!.push(up.processes);
  }
  return {
    runs,
    help_ms: median(samples.help!),
    config_check_ms: median(samples.config_check!),
    mcp_child_ready_ms: median(samples.mcp_child_ready!),
    up_to_health_ms: median(samples.up_to_health!),
    mcp_child_rss_mb: median(samples.mcp_child_rss!),
    mesh_rss_mb: median(samples.mesh_rss!),
    mcp_children_rss_mb: median(samples.mcp_children_rss!),
    tree_rss_mb: median(samples.tree_rss!),
    tree_processes: median(samples.tree_processes!),
    samples,
  };
}

export function printColdStartTable(results: ColdStartResults): void {
  const range = (key: string, digits = 0) => {
    const values = results.samples[key]!;
    return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  };
  printRows(
    ['cold start and memory', 'median', 'range', 'goal'],
    [
      ['asg --help, spawn to exit (ms)', results.help_ms.toFixed(0), range('help'), '< 200'],
      ['asg config check config/agent.yaml, spawn to exit (ms)', results.config_check_ms.toFixed(0), range('config_check'), '< 200'],
      ['asg mcp-resources (stdio), spawn to tools/list answered (ms)', results.mcp_child_ready_ms.toFixed(0), range('mcp_child_ready'), ''],
      ['asg mcp-resources RSS then (MB)', results.mcp_child_rss_mb.toFixed(1), range('mcp_child_rss', 1), ''],
      ['asg up, spawn to /health 200 (ms)', results.up_to_health_ms.toFixed(0), range('up_to_health'), '< 1500'],
      [`RSS at rest ${REST_MS / 1000} s later: the mesh process (MB)`, results.mesh_rss_mb.toFixed(1), range('mesh_rss', 1), ''],
      ['RSS at rest: its MCP children (MB)', results.mcp_children_rss_mb.toFixed(1), range('mcp_children_rss', 1), ''],
      ['RSS at rest: the whole tree (MB)', results.tree_rss_mb.toFixed(1), range('tree_rss', 1), '< 200'],
      ['processes in the tree at rest', String(results.tree_processes), range('tree_processes'), ''],
    ],
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const runs = Number(process.argv[2] ?? DEFAULT_RUNS);
  const results = await coldStartBenchmarks(runs);
  console.log(`cold start (${runs} runs; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}):`);
  printColdStartTable(results);
  const outDir = join(REPO_ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `cold-start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, load: loadavg()[0], cold_start: results }, null, 2));
  console.log(`written: ${file}`);
}
