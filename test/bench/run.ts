/**
 * `npm run bench`: latency of the real mesh (`bin/asg up` as a separate process, driven
 * over HTTP with keep-alive) with a scripted model that answers instantly, and the cost of
 * appending a message to a short and to a very long conversation; then turn latency and
 * throughput on the store's SQLite and PostgreSQL drivers (store-drivers.ts) and the
 * throughput of 1, 2 and 3 replicas on one PostgreSQL database (replicas.ts), both skipped
 * on PostgreSQL, with one line saying why, when no server is reachable; how the store grows (growth.ts: bytes per
 * read and approval turn on each driver, a SQLite file after 10,000 turns with and without pruning); last, cold start and
 * memory at rest (cold-start.ts); and the performance goals table, row for row (goal-measures.ts: the overhead
 * beside the Agents SDK, throughput with 1 and 4 clients, GET under 20 clients, 1,000 concurrent
 * conversations). `--only goals` runs just the sections that table needs. Prints tables and
 * writes bench-results/bench-<timestamp>.json. Bounded: fixed iteration counts or durations,
 * and every server and database it starts is stopped or dropped at the end.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ConversationStoreServiceService, MessageRole, ConversationStatus } from '../../gen/ts/asg/store/v1/store.js';
import { parseConfig } from '../../services/common/config/load.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient } from '../../services/common/grpc/client.js';
import { createLogger } from '../../services/common/log.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { REPO_ROOT, startAgent, tempDir } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { resourceAgentScript, startScriptedModel } from '../support/scripted-model.js';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { ChatRole, LlmGatewayServiceService } from '../../gen/ts/asg/llm/v1/llm.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import { planCompaction } from '../../services/orchestrator/domain/compaction.js';
import { assistantCall, assistantText, toolResult, userMessage } from '../../services/orchestrator/domain/messages.js';
import { estimateTokens } from '../../services/orchestrator/domain/tokens.js';
import { leanGet } from './http-client.js';
import { summarize, timed, type Summary } from './stats.js';
import { postgresUnavailable } from './bench-database.js';
import { replicaBenchmarks, printReplicaTable } from './replicas.js';
import { printDriverTable, storeDriverBenchmarks } from './store-drivers.js';
import { growthBenchmarks, printGrowthTable } from './growth.js';
import { coldStartBenchmarks, printColdStartTable } from './cold-start.js';
import { printRows } from './table.js';
import { LOAD } from './workloads.js';
import { concurrentConversations, concurrentGets, peerOverhead, readThroughput } from './goal-measures.js';
import { printGoalsTable, type GoalsInputs } from './goals-table.js';
import type { ThroughputResult } from './throughput.js';
import { parseArgs } from 'node:util';

const GET_SAMPLES = 2000;
const TURN_SAMPLES = 200;
const APPEND_SAMPLES = 1000;

async function buildConversationOf51(url: string): Promise<string> {
  const created = await post(`${url}/conversations`, {});
  const id = created.body.conversation.id as string;
  // 1 system + 4 (user, call, rejected result, the model's answer to the "no") + 11 × 4 (user,
  // call, result, answer) + 2 (user, answer) = 51
  const stop = await post(`${url}/conversations/${id}/messages`, { message: 'add resource bench-seed with value 1' });
  await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: false });
  for (let i = 0; i < 11; i++) await post(`${url}/conversations/${id}/messages`, { message: 'list resources' });
  const last = await post(`${url}/conversations/${id}/messages`, { message: 'hello' });
  const count = last.body.conversation.messages.length;
  if (count !== 51) throw new Error(`expected a conversation of 51 messages, built ${count}`);
  return id;
}

interface MeshResults {
  rows: Record<string, Summary>;
  /** GET /conversations/:id of the 51-message conversation by 20 concurrent clients. */
  get20: Summary & { errors: number };
  throughput: { one: ThroughputResult; four: ThroughputResult };
}

