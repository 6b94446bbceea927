/**
 * The orchestrator's side, over real gRPC on loopback: a conversation store
 * (SQLite), an llm-gateway with a scripted model, a tool broker with two copies of the
 * misbehaving MCP server (its destructive `slow_write` logs every call it receives), and
 * orchestrators. The model's user message is an instruction: call this tool with these
 * arguments; after a tool result it answers `result: <the result>`.
 *  - Edit on approve: arguments that do not fit the tool's schema are refused and nothing is
 *    decided; edited ones that fit are what the tool receives, the model is told, and the
 *    approval records who decided, through which face, and both sets of arguments.
 *  - Expiry: an approval with a 2 s timeout and on_timeout reject, asked while one
 *    orchestrator ran, expires on another started after it stopped (the timer is a row); the
 *    model reads that nobody decided, and the tool never ran.
 *  - Webhooks: a receiver that answers 500 twice to every delivery before it answers 200 gets
 *    each event once, in order, each signed as the Standard Webhooks spec says (verified by
 *    the receiver's own implementation of the spec).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStoreServiceService, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import { GrpcStatus } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import type { Peers, RunningService } from '../../services/common/service.js';
import { startA2aBridge } from '../../services/a2a-bridge/index.js';
import { startConversationStore } from '../../services/conversation-store/index.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import { startOrchestrator } from '../../services/orchestrator/index.js';
import { startToolBroker } from '../../services/tool-broker/index.js';
import { MISBEHAVING } from '../fixtures/mcp-peers.js';
import { TEST_GEMINI_KEY } from '../support/agent-process.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { recordingLogger } from '../support/recording-logger.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from '../support/until.js';

const dataDir = mkdtempSync(join(tmpdir(), 'asg-approval-decisions-'));
const editCalls = join(dataDir, 'edit-calls.txt');
const expireCalls = join(dataDir, 'expire-calls.txt');
const SECRET_ENV = 'ASG_TEST_WEBHOOK_SECRET';
const SECRET = `whsec_${Buffer.from('a test secret of 32 bytes, fixed').toString('base64')}`;
const listen = '127.0.0.1:0';

let model: ScriptedModelServer;
let receiver: WebhookReceiver;
let store: RunningService;
let orchestrator: RunningService;
let peers: Omit<Peers, 'orchestrator'>;
let storeClient: PromiseClient<typeof ConversationStoreServiceService>;
const started: RunningService[] = [];
const lines: string[] = [];

/** The user's message is `{"call": tool, "args": {...}}`; after a tool result the model answers `result: <output>`. */
const script: ModelScript = (request) => {
  if (request.toolResults.length > 0) return { text: `result: ${request.toolResults.map((result) => result.output).join(' | ')}` };
  const instruction = JSON.parse(request.lastUserText) as { call: string; args: Record<string, unknown> };
  return { toolCalls: [{ name: instruction.call, args: instruction.args }] };
};

const recording = (service: string): Logger => recordingLogger(service, lines);

/** Every delivery fails twice (HTTP 500) before the receiver takes it. */
const twiceThenOk = (_id: string, attempt: number) => (attempt <= 2 ? 500 : 200);

function config(webhookUrl: string) {
  return configSchema.parse({
    data_dir: dataDir,
    runs: { lease_ttl: '1s', takeover_interval: '100ms' },
    mcp_servers: [
      { name: 'edit', command: process.execPath, args: [MISBEHAVING], env: { TOOL_PREFIX: 'edit_', CALLS_FILE: editCalls } },
      { name: 'expire', command: process.execPath, args: [MISBEHAVING], env: { TOOL_PREFIX: 'expire_', CALLS_FILE: expireCalls } },
    ],
    approvals: { timeout: 0, tools: { 'expire_*': { timeout: '2s', on_timeout: 'reject' } } },
    webhooks: [
      { url: webhookUrl, secret_env: SECRET_ENV, events: ['approval.requested', 'approval.decided', 'run.completed', 'run.failed'] },
    ],
  });
}

async function startOrchestratorReplica(name: string): Promise<RunningService> {
  const replica = await startOrchestrator({
    config: configSlice(config(receiver.url), 'orchestrator'),
    listen,
    log: recording(name),
    peers,
    env: { [SECRET_ENV]: SECRET },
    // Short backoff, so that two failures per delivery cost the test little.
    webhookDelivery: { baseDelayMs: 50, maxDelayMs: 200, maxAttempts: 5, claimEveryMs: 200, timeoutMs: 5_000 },
  });
  started.push(replica);
  return replica;
}

