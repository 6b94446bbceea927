import { describe, expect, it } from 'vitest';
import type { ConversationListItemJson } from '../api-types.js';
import { conversationDetail, conversationsInOrder, conversationTitle } from './conversation-order.js';

const conversation = (
  id: string,
  status: ConversationListItemJson['status'],
  updated_at: string,
  title = '',
): ConversationListItemJson => ({
  id,
  session_id: '',
  status,
  title,
  message_count: 0,
  pending_approvals: 0,
  usage: { input_tokens: 0, output_tokens: 0 },
  created_at: '',
  updated_at,
});

describe('conversationsInOrder', () => {
  it('puts waiting conversations first, each group newest first', () => {
    const ordered = conversationsInOrder([
      conversation('a', 'active', '2025-01-03'),
      conversation('w1', 'waiting_approval', '2025-01-01'),
      conversation('b', 'completed', '2025-01-04'),
      conversation('w2', 'waiting_approval', '2025-01-02'),
    ]);
    expect(ordered.map((c) => c.id)).toEqual(['w2', 'w1', 'b', 'a']);
  });
});

describe('conversationTitle', () => {
  it("is the server's title (lists are summaries), or the id before there is one", () => {
    expect(conversationTitle(conversation('c', 'active', '', 'add resource web-1 with value 5'))).toBe('add resource web-1 with value 5');
    expect(conversationTitle(conversation('6f1c9a52-3d47', 'active', ''))).toBe('Conversation 6f1c9a52');
  });
});

describe('conversationDetail', () => {
  it('counts messages and approvals to decide', () => {
    expect(conversationDetail({ message_count: 1, pending_approvals: 0 })).toBe('1 message');
    expect(conversationDetail({ message_count: 4, pending_approvals: 2 })).toBe('4 messages · 2 to approve');
  });
});
