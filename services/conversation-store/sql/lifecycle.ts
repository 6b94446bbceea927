import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import type { ClaimDecision, NewAuditRow } from '../changes.js';
import type { ApprovalRow } from '../rows.js';
import type { StoredConversation } from './conversation-changes.js';
import type { SqlStatements, SqlWrite } from './port.js';

/** The reason a pending approval of a deleted conversation is rejected with (the audit and the run see it). */
const DELETION_REASON = 'conversation deleted';

/** How a deletion rejects the conversation's pending approvals: whatever their expiry, while still pending. */
export function deletionRejection(actor: string, via: string): ClaimDecision {
  return {
    status: 'rejected',
    reason: DELETION_REASON,
    decided_by: actor,
    via: via || null,
    edited_args: null,
    decision_id: null,
    on_time: 0,
  };
}

/** The `conversation.deleted` audit entry: who, through which face, what it held (never its content). */
export function deletionAuditRow(
  conversation: StoredConversation,
  actor: string,
  via: string,
  rejected: readonly ApprovalRow[],
  at: string,
): NewAuditRow {
  const detail = {
    message_count: conversation.message_count,
    status: conversation.status,
    ...(conversation.owner ? { owner: conversation.owner } : {}),
    rejected_approvals: rejected.map((approval) => approval.uuid),
  };
  return { at, kind: 'conversation.deleted', actor, via, subject: conversation.id, detail_json: JSON.stringify(detail) };
}

/**
 * The last id of the longest prefix (in id order) of `head` whose rows are all older than `before`; 0 for none. Only a
 * prefix goes: a resume after any id within the window then finds every row after it, with no gap.
 */
function prefixOlderThan(head: readonly { id: number | string; created_at: string }[], before: string): number {
  let through = 0;
  for (const row of head) {
    if (row.created_at >= before) break;
    through = Number(row.id);
  }
  return through;
}

/**
 * Removes the events of the log's head older than `before` (at most `limit`, one short transaction); the consumers that
 * had not passed them are behind longer than the window: moved past them and named.
 */
export async function pruneEventHead(tx: SqlWrite, before: string, limit: number): Promise<pb.PruneEventsResponse> {
  const throughId = prefixOlderThan(await tx.all('oldestEvents', { limit }), before);
  if (throughId === 0) return { removed: 0, throughId: 0, skipped: [] };
  const behind = await tx.all<{ name: string; last_event_id: number | string }>('consumersBehind', { through_id: throughId });
  await tx.run('skipCursorsTo', { through_id: throughId });
  await tx.run('skipPublicationsTo', { through_id: throughId });
  const removed = await tx.run('deleteEventsThrough', { through_id: throughId });
  return { removed, throughId, skipped: behind.map((row) => ({ name: row.name, lastEventId: Number(row.last_event_id) })) };
}

/** Removes the audit trail's head older than `before` (at most `limit`), under a horizon set for this transaction only. */
export async function pruneAuditHead(tx: SqlStatements, before: string, limit: number): Promise<number> {
  const throughId = prefixOlderThan(await tx.all('oldestAudit', { limit }), before);
  if (throughId === 0) return 0;
  await tx.run('setAuditHorizon', { before });
  const removed = await tx.run('deleteAuditThrough', { through_id: throughId });
  await tx.run('setAuditHorizon', { before: null });
  return removed;
}
