import { useMemo, useState } from 'react';
import type { ConversationJson, PendingApprovalJson } from '../api-types.js';
import { quorumText } from '../../../services/common/quorum-text.js';
import { useInputRequest } from '../hooks/use-input-request.js';
import { useViewer } from '../hooks/use-viewer.js';
import { timeAgo } from '../state/decision-trace.js';
import { descriptionWithoutArguments, formatArguments, readArgumentsEdit } from '../state/edited-arguments.js';
import { api, errorText } from '../trpc.js';
import { ErrorNote } from './ErrorNote.js';
import { InputForm } from './InputForm.js';

function approveLabel(deciding: boolean, answering: boolean, edited: boolean): string {
  if (answering) return deciding ? 'Sending…' : 'Send answer';
  if (deciding) return 'Approving…';
  return edited ? 'Approve edited' : 'Approve';
}

/**
 * A call that waits for a human: the tool, its arguments — shown once, formatted, and editable
 * before approving (edited arguments are checked against the tool's schema and the
 * call runs with them) — the agent's description, and for a proxy approval the agents it passes
 * through. One Approve and one Reject (with an optional reason) per call. Approving runs the
 * call and the agent goes on — that can take a while, so the card says so. An MCP server's
 * question (an approval of kind `input`) shows the question and a form instead of the
 * arguments: Send answer, or Decline.
 */
