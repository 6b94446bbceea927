import { useEffect, useRef } from 'react';
import type { ApprovalRecordJson, ConversationJson } from '../api-types.js';
import type { LiveStatus } from '../hooks/use-conversation.js';
import type { ChatState } from '../state/conversation-state.js';
import { placeApprovals } from '../state/decision-trace.js';
import { ApprovalCard } from './ApprovalCard.js';
import { DecisionTrace } from './DecisionTrace.js';
import { Composer } from './Composer.js';
import { ErrorNote } from './ErrorNote.js';
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
  if (waiting) return 'Waiting for your decision above: approve or reject before sending more.';
  if (turnRunning) return 'The agent is working on this conversation; you can send your next message when it has finished.';
  return undefined;
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
}: ChatViewProps) {
  const { conversation, streaming, toolsInFlight } = chat;
  const end = useRef<HTMLDivElement>(null);
  const messageCount = conversation?.messages.length ?? 0;
  const streamedLength = streaming.reduce((sum, entry) => sum + entry.text.length, 0);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messageCount, streamedLength, sending]);

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

  return (
    <div className="chat-body">
      <header className="chat-header">
        <h2>Conversation</h2>
        <StatusBadge status={conversation.status} />
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
            trace={placed.byMessage.get(message.id)?.map((approval) => <DecisionTrace key={approval.uuid} approval={approval} now={now} />)}
          />
        ))}
        {showSending && (
          <div className="message message-user sending" data-testid="sending">
            <div className="bubble">{sending}</div>
          </div>
        )}
        {toolsInFlight.map((call, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: calls in flight carry no id, and their rows hold no state to lose.
          <div key={`${call.name}-${index}`} className="message message-call in-flight" data-testid="tool-in-flight">
            <div className="tool-head">
              <span className="spinner" aria-hidden /> running <code>{call.name}</code>…
            </div>
          </div>
        ))}
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
      <Composer
        onSend={onSend}
        busy={sending !== undefined}
        disabledReason={composerNote(waiting, conversation.turn_running === true || sending !== undefined)}
      />
    </div>
  );
}
