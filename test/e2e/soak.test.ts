/**
 * A mixed workload soak against a real mesh (bin/asg up, started with --expose-gc so that
 * SIGUSR2 collects its garbage), every face at once from a few clients: turns over REST (text,
 * a tool call, an approval), reads, A2A sends and reads, the OpenAI-compatible face with and
 * without streaming, tRPC queries, MCP sessions opened and closed, turns watched over SSE to
 * their end, and event streams (REST, tRPC, A2A resubscribe) whose clients hang up after the
 * first message. After each round the gateway holds no event stream open and the store no
 * watcher of it; at the end the agent's heap after a collection and the resident memory of
 * the whole tree (the agent and the MCP server it started) are within bounds of where they
 * began after a warm-up. Before the event streams released their store streams, each round
 * of 2,500 such requests kept about 180 MB of the tree; since, the full size ends within
 * 70 MB of its start, what is left being V8's optimized code of paths that got hot and free
 * pages V8 and malloc keep (a single reading swings by ±60 MB; it is read after a collection,
 * until it settles).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processTree, startAgent, type AgentProcess } from '../support/agent-process.js';
import { collectGarbage, MB, openWatches, treeResidentBytes } from '../support/memory.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { until } from '../support/until.js';

const ROUNDS = sized(2, 6);
const PER_ROUND = sized(250, 2500);
const CLIENTS = 4;
/** What the rounds may add to the heap after a collection: compiled code of paths that got hot, caches at their bounds. */
const HEAP_SLACK = 20 * MB;
/** What they may add to the tree's resident memory: V8's and malloc's free pages kept for reuse, the MCP server's own heap. */
const TREE_SLACK = 100 * MB;
/** Every request of the soak has a deadline. */
const REQUEST_MS = 30_000;

let model: ScriptedModelServer;
let agent: AgentProcess;
/** A conversation that waits for an approval: its A2A task can be resubscribed to. */
let waitingId: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, nodeArgs: ['--expose-gc'] });
  waitingId = (await send('POST', '/conversations', { message: 'add resource soak-waiting with value 1' })).conversation.id;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

/** One JSON request; fails on any status but 2xx. */
async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const answer = await fetch(`${agent.url}${path}`, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(REQUEST_MS),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text.slice(0, 200)}`);
  return text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text;
}

/** Opens an event stream, waits for its first message and hangs up. */
function openAndHangUp(method: 'GET' | 'POST', path: string, body?: unknown): Promise<void> {
  const target = new URL(agent.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path,
        headers: { accept: 'text/event-stream', ...(body !== undefined && { 'content-type': 'application/json' }) },
        timeout: REQUEST_MS,
      },
      (res) => {
        if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
          req.destroy();
          reject(new Error(`${method} ${path}: ${res.statusCode} ${res.headers['content-type']}, not an event stream`));
          return;
        }
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no first message in time`)));
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Reads a conversation's events over SSE while a turn runs in it, until the turn ended. */
async function watchedTurn(): Promise<void> {
  const id = (await send('POST', '/conversations', {})).conversation.id;
  const stop = new AbortController();
  const deadline = setTimeout(() => stop.abort(new Error('the watched turn did not end in time')), REQUEST_MS);
  try {
    const stream = await fetch(`${agent.url}/conversations/${id}/events`, {
      headers: { accept: 'text/event-stream' },
      signal: stop.signal,
    });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await reader.read()).value ?? '';
    await send('POST', `/conversations/${id}/messages`, { message: 'list resources' });
    while (!text.includes('event: turn_ended')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended before the turn did');
      text += value;
    }
  } finally {
    clearTimeout(deadline);
    stop.abort();
  }
}

let counter = 0;
const a2a = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: ++counter, method, params });
const chat = (stream: boolean) => ({ model: 'test-agent', stream, messages: [{ role: 'user', content: 'hello' }] });
const trpcInput = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const MCP_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
};

