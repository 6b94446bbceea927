import { describe, expect, it } from 'vitest';
import { ApprovalStatus } from '../../gen/ts/asg/store/v1/store.js';
import { decisionFromWord, decisionOfStatus } from './decision.js';

describe('decisionFromWord', () => {
  it.each(['yes', 'y', 'true', 'approve', 'approved', 'ok', 'confirm', 'YES', ' Ok ', 'Approve'])('%j approves', (word) => {
    expect(decisionFromWord(word)).toBe('approved');
  });

  it.each(['no', 'n', 'false', 'reject', 'rejected', 'deny', 'cancel', 'NO', ' Cancel\n'])('%j rejects', (word) => {
    expect(decisionFromWord(word)).toBe('rejected');
  });

  it.each(['', 'maybe', 'yes please', 'nope', 'approve it', '1'])('%j decides nothing', (word) => {
    expect(decisionFromWord(word)).toBeUndefined();
  });
});

describe('decisionOfStatus', () => {
  it('reads every status after an approval as approved', () => {
    for (const status of [
      ApprovalStatus.APPROVAL_STATUS_APPROVED,
      ApprovalStatus.APPROVAL_STATUS_EXECUTING,
      ApprovalStatus.APPROVAL_STATUS_DONE,
      ApprovalStatus.APPROVAL_STATUS_FAILED,
      ApprovalStatus.APPROVAL_STATUS_INTERRUPTED,
    ]) {
      expect(decisionOfStatus(status)).toBe('approved');
    }
  });

  it('reads rejected as rejected and pending as undecided', () => {
    expect(decisionOfStatus(ApprovalStatus.APPROVAL_STATUS_REJECTED)).toBe('rejected');
    expect(decisionOfStatus(ApprovalStatus.APPROVAL_STATUS_PENDING)).toBeUndefined();
    expect(decisionOfStatus(ApprovalStatus.APPROVAL_STATUS_UNSPECIFIED)).toBeUndefined();
  });
});
