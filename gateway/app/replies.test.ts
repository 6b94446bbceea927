import { describe, expect, it } from 'vitest';
import type { PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStatus, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { approvalReply, conversationListReply, conversationPageReply, conversationReply } from './replies.js';
import { conversationListItemJson, pipelineStateJson } from './shapes.js';

const approval: PendingApproval = {
  uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
  conversationId: 'c1',
  toolName: 'delete_resource',
  toolArgsJson: JSON.stringify({ id: 'res-42' }),
  description: 'delete res-42',
  createdAt: new Date('2025-01-15T10:02:03.000Z'),
  status: ApprovalStatus.APPROVAL_STATUS_REJECTED,
  argsHash: 'h',
  toolCallId: 't',
  decidedAt: new Date('2025-01-15T10:02:11.000Z'),
  updatedAt: new Date('2025-01-15T10:02:11.000Z'),
  votes: [],
  agentChain: [],
};

const conversation: Conversation = {
  id: 'c1',
  sessionId: '4be2a91c',
  status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
  messages: [],
  createdAt: new Date('2025-01-15T10:02:00.000Z'),
  updatedAt: new Date('2025-01-15T10:02:11.000Z'),
  messageCount: 0,
  usage: { inputTokens: 0, outputTokens: 0 },
  pendingApprovals: [],
  runRevision: 0,
  watched: false,
};

const pipeline: PipelineView = {
  pausedNodePath: [0],
  pausedNodeOutputKey: 'plan',
  sessionState: {},
  userMessage: 'delete res-42',
  pauses: [{ approvalUuid: approval.uuid, pausedNodePath: [0], pausedNodeOutputKey: 'plan', loopIterations: {} }],
  branchOutputs: {},
};

describe('approvalReply', () => {
  it('answers a decision made now with 200, the conversation, the result and its session id', () => {
    const reply = approvalReply(approval.uuid, { decided: true, conversation, result: { response: 'cancelled', waitingApproval: false } });
    expect(reply.status).toBe(200);
    expect(reply.sessionId).toBe('4be2a91c');
    expect(reply.body).toEqual({
      conversation: conversationReply({ conversation }).conversation,
      result: { response: 'cancelled', waiting_approval: false },
    });
  });

  it("shows the pipeline state of the turn's answer", () => {
    const reply = approvalReply(approval.uuid, {
      decided: true,
      conversation,
      pipeline,
      result: { response: 'waiting', waitingApproval: true },
    });
    expect((reply.body as { conversation: { pipeline_state?: unknown } }).conversation.pipeline_state).toEqual(pipelineStateJson(pipeline));
  });

  it('answers an earlier decision with 409 naming it, its time and the approval', () => {
    const reply = approvalReply(approval.uuid, { decided: false, approval, decision: 'rejected', decidedAt: approval.decidedAt });
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({
      error: 'approval b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47 was already rejected at 2025-01-15T10:02:11.000Z',
      decision: 'rejected',
      approval: {
        uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
        conversation_id: 'c1',
        tool_name: 'delete_resource',
        tool_args: { id: 'res-42' },
        description: 'delete res-42',
        created_at: '2025-01-15T10:02:03.000Z',
      },
    });
  });

  it('leaves the time out of the 409 message when the store has none', () => {
    const reply = approvalReply('u1', { decided: false, approval, decision: 'approved', decidedAt: undefined });
    expect((reply.body as { error: string }).error).toBe('approval u1 was already approved');
  });
});

describe('conversationReply', () => {
  it('adds result only when the turn ran', () => {
    expect(Object.keys(conversationReply({ conversation }))).toEqual(['conversation']);
    expect(Object.keys(conversationReply({ conversation }, { response: 'hi', waitingApproval: false }))).toEqual([
      'conversation',
      'result',
    ]);
  });

  it('shows pipeline_state from the view it is given, on a turn and on a page of history', () => {
    expect(conversationReply({ conversation, pipeline }).conversation.pipeline_state).toEqual(pipelineStateJson(pipeline));
    expect(conversationPageReply({ conversation, pipeline }).conversation.pipeline_state).toEqual(pipelineStateJson(pipeline));
    expect(conversationPageReply({ conversation }).conversation).not.toHaveProperty('pipeline_state');
  });
});

describe('conversationListReply', () => {
  it('adds next_cursor only when there is a next page', () => {
    const summary = { total: 1, active: 1, waitingApproval: 0, completed: 0 };
    const last = conversationListReply({ conversations: [conversation], pipelines: new Map(), summary });
    expect(last).toEqual({
      conversations: [conversationListItemJson(conversation)],
      summary: { total: 1, active: 1, waiting_approval: 0, completed: 0 },
    });
    expect(conversationListReply({ conversations: [conversation], pipelines: new Map(), summary, nextCursor: 'p2' }).next_cursor).toBe(
      'p2',
    );
  });

  it("shows each conversation's pipeline state by its id, and none on the others", () => {
    const other = { ...conversation, id: 'c2' };
    const page = conversationListReply({
      conversations: [conversation, other],
      pipelines: new Map([['c2', pipeline]]),
      summary: undefined,
    });
    expect(page.conversations.map((item) => item.pipeline_state)).toEqual([undefined, pipelineStateJson(pipeline)]);
  });
});
