import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { approvalReply, conversationListReply, conversationReply } from './replies.js';
import { conversationListItemJson } from './shapes.js';

const approval: PendingApproval = {
  uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
  conversationId: 'c1',
  toolName: 'delete_resource',
  toolArgs: { id: 'res-42' },
  description: 'delete res-42',
  createdAt: new Date('2025-01-15T10:02:03.000Z'),
  status: ApprovalStatus.APPROVAL_STATUS_REJECTED,
  argsHash: 'h',
  toolCallId: 't',
  decidedAt: new Date('2025-01-15T10:02:11.000Z'),
  updatedAt: new Date('2025-01-15T10:02:11.000Z'),
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
  pipelineRevision: 0, watched: false,
};

describe('approvalReply', () => {
  it('answers a decision made now with 200, the conversation, the result and its session id', () => {
    const reply = approvalReply(approval.uuid, { decided: true, conversation, result: { response: 'cancelled', waitingApproval: false } });
    expect(reply.status).toBe(200);
    expect(reply.sessionId).toBe('4be2a91c');
    expect(reply.body).toEqual({ conversation: conversationReply(conversation).conversation, result: { response: 'cancelled', waiting_approval: false } });
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
    expect(Object.keys(conversationReply(conversation))).toEqual(['conversation']);
    expect(Object.keys(conversationReply(conversation, { response: 'hi', waitingApproval: false }))).toEqual(['conversation', 'result']);
  });
});

describe('conversationListReply', () => {
  it('adds next_cursor only when there is a next page', () => {
    const summary = { total: 1, active: 1, waitingApproval: 0, completed: 0 };
    const last = conversationListReply({ conversations: [conversation], summary });
    expect(last).toEqual({ conversations: [conversationListItemJson(conversation)], summary: { total: 1, active: 1, waiting_approval: 0, completed: 0 } });
    expect(conversationListReply({ conversations: [conversation], summary, nextCursor: 'p2' }).next_cursor).toBe('p2');
  });
});
