import { describe, expect, it } from 'vitest';
import type { ConversationJson } from '../api-types.js';
import { conversationsInOrder, conversationTitle } from './conversation-order.js';

const conversation = (id: string, status: ConversationJson['status'], updated_at: string, first?: string): ConversationJson => ({
  id,
  session_id: '',
  status,
  messages: first ? [{ id: 'm', role: 'user', content: first, created_at: '' }] : [],
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
  it('is the first user message, shortened', () => {
    expect(conversationTitle(conversation('c', 'active', '', 'add resource web-1 with value 5'))).toBe('add resource web-1 with value 5');
    expect(conversationTitle(conversation('c', 'active', '', 'x'.repeat(80)), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(conversationTitle(conversation('6f1c9a52-3d47', 'active', ''))).toBe('Conversation 6f1c9a52');
  });
});
