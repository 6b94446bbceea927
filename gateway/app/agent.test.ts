import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus, type Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { resultFromConversation } from './agent.js';

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
  pipelineRevision: 0, watched: false,
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
