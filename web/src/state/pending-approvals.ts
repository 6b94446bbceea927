import type { PendingApprovalJson, PendingApprovalUpdate } from '../api-types.js';

/** Every waiting approval by uuid, from `approvals.pending`; oldest first when listed. */
export type PendingSet = ReadonlyMap<string, PendingApprovalJson>;

export const noPending: PendingSet = new Map();

export function applyPendingUpdate(set: PendingSet, update: PendingApprovalUpdate): PendingSet {
  switch (update.kind) {
    case 'snapshot':
      return new Map(update.approvals.map((approval) => [approval.uuid, approval]));
    case 'approval_requested': {
      const next = new Map(set);
      next.set(update.approval.uuid, update.approval);
      return next;
    }
    case 'approval_escalated': {
      // Still pending, now escalated: the card shows it as it stands.
      if (!set.has(update.approval.uuid)) return set;
      const next = new Map(set);
      next.set(update.approval.uuid, update.approval);
      return next;
    }
    case 'approval_resolved': {
      if (!set.has(update.approval.uuid)) return set;
      const next = new Map(set);
      next.delete(update.approval.uuid);
      return next;
    }
    default:
      return set;
  }
}

export function pendingList(set: PendingSet): PendingApprovalJson[] {
  return [...set.values()].sort((a, b) => a.created_at.localeCompare(b.created_at));
}
