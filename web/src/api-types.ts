import type { AppRouter } from '../../gateway/trpc/router.js';

/**
 * The gateway's types, as the web app uses them. Everything comes from the gateway's
 * sources (type-only imports, erased from the bundle), so a change to a shape there is a
 * type error here.
 */
export type { AppRouter };
export type {
  ApprovalRecordJson,
  ConversationJson,
  ConversationListItemJson,
  MessageJson,
  PendingApprovalJson,
  ToolCallJson,
  ConversationStatusName,
} from '../../gateway/app/shapes.js';
export type { ApprovalStatusName } from '../../gateway/app/decision.js';
export type { RunJson, RunStepJson, RunSummaryJson } from '../../gateway/app/run-shapes.js';
export type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
export type { PendingApprovalUpdate } from '../../gateway/app/pending-approval-updates.js';

/** What a subscription hands over: a stored event as tRPC's `{ id, data }`, anything else as sent. */
export type Received<T> = T | { id: string; data: T };

/** Every update this app subscribes to has a `kind`; tRPC's wrapper of a tracked one does not. */
export function unwrapReceived<T extends { kind: string }>(received: Received<T>): T {
  return 'kind' in received ? received : received.data;
}
