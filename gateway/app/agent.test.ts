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
  runRevision: 0,
  watched: false,
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
      toolArgsJson: '{}',
      description: 'delete',
      createdAt: new Date(0),
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: '',
      toolCallId: '',
      updatedAt: new Date(0),
      votes: [],
      agentChain: [],
    };
    const waiting = {
      ...base,
      status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
      pendingApproval,
      pendingApprovals: [pendingApproval],
    };
    expect(resultFromConversation(waiting)).toEqual({ response: '', waitingApproval: true, approval: pendingApproval });
  });
});

describe('createAgent: conversations shown with the view of their run', () => {
  const view: PipelineView = {
    pausedNodePath: [0],
    pausedNodeOutputKey: 'out',
    sessionState: {},
    userMessage: 'go',
    pauses: [],
    branchOutputs: {},
  };
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
      createConversation: async () => ({
        conversation: tree,
        result: { response: 'asks', waitingApproval: true, approval },
        pipeline: view,
      }),
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
    const outcome = await agent.resolveApproval(approval.uuid, 'approved', { decider: { principal: 'anonymous', via: 'rest' } });
    expect(outcome.decided && outcome.pipeline).toBeUndefined();
    expect(described).toEqual([]);
  });

  it('fails the read when the orchestrator cannot describe the run, as any backend failure: never a conversation without its state', async () => {
    const outage = new RpcError(
      GrpcStatus.UNAVAILABLE,
      'No connection established',
      '/asg.orchestrator.v1.OrchestratorService/DescribeRuns',
    );
    const { agent } = backends(outage);
    await expect(agent.viewConversation('tree')).rejects.toBe(outage);
    await expect(agent.listConversations({ limit: 10 })).rejects.toBe(outage);
    expect(failureOf(outage)).toMatchObject({
      status: 503,
      message: 'service unavailable: DescribeRuns on the orchestrator failed: No connection established',
    });
    // A conversation without a run does not need the orchestrator.
    expect((await agent.viewConversation('plain')).conversation).toEqual(plain);
  });
});

describe('createAgent: approvals as resources and decisions with identity', () => {
  function backends() {
    const asked: Record<string, unknown[]> = { resolveApproval: [], listApprovals: [], getApproval: [], listAudit: [] };
    const expired = approvalRecord({
      uuid: 'expired',
      status: ApprovalStatus.APPROVAL_STATUS_EXPIRED,
      decidedBy: 'timeout',
      via: 'timeout',
      decidedAt: new Date('2025-01-15T10:32:00.000Z'),
    });
    const orchestrator = {
      resolveApproval: async (request: { uuid: string }) => {
        asked.resolveApproval!.push(request);
        if (request.uuid === 'expired') return { decided: false, approval: expired };
        return {
          decided: true,
          approval: approvalRecord(),
          conversation: conversationRecord(),
          result: { response: 'done', waitingApproval: false },
        };
      },
    };
    const store = {
      listApprovals: async (request: unknown) => {
        asked.listApprovals!.push(request);
        return { approvals: [approvalRecord()], nextPageToken: 'p2' };
      },
      getApproval: async (request: { uuid: string }) => {
        asked.getApproval!.push(request);
        return { approval: approvalRecord({ uuid: request.uuid }), sessionId: '4be2a91c' };
      },
      listAudit: async (request: unknown) => {
        asked.listAudit!.push(request);
        return { entries: [], nextPageToken: '' };
      },
    };
    return { agent: createAgent({ store, orchestrator } as unknown as Pick<Backends, 'store' | 'orchestrator'>), asked };
  }

  it('sends who decides, through which face, the reason and the edited arguments to the orchestrator', async () => {
    const { agent, asked } = backends();
    await agent.resolveApproval('u1', 'approved', {
      decider: { principal: 'token:alice', via: 'web', roles: ['approve'] },
      reason: 'fixed',
      arguments: { name: 'web-9' },
    });
    await agent.resolveApproval('u2', 'rejected', { decider: { principal: 'anonymous', via: 'cli' } });
    expect(asked.resolveApproval).toEqual([
      {
        uuid: 'u1',
        approved: true,
        reason: 'fixed',
        decidedBy: 'token:alice',
        via: 'web',
        deciderRoles: ['approve'],
        argumentsJson: '{"name":"web-9"}',
      },
      { uuid: 'u2', approved: false, reason: undefined, decidedBy: 'anonymous', via: 'cli', deciderRoles: [] },
    ]);
  });

  it('answers an expired approval as expired, not as an error', async () => {
    const { agent } = backends();
    const outcome = await agent.resolveApproval('expired', 'approved', { decider: { principal: 'token:alice', via: 'rest' } });
    expect(outcome).toMatchObject({ decided: false, decision: 'expired', decidedAt: new Date('2025-01-15T10:32:00.000Z') });
  });

  it('lists approvals with the store statuses a filter stands for, and reads one with its session id', async () => {
    const { agent, asked } = backends();
    expect(await agent.listApprovals({ limit: 10, statuses: ['approved', 'expired'], conversationId: 'c1', cursor: 'p1' })).toEqual({
      approvals: [approvalRecord()],
      nextCursor: 'p2',
    });
    await agent.listApprovals({ limit: 50 });
    expect(asked.listApprovals).toEqual([
      {
        statuses: [
          ApprovalStatus.APPROVAL_STATUS_APPROVED,
          ApprovalStatus.APPROVAL_STATUS_EXECUTING,
          ApprovalStatus.APPROVAL_STATUS_DONE,
          ApprovalStatus.APPROVAL_STATUS_FAILED,
          ApprovalStatus.APPROVAL_STATUS_INTERRUPTED,
          ApprovalStatus.APPROVAL_STATUS_EXPIRED,
        ],
        conversationId: 'c1',
        pageSize: 10,
        pageToken: 'p1',
      },
      { statuses: [], conversationId: '', pageSize: 50, pageToken: '' },
    ]);
    expect(await agent.getApproval('u9')).toEqual({ approval: approvalRecord({ uuid: 'u9' }), sessionId: '4be2a91c' });
    expect(await agent.listAudit({ limit: 5, kinds: ['auth.failed'] })).toEqual({ entries: [] });
    expect(asked.listAudit).toEqual([{ kinds: ['auth.failed'], pageSize: 5, pageToken: '' }]);
  });
});
