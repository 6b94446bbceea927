import { useEffect, useRef } from 'react';
import type { ApprovalRecordJson, ConversationJson, MessageJson } from '../api-types.js';
import type { LiveStatus } from '../hooks/use-conversation.js';
import { runsHash } from '../hooks/use-route.js';
import type { ChatState, TurnStep } from '../state/conversation-state.js';
import { placeApprovals } from '../state/decision-trace.js';
import { ApprovalCard } from './ApprovalCard.js';
import { DecisionTrace } from './DecisionTrace.js';
import { Composer } from './Composer.js';
import { ErrorNote } from './ErrorNote.js';
import { Icon } from './Icons.js';
import { MessageItem } from './MessageItem.js';
import { StatusBadge } from './StatusBadge.js';

export interface ChatViewProps {
  chat: ChatState;
  loadError?: string;
  live: LiveStatus;
  /** The text of a message on its way (shown until the conversation has it). */
  sending?: string;
  sendError?: string;
  onSend(text: string): void;
  onDismissSendError(): void;
  onDecided(conversation: ConversationJson): void;
  /** Every approval of the conversation (`approvals.list`): the decided ones get a trace under their call. */
  approvals: ApprovalRecordJson[];
  /** For "2 min ago". */
  now: number;
  /** The run each user message started, by message id (state/run-links.ts): a link to the run's page. */
  runLinks?: ReadonlyMap<string, string>;
}

/** Before the first message: what the agent does, and the message box. */
export function NewChatView({
  sending,
  sendError,
  onSend,
  onDismissSendError,
}: Pick<ChatViewProps, 'sending' | 'sendError' | 'onSend' | 'onDismissSendError'>) {
  return (
    <div className="chat-body">
      <header className="chat-header">
        <h2>New conversation</h2>
      </header>
      <div className="messages">
        <p className="placeholder intro">
          Ask the agent to do something. It calls its tools on its own, and stops to ask you before any call that changes something.
        </p>
        {sending !== undefined && (
          <div className="message message-user sending" data-testid="sending">
            <div className="bubble">{sending}</div>
          </div>
        )}
      </div>
      <ErrorNote text={sendError} onDismiss={onDismissSendError} />
      <Composer onSend={onSend} busy={sending !== undefined} />
    </div>
  );
}

function LiveNote({ live }: { live: LiveStatus }) {
  if (live.state === 'live') return null;
  const text =
    live.state === 'failed'
      ? `Live updates stopped: ${live.reason}`
      : live.reason
        ? `Live updates unavailable (${live.reason}); reading the conversation every few seconds`
        : 'Connecting…';
  return (
    <p className={`live-note live-${live.state}`} data-testid="live-status">
      {text}
    </p>
  );
}

/** Why the message box is disabled, if it is: a decision is awaited, or a turn runs (one at a time per conversation). */
function composerNote(waiting: boolean, turnRunning: boolean): string | undefined {
  if (waiting) return 'Waiting for your decision above before sending more.';
  if (turnRunning) return 'The agent is working on this conversation; you can send your next message when it has finished.';
  return undefined;
}

/**
 * A turn that could not go on can be tried again: when the conversation ends with its error
 * and nothing runs or waits, the user message before it is sent once more.
 */
function retryOf(messages: MessageJson[], busy: boolean): { failedId: string; text: string } | undefined {
  const last = messages.at(-1);
  if (busy || !last?.is_error) return undefined;
  const asked = messages.findLast((message) => message.role === 'user');
  return asked ? { failedId: last.id, text: asked.content } : undefined;
}

/**
 * What the running turn does, as it happens: each tool call (running, then finished or
 * failed — kept until the turn ends), and the model at work when no tool runs and no text
 * is coming in yet.
 */
