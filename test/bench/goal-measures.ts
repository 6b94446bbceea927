/**
 * The rows of the performance goals table that the other sections do not measure: the overhead per turn
 * beside the OpenAI Agents SDK (the peers' own scripts, as `compare.sh` runs them), read-turn
 * throughput with one and four clients, `GET /conversations/:id` under 20 concurrent clients,
 * and 1,000 concurrent conversations against a model that answers after 200 ms, with the peak
 * RSS of the whole process tree. Every server binds 127.0.0.1, every run is bounded by a count or
 * a duration, and every process started here is stopped here.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { processTree, REPO_ROOT, startAgent } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel } from '../support/scripted-model.js';
import { concurrentTurns } from './load.js';
import { summarize, type Summary } from './stats.js';
import type { ThroughputResult } from './throughput.js';

/** `../shared/peer-bench` beside the checkout, or ASG_PEER_BENCH. */
export const PEER_BENCH = process.env.ASG_PEER_BENCH ?? resolve(REPO_ROOT, '..', 'shared', 'peer-bench');
const PEER_N = Number(process.env.ASG_PEER_N ?? 200);
const PEER_DEADLINE_MS = 600_000;
/** A conversation of the burst that has no answer after this counts as an error (the turn's own deadline, turn_timeout, is 300 s). */
const BURST_DEADLINE_MS = 120_000;

interface PeerRun {
  W1: { p50: number; p99: number };
  W2: { p50: number; p99: number };
}

export interface OverheadResults {
  n: number;
  /** Why the Agents SDK was not run (its packages are installed by the first `compare.sh`). */
  skipped?: string;
  systems: Record<string, PeerRun>;
  /** ms: a system's p50 (p99) minus the floor's p50 (p99), W1 and W2. */
  overhead: Record<string, { W1: { p50: number; p99: number }; W2: { p50: number; p99: number } }>;
  /** The project's overhead over the Agents SDK's. */
  ratio?: { W1: { p50: number; p99: number }; W2: { p50: number; p99: number } };
}

/** Runs one script to its end and returns its last stdout line as JSON. */
function runScript(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<PeerRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), PEER_DEADLINE_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-1500)}`));
      try {
        resolveRun(JSON.parse(last) as PeerRun);
      } catch {
        reject(new Error(`${args.join(' ')} printed no JSON line: ${last.slice(0, 300)}`));
      }
    });
  });
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * W1 and W2 as `compare.sh` runs them: one fake LLM (OpenAI wire format, instant answers), then
 * the floor (the two model calls by plain fetch), the Agents SDK, and the project through its
 * REST API (`bench-turns.mjs`: `npm start` of this checkout, the built-in MCP server over
 * stdio), one after the other. Overhead = p50 (p99) minus the floor's p50 (p99).
 */
export async function peerOverhead(): Promise<OverheadResults | { skipped: string }> {
  if (!existsSync(join(PEER_BENCH, 'compare.sh'))) return { skipped: `no peer benchmark at ${PEER_BENCH} (set ASG_PEER_BENCH)` };
  const fake = spawn(process.execPath, [join(PEER_BENCH, 'fake-llm.mjs')], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const port = await new Promise<string>((resolvePort, reject) => {
      createInterface({ input: fake.stdout }).once('line', (line) => resolvePort(line.trim()));
      fake.once('exit', () => reject(new Error('the fake LLM exited before it listened')));
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      FAKE_LLM_PORT: port,
      N: String(PEER_N),
      WARM: '20',
      OPENAI_AGENTS_DISABLE_TRACING: '1',
    };
    for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LANGSMITH_TRACING', 'LANGCHAIN_TRACING_V2']) delete env[name];
    // compare.sh warms the fake LLM (and the machine's loopback) first the same way.
    await runScript([join(PEER_BENCH, 'floor.mjs')], PEER_BENCH, { ...env, N: '1500', WARM: '0' });
    const systems: Record<string, PeerRun> = {};
    systems.floor = await runScript(['--expose-gc', join(PEER_BENCH, 'floor.mjs')], PEER_BENCH, env);
    const peersInstalled = existsSync(join(PEER_BENCH, 'node_modules', '@openai', 'agents'));
    if (peersInstalled) systems['oai-agents'] = await runScript(['--expose-gc', join(PEER_BENCH, 'oai-agents.mjs')], PEER_BENCH, env);
    systems.project = await runScript([join(PEER_BENCH, 'bench-turns.mjs')], REPO_ROOT, env);
    const floor = systems.floor;
    const overhead: OverheadResults['overhead'] = {};
    for (const [name, run] of Object.entries(systems)) {
      overhead[name] = {
        W1: { p50: round(run.W1.p50 - floor.W1.p50), p99: round(run.W1.p99 - floor.W1.p99) },
        W2: { p50: round(run.W2.p50 - floor.W2.p50), p99: round(run.W2.p99 - floor.W2.p99) },
      };
    }
    const peer = overhead['oai-agents'];
    const project = overhead.project!;
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    return {
      n: PEER_N,
      systems,
      overhead,
      ...(peer
        ? {
            ratio: {
              W1: { p50: ratio(project.W1.p50, peer.W1.p50), p99: ratio(project.W1.p99, peer.W1.p99) },
              W2: { p50: ratio(project.W2.p50, peer.W2.p50), p99: ratio(project.W2.p99, peer.W2.p99) },
            },
          }
        : { skipped: `the Agents SDK is not installed in ${PEER_BENCH} (the first \`compare.sh\` run installs it)` }),
    };
  } finally {
    fake.kill('SIGTERM');
  }
}

