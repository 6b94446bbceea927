/**
 * A decision whose claim was not heard — the store's answer was lost, so the replica cannot know
 * whether its own claim won — is answered from what the store shows, and as this request's only
 * when the winning claim carries this request's decision id. The same person deciding twice,
 * through the same face, on two replicas at once never hears "decided" twice.
 *
 * Over real gRPC on loopback: a conversation store (SQLite), an llm-gateway with a scripted
 * model, a tool broker with the misbehaving MCP server (its destructive `slow_write` logs every
 * call), and two orchestrators: one talks to the store directly, the other through a relay that
 * cuts the one call a test picks.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import { GrpcStatus } from '../../services/common/grpc/errors.js';
import { HEALTH_DEFINITION } from '../../services/common/grpc/health.js';
import type { RunningService } from '../../services/common/service.js';
import { startA2aBridge } from '../../services/a2a-bridge/index.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import { startOrchestrator } from '../../services/orchestrator/index.js';
import { startToolBroker } from '../../services/tool-broker/index.js';
import { MISBEHAVING } from '../fixtures/mcp-peers.js';
import { TEST_GEMINI_KEY } from '../support/agent-process.js';
import { startGrpcFaultProxy, type GrpcFaultProxy } from '../support/grpc-fault-proxy.js';
import { until } from '../support/until.js';
import { recordingLogger } from '../support/recording-logger.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';

const dataDir = mkdtempSync(join(tmpdir(), 'asg-unheard-claims-'));
const calls = join(dataDir, 'calls.txt');
const listen = '127.0.0.1:0';
const lines: string[] = [];

let model: ScriptedModelServer;
let relay: GrpcFaultProxy;
let storeClient: PromiseClient<typeof ConversationStoreServiceService>;
const started: RunningService[] = [];
let direct: PromiseClient<typeof OrchestratorServiceService>;
let relayed: PromiseClient<typeof OrchestratorServiceService>;

/** The user's message is `{"call": tool, "args": {...}}`; after a tool result the model answers `result: <output>`. */
const script: ModelScript = (request) => {
  if (request.toolResults.length > 0) return { text: `result: ${request.toolResults.map((result) => result.output).join(' | ')}` };
  const instruction = JSON.parse(request.lastUserText) as { call: string; args: Record<string, unknown> };
  return { toolCalls: [{ name: instruction.call, args: instruction.args }] };
};

const config = configSchema.parse({
  data_dir: dataDir,
  runs: { lease_ttl: '1s', takeover_interval: '100ms' },
  mcp_servers: [{ name: 'writes', command: process.execPath, args: [MISBEHAVING], env: { CALLS_FILE: calls } }],
});

beforeAll(async () => {
  model = await startScriptedModel(script);
  const log = (service: string) => recordingLogger(service, lines);
  const store = await startConversationStore({ config: configSlice(config, 'conversationStore'), listen, log: log('store') });
  started.push(store);
  const llm = await startLlmGateway({
    config: configSlice(config, 'llmGateway'),
    listen,
    log: log('llm'),
    env: { GEMINI_BASE_URL: model.geminiBaseUrl, GEMINI_API_KEY: TEST_GEMINI_KEY },
  });
  const tools = await startToolBroker({ config: configSlice(config, 'toolBroker'), listen, log: log('tools') });
  const bridge = await startA2aBridge({ config: configSlice(config, 'a2aBridge'), listen, log: log('a2a') });
  started.push(llm, tools, bridge);
  relay = await startGrpcFaultProxy(store.address, [ConversationStoreServiceService, HEALTH_DEFINITION]);
  const peers = { llmGateway: llm.address, toolBroker: tools.address, a2aBridge: bridge.address };
  const orchestrator = (name: string, conversationStore: string) =>
    startOrchestrator({
      config: configSlice(config, 'orchestrator'),
      listen,
      log: log(name),
      peers: { ...peers, conversationStore },
    });
  const [a, b] = [await orchestrator('direct', store.address), await orchestrator('relayed', relay.address)];
  started.push(a, b);
  direct = createPromiseClient(OrchestratorServiceService, a.address, 'test', 30_000);
  relayed = createPromiseClient(OrchestratorServiceService, b.address, 'test', 30_000);
  storeClient = createPromiseClient(ConversationStoreServiceService, store.address, 'test', 5_000);
}, 60_000);

afterAll(async () => {
  for (const service of started.reverse()) await service.stop(Date.now() + 2_000).catch(() => undefined);
  await Promise.all([model?.close(), relay?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const callsMade = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []);

async function waitingApproval(tag: string): Promise<string> {
  const { result } = await direct.createConversation({ message: JSON.stringify({ call: 'slow_write', args: { ms: 1, tag } }) });
  expect(result).toMatchObject({ waitingApproval: true });
  return result!.approval!.uuid;
}

const alice = { approved: true as const, decidedBy: 'alice', via: 'rest', deciderRoles: [] };

it("a second decision whose claim went unheard is not taken for the first one's, though the same person made both through the same face", async () => {
  const uuid = await waitingApproval('twice');
  expect((await direct.resolveApproval({ uuid, ...alice })).decided).toBe(true);
  expect(callsMade()).toEqual(['slow_write {"ms":1,"tag":"twice"}']);

  relay.failNext('claimApproval', 'unreached');
  const second = await relayed.resolveApproval({ uuid, ...alice });
  expect(relay.failed).toEqual(['claimApproval unreached']);
  expect(second.decided).toBe(false);
  expect(second.approval).toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_DONE, decidedBy: 'alice', via: 'rest' });
  expect(callsMade()).toHaveLength(1);
}, 60_000);

it('a decision whose claim took but whose answer was lost is known for its own by its id: decided, and its call ran once', async () => {
  const uuid = await waitingApproval('unheard');
  relay.failNext('claimApproval', 'unheard');
  const answer = await relayed.resolveApproval({ uuid, ...alice });
  expect(relay.failed.at(-1)).toBe('claimApproval unheard');
  expect(answer.decided).toBe(true);
  const stored = (await storeClient.getApproval({ uuid })).approval!;
  expect(stored).toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_DONE, decidedBy: 'alice', via: 'rest' });
  expect(stored.decisionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(callsMade().filter((call) => call.includes('"unheard"'))).toHaveLength(1);
}, 60_000);

it('a new conversation whose creation took but whose answer was lost: its caller is told so, and its first turn is run from what is stored', async () => {
  const tag = 'created-unheard';
  relay.failNext('createConversation', 'unheard');
  await expect(relayed.createConversation({ message: JSON.stringify({ call: 'slow_write', args: { ms: 1, tag } }) })).rejects.toMatchObject(
    { code: GrpcStatus.UNAVAILABLE, message: expect.stringContaining('whether the conversation was created is not known') },
  );
  expect(relay.failed.at(-1)).toBe('createConversation unheard');
  // The lease of the turn that was never answered runs out, and a replica takes the turn over: its destructive call stops.
  const waiting = await until('the created conversation to wait for its approval', async () => {
    const { conversations } = await storeClient.listConversations({ pageSize: 50, pageToken: '' });
    return conversations.find((conversation) => (conversation.title ?? '').includes(tag) && conversation.pendingApprovals.length === 1);
  });
  expect(waiting.pendingApprovals[0]).toMatchObject({ toolName: 'slow_write' });
  expect(callsMade().filter((call) => call.includes(tag))).toEqual([]);
}, 60_000);
