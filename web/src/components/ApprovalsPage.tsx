import type { ConversationJson } from '../api-types.js';
import { useApprovals } from '../hooks/use-approvals.js';
import { APPROVAL_FILTERS, type ApprovalFilter } from '../hooks/use-route.js';
import { inPageOrder, pendingApprovalOf } from '../state/approval-records.js';
import { timeAgo } from '../state/decision-trace.js';
import type { PendingSet } from '../state/pending-approvals.js';
import { ApprovalCard } from './ApprovalCard.js';
import { Collapsible, prettyJson } from './Collapsible.js';
import { Icon } from './Icons.js';
import { DecisionTrace } from './DecisionTrace.js';
import { ErrorNote } from './ErrorNote.js';

export interface ApprovalsPageProps {
  status: ApprovalFilter;
  /** The live set of pending approvals (`approvals.pending`): each approval event changes it, and the page reads its list again. */
  pending: PendingSet;
  now: number;
  onFilter(status: ApprovalFilter): void;
  onOpen(conversationId: string): void;
  onDecided(conversation: ConversationJson): void;
}

const FILTER_LABELS: Record<ApprovalFilter, string> = {
  pending: 'Pending',
  mine: 'Needs my vote',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
  all: 'All',
};

/**
 * Every approval across conversations, pending ones by default: decide them here,
 * or look back at who decided what. Live: the list is read again on every approval event.
 */
export function ApprovalsPage({ status, pending, now, onFilter, onOpen, onDecided }: ApprovalsPageProps) {
  const query = status === 'all' ? {} : status === 'mine' ? { needsMyVote: true } : { status: [status] };
  const { approvals, error, loaded } = useApprovals(query, pending);
  const shown = inPageOrder(approvals, status === 'pending' || status === 'mine');
  return (
    <div className="chat-body approvals-page" data-testid="approvals-page">
      <header className="chat-header">
        <h2>Approvals</h2>
        <nav className="approval-filters" aria-label="Approval status">
          {APPROVAL_FILTERS.map((filter) => (
            <button
              key={filter}
              type="button"
              className={filter === status ? 'active' : ''}
              aria-pressed={filter === status}
              onClick={() => onFilter(filter)}
            >
              {FILTER_LABELS[filter]}
            </button>
          ))}
        </nav>
      </header>
      <ErrorNote text={error} />
      <div className="messages approvals-list">
        {loaded && shown.length === 0 && !error && (
          <p className="placeholder">
            {status === 'pending'
              ? 'Nothing waits for a decision.'
              : status === 'mine'
                ? 'Nothing waits for your vote.'
                : 'No approvals here yet.'}
          </p>
        )}
        {shown.map((approval) => (
          <article
            key={approval.uuid}
            className="approvals-item"
            data-testid="approvals-item"
            data-uuid={approval.uuid}
            data-status={approval.status}
            data-conversation={approval.conversation_id}
          >
            <p className="approvals-item-head">
              <button type="button" className="link-button" onClick={() => onOpen(approval.conversation_id)}>
                Conversation {approval.conversation_id.slice(0, 8)}
              </button>
              <span className="muted"> · requested {timeAgo(approval.requested_at, now, true)}</span>
            </p>
            {approval.status === 'pending' ? (
              <ApprovalCard approval={pendingApprovalOf(approval)} onDecided={onDecided} now={now} />
            ) : (
              <div className="message message-call">
                <div className="tool-head">
                  <span className="tool-icon" aria-hidden>
                    <Icon name="gear" />
                  </span>
                  <span>
                    <code>{approval.tool_name}</code> {approval.execution && <span className="muted">({approval.execution})</span>}
                  </span>
                </div>
                <Collapsible summary="arguments" text={prettyJson(approval.tool_args)} className="tool-arguments" />
                <DecisionTrace approval={approval} now={now} />
              </div>
            )}
          </article>
        ))}
      </div>
    </div>
  );
}