async function meshBenchmarks(): Promise<MeshResults> {
  const model = await startScriptedModel(resourceAgentScript);
  // Default log level (info): one request line per HTTP request, as in production.
  const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  try {
    const id = await buildConversationOf51(agent.url);
    const fetchOne = async () => {
      const response = await leanGet(`${agent.url}/conversations/${id}`);
      if (response.status !== 200) throw new Error(`GET answered ${response.status}`);
    };
    for (let i = 0; i < 200; i++) await fetchOne(); // warm-up
    const getSamples: number[] = [];
    for (let i = 0; i < GET_SAMPLES; i++) getSamples.push(await timed(fetchOne));
    const get20 = await concurrentGets(`${agent.url}/conversations/${id}`, 20, GET_SAMPLES / 20);

    let turnConversation = '';
    const readTurns: number[] = [];
    for (let i = 0; i < TURN_SAMPLES + 20; i++) {
      // A fresh conversation every 10 turns keeps the history (and so the model request) small and bounded.
      if (i % 10 === 0) turnConversation = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
      const ms = await timed(() => post(`${agent.url}/conversations/${turnConversation}/messages`, { message: 'list resources' }));
      if (i >= 20) readTurns.push(ms);
    }

    const stopAndGo: number[] = [];
    for (let i = 0; i < TURN_SAMPLES + 20; i++) {
      const conversation = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
      let uuid = '';
      const stopMs = await timed(async () => {
        uuid = (await post(`${agent.url}/conversations/${conversation}/messages`, { message: `add resource bench-${i} with value ${i}` }))
          .body.result.approval.uuid;
      });
      const goMs = await timed(() => post(`${agent.url}/approvals/${uuid}`, { approved: true }));
      if (i >= 20) stopAndGo.push(stopMs + goMs);
    }
    const throughput = await readThroughput(agent.url);
    return {
      rows: {
        'GET /conversations/:id (51 messages)': summarize(getSamples),
        'GET /conversations/:id (51 messages), 20 concurrent clients': get20,
        'read turn (list: 2 model calls, 1 tool call)': summarize(readTurns),
        'stop → approve → go (2 requests, 2 model calls, 1 tool call)': summarize(stopAndGo),
      },
      get20,
      throughput,
    };
  } finally {
    await agent.stop();
    await model.close();
  }
}

async function appendBenchmarks(): Promise<{ short: Summary; long: Summary; ratio: number }> {
  const dir = tempDir('asg-bench-');
  const config = parseConfig({ data_dir: join(dir, 'data') }, 'bench');
  const store = await startConversationStore({
    config: configSlice(config, 'conversationStore'),
    listen: '127.0.0.1:0',
    log: createLogger('conversation-store'),
  });
  const client = createPromiseClient(ConversationStoreServiceService, store.address, 'bench', 10_000);
  const append = (conversationId: string, content: string) =>
    client.appendMessages({
      conversationId,
      messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content }],
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
    });
  try {
    const short = (await client.createConversation({ sessionId: 'be0c0000', systemPrompt: 'bench' })).conversation!.id;
    const long = (await client.createConversation({ sessionId: 'be0c0000', systemPrompt: 'bench' })).conversation!.id;
    for (let i = 0; i < 9; i++) await append(short, `filler ${i}`);
    for (let i = 0; i < 9999; i += 100) {
      await client.appendMessages({
        conversationId: long,
        messages: Array.from({ length: Math.min(100, 9999 - i) }, (_, k) => ({
          role: MessageRole.MESSAGE_ROLE_USER,
          content: `filler ${i + k}`,
        })),
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
    }
    // Alternate the two so that both see the same machine conditions. The short one is
    // reset to length 10 with a new conversation every 50 appends.
    const shortSamples: number[] = [];
    const longSamples: number[] = [];
    let shortId = short;
    for (let i = 0; i < APPEND_SAMPLES; i++) {
      if (i % 50 === 0 && i > 0) {
        shortId = (await client.createConversation({ sessionId: 'be0c0000', systemPrompt: 'bench' })).conversation!.id;
        for (let k = 0; k < 9; k++) await append(shortId, `filler ${k}`);
      }
      shortSamples.push(await timed(() => append(shortId, `message ${i}`)));
      longSamples.push(await timed(() => append(long, `message ${i}`)));
    }
    const shortSummary = summarize(shortSamples);
    const longSummary = summarize(longSamples);
    return { short: shortSummary, long: longSummary, ratio: Math.round((longSummary.p50 / shortSummary.p50) * 100) / 100 };
  } finally {
    client.close();
    await store.stop();
  }
}

/**
 * Orchestration overhead: turns of a 10-node sequential pipeline and of a
 * 10-branch parallel node whose llm nodes answer text at once, next to a simple-mode text
 * turn. Per node = (pipeline turn − simple turn) / 10: what a tree node costs beyond its model
 * call, its finish's checkpoint (one store round trip) included. `turns` per shape, the first
 * 20 (or a sixth, when fewer) left out as warm-up.
 */
async function orchestrationOverhead(
  turns = 120,
  shapes: readonly ('read' | 'simple' | 'sequential' | 'parallel')[] = ['simple', 'sequential', 'parallel'],
): Promise<[string, Summary][]> {
  const model = await startScriptedModel(resourceAgentScript);
  const nodes = Array.from({ length: 10 }, (_, i) => ({
    name: `step-${i}`,
    type: 'llm',
    output_key: `out${i}`,
    prompt: `You are step ${i}.`,
  }));
  const trees = {
    read: undefined,
    simple: undefined,
    sequential: { name: 'pipeline', type: 'sequential', agents: nodes },
    parallel: { name: 'fan-out', type: 'parallel', agents: nodes },
  };
  const warmUp = Math.min(20, Math.floor(turns / 6));
  const results: [string, Summary][] = [];
  try {
    for (const label of shapes) {
      const tree = trees[label];
      const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, ...(tree ? { config: { agent: tree } } : {}) });
      try {
        const samples: number[] = [];
        let conversation = '';
        for (let i = 0; i < turns; i++) {
          if (i % 10 === 0) conversation = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
          const message = label === 'read' ? 'list resources' : 'hello';
          const ms = await timed(() => post(`${agent.url}/conversations/${conversation}/messages`, { message }));
          if (i >= warmUp) samples.push(ms);
        }
        results.push([
          label === 'read'
            ? 'read turn, simple mode (2 model calls, 1 tool call)'
            : label === 'simple'
              ? 'text turn, simple mode (1 model call)'
              : `text turn, 10-node ${label} (10 model calls)`,
          summarize(samples),
        ]);
      } finally {
        await agent.stop();
      }
    }
  } finally {
    await model.close();
  }
  return results;
}

