import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus } from '../../gen/ts/asg/store/v1/store.js';
import { FakeEventFeed } from '../../test/support/fake-event-feed.js';
import { approvalRecord, messageRecord } from '../../test/support/store-records.js';
import { watchPendingApprovals, type PendingApprovalUpdate } from './pending-approval-updates.js';

async function take<T>(updates: AsyncGenerator<T, void>, count: number): Promise<T[]> {
  const seen: T[] = [];
  for await (const update of updates) {
    seen.push(update);
    if (seen.length === count) break;
  }
  return seen;
}

describe('watchPendingApprovals', () => {
  it('sends the pending approvals, then only approval events of any conversation', async () => {
    const feed = new FakeEventFeed();
    feed.pending = [approvalRecord({ uuid: 'u1' })];
    const updates = await watchPendingApprovals(feed, { afterId: 0 });
    feed.store({ conversationId: 'c2', messageAdded: messageRecord() });
    feed.store({ conversationId: 'c2', statusChanged: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL });
    feed.store({ conversationId: 'c2', approvalRequested: approvalRecord({ uuid: 'u2', conversationId: 'c2' }) });
    feed.store({ conversationId: 'c1', approvalResolved: approvalRecord({ uuid: 'u1', status: ApprovalStatus.APPROVAL_STATUS_APPROVED }) });
    const seen: PendingApprovalUpdate[] = await take(updates, 3);
    expect(
      seen.map((update) => (update.kind === 'snapshot' ? update.approvals.map((a) => a.uuid) : [update.kind, update.approval.uuid])),
    ).toEqual([['u1'], ['approval_requested', 'u2'], ['approval_resolved', 'u1']]);
    expect(feed.watchRequests).toEqual([{ afterId: 0 }]);
  });

  it('on a resume replays approval events after the id and sends no snapshot', async () => {
    const feed = new FakeEventFeed();
    const requested = feed.store({ conversationId: 'c1', approvalRequested: approvalRecord({ uuid: 'u1' }) });
    feed.store({ conversationId: 'c1', approvalResolved: approvalRecord({ uuid: 'u1', status: ApprovalStatus.APPROVAL_STATUS_REJECTED }) });
    const [only] = await take(await watchPendingApprovals(feed, { afterId: requested.id }), 1);
    expect(only).toMatchObject({ kind: 'approval_resolved', decision: 'rejected' });
  });
});
