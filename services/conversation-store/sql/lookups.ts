import { notFound } from '../../common/grpc/errors.js';
import { storedId } from '../ids.js';
import type { ApprovalRow, ConversationRow } from '../rows.js';
import type { SqlStatements } from './port.js';

/** A conversation row with whether another live process holds its mark, and has watchers of it. */
export type StoredConversation = ConversationRow & { running_turn_boot_live: boolean | number | null; watched_elsewhere: boolean | number };

/** A cursor id that is not a UUID starts before every row. */
export const FIRST_UUID = '00000000-0000-0000-0000-000000000000';

/** NOT_FOUND for an id that names nothing stored (or no UUID at all). */
export const missing = (what: 'conversation' | 'approval' | 'run', id: string) => notFound(`${what} ${id} not found`);

/** The conversation row; NOT_FOUND for an unknown id, or one that is no UUID at all. */
export async function requireConversation(tx: SqlStatements, id: string): Promise<StoredConversation> {
  const stored = storedId(id);
  const row = stored === undefined ? undefined : (await tx.all<StoredConversation>('selectConversation', { id: stored }))[0];
  if (!row) throw missing('conversation', id);
  return row;
}

export async function requireApproval(tx: SqlStatements, uuid: string): Promise<ApprovalRow> {
  const stored = storedId(uuid);
  const row = stored === undefined ? undefined : (await tx.all<ApprovalRow>('selectApproval', { uuid: stored }))[0];
  if (!row) throw missing('approval', uuid);
  return row;
}

/** A conversation's pending approvals, oldest first. */
export function pendingApprovals(tx: SqlStatements, conversationId: string): Promise<ApprovalRow[]> {
  return tx.all<ApprovalRow>('selectPendingApprovals', { conversation_id: conversationId });
}

/** A conversation's approvals that are approved or executing, oldest first. */
export function unfinishedApprovals(tx: SqlStatements, conversationId: string): Promise<ApprovalRow[]> {
  return tx.all<ApprovalRow>('selectUnfinishedApprovals', { conversation_id: conversationId });
}
