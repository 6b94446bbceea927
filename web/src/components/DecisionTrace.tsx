import type { ApprovalRecordJson } from '../api-types.js';
import { decisionTrace } from '../state/decision-trace.js';
import { Collapsible, prettyJson } from './Collapsible.js';

/** Under a call that waited for approval: "approved by alice · 2 min ago", the reason, and the arguments it ran with if edited. */
export function DecisionTrace({ approval, now }: { approval: ApprovalRecordJson; now: number }) {
  const trace = decisionTrace(approval, now);
  if (!trace) return null;
  return (
    <div
      className={`decision-trace decision-${trace.outcome}`}
      data-testid="decision-trace"
      data-uuid={approval.uuid}
      data-outcome={trace.outcome}
    >
      <span className="decision-text" title={[approval.decided_at, approval.via && `via ${approval.via}`].filter(Boolean).join(' ')}>
        {trace.text}
      </span>
      {trace.reason && <span className="decision-reason">: “{trace.reason}”</span>}
      {trace.editedArgs && (
        <Collapsible summary="ran with edited arguments" text={prettyJson(trace.editedArgs)} className="decision-edited" />
      )}
    </div>
  );
}
