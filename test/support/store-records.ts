import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type Message,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';

/** Store records (proto types) with every required field, for unit tests of the gateway. */

const AT = new Date('2025-01-15T10:02:00.000Z');

export function messageRecord(overrides: Partial<Message> = {}): Message {
  return { id: 'm1', role: MessageRole.MESSAGE_ROLE_USER, content: 'hello', createdAt: AT, seq: 1, ...overrides };
}

export function approvalRecord(overrides: Partial<PendingApproval> = {}): PendingApproval {
  return {
    uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
    conversationId: 'c1',
    toolName: 'resources_add',
    toolArgsJson: '{"name":"web-1","value":5}',
    description: 'resources_add on resources with arguments {"name":"web-1","value":5}',
    createdAt: AT,
    status: ApprovalStatus.APPROVAL_STATUS_PENDING,
    argsHash: 'hash',
    toolCallId: 'call-1',
    updatedAt: AT,
    votes: [],
    agentChain: [],
    ...overrides,
  };
}

export function conversationRecord(overrides: Partial<Conversation> = {}): Conversation {
  return {
    id: 'c1',
    sessionId: '4be2a91c',
    status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
    messages: [],
    pendingApprovals: [],
    runRevision: 0,
    watched: false,
    createdAt: AT,
    updatedAt: AT,
    messageCount: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    ...overrides,
  };
}
