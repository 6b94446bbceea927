import type { ReactNode } from 'react';
import type { MessageJson } from '../api-types.js';
import { Collapsible, prettyJson } from './Collapsible.js';
import { Icon } from './Icons.js';
import { descriptionWithoutArguments } from '../state/edited-arguments.js';
import { runHref } from '../state/run-links.js';

function NodeName({ node }: { node?: string }) {
  return node ? (
    <span className="node-name" title="agent-tree node">
      {node}
    </span>
  ) : null;
}

function callNoteWithoutArguments(content: string, name: string, args: Record<string, unknown>): string {
  const note = descriptionWithoutArguments(content, args);
  return note === `Calling ${name}` ? '' : note;
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
  onRetry,
  runId,
}: {
  message: MessageJson;
  /** A user message: the run it started, linked to the run's page. */
  runId?: string | undefined;
  awaitingApproval?: boolean;
  trace?: ReactNode;
  /** Given for a failed turn that can be tried again: sends its message once more. */
  onRetry?: () => void;
}) {
  const call = message.tool_call;
  if (message.role === 'assistant' && message.is_error) {
    return (
      <div className="message message-assistant message-error" data-testid="message" data-role="assistant" data-error="true" role="alert">
        <NodeName node={message.node} />
        <div className="bubble">
          <span className="error-title">
            <Icon name="warning" /> The agent could not answer
          </span>
          <span className="error-detail">{message.content}</span>
        </div>
        {onRetry && (
          <button type="button" className="retry" onClick={onRetry}>
            Try again
          </button>
        )}
      </div>
    );
  }
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
            <Icon name={outcome === 'rejected' ? 'stop' : outcome === 'failed' ? 'warning' : 'check'} />
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
    // Waiting, the call's arguments are the card's to show: the note keeps only its own words.
    const note = awaitingApproval ? callNoteWithoutArguments(message.content, call.name, call.arguments) : message.content;
    return (
      <div className="message message-call" data-testid="message" data-role="tool-call">
        <div className="tool-head">
          <span className="tool-icon" aria-hidden>
            <Icon name="gear" />
          </span>
          <span>
            calls <code>{call.name}</code>
          </span>
          <NodeName node={message.node} />
        </div>
        {note && <p className="call-note">{note}</p>}
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
      {runId && message.role === 'user' && (
        <a className="run-link" href={runHref(runId)} data-testid="run-link" title="what this message's run did, step by step">
          run
        </a>
      )}
    </div>
  );
}