/** One of each kind of request a client of the agent makes, in turn. */
const OPERATIONS: (() => Promise<unknown>)[] = [
  () => send('POST', '/conversations', { message: 'hello' }),
  () => send('POST', '/conversations', { message: 'list resources' }),
  async () => {
    // Added and removed again, both approved: the MCP server's data stays the same size, so
    // that what a listing returns (and every turn that lists) does not grow with the soak.
    const name = `soak-${++counter}`;
    const added = await send('POST', '/conversations', { message: `add resource ${name} with value 1` });
    await send('POST', `/approvals/${added.result.approval.uuid}`, { approved: true });
    const removal = await send('POST', `/conversations/${added.conversation.id}/messages`, { message: `remove resource ${name}` });
    await send('POST', `/approvals/${removal.result.approval.uuid}`, { approved: true });
  },
  async () => {
    await send('GET', `/conversations/${waitingId}`);
    await send('GET', '/conversations?limit=20');
    await send('GET', '/approvals?limit=20');
    await send('GET', '/tools');
  },
  async () => {
    const sent = await send(
      'POST',
      '/a2a',
      a2a('message/send', { message: { role: 'user', parts: [{ kind: 'text', text: 'hello' }], messageId: `m-${++counter}` } }),
    );
    await send('POST', '/a2a', a2a('tasks/get', { id: sent.result.id }));
  },
  () => send('POST', '/v1/chat/completions', chat(false)),
  () => send('POST', '/v1/chat/completions', chat(true)),
  () => send('GET', `/trpc/conversations.list,tools.list?batch=1&input=${trpcInput({ 0: {}, 1: {} })}`),
  async () => {
    const opened = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(MCP_INITIALIZE),
      signal: AbortSignal.timeout(REQUEST_MS),
    });
    await opened.text();
    const session = opened.headers.get('mcp-session-id');
    if (!session) throw new Error(`MCP initialize opened no session: ${opened.status}`);
    await send('DELETE', '/mcp', undefined, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
  },
  watchedTurn,
  () => openAndHangUp('GET', `/conversations/${waitingId}/events`),
  () => openAndHangUp('GET', `/trpc/conversation.events?input=${trpcInput({ conversationId: waitingId })}`),
  () => openAndHangUp('GET', '/trpc/approvals.pending'),
  () => openAndHangUp('POST', '/a2a', a2a('tasks/resubscribe', { id: waitingId })),
];

/** `count` operations, the kinds in turn, from CLIENTS clients at once. */
async function workload(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        const operation = OPERATIONS[next % OPERATIONS.length]!;
        next += 1;
        await operation();
      }
    }),
  );
}

const treeBytes = () => treeResidentBytes(processTree(agent.pid));

describe('soak: a mixed workload', () => {
  it(
    `${ROUNDS} rounds of ${PER_ROUND} mixed requests leave the streams released and the heap and the tree's memory within bounds`,
    async () => {
      // Every path once or twice, so that what it compiles and caches for good is in the baseline.
      await workload(OPERATIONS.length * 3);
      const idle = await until('the warm-up streams to be released', async () => {
        const now = await openWatches(agent.url);
        return now.gateway === 0 && now;
      });
      const start = await collectGarbage(agent);
      const treeAtStart = treeBytes();

      for (let round = 1; round <= ROUNDS; round += 1) {
        await workload(PER_ROUND);
        await until(`round ${round}: every event stream released`, async () => {
          const now = await openWatches(agent.url);
          return now.gateway === 0 && now.store === idle.store;
        });
      }

      const end = await collectGarbage(agent);
      expect(
        end.heapUsed - start.heapUsed,
        `heap from ${(start.heapUsed / MB).toFixed(1)} MB to ${(end.heapUsed / MB).toFixed(1)} MB`,
      ).toBeLessThan(HEAP_SLACK);
      // Pages V8 and malloc gave back after a collection leave the resident set a moment later.
      let tree = treeBytes();
      await until(
        "the tree's memory after a collection to be within its bound",
        async () => {
          await collectGarbage(agent);
          tree = treeBytes();
          return tree - treeAtStart < TREE_SLACK;
        },
        30_000,
        500,
      ).catch(() => undefined);
      expect(tree - treeAtStart, `tree RSS from ${(treeAtStart / MB).toFixed(0)} MB to ${(tree / MB).toFixed(0)} MB`).toBeLessThan(
        TREE_SLACK,
      );
    },
    sized(180_000, 1_800_000),
  );
});
