import type { ReactNode } from 'react';
import type { MessageJson } from '../api-types.js';
import { Collapsible, prettyJson } from './Collapsible.js';

function NodeName({ node }: { node?: string }) {
  return node ? (
    <span className="node-name" title="agent-tree node">
      {node}
    </span>
  ) : null;
}

/**
 * One stored message: user and assistant text, a tool call with its arguments, a tool's result.
 * A call that waits for approval leaves its arguments to the approval card (shown once, editable
 * there); `trace` is the decision made on the call, shown under it.
 */
export function MessageItem({
  message,
  awaitingApproval = false,
  trace,
}: {
  message: MessageJson;
  awaitingApproval?: boolean;
  trace?: ReactNode;
}) {
  const call = message.tool_call;
  if (message.role === 'system') {
    return (
      <div className="message message-system" data-testid="message" data-role="system">
        <Collapsible summary="system" text={message.content} />
      </div>
    );
  }
  if (message.role === 'tool' && call) {
    // A rejection is a human's "no", not a broken tool: it is never shown as failed.
    const outcome = call.rejected ? 'rejected' : call.is_error === true ? 'failed' : 'returned';
    return (
      <div
        className={`message message-tool ${outcome === 'returned' ? '' : outcome}`}
        data-testid="message"
        data-role="tool"
        data-outcome={outcome}
      >
        <div className="tool-head">
          <span className="tool-icon" aria-hidden>
            {outcome === 'rejected' ? '✋' : outcome === 'failed' ? '⚠' : '✓'}
          </span>
          <span>
            <code>{call.name}</code> {outcome}
            {outcome === 'rejected' && call.reason && <span className="reject-reason">: {call.reason}</span>}
          </span>
          <NodeName node={message.node} />
        </div>
        <Collapsible summary="output" text={call.result ?? message.content} className="tool-output" />
      </div>
    );
  }
  if (message.role === 'assistant' && call) {
    return (
      <div className="message message-call" data-testid="message" data-role="tool-call">
        <div className="tool-head">
          <span className="tool-icon" aria-hidden>
            ⚙
          </span>
          <span>
            calls <code>{call.name}</code>
          </span>
          <NodeName node={message.node} />
        </div>
        {message.content && <p className="call-note">{message.content}</p>}
        {awaitingApproval ? (
          <p className="call-awaiting" data-testid="call-awaiting">
            waits for your approval below
          </p>
        ) : (
          <Collapsible summary="arguments" text={prettyJson(call.arguments)} className="tool-arguments" />
        )}
        {trace}
      </div>
    );
  }
  return (
    <div className={`message message-${message.role}`} data-testid="message" data-role={message.role}>
      <NodeName node={message.node} />
      <div className="bubble">{message.content}</div>
    </div>
  );
}