/**
 * The added latency of one A2A hop: a turn on agent A whose model delegates to
 * agent B (a2a_agent-b, B answering with one instant model call) against the same turn on A
 * with an MCP read instead of the delegation. Both agents are whole meshes in their own
 * processes; B's own text turn is measured for reference.
 */
async function a2aHop(): Promise<[string, Summary][]> {
  const model = await startScriptedModel((request) => {
    if (/You are agent-b\./.test(request.system)) return { text: 'hi from b' };
    if (request.toolResults.length > 0) return { text: 'ok' };
    if (request.lastUserText === 'delegate') return { toolCalls: [{ name: 'a2a_agent-b', args: { message: 'hello' } }] };
    return { toolCalls: [{ name: 'resources_list', args: {} }] };
  });
  const b = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { name: 'agent-b', prompt: 'You are agent-b.' } });
  const a = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { name: 'agent-a', prompt: 'You are agent-a.', a2a: [{ name: 'agent-b', url: `${b.url}/a2a` }] },
  });
  const turns = async (url: string, message: string): Promise<Summary> => {
    const samples: number[] = [];
    let conversation = '';
    for (let i = 0; i < 120; i++) {
      if (i % 10 === 0) conversation = (await post(`${url}/conversations`, {})).body.conversation.id;
      const ms = await timed(() => post(`${url}/conversations/${conversation}/messages`, { message }));
      if (i >= 20) samples.push(ms);
    }
    return summarize(samples);
  };
  try {
    return [
      ['A: turn delegating to B over A2A (2 model calls + 1 hop)', await turns(a.url, 'delegate')],
      ['A: the same turn with an MCP read instead (2 model calls + 1 MCP call)', await turns(a.url, 'list')],
      ['B: its own text turn (1 model call)', await turns(b.url, 'hello')],
    ];
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await model.close();
  }
}

/**
 * The llm-gateway's own cost: the same Gemini request made directly with the AI SDK and
 * through Generate over gRPC, both against the scripted model in this process.
 */
