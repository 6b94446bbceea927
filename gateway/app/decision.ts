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
