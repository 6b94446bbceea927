/**
 * The gateway's readiness, `GET /ready`, against a real conversation store and
 * orchestrator over gRPC on loopback: ready while both say SERVING, not ready (naming the
 * backend) while one stops or is gone, "draining" while the gateway itself stops — and
 * `/health` answering 200 all along.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import { createLogger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { startConversationStore } from '../services/conversation-store/index.js';
import { startOrchestrator } from '../services/orchestrator/index.js';
import { startGateway } from './index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'asg-ready-'));
// The orchestrator serves on for 2 s after its stop begins, NOT_SERVING: what a probe sees then.
const config = configSchema.parse({ data_dir: dataDir, host: '127.0.0.1', port: 0, grpc: { drain_delay: '2s' } });
const nowhere = '127.0.0.1:1';

let store: RunningService;
let orchestrator: RunningService;
let gateway: RunningService & { url: string };

beforeAll(async () => {
  store = await startConversationStore({
    config: configSlice(config, 'conversationStore'),
    listen: '127.0.0.1:0',
    log: createLogger('store'),
  });
  orchestrator = await startOrchestrator({
    config: configSlice(config, 'orchestrator'),
    listen: '127.0.0.1:0',
    log: createLogger('orchestrator'),
    peers: { conversationStore: store.address, llmGateway: nowhere, toolBroker: nowhere, a2aBridge: nowhere },
  });
  gateway = await startGateway({
    config: configSlice(config, 'gateway'),
    log: createLogger('gateway'),
    peers: { orchestrator: orchestrator.address, conversationStore: store.address },
  });
});

afterAll(async () => {
  await gateway?.stop();
  await orchestrator?.stop();
  await store?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A GET on its own connection (fetch would not send another Host). */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(gateway.url + path, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(body) as Record<string, unknown> }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls `/ready` until `accept` takes its answer. */
async function readyUntil(accept: (answer: { status: number; json: Record<string, unknown> }) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await get('/ready');
    if (accept(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`/ready never answered as expected; last: ${answer.status} ${JSON.stringify(answer.json)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('GET /ready', () => {
  it('is 200 {"status":"ready"} when the orchestrator and the store are SERVING, for any Host (probes use pod IPs)', async () => {
    expect(await get('/ready')).toEqual({ status: 200, json: { status: 'ready' } });
    expect(await get('/ready', { host: 'pod-10-0-0-7.internal' })).toEqual({ status: 200, json: { status: 'ready' } });
    // Another route still checks the Host.
    expect((await get('/tools', { host: 'pod-10-0-0-7.internal' })).status).toBe(421);
  });

  it('is 503 naming the orchestrator once its stop begins (NOT_SERVING), and once it is gone; /health stays 200', async () => {
    const stopped = orchestrator.stop(Date.now() + 10_000);
    const stopping = await readyUntil((answer) => answer.status === 503);
    expect(stopping.json).toMatchObject({ status: 'not_ready', backends: { orchestrator: 'NOT_SERVING', conversation_store: 'SERVING' } });
    expect(stopping.json.error).toBe(
      'not ready: the orchestrator is not serving (starting, stopping, or its database is down); the log says why',
    );
    await stopped;
    const gone = await readyUntil((answer) => (answer.json.backends as Record<string, string>).orchestrator !== 'NOT_SERVING');
    expect(gone.status).toBe(503);
    // Down: refused at once, or (the channel waiting a moment for a restart) no answer in time.
    expect(['UNREACHABLE', 'NO_ANSWER']).toContain((gone.json.backends as Record<string, string>).orchestrator);
    expect(await get('/health')).toEqual({ status: 200, json: { status: 'ok' } });
  });

  it('is 503 "draining" while the gateway stops, when /health still answers 200 and other requests 503', async () => {
    // A request in flight keeps the drain going: a body announced but not all sent.
    const socket = net.connect(gateway.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /conversations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mess');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const draining = gateway.stop(Date.now() + 10_000);
    try {
      const answer = await readyUntil((ready) => ready.json.status === 'draining');
      expect(answer.status).toBe(503);
      expect(await get('/health')).toEqual({ status: 200, json: { status: 'ok' } });
      expect((await get('/conversations')).status).toBe(503);
    } finally {
      socket.destroy();
      await draining;
    }
  });
});