async function llmGatewayOverhead(): Promise<[string, Summary][]> {
  const model = await startScriptedModel(resourceAgentScript);
  const dir = tempDir('asg-bench-');
  const config = parseConfig({ data_dir: join(dir, 'data') }, 'bench');
  const env = { ...process.env, GEMINI_BASE_URL: model.geminiBaseUrl, GEMINI_API_KEY: 'bench-key-0123456789' };
  const gateway = await startLlmGateway({
    config: configSlice(config, 'llmGateway'),
    listen: '127.0.0.1:0',
    log: createLogger('llm-gateway'),
    env,
  });
  const client = createPromiseClient(LlmGatewayServiceService, gateway.address, 'bench', 10_000);
  const schema = { type: 'object', properties: { pattern: { type: 'string' } } };
  const direct = createGoogleGenerativeAI({ apiKey: 'bench-key-0123456789', baseURL: model.geminiBaseUrl })('gemini-2.5-flash');
  try {
    const viaSdk = () =>
      generateText({
        model: direct,
        system: 'You manage resources.',
        messages: [{ role: 'user', content: 'list resources' }],
        tools: { resources_list: tool({ description: 'List resources', inputSchema: jsonSchema(schema) }) },
        maxRetries: 0,
        stopWhen: stepCountIs(1),
      });
    const viaGateway = () =>
      client.generate({
        model: 'gemini-2.5-flash',
        systemPrompt: 'You manage resources.',
        messages: [{ role: ChatRole.CHAT_ROLE_USER, text: 'list resources', toolCalls: [], toolResults: [] }],
        tools: [{ name: 'resources_list', description: 'List resources', inputSchema: schema }],
      });
    for (let i = 0; i < 100; i++) {
      await viaSdk();
      await viaGateway();
    }
    const sdk: number[] = [];
    const grpc: number[] = [];
    for (let i = 0; i < 1000; i++) {
      sdk.push(await timed(viaSdk));
      grpc.push(await timed(viaGateway));
    }
    return [
      ['model call, AI SDK directly', summarize(sdk)],
      ['model call through llm-gateway (gRPC)', summarize(grpc)],
    ];
  } finally {
    client.close();
    await gateway.stop();
    await model.close();
  }
}

/** planCompaction over a 10,000-message conversation (2,500 turns), the pure part of a compaction. */
function compactionTime(): [string, Summary] {
  const messages = [
    { role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'You manage resources.' },
    ...Array.from({ length: 2500 }, (_, i) => {
      const call = { id: `call-${i}`, name: 'resources_list' };
      return [
        userMessage(`question ${i}`),
        assistantCall(call, {}),
        toolResult(call, {}, `{"resources":[],"count":${i}}`, false),
        assistantText(`answer ${i}`),
      ];
    }).flat(),
  ]
    .slice(0, 10_000)
    .map((message, index) => ({ ...message, id: `m${index}`, seq: index + 1, createdAt: undefined }));
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    samples.push(
      (() => {
        const started = performance.now();
        const plan = planCompaction({ messages, strategy: 'delete-old', budget: 20_000, fixedTokens: 500, count: estimateTokens });
        if (!plan) throw new Error('expected a compaction');
        return performance.now() - started;
      })(),
    );
  }
  return ['compaction plan, 10,000 messages (delete-old)', summarize(samples)];
}

/**
 * Where a read turn's time goes: the same turns with spans exported to a local OTLP
 * receiver, reported as the median duration of each hop. Tracing adds its own cost, so
 * these medians explain the untraced latencies above rather than add up to them exactly.
 */
async function hopBreakdown(): Promise<[string, Summary][]> {
  const model = await startScriptedModel(resourceAgentScript);
  const receiver = await startOtlpReceiver();
  const agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '100000',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5000',
    },
  });
  try {
    let conversation = '';
    for (let i = 0; i < 100; i++) {
      if (i % 10 === 0) conversation = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
      await post(`${agent.url}/conversations/${conversation}/messages`, { message: 'list resources' });
    }
  } finally {
    await agent.stop();
    await model.close();
    await receiver.close();
  }
  const kinds: Record<number, string> = { 2: 'server', 3: 'client' };
  const byHop = new Map<string, number[]>();
  for (const span of receiver.spans) {
    if (span.name.endsWith('CreateConversation') || span.name === 'POST /conversations') continue;
    const key = `${span.attributes['asg.service']} ${kinds[span.kind] ?? span.kind}: ${span.name}`;
    byHop.set(key, [...(byHop.get(key) ?? []), span.durationMs]);
  }
  return [...byHop]
    .filter(([, samples]) => samples.length >= 50)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, samples]) => [key, summarize(samples)]);
}

