/**
 * An orchestrator replica that stops hands its unfinished runs back. Two
 * orchestrators (A and B) over one conversation store (SQLite), one llm-gateway with a
 * scripted model, over real gRPC on loopback. A turn runs on A with the model slow; A is
 * stopped with a short grace: a second before the deadline it stops the turn, releases its
 * lease and answers its caller UNAVAILABLE; B takes the run over at its next look and
 * finishes it. The conversation holds the user's message and one answer, no more.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient } from '../../services/common/grpc/client.js';
import type { Logger } from '../../services/common/log.js';
import type { RunningService } from '../../services/common/service.js';
import { startA2aBridge } from '../../services/a2a-bridge/index.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import { startOrchestrator } from '../../services/orchestrator/index.js';
import { startToolBroker } from '../../services/tool-broker/index.js';
import { TEST_GEMINI_KEY } from '../support/agent-process.js';
import { recordingLogger } from '../support/recording-logger.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const dataDir = mkdtempSync(join(tmpdir(), 'asg-hand-back-'));
const config = configSchema.parse({ data_dir: dataDir, runs: { lease_ttl: '1s', takeover_interval: '100ms' } });
const listen = '127.0.0.1:0';

let model: ScriptedModelServer;
const started: RunningService[] = [];
let a: RunningService;
let b: RunningService;
let store: RunningService;
const lines: string[] = [];

const recording = (service: string): Logger => recordingLogger(service, lines);

beforeAll(async () => {
  const asked = new Set<string>();
  // The first time a message is asked: an answer only after 30 s (the stop lands first); after that at once.
  model = await startScriptedModel(async (request) => {
    if (!asked.has(request.lastUserText)) {
      asked.add(request.lastUserText);
      return { hang: true };
    }
    return { text: `answer to ${request.lastUserText}` };
  });
  store = await startConversationStore({ config: configSlice(config, 'conversationStore'), listen, log: recording('store') });
  const llm = await startLlmGateway({
    config: configSlice(config, 'llmGateway'),
    listen,
    log: recording('llm'),
    env: { GEMINI_BASE_URL: model.geminiBaseUrl, GEMINI_API_KEY: TEST_GEMINI_KEY },
  });
  const tools = await startToolBroker({ config: configSlice(config, 'toolBroker'), listen, log: recording('tools') });
  const bridge = await startA2aBridge({ config: configSlice(config, 'a2aBridge'), listen, log: recording('a2a') });
  started.push(store, llm, tools, bridge);
  const peers = { conversationStore: store.address, llmGateway: llm.address, toolBroker: tools.address, a2aBridge: bridge.address };
  a = await startOrchestrator({ config: configSlice(config, 'orchestrator'), listen, log: recording('orchestrator-a'), peers });
  b = await startOrchestrator({ config: configSlice(config, 'orchestrator'), listen, log: recording('orchestrator-b'), peers });
  started.push(a, b);
}, 60_000);

afterAll(async () => {
  for (const service of started.reverse()) await service.stop(Date.now() + 2_000).catch(() => undefined);
  await model?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a stopping orchestrator hands its runs back', () => {
  it('the turn still running near the deadline is handed back, its caller told where the answer will be; the other replica finishes it', async () => {
    const onA = createPromiseClient(OrchestratorServiceService, a.address, 'test', 30_000);
    const storeClient = createPromiseClient(ConversationStoreServiceService, store.address, 'test', 5_000);
    const { conversation } = await onA.createConversation({});
    const id = conversation!.id;
    const turn = onA.sendMessage({ conversationId: id, message: 'hand me back' }).then(
      (reply) => reply.unsettled ?? 'answered',
      (error: { code: number; message: string }) => error,
    );
    await until('the turn at the model', () => model.requests.some((request) => request.lastUserText === 'hand me back'));

    // A's stop: its grace ends in 1.5 s, so the run goes back half a second from now.
    await a.stop(Date.now() + 1_500);
    // Its caller is answered, not cut: the run was handed back, and the conversation will show its answer.
    expect(await turn).toMatchObject({ handedBack: true, conversationId: id });
    expect(lines.some((line) => line.startsWith('orchestrator-a warn run handed back on stop') && line.includes('"released":true'))).toBe(
      true,
    );

    await until('the run finished on B', async () => {
      const { conversation: now } = await storeClient.getConversation({ id, includeMessages: true });
      return !now!.turnRunning && now!.messages.at(-1)?.content === 'answer to hand me back';
    });
    const { conversation: done } = await storeClient.getConversation({ id, includeMessages: true });
    expect(
      done!.messages
        .filter((message) => message.role !== MessageRole.MESSAGE_ROLE_SYSTEM)
        .map((message) => [message.role, message.content]),
    ).toEqual([
      [MessageRole.MESSAGE_ROLE_USER, 'hand me back'],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'answer to hand me back'],
    ]);
    expect(
      lines.some((line) => line.startsWith('orchestrator-b warn run taken over from a replica that stopped') && line.includes(id)),
    ).toBe(true);
    expect(model.requests.filter((request) => request.lastUserText === 'hand me back')).toHaveLength(2);
  }, 60_000);
});
