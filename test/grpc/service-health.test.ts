/**
 * Every gRPC service of the mesh serves grpc.health.v1 — SERVING once it started,
 * NOT_SERVING as soon as its stop begins, while it still answers (the drain delay) — over real
 * gRPC on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient } from '../../services/common/grpc/client.js';
import { GrpcStatus } from '../../services/common/grpc/errors.js';
import { HEALTH_DEFINITION } from '../../services/common/grpc/health.js';
import { createLogger } from '../../services/common/log.js';
import type { RunningService } from '../../services/common/service.js';
import { startA2aBridge } from '../../services/a2a-bridge/index.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import { startOrchestrator } from '../../services/orchestrator/index.js';
import { startToolBroker } from '../../services/tool-broker/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'asg-health-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// A drain delay long enough to look at the server between the start of its stop and its shutdown.
const config = configSchema.parse({ data_dir: dataDir, grpc: { drain_delay: '1500ms' } });
const listen = '127.0.0.1:0';
const log = (service: string) => createLogger(service);
// Nothing listens there: the orchestrator connects to its peers lazily and is ready without them.
const nowhere = '127.0.0.1:1';

const services: [string, string, () => Promise<RunningService>][] = [
  [
    'conversation-store',
    'asg.store.v1.ConversationStoreService',
    () => startConversationStore({ config: configSlice(config, 'conversationStore'), listen, log: log('store') }),
  ],
  [
    'llm-gateway',
    'asg.llm.v1.LlmGatewayService',
    () => startLlmGateway({ config: configSlice(config, 'llmGateway'), listen, log: log('llm'), env: {} }),
  ],
  [
    'tool-broker',
    'asg.tools.v1.ToolBrokerService',
    () => startToolBroker({ config: configSlice(config, 'toolBroker'), listen, log: log('tools') }),
  ],
  [
    'a2a-bridge',
    'asg.a2a.v1.A2ABridgeService',
    () => startA2aBridge({ config: configSlice(config, 'a2aBridge'), listen, log: log('a2a') }),
  ],
  [
    'orchestrator',
    'asg.orchestrator.v1.OrchestratorService',
    () =>
      startOrchestrator({
        config: configSlice(config, 'orchestrator'),
        listen,
        log: log('orchestrator'),
        peers: { conversationStore: nowhere, llmGateway: nowhere, toolBroker: nowhere, a2aBridge: nowhere },
      }),
  ],
];

describe('grpc.health.v1 on every service', () => {
  it.each(services)(
    '%s: SERVING after start; NOT_SERVING (Check and Watch) once its stop begins; gone after it',
    async (_name, serviceName, start) => {
      const service = await start();
      const client = createPromiseClient(HEALTH_DEFINITION, service.address, 'probe', 2000);
      try {
        expect(await client.Check({ service: '' })).toEqual({ status: 'SERVING' });
        expect(await client.Check({ service: serviceName })).toEqual({ status: 'SERVING' });

        const seen: string[] = [];
        const watching = (async () => {
          try {
            for await (const { status } of client.Watch({ service: serviceName }, { timeoutMs: 20_000 })) seen.push(status);
            return 'ended';
          } catch (error) {
            return error;
          }
        })();
        await until(() => seen.length === 1);

        const stopped = service.stop(Date.now() + 10_000);
        await until(() => seen.length === 2);
        // Still answering during the drain delay, with NOT_SERVING for the server and the service.
        expect(await client.Check({ service: '' })).toEqual({ status: 'NOT_SERVING' });
        expect(await client.Check({ service: serviceName })).toEqual({ status: 'NOT_SERVING' });
        await stopped;
        expect(seen).toEqual(['SERVING', 'NOT_SERVING']);
        expect(await watching).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
        // A new prober finds nobody there (the old channel would wait a moment for a restart: client.ts).
        const late = createPromiseClient(HEALTH_DEFINITION, service.address, 'probe', 2000);
        await expect(late.Check({ service: '' })).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
        late.close();
      } finally {
        client.close();
        await service.stop();
      }
    },
  );
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