export function ApprovalCard({
  approval,
  onDecided,
  compact = false,
  now,
}: {
  approval: PendingApprovalJson;
  onDecided(conversation: ConversationJson): void;
  compact?: boolean;
  now: number;
}) {
  const [deciding, setDeciding] = useState<'approve' | 'reject'>();
  const [error, setError] = useState<string>();
  // Told to the model with a rejection, so that it knows why and does not ask again.
  const [reason, setReason] = useState('');
  const original = useMemo(() => formatArguments(approval.tool_args), [approval.tool_args]);
  const [argumentsText, setArgumentsText] = useState(original);
  const edit = useMemo(() => readArgumentsEdit(argumentsText, approval.tool_args), [argumentsText, approval.tool_args]);
  // An MCP server's question is answered, not approved: a form instead of the arguments.
  const inputRequest = useInputRequest(approval.uuid);
  const [inputAnswer, setInputAnswer] = useState<{ answer: Record<string, unknown> } | { problem: string }>({ problem: '' });
  const cannotApprove = inputRequest ? 'problem' in inputAnswer : edit.kind === 'invalid';
  // A call that needs several people: where its quorum stands, and a vote that did not complete it.
  const viewer = useViewer(approval.required !== undefined);
  const standing = quorumText(approval, (iso) => timeAgo(iso, now), viewer);
  const [voted, setVoted] = useState<string>();

  const decide = async (approved: boolean) => {
    setDeciding(approved ? 'approve' : 'reject');
    setError(undefined);
    try {
      const said = reason.trim();
      const reply = await api.approvals.resolve.mutate({
        uuid: approval.uuid,
        approved,
        ...(said && { reason: said }),
        // Sent only when changed: an unchanged call runs as the model asked for it.
        ...(approved && !inputRequest && edit.kind === 'edited' && { arguments: edit.value }),
        ...(approved && inputRequest && 'answer' in inputAnswer && { input: inputAnswer.answer }),
      });
      if ('votes' in reply)
        setVoted(`Your vote is recorded: ${reply.votes} of ${reply.required} approvals. The call runs once the quorum is complete.`);
      else onDecided(reply.conversation);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setDeciding(undefined);
    }
  };

  const chain = approval.agent_chain;
  const busy = deciding !== undefined;
  const rows = Math.min(12, Math.max(2, argumentsText.split('\n').length));
  const editor = (
    <div className="arguments-edit">
      <textarea
        className="arguments-editor"
        data-testid="arguments-editor"
        aria-label={`Arguments of ${approval.tool_name} (editable before approving)`}
        spellCheck={false}
        rows={rows}
        value={argumentsText}
        disabled={busy}
        aria-invalid={edit.kind === 'invalid'}
        onChange={(event) => setArgumentsText(event.target.value)}
      />
      {edit.kind === 'invalid' && (
        <p className="arguments-problem" data-testid="arguments-problem" role="alert">
          {edit.message} Approve is disabled until they are.
        </p>
      )}
      {edit.kind === 'edited' && (
        <p className="arguments-edited" data-testid="arguments-edited">
          Edited: approving runs the call with these arguments.{' '}
          <button type="button" className="link-button" disabled={busy} onClick={() => setArgumentsText(original)}>
            Undo edits
          </button>
        </p>
      )}
    </div>
  );
  return (
    <section
      className={`approval-card ${compact ? 'compact' : ''}`}
      data-testid="approval-card"
      data-uuid={approval.uuid}
      aria-label={`Approval for ${approval.tool_name}`}
    >
      <header>
        <span className="approval-label">
          {approval.outcome_unknown ? 'Outcome unknown' : inputRequest ? 'Question' : 'Approval needed'}
        </span>
        <code className="approval-tool">{approval.tool_name}</code>
        {approval.expires_at && (
          <span className="approval-expiry" data-testid="approval-expiry" title={approval.expires_at}>
            {approval.on_timeout === 'approve' ? 'approved' : 'rejected'} automatically {timeAgo(approval.expires_at, now) || 'soon'}
          </span>
        )}
      </header>
      {standing && (
        <p className="approval-quorum" data-testid="approval-quorum">
          {standing}
        </p>
      )}
      {voted && (
        <p className="approval-voted" data-testid="approval-voted" role="status">
          {voted}
        </p>
      )}
      {approval.outcome_unknown && (
        <p className="approval-outcome-unknown" data-testid="outcome-unknown" role="note">
          This call was approved and had started when the service running it stopped: it may already have taken effect. Approving runs it
          again.
        </p>
      )}
      {inputRequest ? (
        <InputForm request={inputRequest} disabled={busy} onChange={setInputAnswer} />
      ) : (
        <p className="approval-description">{descriptionWithoutArguments(approval.description, approval.tool_args)}</p>
      )}
      {chain && chain.length > 0 && (
        <p className="approval-chain" data-testid="agent-chain">
          held by{' '}
          {chain.map((agent, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a chain may name one agent twice, and it is shown whole, never reordered.
            <span key={`${agent}-${index}`}>
              {index > 0 && <span className="chain-arrow"> → </span>}
              <span className="chain-agent">{agent}</span>
            </span>
          ))}
        </p>
      )}
      {inputRequest ? (
        'problem' in inputAnswer &&
        inputAnswer.problem && (
          <p className="arguments-problem" data-testid="input-problem">
            {inputAnswer.problem}
          </p>
        )
      ) : compact ? (
        <details className="collapsible approval-arguments">
          <summary>arguments{edit.kind === 'edited' ? ' (edited)' : ''}</summary>
          {editor}
        </details>
      ) : (
        <div className="approval-arguments">{editor}</div>
      )}
      <input
        type="text"
        className="reject-reason-input"
        data-testid="reject-reason"
        aria-label="Reason (optional)"
        placeholder={inputRequest ? 'Reason for declining (optional)' : 'Reason (optional), told to the agent'}
        maxLength={2000}
        value={reason}
        disabled={busy}
        onChange={(event) => setReason(event.target.value)}
      />
      <div className="approval-actions">
        <button type="button" className="approve" disabled={busy || cannotApprove} onClick={() => void decide(true)}>
          {approveLabel(deciding === 'approve', inputRequest !== undefined, edit.kind === 'edited')}
        </button>
        <button type="button" className="reject" disabled={busy} onClick={() => void decide(false)}>
          {deciding === 'reject' ? (inputRequest ? 'Declining…' : 'Rejecting…') : inputRequest ? 'Decline' : 'Reject'}
        </button>
      </div>
      <ErrorNote text={error} onDismiss={() => setError(undefined)} />
      {!compact && <p className="approval-uuid">id {approval.uuid}</p>}
    </section>
  );
}