beforeAll(async () => {
  model = await startScriptedModel(script);
  receiver = await startWebhookReceiver(SECRET, twiceThenOk);
  const parsed = config(receiver.url);
  store = await startConversationStore({ config: configSlice(parsed, 'conversationStore'), listen, log: recording('store') });
  const llm = await startLlmGateway({
    config: configSlice(parsed, 'llmGateway'),
    listen,
    log: recording('llm'),
    env: { GEMINI_BASE_URL: model.geminiBaseUrl, GEMINI_API_KEY: TEST_GEMINI_KEY },
  });
  const tools = await startToolBroker({ config: configSlice(parsed, 'toolBroker'), listen, log: recording('tools') });
  const bridge = await startA2aBridge({ config: configSlice(parsed, 'a2aBridge'), listen, log: recording('a2a') });
  started.push(store, llm, tools, bridge);
  peers = { conversationStore: store.address, llmGateway: llm.address, toolBroker: tools.address, a2aBridge: bridge.address };
  storeClient = createPromiseClient(ConversationStoreServiceService, store.address, 'test', 5_000);
  orchestrator = await startOrchestratorReplica('orchestrator-a');
  // The webhook's cursor starts at the newest event when first claimed: nothing is asked before that.
  await until('the webhook cursor held', () => lines.some((line) => line.startsWith('orchestrator-a info delivering webhook events')));
}, 60_000);