/** Read turns ("list resources": 2 model calls, 1 MCP call) by 1 and by 4 clients, each one turn after the other. */
export async function readThroughput(url: string, durationMs = 8000): Promise<{ one: ThroughputResult; four: ThroughputResult }> {
  await concurrentTurns({ targets: [url], clients: 4, durationMs: 1500, message: 'list resources' }); // warm-up
  const one = await concurrentTurns({ targets: [url], clients: 1, durationMs, message: 'list resources' });
  const four = await concurrentTurns({ targets: [url], clients: 4, durationMs, message: 'list resources' });
  return { one, four };
}

/** `clients` concurrent clients, each on its own keep-alive connection, each sending `perClient` GETs of `url` one after the other. */
export async function concurrentGets(url: string, clients: number, perClient: number): Promise<Summary & { errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const samples: number[] = [];
  let errors = 0;
  const get = () =>
    new Promise<number>((resolveGet, reject) => {
      const req = request(url, { agent, method: 'GET' }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolveGet(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
      req.on('error', reject);
      req.end();
    });
  const client = async (measure: boolean, count: number) => {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const status = await get().catch(() => 0);
      if (status !== 200) errors += 1;
      else if (measure) samples.push(performance.now() - started);
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, () => client(false, 20)));
    errors = 0;
    await Promise.all(Array.from({ length: clients }, () => client(true, perClient)));
    return { ...summarize(samples), errors };
  } finally {
    agent.destroy();
  }
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

export interface BurstResults {
  conversations: number;
  modelDelayMs: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  /** Latency of each conversation's one request (create + the whole read turn). */
  latency: Summary;
  /** The most the whole tree (mesh and MCP children) held, sampled every 50 ms during the burst. */
  peakTreeRssMb: number;
  /** The same tree just before the burst. */
  beforeTreeRssMb: number;
}

/**
 * `conversations` conversations started at once, each `POST /conversations` with "list
 * resources" (a read turn: two model calls, one MCP call), against a scripted model that
 * answers every call after `modelDelayMs`: the ideal wall time is two model delays.
 */
export async function concurrentConversations(conversations = 1000, modelDelayMs = 200): Promise<BurstResults> {
  const model = await startScriptedModel(async (request) => {
    await new Promise((resolveDelay) => setTimeout(resolveDelay, modelDelayMs));
    return resourceAgentScript(request);
  });
  // Default log level (info): one request line per HTTP request, as in production.
  const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  const tree = () => processTree(agent.pid).reduce((sum, pid) => sum + rssMb(pid), 0);
  try {
    // A few turns first, so that the code is loaded and compiled as in a running deployment.
    for (let i = 0; i < 5; i++) await post(`${agent.url}/conversations`, { message: 'list resources' });
    const beforeTreeRssMb = tree();
    let peak = beforeTreeRssMb;
    const sampler = setInterval(() => (peak = Math.max(peak, tree())), 50);
    const samples: number[] = [];
    const errorSamples: string[] = [];
    let errors = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: conversations }, async () => {
        const t0 = performance.now();
        try {
          const response = await fetch(`${agent.url}/conversations`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ message: 'list resources' }),
            signal: AbortSignal.timeout(BURST_DEADLINE_MS),
          });
          const body = (await response.json()) as { result?: { waiting_approval?: boolean } };
          if (response.status !== 201 || body.result?.waiting_approval !== false)
            throw new Error(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
          samples.push(performance.now() - t0);
        } catch (error) {
          errors += 1;
          // fetch's own message ("fetch failed") says nothing: the cause (a connect timeout, a reset) does.
          const cause =
            error instanceof Error && error.cause instanceof Error
              ? `: ${(error.cause as Error & { code?: string }).code ?? error.cause.message}`
              : '';
          if (errorSamples.length < 5) errorSamples.push(`${error instanceof Error ? error.message : String(error)}${cause}`);
        }
      }),
    );
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, tree());
    return {
      conversations,
      modelDelayMs,
      errors,
      errorSamples,
      wallMs: Math.round(wallMs),
      latency: summarize(samples),
      peakTreeRssMb: Math.round(peak * 10) / 10,
      beforeTreeRssMb: Math.round(beforeTreeRssMb * 10) / 10,
    };
  } finally {
    await agent.stop();
    await model.close();
  }
}
