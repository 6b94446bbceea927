/**
 * Every subscription releases what it took when its client goes away, against a real mesh
 * (bin/asg up, started with --expose-gc so that SIGUSR2 collects its garbage): thousands of
 * clients that open an event stream — REST SSE events, tRPC conversation.events, tRPC
 * approvals.pending, A2A tasks/resubscribe — read its first message and hang up. Afterwards the
 * gateway's streams to the store and the store's watchers are back to where they were, the
 * agent's heap after a collection is within a few MB of where it began for each kind (an
 * aborted subscription that kept 50 KB would add 20 MB at the CI size), and its RSS is within
 * 50 MB of its start. The same event streams refuse a foreign Origin with 403.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { collectGarbage, MB, openWatches, residentBytes } from '../support/memory.js';
import { rawRequest } from '../support/raw-http.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { until } from '../support/until.js';

/** Aborted subscriptions of each kind: enough at the CI size for a 50 KB leak to show as 20 MB. */
const ABORTS = sized(400, 5000);
/** Clients at once: a browser tab reconnecting, several tabs, a flaky network. */
const PARALLEL = 4;
/** What a kind's aborts may leave in the heap after a collection (compiled code, grown tables). */
const HEAP_SLACK = 8 * MB;
/** What the whole run may leave in the resident set after a collection. */
const RSS_SLACK = 50 * MB;

let model: ScriptedModelServer;
let agent: AgentProcess;
let conversationId: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, nodeArgs: ['--expose-gc'] });
  // A conversation that waits for an approval: its A2A task is input-required (not terminal), and approvals.pending has one.
  const created = await post(`${agent.url}/conversations`, { message: 'add resource stream-1 with value 1' });
  expect(created.body.result.waiting_approval).toBe(true);
  conversationId = created.body.conversation.id;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

interface StreamKind {
  name: string;
  method: 'GET' | 'POST';
  path: () => string;
  headers?: Record<string, string>;
  body?: () => string;
}

const trpcInput = (value: unknown) => encodeURIComponent(JSON.stringify(value));

const KINDS: StreamKind[] = [
  { name: 'REST SSE events', method: 'GET', path: () => `/conversations/${conversationId}/events` },
  { name: 'tRPC conversation.events', method: 'GET', path: () => `/trpc/conversation.events?input=${trpcInput({ conversationId })}` },
  { name: 'tRPC approvals.pending', method: 'GET', path: () => '/trpc/approvals.pending' },
  {
    name: 'A2A tasks/resubscribe',
    method: 'POST',
    path: () => '/a2a',
    headers: { 'content-type': 'application/json' },
    body: () => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id: conversationId } }),
  },
];

/**
 * Opens one event stream, waits for its first message (the subscription is open on the server
 * then) and hangs up. Fails when the answer is not an event stream.
 */
function openAndAbort(kind: StreamKind): Promise<void> {
  const target = new URL(agent.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: kind.method,
        path: kind.path(),
        headers: { accept: 'text/event-stream', ...kind.headers },
        timeout: 10_000,
      },
      (res) => {
        const type = String(res.headers['content-type']);
        if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
          req.destroy();
          reject(new Error(`${kind.name}: ${res.statusCode} ${type}, not an event stream`));
          return;
        }
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${kind.name}: no first message within 10 s`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      // Our own hang-up, once the first message was read.
      if (error.code !== 'ECONNRESET') reject(error);
    });
    req.end(kind.body?.());
  });
}

async function abortMany(kind: StreamKind, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      await openAndAbort(kind);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

describe('aborted event streams release everything they took', () => {
  it(
    `${ABORTS} aborted subscriptions of each kind leave the streams, the heap and the RSS where they were`,
    async () => {
      // Every code path once, so that what it compiles and caches for good is in the baseline.
      for (const kind of KINDS) await abortMany(kind, 50);
      const idle = await until('the warm-up streams to be released', async () => {
        const now = await openWatches(agent.url);
        return now.gateway === 0 && now;
      });
      const start = await collectGarbage(agent);

      let heapBefore = start.heapUsed;
      for (const kind of KINDS) {
        await abortMany(kind, ABORTS);
        // Nothing stays open: not the gateway's streams to the store, not the store's watchers.
        await until(`${kind.name}: every stream released`, async () => {
          const now = await openWatches(agent.url);
          return now.gateway === 0 && now.store === idle.store;
        });
        const after = await collectGarbage(agent);
        const grown = after.heapUsed - heapBefore;
        expect(grown, `${kind.name}: heap grew ${(grown / MB).toFixed(1)} MB over ${ABORTS} aborted subscriptions`).toBeLessThan(
          HEAP_SLACK,
        );
        heapBefore = after.heapUsed;
      }

      // Pages V8 and malloc gave back after a collection leave the resident set a moment later.
      const settled = await until(
        'the RSS after a collection to be within its bound',
        async () => {
          const { rss } = await collectGarbage(agent);
          return rss - start.rss < RSS_SLACK && rss;
        },
        30_000,
        500,
      ).catch(() => residentBytes(agent.pid));
      expect(settled - start.rss, `RSS from ${(start.rss / MB).toFixed(0)} MB to ${(settled / MB).toFixed(0)} MB`).toBeLessThan(RSS_SLACK);
    },
    sized(120_000, 900_000),
  );
});

describe('event streams and a foreign Origin (auth off)', () => {
  it('each event stream refuses a foreign Origin with 403; same-origin and Origin-less clients are served', async () => {
    const own = agent.url;
    for (const kind of KINDS) {
      const send = (origin?: string) =>
        new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
          const target = new URL(agent.url);
          const req = httpRequest(
            {
              host: target.hostname,
              port: target.port,
              method: kind.method,
              path: kind.path(),
              headers: { accept: 'text/event-stream', ...kind.headers, ...(origin && { origin }) },
              timeout: 10_000,
            },
            (res) => {
              const type = String(res.headers['content-type']);
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                body += chunk;
                // A stream stays open: its first message is enough.
                if (type.startsWith('text/event-stream')) req.destroy();
              });
              const done = () => resolve({ status: res.statusCode ?? 0, type, body });
              res.on('end', done);
              res.on('close', done);
            },
          );
          req.on('timeout', () => req.destroy(new Error(`${kind.name}: no answer within 10 s`)));
          req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
          req.end(kind.body?.());
        });
      for (const origin of ['https://evil.example', 'null']) {
        const refused = await send(origin);
        expect(refused.status, `${kind.name} from ${origin}`).toBe(403);
        expect(JSON.parse(refused.body).error).toContain('server.cors.allowed_origins');
      }
      for (const origin of [own, undefined]) {
        const served = await send(origin);
        expect(served.status, `${kind.name} from ${origin ?? 'no Origin'}`).toBe(200);
        expect(served.type, kind.name).toMatch(/^text\/event-stream/);
      }
    }
    // Refused before any subscription was opened, and those served were released.
    await until('the served streams to be released', async () => (await openWatches(agent.url)).gateway === 0);
    // Reading stays open to any origin: a page cannot read the answer without CORS headers.
    expect(
      (await rawRequest(agent.url, { path: `/conversations/${conversationId}`, headers: { origin: 'https://evil.example' } })).status,
    ).toBe(200);
  });
});
