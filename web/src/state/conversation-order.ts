import type { ConversationListItemJson } from '../api-types.js';

/** The conversation list's order: waiting for an approval first, then the most recently changed. */
export function conversationsInOrder(conversations: readonly ConversationListItemJson[]): ConversationListItemJson[] {
  const waiting = (conversation: ConversationListItemJson) => (conversation.status === 'waiting_approval' ? 0 : 1);
  return [...conversations].sort((a, b) => waiting(a) - waiting(b) || b.updated_at.localeCompare(a.updated_at));
}

/** A line that names a conversation in the list: the title the server made of its first user message, or its id. */
export function conversationTitle(conversation: Pick<ConversationListItemJson, 'id' | 'title'>): string {
  return conversation.title.trim() || `Conversation ${conversation.id.slice(0, 8)}`;
}

/** What the list says under a title: how long the conversation is and what it waits for. */
export function conversationDetail(conversation: Pick<ConversationListItemJson, 'message_count' | 'pending_approvals'>): string {
  const messages = `${conversation.message_count} ${conversation.message_count === 1 ? 'message' : 'messages'}`;
  return conversation.pending_approvals > 0 ? `${messages} · ${conversation.pending_approvals} to approve` : messages;
}
