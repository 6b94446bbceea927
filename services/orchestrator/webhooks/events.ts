import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { approvalRecordJson, type ApprovalRecordJson } from '../../common/approval-resource.js';
import type { WEBHOOK_EVENTS } from '../../common/config/schema.js';

/**
 * Which stored events a webhook hears of, and what it is sent. Pure.
 *   approval_requested                      → approval.requested
 *   approval_resolved                       → approval.decided
 *   approval_escalated                      → approval.escalated
 *   turn_ended, outcome answered | paused   → run.completed
 *   turn_ended, outcome failed | interrupted → run.failed
 * Everything else (messages, status changes, live events, turn ends of releases that did
 * not record their outcome) is no webhook's business.
 */

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** The JSON body of one delivery: `{type, timestamp, data}` as the Standard Webhooks spec suggests. */
export interface WebhookPayload {
  type: WebhookEventType;
  /** When the event happened (the store's time), ISO 8601. */
  timestamp: string;
  /** approval.*: the approval exactly as `GET /approvals/:uuid` shows it; run.*: the conversation and the outcome. */
  data: ApprovalRecordJson | { conversation_id: string; outcome: string };
}

const COMPLETED = new Set(['answered', 'paused']);
const FAILED = new Set(['failed', 'interrupted']);

/** The webhook event a stored event stands for; undefined when it stands for none. */
export function webhookPayload(event: ConversationEvent): WebhookPayload | undefined {
  const timestamp = (event.at ?? new Date()).toISOString();
  if (event.approvalRequested) return { type: 'approval.requested', timestamp, data: approvalRecordJson(event.approvalRequested) };
  if (event.approvalResolved) return { type: 'approval.decided', timestamp, data: approvalRecordJson(event.approvalResolved) };
  if (event.approvalEscalated) return { type: 'approval.escalated', timestamp, data: approvalRecordJson(event.approvalEscalated) };
  const outcome = event.turnEnded?.outcome;
  if (outcome === undefined) return undefined;
  const data = { conversation_id: event.conversationId, outcome };
  if (COMPLETED.has(outcome)) return { type: 'run.completed', timestamp, data };
  if (FAILED.has(outcome)) return { type: 'run.failed', timestamp, data };
  return undefined;
}

/**
 * The stored event kind (store.proto's field name in ConversationEvent's `kind`) each webhook event comes from, as
 * `webhookPayload` maps them: a webhook's stream needs only the kinds of the events it subscribed to.
 */
const STORED_KIND: Record<WebhookEventType, string> = {
  'approval.requested': 'approval_requested',
  'approval.decided': 'approval_resolved',
  'approval.escalated': 'approval_escalated',
  'run.completed': 'turn_ended',
  'run.failed': 'turn_ended',
};

/** The stored event kinds the webhook events come from (WatchEventsRequest.kinds), each once. */
export function storedKindsOf(events: Iterable<WebhookEventType>): string[] {
  return [...new Set([...events].map((type) => STORED_KIND[type]))];
}

/** The webhook-id of an event for an endpoint: the same at every attempt, so a receiver can drop a repeat. */
export function webhookId(endpoint: string, eventId: number): string {
  return `msg_${endpoint.slice(0, 16)}_${eventId}`;
}
