import { useState } from 'react';
import type { ConversationJson, PendingApprovalJson } from '../api-types.js';
import { api, errorText } from '../trpc.js';
import { ErrorNote } from './ErrorNote.js';
import { Collapsible, prettyJson } from './Collapsible.js';

/**
 * A call that waits for a human: the tool, its arguments as they will run, the agent's
 * description, and for a proxy approval the agents it passes through. Approving runs the
 * stored call and the agent goes on — that can take a while, so the card says so.
 */
export function ApprovalCard({ approval, onDecided, compact = false }: { approval: PendingApprovalJson; onDecided(conversation: ConversationJson): void; compact?: boolean }) {
  const [deciding, setDeciding] = useState<'approve' | 'reject'>();
  const [error, setError] = useState<string>();
  // Told to the model with a rejection (issue 13), so that it knows why and does not ask again.
  const [reason, setReason] = useState('');

  const decide = async (approved: boolean) => {
    setDeciding(approved ? 'approve' : 'reject');
    setError(undefined);
    try {
      const said = reason.trim();
      const { conversation } = await api.approvals.resolve.mutate({ uuid: approval.uuid, approved, ...(!approved && said && { reason: said }) });
      onDecided(conversation);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setDeciding(undefined);
    }
  };

  const chain = approval.agent_chain;
  return (
    <section className={`approval-card ${compact ? 'compact' : ''}`} data-testid="approval-card" data-uuid={approval.uuid} aria-label={`Approval for ${approval.tool_name}`}>
      <header>
        <span className="approval-label">{approval.outcome_unknown ? 'Outcome unknown' : 'Approval needed'}</span>
        <code className="approval-tool">{approval.tool_name}</code>
      </header>
      {approval.outcome_unknown && (
        <p className="approval-outcome-unknown" data-testid="outcome-unknown" role="note">
          This call was approved and had started when the service running it stopped: it may already have taken effect. Approving runs it again.
        </p>
      )}
      <p className="approval-description">{approval.description}</p>
      {chain && chain.length > 0 && (
        <p className="approval-chain" data-testid="agent-chain">
          held by{' '}
          {chain.map((agent, index) => (
            <span key={`${agent}-${index}`}>
              {index > 0 && <span className="chain-arrow"> → </span>}
              <span className="chain-agent">{agent}</span>
            </span>
          ))}
        </p>
      )}
      <Collapsible summary="arguments" text={prettyJson(approval.tool_args)} open={!compact} className="approval-arguments" />
      <input
        type="text"
        className="reject-reason-input"
        data-testid="reject-reason"
        aria-label="Reason for rejecting (optional)"
        placeholder="Reason, if you reject (optional)"
        maxLength={2000}
        value={reason}
        disabled={deciding !== undefined}
        onChange={(event) => setReason(event.target.value)}
      />
      <div className="approval-actions">
        <button type="button" className="approve" disabled={deciding !== undefined} onClick={() => void decide(true)}>
          {deciding === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button type="button" className="reject" disabled={deciding !== undefined} onClick={() => void decide(false)}>
          {deciding === 'reject' ? 'Rejecting…' : 'Reject'}
        </button>
      </div>
      <ErrorNote text={error} onDismiss={() => setError(undefined)} />
      {!compact && <p className="approval-uuid">id {approval.uuid}</p>}
    </section>
  );
}
