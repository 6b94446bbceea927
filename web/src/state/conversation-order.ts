import type { ConversationJson } from '../api-types.js';

/** The conversation list's order: waiting for an approval first, then the most recently changed. */
export function conversationsInOrder(conversations: readonly ConversationJson[]): ConversationJson[] {
  const waiting = (conversation: ConversationJson) => (conversation.status === 'waiting_approval' ? 0 : 1);
  return [...conversations].sort((a, b) => waiting(a) - waiting(b) || b.updated_at.localeCompare(a.updated_at));
}

/** A line that names a conversation in the list: its first user message, shortened. */
export function conversationTitle(conversation: ConversationJson, maxLength = 60): string {
  const first = conversation.messages.find((message) => message.role === 'user')?.content.trim();
  if (!first) return `Conversation ${conversation.id.slice(0, 8)}`;
  return first.length > maxLength ? `${first.slice(0, maxLength - 1)}…` : first;
}
