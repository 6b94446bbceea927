import type { ConversationJson } from '../api-types.js';
import { pendingList, type PendingSet } from '../state/pending-approvals.js';
import { ApprovalCard } from './ApprovalCard.js';
import { ErrorNote } from './ErrorNote.js';

/**
 * Every approval waiting anywhere, live: they appear when requested and go when decided, by
 * anyone. An approval whose card the main view already shows (its conversation is open, or
 * the approvals page is) is only named here: one set of buttons per approval on the screen.
 */
export function PendingPanel({
  pending,
  error,
  now,
  shownInMain,
  onOpen,
  onDecided,
}: {
  pending: PendingSet;
  error?: string;
  now: number;
  /** Whether the main view shows this approval's card. */
  shownInMain(conversationId: string): boolean;
  onOpen(conversationId: string): void;
  onDecided(conversation: ConversationJson): void;
}) {
  const approvals = pendingList(pending);
  return (
    <section className="pending-panel" data-testid="pending-panel" aria-label="Pending approvals">
      <div className="panel-head">
        <h2>
          Pending approvals <span className={`count ${approvals.length > 0 ? 'waiting' : ''}`}>{approvals.length}</span>
        </h2>
      </div>
      <ErrorNote text={error} />
      {approvals.length === 0 && <p className="placeholder">Nothing waits for a decision.</p>}
      {approvals.map((approval) =>
        shownInMain(approval.conversation_id) ? (
          <div key={approval.uuid} className="pending-item shown-in-main" data-testid="pending-approval" data-uuid={approval.uuid}>
            <p className="pending-summary">
              <code className="approval-tool">{approval.tool_name}</code> <span className="muted">waits for you in the open view.</span>
            </p>
          </div>
        ) : (
          <div key={approval.uuid} className="pending-item" data-testid="pending-approval" data-uuid={approval.uuid}>
            <ApprovalCard approval={approval} onDecided={onDecided} compact now={now} />
            <button type="button" className="link-button" onClick={() => onOpen(approval.conversation_id)}>
              Open conversation {approval.conversation_id.slice(0, 8)}
            </button>
          </div>
        ),
      )}
    </section>
  );
}
