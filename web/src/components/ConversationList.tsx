import type { ConversationListItemJson } from '../api-types.js';
import { conversationDetail, conversationsInOrder, conversationTitle } from '../state/conversation-order.js';
import { ErrorNote } from './ErrorNote.js';
import { StatusBadge } from './StatusBadge.js';

/** Every recent conversation with its status, the ones waiting for a decision first. */
export function ConversationList({ conversations, selectedId, error, onOpen, onNew }: { conversations: ConversationListItemJson[]; selectedId?: string; error?: string; onOpen(id: string): void; onNew(): void }) {
  return (
    <nav className="conversation-list" aria-label="Conversations">
      <div className="panel-head">
        <h2>Conversations</h2>
        <button type="button" className="new-chat" onClick={onNew}>
          New chat
        </button>
      </div>
      <ErrorNote text={error} />
      {conversations.length === 0 && !error && <p className="placeholder">No conversations yet.</p>}
      <ul>
        {conversationsInOrder(conversations).map((conversation) => (
          <li key={conversation.id}>
            <button type="button" className={`conversation-item ${conversation.id === selectedId ? 'selected' : ''}`} data-testid="conversation-item" data-status={conversation.status} onClick={() => onOpen(conversation.id)}>
              <span className="conversation-text">
                <span className="conversation-title">{conversationTitle(conversation)}</span>
                <span className="conversation-detail">{conversationDetail(conversation)}</span>
              </span>
              <StatusBadge status={conversation.status} />
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
