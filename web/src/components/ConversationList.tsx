import type { ConversationListItemJson } from '../api-types.js';
import { conversationDetail, conversationsInOrder, conversationTitle } from '../state/conversation-order.js';
import { ErrorNote } from './ErrorNote.js';
import { StatusBadge } from './StatusBadge.js';

export interface ConversationListProps {
  conversations: ConversationListItemJson[];
  selectedId?: string;
  error?: string;
  onOpen(id: string): void;
  onNew(): void;
  /** The approvals page: its link, with how many approvals wait, and whether it is open. */
  pendingCount: number;
  approvalsOpen: boolean;
  onOpenApprovals(): void;
}

/** The link to every approval across conversations, then every recent conversation with its status, the ones waiting for a decision first. */
export function ConversationList({
  conversations,
  selectedId,
  error,
  onOpen,
  onNew,
  pendingCount,
  approvalsOpen,
  onOpenApprovals,
}: ConversationListProps) {
  return (
    <nav className="conversation-list" aria-label="Conversations">
      {/* biome-ignore lint/a11y/useValidAnchor: a real link to the #/approvals route; the click also shows the chat pane on a phone. */}
      <a
        className={`approvals-link ${approvalsOpen ? 'selected' : ''}`}
        href="#/approvals"
        data-testid="approvals-link"
        aria-current={approvalsOpen ? 'page' : undefined}
        onClick={(event) => {
          event.preventDefault();
          onOpenApprovals();
        }}
      >
        <span>Approvals</span>
        <span className={`count ${pendingCount > 0 ? 'waiting' : ''}`} title="pending approvals">
          {pendingCount}
        </span>
      </a>
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
            <button
              type="button"
              className={`conversation-item ${conversation.id === selectedId ? 'selected' : ''}`}
              data-testid="conversation-item"
              data-status={conversation.status}
              onClick={() => onOpen(conversation.id)}
            >
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
