import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { approvalPage, auditPage, FIRST_APPROVAL, listedStatuses, newestFirst, oldestFirst } from '../changes.js';
import { storedId } from '../ids.js';
import { decodeApprovalsPageToken, decodeAuditPageToken, decodePageToken, encodePageToken } from '../page-token.js';
import { isoTimestamp } from '../records.js';
import { type ApprovalRow, type AuditRow, approvalFromRow, auditEntryFromRow } from '../rows.js';
import { type ApprovalPage, type AuditPage, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../storage.js';
import { FIRST_UUID } from './lookups.js';
import type { SqlStatements } from './port.js';

// Each page is one walk of an index (or one per status or kind, merged) from the cursor, one row longer than the page.

const pageSize = (asked: number) => Math.min(asked || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);

export async function listPendingApprovals(
  tx: SqlStatements,
  request: pb.ListPendingApprovalsRequest,
): Promise<{ approvals: pb.PendingApproval[]; nextPageToken: string }> {
  const limit = pageSize(request.pageSize);
  const cursor = request.pageToken === '' ? undefined : decodePageToken(request.pageToken, 'ListPendingApprovals');
  const rows = cursor
    ? await tx.all<ApprovalRow>('pendingApprovalsPageAfter', {
        created_at: cursor.createdAt,
        uuid: storedId(cursor.id) ?? FIRST_UUID,
        limit: limit + 1,
      })
    : await tx.all<ApprovalRow>('pendingApprovalsFirstPage', { limit: limit + 1 });
  return approvalPage(rows, limit, encodePageToken);
}

export async function listApprovals(tx: SqlStatements, request: pb.ListApprovalsRequest): Promise<ApprovalPage> {
  const limit = pageSize(request.pageSize);
  const cursor = request.pageToken === '' ? FIRST_APPROVAL : decodeApprovalsPageToken(request.pageToken);
  const statuses = listedStatuses(request.statuses);
  const after = { created_at: cursor.createdAt, uuid: cursor.id, limit: limit + 1 };
  if (request.conversationId === '') {
    const walks = await Promise.all(statuses.map((status) => tx.all<ApprovalRow>('approvalsOfStatusAfter', { ...after, status })));
    return approvalPage(oldestFirst(walks, limit + 1), limit);
  }
  const conversationId = storedId(request.conversationId);
  if (conversationId === undefined) return approvalPage([], limit);
  return approvalPage(
    await tx.all<ApprovalRow>('approvalsOfConversationAfter', { ...after, conversation_id: conversationId, statuses }),
    limit,
  );
}

export async function listDueApprovals(tx: SqlStatements, limit: number, nowMs: number): Promise<pb.PendingApproval[]> {
  return (await tx.all<ApprovalRow>('dueApprovals', { now: isoTimestamp(nowMs), limit })).map(approvalFromRow);
}

/** Appends an audit entry with the store's id and time (the request's are ignored). */
export async function appendAudit(tx: SqlStatements, entry: pb.AuditEntry, nowMs: number): Promise<pb.AuditEntry> {
  const { kind, actor, via, subject, detailJson } = entry;
  const [row] = await tx.all<AuditRow>('insertAudit', { at: isoTimestamp(nowMs), kind, actor, via, subject, detail_json: detailJson });
  return auditEntryFromRow(row!);
}

export async function listAudit(tx: SqlStatements, request: pb.ListAuditRequest): Promise<AuditPage> {
  const limit = pageSize(request.pageSize);
  const before = request.pageToken === '' ? Number.MAX_SAFE_INTEGER : decodeAuditPageToken(request.pageToken);
  if (request.kinds.length === 0) return auditPage(await tx.all<AuditRow>('auditBefore', { before, limit: limit + 1 }), limit);
  const walks = await Promise.all(
    [...new Set(request.kinds)].map((kind) => tx.all<AuditRow>('auditOfKindBefore', { kind, before, limit: limit + 1 })),
  );
  return auditPage(newestFirst(walks, limit + 1), limit);
}
