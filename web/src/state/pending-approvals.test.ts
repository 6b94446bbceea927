import { describe, expect, it } from 'vitest';
import type { PendingApprovalJson } from '../api-types.js';
import { applyPendingUpdate, noPending, pendingList } from './pending-approvals.js';

const approval = (uuid: string, created_at = '2025-01-15T10:00:00.000Z'): PendingApprovalJson => ({
  uuid,
  conversation_id: 'c1',
  tool_name: 't',
  tool_args: {},
  description: '',
  created_at,
});
const base = { id: 1, conversation_id: 'c1', at: '' };

describe('applyPendingUpdate', () => {
  it('replaces the set with a snapshot, adds requests and removes resolutions', () => {
    let set = applyPendingUpdate(noPending, { kind: 'snapshot', approvals: [approval('a', '2025-01-15T10:00:02.000Z')] });
    set = applyPendingUpdate(set, { ...base, kind: 'approval_requested', approval: approval('b', '2025-01-15T10:00:01.000Z') });
    expect(pendingList(set).map((a) => a.uuid)).toEqual(['b', 'a']);
    set = applyPendingUpdate(set, { ...base, kind: 'approval_resolved', approval: approval('a'), decision: 'approved' });
    expect([...set.keys()]).toEqual(['b']);
  });

  it('shows an escalated approval as it stands now, and ignores the escalation of one it never saw', () => {
    const set = applyPendingUpdate(noPending, { kind: 'snapshot', approvals: [approval('a')] });
    const escalated = { ...approval('a'), required: 2, votes: [], escalated_at: '2025-01-15T10:30:00.000Z', escalated_to: 'admin' };
    expect(applyPendingUpdate(set, { ...base, kind: 'approval_escalated', approval: escalated }).get('a')).toEqual(escalated);
    expect(applyPendingUpdate(set, { ...base, kind: 'approval_escalated', approval: approval('z') })).toBe(set);
  });

  it('is unchanged by a resolution it never saw, and by a request it has', () => {
    const set = applyPendingUpdate(noPending, { kind: 'snapshot', approvals: [approval('a')] });
    expect(applyPendingUpdate(set, { ...base, kind: 'approval_resolved', approval: approval('z') })).toBe(set);
    expect([...applyPendingUpdate(set, { ...base, kind: 'approval_requested', approval: approval('a') }).keys()]).toEqual(['a']);
  });
});
