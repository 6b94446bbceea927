import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server, ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  OrchestratorServiceService,
  type DescribeRunsRequest,
  type DescribeRunsResponse,
  type PipelineView,
} from '../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService, MessageRole, type Run } from '../gen/ts/asg/store/v1/store.js';
import { createPromiseClient, type PromiseClient } from '../services/common/grpc/client.js';
import { createServer, listen, shutdown } from '../services/common/grpc/server.js';
import { configSchema } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import type { Logger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { startConversationStore } from '../services/conversation-store/index.js';
import { get, post } from '../test/support/http.js';
import { openSse } from '../test/support/sse-reader.js';
import { trpcClient } from '../test/support/trpc-client.js';
import { startGateway } from './index.js';
import { freePort } from '../test/support/ports.js';

/**
 * Conversations read from the store show the pipeline state of their run: the
 * store keeps the run as opaque bytes, and the gateway asks the orchestrator to describe
 * them. A real store and gateway, and an orchestrator in miniature that only describes runs.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
type Gateway = Awaited<ReturnType<typeof startGateway>>;

const APPROVAL = '0e1d2c3b-4a59-4687-8796-a5b4c3d2e1f0';
// Not UTF-8 after the JSON: the bytes must reach the orchestrator exactly as it stored them.
const RUN: Run = { state: Buffer.concat([Buffer.from('{"waits_at":[1,0]}'), Buffer.from([0xff, 0x00])]), schemaVersion: 1, revision: 0 };
const VIEW: PipelineView = {
  pausedNodePath: [1, 0],
  pausedNodeOutputKey: 'draft',
  sessionState: { topic: 'tides' },
  userMessage: 'write about tides',
  pauses: [{ approvalUuid: APPROVAL, pausedNodePath: [1, 0], pausedNodeOutputKey: 'draft', loopIterations: { '1': 2 } }],
  branchOutputs: { '0': 'outline' },
};
const PIPELINE_STATE = {
  paused_node_path: [1, 0],
  paused_node_output_key: 'draft',
  session_state: { topic: 'tides' },
  user_message: 'write about tides',
  pauses: [{ approval_uuid: APPROVAL, paused_node_path: [1, 0], paused_node_output_key: 'draft', loop_iterations: { '1': 2 } }],
  branch_outputs: { '0': 'outline' },
};

/** DescribeRuns: VIEW for a run whose bytes are RUN's, no pipeline for any other; every request recorded. */
async function startDescriber(): Promise<{ address: string; requests: DescribeRunsRequest[]; server: Server }> {
  const requests: DescribeRunsRequest[] = [];
  const server = createServer();
  const describeRuns = (
    call: ServerUnaryCall<DescribeRunsRequest, DescribeRunsResponse>,
    callback: sendUnaryData<DescribeRunsResponse>,
  ) => {
    requests.push(call.request);
    callback(null, {
      views: call.request.runs.map(({ run }) => (run?.state.equals(RUN.state) ? { pipeline: VIEW, inputs: [] } : { inputs: [] })),
    });
  };
  // The other methods are left out: grpc-js answers them UNIMPLEMENTED.
  server.addService(OrchestratorServiceService, { describeRuns } as UntypedServiceImplementation);
  const port = await listen(server, '127.0.0.1:0');
  return { address: `127.0.0.1:${port}`, requests, server };
}

let dataDir: string;
let store: RunningService;
let storeClient: PromiseClient<typeof ConversationStoreServiceService>;
let describer: Awaited<ReturnType<typeof startDescriber>>;
let gateway: Gateway;
let withoutOrchestrator: Gateway;
let tree: string;
let plain: string;

const config = () => configSlice(configSchema.parse({ host: '127.0.0.1', port: 0 }), 'gateway');

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'asg-stored-runs-'));
  store = await startConversationStore({
    config: configSlice(configSchema.parse({ data_dir: dataDir }), 'conversationStore'),
    listen: '127.0.0.1:0',
    log: quiet,
  });
  storeClient = createPromiseClient(ConversationStoreServiceService, store.address, 'test', 5000);
  describer = await startDescriber();
  gateway = await startGateway({
    config: config(),
    log: quiet,
    peers: { orchestrator: describer.address, conversationStore: store.address },
  });
  withoutOrchestrator = await startGateway({
    config: config(),
    log: quiet,
    peers: { orchestrator: `127.0.0.1:${await freePort()}`, conversationStore: store.address },
  });

  // Created in this order, so the list (newest first) reads plain, then tree.
  tree = (await storeClient.createConversation({ sessionId: '0badcafe', systemPrompt: '' })).conversation!.id;
  await storeClient.updateRun({
    conversationId: tree,
    messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'asks to publish', node: 'writer' }],
    approvals: [
      { uuid: APPROVAL, toolCallId: 'call-1', toolName: 'publish', toolArgsJson: '{}', description: 'Publish the draft', agentChain: [] },
    ],
    run: RUN,
    expectedRevision: 0,
    returnConversation: false,
  });
  plain = (await storeClient.createConversation({ sessionId: '0badcafe', systemPrompt: 'be brief' })).conversation!.id;
});

