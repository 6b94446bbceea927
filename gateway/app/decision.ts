import { ApprovalStatus } from '../../gen/ts/asg/store/v1/store.js';

/**
 * An approval decision, as people say it and as the store records it. The REST body's
 * `answer` and the A2A continuation text share one vocabulary (DESIGN §4 "A2A server").
 */
export type Decision = 'approved' | 'rejected';

const APPROVE_WORDS = new Set(['yes', 'y', 'true', 'approve', 'approved', 'ok', 'confirm']);
const REJECT_WORDS = new Set(['no', 'n', 'false', 'reject', 'rejected', 'deny', 'cancel']);

/** The decision a word stands for (case and surrounding blanks ignored); undefined for anything else. */
export function decisionFromWord(word: string): Decision | undefined {
  const normalised = word.trim().toLowerCase();
  if (APPROVE_WORDS.has(normalised)) return 'approved';
  if (REJECT_WORDS.has(normalised)) return 'rejected';
  return undefined;
}

/**
 * The decision an approval carries once it has left pending. Executing, done, failed and
 * interrupted all come after an approval; undefined while still pending.
 */
export function decisionOfStatus(status: ApprovalStatus): Decision | undefined {
  switch (status) {
    case ApprovalStatus.APPROVAL_STATUS_REJECTED:
      return 'rejected';
    case ApprovalStatus.APPROVAL_STATUS_APPROVED:
    case ApprovalStatus.APPROVAL_STATUS_EXECUTING:
    case ApprovalStatus.APPROVAL_STATUS_DONE:
    case ApprovalStatus.APPROVAL_STATUS_FAILED:
    case ApprovalStatus.APPROVAL_STATUS_INTERRUPTED:
      return 'approved';
    default:
      return undefined;
  }
}

/**
 * How an approval left pending: a decision, or (issue 15) an expiry that rejected it — nobody
 * decided, so it is neither a human's yes nor a human's no. An expiry that approves is approved.
 */
export type Verdict = Decision | 'expired';

export function verdictOfStatus(status: ApprovalStatus): Verdict | undefined {
  return status === ApprovalStatus.APPROVAL_STATUS_EXPIRED ? 'expired' : decisionOfStatus(status);
}

/**
 * The status of an approval as a resource (`GET /approvals`, issue 15): what was decided, not
 * what came of the call. Approved covers every approval a human (or an expiry that approves)
 * said yes to, whether its call waits to run, runs, ran or was cut off; `execution` says which.
 */
export type ApprovalStatusName = 'pending' | 'approved' | 'rejected' | 'expired';

export const APPROVAL_STATUS_NAMES: readonly ApprovalStatusName[] = ['pending', 'approved', 'rejected', 'expired'];

/** What came of an approved call once it started; absent before it does. */
export type ExecutionName = 'executing' | 'done' | 'failed' | 'interrupted';

const STORE_STATUSES: Record<ApprovalStatusName, ApprovalStatus[]> = {
  pending: [ApprovalStatus.APPROVAL_STATUS_PENDING],
  approved: [
    ApprovalStatus.APPROVAL_STATUS_APPROVED,
    ApprovalStatus.APPROVAL_STATUS_EXECUTING,
    ApprovalStatus.APPROVAL_STATUS_DONE,
    ApprovalStatus.APPROVAL_STATUS_FAILED,
    ApprovalStatus.APPROVAL_STATUS_INTERRUPTED,
  ],
  rejected: [ApprovalStatus.APPROVAL_STATUS_REJECTED],
  expired: [ApprovalStatus.APPROVAL_STATUS_EXPIRED],
};

/** The store statuses a `?status=` filter stands for. */
export function storeStatusesOf(name: ApprovalStatusName): ApprovalStatus[] {
  return [...STORE_STATUSES[name]];
}

export function approvalStatusName(status: ApprovalStatus): ApprovalStatusName {
  // UNSPECIFIED, which the store never writes, reads as still waiting: nothing was decided.
  return verdictOfStatus(status) ?? 'pending';
}

export function executionName(status: ApprovalStatus): ExecutionName | undefined {
  switch (status) {
    case ApprovalStatus.APPROVAL_STATUS_EXECUTING:
      return 'executing';
    case ApprovalStatus.APPROVAL_STATUS_DONE:
      return 'done';
    case ApprovalStatus.APPROVAL_STATUS_FAILED:
      return 'failed';
    case ApprovalStatus.APPROVAL_STATUS_INTERRUPTED:
      return 'interrupted';
    default:
      return undefined;
  }
}