function printTable(rows: [string, Summary][]): void {
  printRows(
    ['benchmark', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms'],
    rows.map(([name, s]) => [name, String(s.n), s.p50.toFixed(2), s.p90.toFixed(2), s.p99.toFixed(2), s.mean.toFixed(2)]),
  );
}

/** The 1-minute load average: the bench shares its machine, and the figures depend on it. */
function loadAverage(): string {
  return loadavg()[0]!.toFixed(2);
}

/**
 * `--only tree-checkpoints`: a text turn of a 10-node sequential tree beside simple-mode read
 * and text turns, `--turns` each (default 30): the per-node overhead, whose store part is each
 * node's checkpoint, and what a simple turn costs beside it. Short on purpose: the machine is
 * often shared.
 */
async function treeCheckpointOverhead(turns: number): Promise<void> {
  const rows = await orchestrationOverhead(turns, ['read', 'simple', 'sequential']);
  console.log(`
10-node sequential tree against simple turns (${turns} turns each, ${cpus().length} cores, load average ${loadAverage()}):`);
  printTable(rows);
  const perNode = Math.round(((rows[2]![1].p50 - rows[1]![1].p50) / 10) * 1000) / 1000;
  console.log(`per node (p50, its checkpoint included): ${perNode} ms over a simple turn`);
}

async function main(): Promise<void> {
  // `--only goals`: the rows of the goals table and nothing else (a shorter run).
  const { values } = parseArgs({ options: { only: { type: 'string' }, turns: { type: 'string' } } });
  if (values.only === 'tree-checkpoints') {
    await treeCheckpointOverhead(Number(values.turns ?? 30));
    return;
  }
  const all = values.only === undefined;
  if (!all && values.only !== 'goals') throw new Error(`--only takes "goals" or "tree-checkpoints", not "${values.only}"`);
  const out: Record<string, unknown> = { date: new Date().toISOString(), node: process.version };
  const mesh = await meshBenchmarks();
  const append = await appendBenchmarks();
  const rows: [string, Summary][] = [
    ...Object.entries(mesh.rows),
    ['append message at length 10 (gRPC)', append.short],
    ['append message at length 10,000 (gRPC)', append.long],
  ];
  printTable(rows);
  console.log(`\nappend cost ratio (p50 at 10,000 / p50 at 10): ${append.ratio}`);
  console.log(
    `read turns/s, sequential: 1 client ${mesh.throughput.one.turnsPerSecond}, 4 clients ${mesh.throughput.four.turnsPerSecond} (failures ${mesh.throughput.one.failures + mesh.throughput.four.failures})`,
  );
  Object.assign(out, { results: Object.fromEntries(rows), append_ratio: append.ratio, read_throughput: mesh.throughput });
  const cores = cpus().length;
  if (all) {
    const llm = await llmGatewayOverhead();
    const compaction = compactionTime();
    console.log('\nllm-gateway and compaction:');
    printTable([...llm, compaction]);
    const overhead = Math.round((llm[1]![1].p50 - llm[0]![1].p50) * 1000) / 1000;
    console.log(`\nllm-gateway overhead per call (p50 through gRPC − p50 direct): ${overhead} ms`);
    const orchestration = await orchestrationOverhead();
    console.log('\norchestration:');
    printTable(orchestration);
    const simpleTurn = orchestration[0]![1].p50;
    const perNode = Object.fromEntries(
      orchestration.slice(1).map(([name, summary]) => [name, Math.round(((summary.p50 - simpleTurn) / 10) * 1000) / 1000]),
    );
    for (const [name, ms] of Object.entries(perNode)) console.log(`per node, ${name}: ${ms} ms over a simple turn, per node`);
    const a2a = await a2aHop();
    console.log('\nA2A:');
    printTable(a2a);
    const a2aHopMs = Math.round((a2a[0]![1].p50 - a2a[1]![1].p50) * 1000) / 1000;
    console.log(`added latency of one A2A hop (p50 delegating − p50 with an MCP read): ${a2aHopMs} ms`);
    const hops = await hopBreakdown();
    console.log('\nread turn, traced (median per hop, ms):');
    printTable(hops);
    const postgresSkipped = await postgresUnavailable();
    if (postgresSkipped) console.log(`\nPostgreSQL sections skipped (store drivers on SQLite only, no replicas): ${postgresSkipped}`);
    const drivers = await storeDriverBenchmarks({ postgres: postgresSkipped === undefined });
    console.log(
      `\nconversation store drivers (latency: 1 client; throughput: ${LOAD.clients} clients for ${LOAD.durationMs / 1000} s; ${cores} cores, load average ${loadAverage()}):`,
    );
    printDriverTable(drivers);
    const growth = await growthBenchmarks({ postgres: postgresSkipped === undefined });
    console.log('\nstore growth (bytes stored per turn; a SQLite file after a long history):');
    printGrowthTable(growth);
    const replicas = postgresSkipped ? [] : await replicaBenchmarks();
    if (replicas.length > 0) {
      console.log(
        `\nreplicas on one PostgreSQL database (${LOAD.clients} clients round robin over the replicas for ${LOAD.durationMs / 1000} s; ${cores} cores, load average ${loadAverage()}):`,
      );
      printReplicaTable(replicas);
    }
    Object.assign(out, {
      read_turn_hops: Object.fromEntries(hops),
      llm_gateway: Object.fromEntries(llm),
      llm_gateway_overhead_ms: overhead,
      compaction: compaction[1],
      orchestration: Object.fromEntries(orchestration),
      orchestration_per_node_ms: perNode,
      a2a: Object.fromEntries(a2a),
      a2a_hop_ms: a2aHopMs,
      load: LOAD,
      postgres_skipped: postgresSkipped ?? null,
      store_drivers: drivers,
      growth,
      replicas,
    });
  }
  const burst = await concurrentConversations();
  console.log(
    `\n${burst.conversations} concurrent conversations, model answering after ${burst.modelDelayMs} ms: ${burst.errors} errors, wall ${burst.wallMs} ms, p50 ${burst.latency.p50.toFixed(0)} ms, p99 ${burst.latency.p99.toFixed(0)} ms, peak tree RSS ${burst.peakTreeRssMb} MB${burst.errorSamples.length ? `; e.g. ${burst.errorSamples[0]}` : ''}`,
  );
  const peers = await peerOverhead();
  if ('systems' in peers) {
    console.log(`\npeer workloads (compare.sh's W1/W2, N=${peers.n}; overhead = p50 (p99) minus the floor's):`);
    printRows(
      ['system', 'W1 p50', 'W1 p99', 'W2 p50', 'W2 p99', 'W1 over p50', 'W1 over p99', 'W2 over p50', 'W2 over p99'],
      Object.entries(peers.systems).map(([name, run]) => {
        const o = peers.overhead[name]!;
        return [name, ...[run.W1.p50, run.W1.p99, run.W2.p50, run.W2.p99, o.W1.p50, o.W1.p99, o.W2.p50, o.W2.p99].map((v) => v.toFixed(2))];
      }),
    );
  }
  if (peers.skipped) console.log(`overhead ratio to the Agents SDK not measured: ${peers.skipped}`);
  const coldStart = await coldStartBenchmarks();
  console.log(`\ncold start and memory (median of ${coldStart.current.runs} runs; ${cores} cores, load average ${loadAverage()}):`);
  printColdStartTable(coldStart);
  const inputs: GoalsInputs = {
    mesh: mesh.rows,
    get20: mesh.get20,
    throughput: mesh.throughput,
    appendRatio: append.ratio,
    burst,
    peers,
    coldStart: coldStart.current,
  };
  console.log(`\nperformance goals (${cores} cores, load average ${loadAverage()}):`);
  const goals = printGoalsTable(inputs);
  Object.assign(out, { cores, goals, concurrent_conversations: burst, peer_overhead: peers, cold_start: coldStart.current });
  const outDir = join(REPO_ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`written: ${file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