afterAll(async () => {
  for (const service of started.reverse()) await service.stop(Date.now() + 2_000).catch(() => undefined);
  await Promise.all([model?.close(), receiver?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const callsIn = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const client = (service: RunningService) => createPromiseClient(OrchestratorServiceService, service.address, 'test', 30_000);

async function approvalOf(uuid: string) {
  return (await storeClient.getApproval({ uuid })).approval!;
}

const decided = new Map<string, string>();
const requested = new Map<string, string>();
const conversations = new Set<string>();

describe('edit on approve', () => {
  it('edited arguments that do not fit are refused with nothing decided; edited ones that fit are what the tool receives, and the model is told', async () => {
    const orchestratorClient = client(orchestrator);
    const { conversation, result } = await orchestratorClient.createConversation({
      message: JSON.stringify({ call: 'edit_slow_write', args: { ms: 1, tag: 'from-model' } }),
    });
    conversations.add(conversation!.id);
    expect(result).toMatchObject({ waitingApproval: true });
    const uuid = result!.approval!.uuid;
    requested.set(uuid, conversation!.id);
    // No expiry for this tool (approvals.timeout 0, and no pattern matches).
    expect((await approvalOf(uuid)).expiresAt).toBeUndefined();

    await expect(
      orchestratorClient.resolveApproval({
        uuid,
        approved: true,
        decidedBy: 'alice',
        via: 'web',
        deciderRoles: [],
        argumentsJson: JSON.stringify({ tag: 'no ms' }),
      }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringMatching(
        /edited arguments do not fit the input schema of edit_slow_write: arguments must have required property 'ms'/,
      ),
    });
    await expect(
      orchestratorClient.resolveApproval({ uuid, approved: false, deciderRoles: [], argumentsJson: JSON.stringify({ ms: 1 }) }),
    ).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT });
    await expect(
      orchestratorClient.resolveApproval({ uuid, approved: true, via: 'carrier-pigeon', deciderRoles: [] }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
    });
    expect((await approvalOf(uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    expect(callsIn(editCalls)).toEqual([]);

    const edited = { ms: 1, tag: 'from-alice' };
    const answer = await orchestratorClient.resolveApproval({
      uuid,
      approved: true,
      decidedBy: 'alice',
      via: 'web',
      deciderRoles: [],
      argumentsJson: JSON.stringify(edited),
    });
    expect(answer.decided).toBe(true);
    decided.set(uuid, 'alice');
    expect(callsIn(editCalls)).toEqual([`slow_write ${JSON.stringify(edited)}`]);

    const stored = await approvalOf(uuid);
    expect(stored).toMatchObject({
      status: ApprovalStatus.APPROVAL_STATUS_DONE,
      decidedBy: 'alice',
      via: 'web',
      editedArgsJson: JSON.stringify(edited),
    });
    expect(JSON.parse(stored!.toolArgsJson)).toEqual({ ms: 1, tag: 'from-model' });
    const note = `(arguments edited by alice before approval: ${JSON.stringify(edited)}) wrote from-alice`;
    const { conversation: after } = await storeClient.getConversation({ id: conversation!.id, includeMessages: true });
    const toolMessage = after!.messages.find((message) => message.role === MessageRole.MESSAGE_ROLE_TOOL)!;
    expect(toolMessage.content).toBe(note);
    expect(JSON.parse(toolMessage.toolCall!.argumentsJson!)).toEqual(edited);
    // The model read the note with the result, and answered from it.
    expect(model.requests.some((request) => request.toolResults.some((result) => result.output.includes(note)))).toBe(true);
    expect(answer.result!.response).toBe(`result: ${note}`);
  }, 60_000);
});

describe('expiry', () => {
  it('an approval with a 2 s timeout and on_timeout reject expires on a replica started after the one that asked stopped; the model sees it', async () => {
    const { conversation, result } = await client(orchestrator).createConversation({
      message: JSON.stringify({ call: 'expire_slow_write', args: { ms: 1, tag: 'never' } }),
    });
    conversations.add(conversation!.id);
    const uuid = result!.approval!.uuid;
    requested.set(uuid, conversation!.id);
    // Nobody polls while no orchestrator runs: the timer is the stored expires_at.
    await orchestrator.stop(Date.now() + 3_000);
    const asked = await approvalOf(uuid);
    expect(asked.status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    expect(asked.expiresAt!.getTime() - asked.createdAt!.getTime()).toBe(2_000);
    await until('the approval due', async () =>
      (await storeClient.listDueApprovals({ limit: 100 })).approvals.some((due) => due.uuid === uuid),
    );
    expect((await approvalOf(uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);

    // Two replicas start at once and both find it due at their first poll: one claim decides it.
    [orchestrator] = await Promise.all([startOrchestratorReplica('orchestrator-b'), startOrchestratorReplica('orchestrator-c')]);
    await until('the approval expired', async () => (await approvalOf(uuid)).status === ApprovalStatus.APPROVAL_STATUS_EXPIRED);
    decided.set(uuid, 'timeout');
    expect(await approvalOf(uuid)).toMatchObject({
      decidedBy: 'timeout',
      via: 'timeout',
      reason: 'no decision within 2s; the approval expired',
    });

    const rejection =
      'Not approved: no decision within 2s; the approval expired. The call was not executed. Do not retry it unless the user asks you to.';
    await until('the run went on after the expiry', async () => {
      const { conversation: now } = await storeClient.getConversation({ id: conversation!.id, includeMessages: true });
      return !now!.turnRunning && now!.messages.at(-1)?.content === `result: ${rejection}`;
    });
    const { conversation: after } = await storeClient.getConversation({ id: conversation!.id, includeMessages: true });
    const toolMessages = after!.messages.filter((message) => message.role === MessageRole.MESSAGE_ROLE_TOOL);
    expect(toolMessages).toHaveLength(1);
    expect(toolMessages[0]).toMatchObject({ content: rejection, toolCall: { rejected: true } });
    expect(model.requests.filter((request) => request.toolResults.some((result) => result.output === rejection))).toHaveLength(1);
    expect(callsIn(expireCalls)).toEqual([]);
    expect(lines.filter((line) => /^orchestrator-[bc] info approval decided by its expiry/.test(line) && line.includes(uuid))).toHaveLength(
      1,
    );
    // The store audited the expiry, once, as the timeout's.
    const { entries } = await storeClient.listAudit({ kinds: ['approval.expired'], pageSize: 50, pageToken: '' });
    expect(entries.filter((entry) => entry.subject === uuid)).toMatchObject([{ actor: 'timeout', via: 'timeout' }]);
  }, 60_000);
});

describe('webhooks', () => {
  it('a receiver that fails twice before it answers 200 gets each event once, in order, each with a valid signature', async () => {
    const accepted = () => receiver.deliveries.filter((delivery) => delivery.status === 200);
    const decidedEvents = () => accepted().filter((delivery) => delivery.payload?.type === 'approval.decided');
    await until('every decision delivered', () => decidedEvents().length >= decided.size, 30_000);
    await until(
      'both conversations answered, delivered',
      () => {
        const answered = accepted().filter(
          (delivery) => delivery.payload?.type === 'run.completed' && delivery.payload.data.outcome === 'answered',
        );
        return [...conversations].every((id) => answered.some((delivery) => delivery.payload!.data.conversation_id === id));
      },
      30_000,
    );

    // Every attempt was signed right; each event was accepted exactly once, after two failures.
    expect(receiver.deliveries.every((delivery) => delivery.payload !== undefined)).toBe(true);
    const ids = accepted().map((delivery) => delivery.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids)
      expect(receiver.deliveries.filter((delivery) => delivery.id === id).map((delivery) => delivery.status)).toEqual([500, 500, 200]);
    // In the order of the stored events (the id ends with the event's id).
    const eventIds = ids.map((id) => Number(id.split('_').at(-1)));
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));

    for (const [uuid, conversationId] of requested) {
      const asked = accepted().filter(
        (delivery) => delivery.payload!.type === 'approval.requested' && delivery.payload!.data.uuid === uuid,
      );
      expect(asked).toHaveLength(1);
      expect(asked[0]!.payload!.data).toMatchObject({ conversation_id: conversationId, status: 'pending' });
      const decision = decidedEvents().filter((delivery) => delivery.payload!.data.uuid === uuid);
      expect(decision).toHaveLength(1);
      expect(decision[0]!.payload!.data).toMatchObject({ decided_by: decided.get(uuid) });
    }
    expect(decidedEvents().find((delivery) => delivery.payload!.data.decided_by === 'timeout')!.payload!.data).toMatchObject({
      status: 'expired',
      via: 'timeout',
    });
    expect(decidedEvents().find((delivery) => delivery.payload!.data.decided_by === 'alice')!.payload!.data).toMatchObject({
      via: 'web',
      edited_args: { ms: 1, tag: 'from-alice' },
    });
    // Two replicas delivered (one after the other took over the cursor), never both at once.
    expect(lines.filter((line) => / info delivering webhook events /.test(line)).length).toBeGreaterThanOrEqual(2);
    // The secret is in no log line.
    expect(lines.some((line) => line.includes(SECRET))).toBe(false);
  }, 60_000);
});
