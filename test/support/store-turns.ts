import { ConversationStatus, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import type { ConversationStorage } from '../../services/conversation-store/storage.js';

/** One turn of a conversation: the user's message and the answer, as the orchestrator stores them. */
async function turn(storage: ConversationStorage, conversationId: string, index: number): Promise<void> {
  await storage.startTurn({
    conversationId,
    message: { role: MessageRole.MESSAGE_ROLE_USER, content: `question ${index}: what is in the list?` },
  });
  await storage.appendMessages({
    conversationId,
    messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: `Answer ${index}: the list holds three resources, a, b and c.` }],
    status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
    endsTurn: true,
    returnConversation: false,
  });
}

/** A new conversation with `turns` read turns, written straight to the store. */
export async function conversationWithTurns(storage: ConversationStorage, turns: number): Promise<string> {
  const { id } = await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'You are a helpful assistant.' });
  for (let index = 0; index < turns; index += 1) await turn(storage, id, index);
  return id;
}
