import type { ConversationEvent } from '../../gen/ts/asg/store/v1/store.js';
import { verdictOfStatus, type Verdict } from './decision.js';
import {
  conversationStatusName,
  messageJson,
  pendingApprovalJson,
  toolCallJson,
  type ConversationStatusName,
  type MessageJson,
  type PendingApprovalJson,
  type ToolCallJson,
} from './shapes.js';

/**
 * The public JSON shape of a conversation event (store `ConversationEvent`), the same over
 * tRPC and plain SSE, with the REST shapes (M, P, the tool call) inside. `id` is the store's
 * event id: strictly increasing for stored events, what a client resumes from; 0 for
 * live-only events, which are never replayed.
 */

interface EventBase {
  id: number;
  conversation_id: string;
  at: string;
}

/** Events the store keeps: replayed to a watcher that resumes after an earlier id. */
export type StoredEventJson = EventBase &
  (
    | { kind: 'message_added'; message: MessageJson }
    | { kind: 'approval_requested'; approval: PendingApprovalJson }
    /** `decision` is what the approval left pending as; absent if the store sent it still pending. */
    | { kind: 'approval_resolved'; approval: PendingApprovalJson; decision?: Verdict }
    /** A pending approval escalated (an approval policy's escalate): the approval as it stands now. */
    | { kind: 'approval_escalated'; approval: PendingApprovalJson }
    | { kind: 'status_changed'; status: ConversationStatusName }
    /** A turn began / ended: between the two, a message sent to the conversation is refused (409). */
    | { kind: 'turn_started' }
    | { kind: 'turn_ended' }
    /** The conversation was deleted: the last event of its stream, which then ends. */
    | { kind: 'conversation_deleted' }
  );

/** Events only a watcher connected at that moment sees: the turn as it happens. */
type LiveEventJson = EventBase &
  (
    | { kind: 'tool_call_started'; tool_call: ToolCallJson }
    | { kind: 'tool_call_finished'; tool_call: ToolCallJson }
    | { kind: 'text_delta'; text: string; node?: string }
  );

export type ConversationEventJson = StoredEventJson | LiveEventJson;

/** Whether a client can resume after this event: only stored events have an id (> 0). */
export function isResumable(event: { id: number }): boolean {
  return event.id > 0;
}

/**
 * The JSON of one store event; undefined for an event whose kind this gateway does not
 * know (a newer store): a watcher skips it rather than failing the stream.
 */
export function conversationEventJson(event: ConversationEvent): ConversationEventJson | undefined {
  const base: EventBase = { id: event.id, conversation_id: event.conversationId, at: event.at ? event.at.toISOString() : '' };
  if (event.messageAdded) return { ...base, kind: 'message_added', message: messageJson(event.messageAdded) };
  if (event.approvalRequested) return { ...base, kind: 'approval_requested', approval: pendingApprovalJson(event.approvalRequested) };
  if (event.approvalResolved) {
    const decision = verdictOfStatus(event.approvalResolved.status);
    return { ...base, kind: 'approval_resolved', approval: pendingApprovalJson(event.approvalResolved), ...(decision && { decision }) };
  }
  if (event.approvalEscalated) return { ...base, kind: 'approval_escalated', approval: pendingApprovalJson(event.approvalEscalated) };
  if (event.statusChanged !== undefined) return { ...base, kind: 'status_changed', status: conversationStatusName(event.statusChanged) };
  if (event.turnStarted) return { ...base, kind: 'turn_started' };
  if (event.turnEnded) return { ...base, kind: 'turn_ended' };
  if (event.conversationDeleted) return { ...base, kind: 'conversation_deleted' };
  if (event.toolCallStarted) return { ...base, kind: 'tool_call_started', tool_call: toolCallJson(event.toolCallStarted) };
  if (event.toolCallFinished) return { ...base, kind: 'tool_call_finished', tool_call: toolCallJson(event.toolCallFinished) };
  if (event.textDelta)
    return { ...base, kind: 'text_delta', text: event.textDelta.text, ...(event.textDelta.node && { node: event.textDelta.node }) };
  return undefined;
}
