/**
 * A CPU profile of the mesh process over sequential read turns, for
 * docs/performance.md: `node --import tsx test/bench/profile-turns.ts [--turns N]` (on the built
 * dist). Starts `asg up` under `node --cpu-prof` with the scripted Gemini model and the built-in
 * resources server over stdio, runs warm-up turns, then N read turns ("list resources": two model
 * calls, one MCP call; a new conversation every 10), and reports: the CPU time the mesh and its
 * MCP child spent per turn (utime + stime from /proc, which a loaded machine does not inflate
 * as it does wall time), the profile's self time of the measured window by package, and — from a
 * second, traced run — how many gRPC calls of each method one turn makes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { processTree, startAgent, tempDir } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { resourceAgentScript, startScriptedModel } from '../support/scripted-model.js';

const { values } = parseArgs({ options: { turns: { type: 'string', default: '300' } } });
const TURNS = Number(values.turns);
const TICK_MS = 1000 / 100; // USER_HZ

/** utime + stime of a process in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function turns(url: string, count: number): Promise<void> {
  let conversation = '';
  for (let i = 0; i < count; i++) {
    if (i % 10 === 0) conversation = (await post(`${url}/conversations`, {})).body.conversation.id;
    const answered = await post(`${url}/conversations/${conversation}/messages`, { message: 'list resources' });
    if (answered.status !== 200) throw new Error(`turn answered ${answered.status}`);
  }
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Self time by package (or our folder, or Node internals) of the samples between two offsets from the profile's start. */
function selfTimeByPlace(file: string, fromMs: number, toMs: number): Array<[string, number]> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const place = (node: Node): string => {
    const { url, functionName } = node.callFrame;
    if (!url) return `(${functionName || 'native'})`;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1]!;
    const ours = /\/(?:dist\/)?((?:services|gateway|cli|gen)\/[^/]+(?:\/[^/.]+)?)/.exec(url);
    if (ours) return ours[1]!;
    return url.startsWith('node:') ? `node:${url.slice(5).split('/').slice(0, 2).join('/')}` : url;
  };
  const totals = new Map<string, number>();
  let at = 0;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index]! / 1000;
    if (at < fromMs || at > toMs) return;
    const node = nodes.get(id)!;
    if (node.callFrame.functionName === '(idle)') return;
    totals.set(place(node), (totals.get(place(node)) ?? 0) + profile.timeDeltas[index]! / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/**
 * The part of a turn each sample belongs to: the first frame from the leaf up that one of these
 * matches (so a socket write under undici's fetch counts for the model client, a protobuf encode
 * under the store's client for protobuf).
 */
const COMPONENTS: Array<[string, RegExp]> = [
  ['protobuf encode/decode (generated code, @bufbuild/protobuf)', /\/gen\/ts\/|@bufbuild\/protobuf/],
  ['conversation store (SQLite driver, better-sqlite3, rows)', /services\/conversation-store\/|better-sqlite3/],
  ['MCP: tool broker, MCP client, stdio to the child', /services\/tool-broker\/|@modelcontextprotocol\/|re2-wasm/],
  [
    'model client: AI SDK, its zod, fetch (undici) and its socket writes',
    /services\/llm-gateway\/|\/ai\/dist\/|@ai-sdk\/|\/zod\/|undici|bootstrap\/web\/exposed/,
  ],
  ['orchestrator (turn loop, domain)', /services\/orchestrator\//],
  [
    'in-process gRPC hops: metadata, deadlines, spans, OpenTelemetry API',
    /services\/common\/grpc\/|services\/common\/telemetry|@opentelemetry\//,
  ],
  [
    'HTTP edge: Node HTTP server, Express, gateway, response writes',
    /_http_server|_http_outgoing|_http_common|express|body-parser|\/gateway\//,
  ],
  ['logging', /services\/common\/log|pino/],
];

function selfTimeByComponent(file: string, fromMs: number, toMs: number): Array<[string, number]> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const componentOf = (leaf: Node): string => {
    if (leaf.callFrame.functionName === '(garbage collector)') return 'garbage collection';
    for (let node: Node | undefined = leaf; node; node = parents.has(node.id) ? nodes.get(parents.get(node.id)!) : undefined) {
      const where = node.callFrame.url;
      const match = COMPONENTS.find(([, pattern]) => pattern.test(where));
      if (match) return match[0];
    }
    return 'Node machinery with no project frame above (timers, microtasks, streams, async hooks)';
  };
  const totals = new Map<string, number>();
  let at = 0;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index]! / 1000;
    if (at < fromMs || at > toMs) return;
    const node = nodes.get(id)!;
    if (node.callFrame.functionName === '(idle)') return;
    const component = componentOf(node);
    totals.set(component, (totals.get(component) ?? 0) + profile.timeDeltas[index]! / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

const model = await startScriptedModel(resourceAgentScript);
const dir = tempDir('asg-profile-');
const spawned = performance.now();
const agent = await startAgent({
  geminiBaseUrl: model.geminiBaseUrl,
  nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200'],
});
let window: [number, number];
let cpu: { mesh: number; children: number };
try {
  await turns(agent.url, 60);
  const [, ...children] = processTree(agent.pid);
  const before = { mesh: cpuMs(agent.pid), children: children.reduce((sum, pid) => sum + cpuMs(pid), 0) };
  const started = performance.now();
  await turns(agent.url, TURNS);
  const ended = performance.now();
  cpu = { mesh: cpuMs(agent.pid) - before.mesh, children: children.reduce((sum, pid) => sum + cpuMs(pid), 0) - before.children };
  window = [started - spawned, ended - spawned];
  console.log(`${TURNS} read turns in ${(ended - started).toFixed(0)} ms: ${((ended - started) / TURNS).toFixed(2)} ms per turn wall`);
  console.log(`CPU per turn: mesh ${(cpu.mesh / TURNS).toFixed(2)} ms, MCP child ${(cpu.children / TURNS).toFixed(2)} ms`);
} finally {
  await agent.stop();
}
const file = join(dir, readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))!);
const places = selfTimeByPlace(file, window[0], window[1]);
const busy = places.reduce((sum, [, ms]) => sum + ms, 0);
console.log(`\nmesh main thread, measured window (${file}): busy ${busy.toFixed(0)} ms; self time by place, scaled to the CPU per turn:`);
for (const [name, ms] of places.slice(0, 40))
  console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)} %  ${((ms / busy) * (cpu.mesh / TURNS)).toFixed(3).padStart(6)} ms  ${name}`);

console.log('\nthe same by component (the first matching frame from the leaf up):');
for (const [name, ms] of selfTimeByComponent(file, window[0], window[1]))
  console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)} %  ${((ms / busy) * (cpu.mesh / TURNS)).toFixed(3).padStart(6)} ms  ${name}`);

// gRPC calls per turn, from the client spans of a traced run.
const receiver = await startOtlpReceiver();
const traced = await startAgent({
  geminiBaseUrl: model.geminiBaseUrl,
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '200' },
});
try {
  await turns(traced.url, 20);
  await new Promise((resolve) => setTimeout(resolve, 1500));
} finally {
  await traced.stop();
  await model.close();
  await receiver.close();
}
const calls = new Map<string, number>();
for (const span of receiver.spans) if (span.kind === 3) calls.set(span.name, (calls.get(span.name) ?? 0) + 1);
console.log('\ngRPC calls per read turn (client spans of 20 traced turns, 2 new conversations included):');
for (const [name, count] of [...calls].sort((a, b) => b[1] - a[1])) console.log(`${(count / 20).toFixed(2).padStart(6)}  ${name}`);
process.exit(0);