function TurnProgress({ steps, writing }: { steps: TurnStep[]; writing: boolean }) {
  const toolRunning = steps.some((step) => step.state === 'running');
  // The text coming in shows for itself.
  if (steps.length === 0 && writing) return null;
  return (
    <ol className="turn-progress" data-testid="turn-progress" aria-label="What the agent is doing" aria-live="polite">
      {steps.map((step, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: steps carry no id; they are only ever appended, never reordered.
        <li key={`${step.call.name}-${index}`} className={`turn-step step-${step.state}`} data-testid="turn-step" data-state={step.state}>
          {step.state === 'running' ? (
            <span className="spinner" aria-hidden />
          ) : (
            <Icon name={step.state === 'failed' ? 'warning' : 'check'} />
          )}{' '}
          <code>{step.call.name}</code> {step.state === 'running' ? 'running…' : step.state}
        </li>
      ))}
      {!toolRunning && !writing && (
        <li className="turn-step step-thinking" data-testid="turn-step" data-state="thinking">
          <span className="spinner" aria-hidden /> the model is thinking…
        </li>
      )}
    </ol>
  );
}

/** The open conversation: its messages, what is streaming in, the approvals it waits for, and the message box. */
export function ChatView({
  chat,
  loadError,
  live,
  sending,
  sendError,
  onSend,
  onDismissSendError,
  onDecided,
  approvals,
  now,
  runLinks,
}: ChatViewProps) {
  const { conversation, streaming, steps } = chat;
  const end = useRef<HTMLDivElement>(null);
  const messageCount = conversation?.messages.length ?? 0;
  const streamedLength = streaming.reduce((sum, entry) => sum + entry.text.length, 0);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messageCount, streamedLength, sending, steps.length]);

  if (!conversation) {
    return (
      <div className="chat-body">
        <ErrorNote text={loadError} />
        {!loadError && <p className="placeholder">Loading…</p>}
      </div>
    );
  }
  const pending = conversation.pending_approvals ?? (conversation.pending_approval ? [conversation.pending_approval] : []);
  const waiting = conversation.status === 'waiting_approval';
  // The message on its way is shown until the store has it.
  const lastUser = [...conversation.messages].reverse().find((message) => message.role === 'user');
  const showSending = sending !== undefined && lastUser?.content !== sending;
  const placed = placeApprovals(conversation.messages, approvals, pending);
  const turnRunning = conversation.turn_running === true || sending !== undefined;
  const retry = retryOf(conversation.messages, turnRunning || waiting);

  return (
    <div className="chat-body">
      <header className="chat-header">
        <h2>Conversation</h2>
        <StatusBadge status={conversation.status} />
        <a className="header-link" href={runsHash(conversation.id)} data-testid="runs-link">
          Runs
        </a>
        <code className="conversation-id">{conversation.id.slice(0, 8)}</code>
      </header>
      <LiveNote live={live} />
      <ErrorNote text={loadError} />
      <div className="messages" data-testid="messages">
        {placed.unplaced.map((approval) => (
          <DecisionTrace key={approval.uuid} approval={approval} now={now} />
        ))}
        {conversation.messages.map((message) => (
          <MessageItem
            key={message.id}
            message={message}
            awaitingApproval={placed.awaiting.has(message.id)}
            runId={runLinks?.get(message.id)}
            trace={placed.byMessage.get(message.id)?.map((approval) => <DecisionTrace key={approval.uuid} approval={approval} now={now} />)}
            {...(retry?.failedId === message.id && { onRetry: () => onSend(retry.text) })}
          />
        ))}
        {showSending && (
          <div className="message message-user sending" data-testid="sending">
            <div className="bubble">{sending}</div>
          </div>
        )}
        {turnRunning && !waiting && <TurnProgress steps={steps} writing={streaming.length > 0} />}
        {streaming.map((entry) => (
          <div key={entry.node} className="message message-assistant streaming" data-testid="streaming">
            {entry.node && <span className="node-name">{entry.node}</span>}
            <div className="bubble">
              {entry.text}
              <span className="caret" aria-hidden />
            </div>
          </div>
        ))}
        {pending.map((approval) => (
          <ApprovalCard key={approval.uuid} approval={approval} onDecided={onDecided} now={now} />
        ))}
        <div ref={end} />
      </div>
      <ErrorNote text={sendError} onDismiss={onDismissSendError} />
      <Composer onSend={onSend} busy={sending !== undefined} disabledReason={composerNote(waiting, turnRunning)} />
    </div>
  );
}
