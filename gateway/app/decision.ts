import { ApprovalStatus } from '../../gen/ts/asg/store/v1/store.js';
import type { ApprovalStatusName, Decision } from '../../services/common/approval-resource.js';

/*
 * An approval decision as people say it: the REST body's `answer` and the A2A continuation
 * text share one vocabulary. How the store records one, and an
 * approval as a resource, are services/common/approval-resource.ts (the webhooks show it too).
 */

const APPROVE_WORDS = new Set(['yes', 'y', 'true', 'approve', 'approved', 'ok', 'confirm']);
const REJECT_WORDS = new Set(['no', 'n', 'false', 'reject', 'rejected', 'deny', 'cancel']);

/** What a voter is told of a vote that did not complete its approval's quorum (A2A and MCP faces; REST answers 202 with the counts). */
export function voteRecordedText(uuid: string, votes: number, required: number): string {
  return `Your vote on approval ${uuid} is recorded: ${votes} of ${required} approvals. The call runs once the quorum is complete; nothing was run yet.`;
}

/** The decision a word stands for (case and surrounding blanks ignored); undefined for anything else. */
export function decisionFromWord(word: string): Decision | undefined {
  const normalised = word.trim().toLowerCase();
  if (APPROVE_WORDS.has(normalised)) return 'approved';
  if (REJECT_WORDS.has(normalised)) return 'rejected';
  return undefined;
}

export {
  APPROVAL_STATUS_NAMES,
  decisionOfStatus,
  verdictOfStatus,
  type ApprovalStatusName,
  type Decision,
  type Verdict,
} from '../../services/common/approval-resource.js';

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