afterAll(async () => {
  await gateway?.stop();
  await withoutOrchestrator?.stop();
  if (describer) await shutdown(describer.server, 1000);
  storeClient?.close();
  await store?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('conversations read from the store, with an orchestrator that describes their runs', () => {
  it('GET /conversations/:id shows the pipeline state, described from the stored bytes and the first pending approval', async () => {
    describer.requests.length = 0;
    const { status, body } = await get(`${gateway.url}/conversations/${tree}`);
    expect(status).toBe(200);
    expect(body.conversation.pipeline_state).toEqual(PIPELINE_STATE);
    expect(body.conversation.pending_approval.uuid).toBe(APPROVAL);
    expect(describer.requests).toHaveLength(1);
    const [asked] = describer.requests[0]!.runs;
    expect(asked!.pendingApprovalUuid).toBe(APPROVAL);
    expect(asked!.run!.state.equals(RUN.state)).toBe(true);
    expect([asked!.run!.schemaVersion, asked!.run!.revision]).toEqual([1, 1]);
  });

  it('describes nothing for a conversation without a run', async () => {
    describer.requests.length = 0;
    const { status, body } = await get(`${gateway.url}/conversations/${plain}`);
    expect(status).toBe(200);
    expect(body.conversation).not.toHaveProperty('pipeline_state');
    expect(describer.requests).toEqual([]);
  });

  it('GET /conversations describes the runs of a page in one call and shows each on its own item', async () => {
    describer.requests.length = 0;
    const { status, body } = await get(`${gateway.url}/conversations`);
    expect(status).toBe(200);
    expect(body.conversations.map((item: { id: string; pipeline_state?: unknown }) => [item.id, item.pipeline_state])).toEqual([
      [plain, undefined],
      [tree, PIPELINE_STATE],
    ]);
    expect(describer.requests).toHaveLength(1);
    expect(describer.requests[0]!.runs).toHaveLength(1);
  });

  it('the snapshot of GET /conversations/:id/events and tRPC conversations.get show it too', async () => {
    const events = await openSse(`${gateway.url}/conversations/${tree}/events`);
    try {
      await vi.waitFor(() => expect(events.events.length).toBeGreaterThan(0));
      expect(events.events[0]!.event).toBe('snapshot');
      expect(JSON.parse(events.events[0]!.data).conversation.pipeline_state).toEqual(PIPELINE_STATE);
    } finally {
      events.close();
    }
    const reply = await trpcClient(gateway.url).conversations.get.query({ id: tree });
    expect(reply.conversation.pipeline_state).toEqual(PIPELINE_STATE);
  });
});

describe('conversations read from the store while the orchestrator is unreachable', () => {
  it('fails the read of a conversation with a run as any backend outage: 503 over REST, SERVICE_UNAVAILABLE over tRPC', async () => {
    for (const path of [`/conversations/${tree}`, '/conversations']) {
      const { status, body } = await get(`${withoutOrchestrator.url}${path}`);
      expect(status, path).toBe(503);
      expect(body.error, path).toMatch(/^service unavailable: DescribeRuns on the orchestrator failed: /);
    }
    const failure = await trpcClient(withoutOrchestrator.url)
      .conversations.get.query({ id: tree })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TRPCClientError);
    expect((failure as TRPCClientError<any>).data?.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('still reads a conversation without a run, and A2A tasks (which show no pipeline state) need no orchestrator', async () => {
    expect((await get(`${withoutOrchestrator.url}/conversations/${plain}`)).status).toBe(200);
    const task = await post(`${withoutOrchestrator.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: tree } });
    expect(task.status).toBe(200);
    expect(task.body.result.status.state).toBe('input-required');
  });
});
