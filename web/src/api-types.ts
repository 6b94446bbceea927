import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../gateway/trpc/router.js';

/**
 * The gateway's types, as the web app uses them. Everything comes from the gateway's
 * sources (type-only imports, erased from the bundle), so a change to a shape there is a
 * type error here.
 */
export type { AppRouter };
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;

export type ConversationReply = RouterOutputs['conversations']['get'];
export type ConversationList = RouterOutputs['conversations']['list'];
export type ApprovalList = RouterOutputs['approvals']['list'];
export type { ApprovalRecordJson, ConversationJson, ConversationListItemJson, MessageJson, PendingApprovalJson, ToolCallJson, ConversationStatusName } from '../../gateway/app/shapes.js';
export type { ApprovalStatusName } from '../../gateway/app/decision.js';
export type { ConversationEventJson, LiveEventJson, StoredEventJson } from '../../gateway/app/events.js';
export type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
export type { PendingApprovalUpdate } from '../../gateway/app/pending-approval-updates.js';

/** What a subscription hands over: a stored event as tRPC's `{ id, data }`, anything else as sent. */
export type Received<T> = T | { id: string; data: T };

/** Every update this app subscribes to has a `kind`; tRPC's wrapper of a tracked one does not. */
export function unwrapReceived<T extends { kind: string }>(received: Received<T>): T {
  return 'kind' in received ? received : received.data;
}
