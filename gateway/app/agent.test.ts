import { describe, expect, it } from 'vitest';
import type { DescribeRunsRequest, PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStatus, type Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { approvalRecord, conversationRecord } from '../../test/support/store-records.js';
import { createAgent, resultFromConversation } from './agent.js';
import type { Backends } from './backends.js';
import { failureOf } from './errors.js';

const base: Conversation = {
  id: 'c1',
  sessionId: '4be2a91c',
  status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
  messages: [],
  createdAt: new Date(0),
  updatedAt: new Date(0),
  messageCount: 0,
  usage: { inputTokens: 0, outputTokens: 0 },
  pendingApprovals: [],
  runRevision: 0, watched: false,
};

describe('resultFromConversation', () => {
  it('reports no waiting for an active conversation', () => {
    expect(resultFromConversation(base)).toEqual({ response: '', waitingApproval: false, approval: undefined });
  });

  it('reports the pending approval of a waiting conversation', () => {
    const pendingApproval = {
      uuid: 'u1',
      conversationId: 'c1',
      toolName: 'delete',
      toolArgs: {},
      description: 'delete',
      createdAt: new Date(0),
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: '',
      toolCallId: '',
      updatedAt: new Date(0),
      agentChain: [],
    };
    const waiting = { ...base, status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL, pendingApproval, pendingApprovals: [pendingApproval] };
    expect(resultFromConversation(waiting)).toEqual({ response: '', waitingApproval: true, approval: pendingApproval });
  });
});

describe('createAgent: conversations shown with the view of their run (issue 13)', () => {
  const view: PipelineView = { pausedNodePath: [0], pausedNodeOutputKey: 'out', sessionState: {}, userMessage: 'go', pauses: [], branchOutputs: {} };
  const run = { state: Buffer.from([0x01, 0xff]), schemaVersion: 3, revision: 2 };
  const approval = approvalRecord({ conversationId: 'tree' });
  const tree = conversationRecord({
    id: 'tree',
    status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
    run,
    runRevision: 2,
    pendingApproval: approval,
    pendingApprovals: [approval],
  });
  const plain = conversationRecord({ id: 'plain' });

  /** The store and orchestrator in miniature; `describeRuns` answers a view per run, or fails with `outage`. */
  function backends(outage?: RpcError) {
    const described: DescribeRunsRequest[] = [];
    const conversations = new Map([tree, plain].map((conversation) => [conversation.id, conversation]));
    const store = {
      getConversation: async ({ id }: { id: string }) => ({ conversation: conversations.get(id) }),
      listConversations: async () => ({ conversations: [tree, plain], summary: undefined, nextPageToken: '' }),
    };
    const orchestrator = {
      describeRuns: async (request: DescribeRunsRequest) => {
        described.push(request);
        if (outage) throw outage;
        return { views: request.runs.map(() => ({ pipeline: view })) };
      },
      createConversation: async () => ({ conversation: tree, result: { response: 'asks', waitingApproval: true, approval }, pipeline: view }),
      sendMessage: async () => ({ conversation: tree, result: { response: 'asks', waitingApproval: true, approval }, pipeline: view }),
      resolveApproval: async () => ({ decided: true, approval, conversation: plain, result: { response: 'done', waitingApproval: false } }),
    };
    const agent = createAgent({ store, orchestrator } as unknown as Pick<Backends, 'store' | 'orchestrator'>);
    return { agent, described };
  }

  it('views a read conversation with one DescribeRuns call, with its first pending approval, and none for one without a run', async () => {
    const { agent, described } = backends();
    expect(await agent.viewConversation('tree')).toEqual({ conversation: tree, pipeline: view });
    expect(described).toEqual([{ runs: [{ run, pendingApprovalUuid: approval.uuid }] }]);
    expect(await agent.viewConversation('plain')).toEqual({ conversation: plain, pipeline: undefined });
    // The record alone (A2A, MCP) needs no orchestrator.
    expect(await agent.getConversation('tree')).toEqual(tree);
    expect(described).toHaveLength(1);
  });

  it('views a page of conversations with one call for all their runs', async () => {
    const { agent, described } = backends();
    const page = await agent.listConversations({ limit: 10 });
    expect([...page.pipelines]).toEqual([['tree', view]]);
    expect(described).toEqual([{ runs: [{ run, pendingApprovalUuid: approval.uuid }] }]);
  });

  it("takes a turn's view from the orchestrator's answer, with no second call", async () => {
    const { agent, described } = backends();
    expect((await agent.createConversation('go')).pipeline).toEqual(view);
    expect((await agent.sendMessage('tree', 'go')).pipeline).toEqual(view);
    const outcome = await agent.resolveApproval(approval.uuid, 'approved');
    expect(outcome.decided && outcome.pipeline).toBeUndefined();
    expect(described).toEqual([]);
  });

  it("fails the read when the orchestrator cannot describe the run, as any backend failure: never a conversation without its state", async () => {
    const outage = new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', '/asg.orchestrator.v1.OrchestratorService/DescribeRuns');
    const { agent } = backends(outage);
    await expect(agent.viewConversation('tree')).rejects.toBe(outage);
    await expect(agent.listConversations({ limit: 10 })).rejects.toBe(outage);
    expect(failureOf(outage)).toMatchObject({ status: 503, message: 'service unavailable: DescribeRuns on the orchestrator failed: No connection established' });
    // A conversation without a run does not need the orchestrator.
    expect((await agent.viewConversation('plain')).conversation).toEqual(plain);
  });
});
