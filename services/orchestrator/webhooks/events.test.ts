import { describe, expect, it } from 'vitest';
import { ApprovalStatus, type ConversationEvent, type PendingApproval } from '../../../gen/ts/asg/store/v1/store.js';
import { WEBHOOK_EVENTS } from '../../common/config/schema.js';
import { storedKindsOf, webhookId, webhookPayload } from './events.js';

const at = new Date('2026-05-01T10:00:00.000Z');
const approval: PendingApproval = {
  uuid: '8d0c3d6e-0000-4000-8000-000000000001',
  conversationId: '6f1c2b3a-0000-4000-8000-000000000001',
  toolName: 'resources_add',
  toolArgsJson: JSON.stringify({ name: 'x' }),
  description: 'resources_add with arguments {"name":"x"}',
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
  argsHash: 'h',
  toolCallId: 'c1',
  votes: [],
  agentChain: [],
  createdAt: new Date('2026-05-01T09:59:00.000Z'),
  updatedAt: undefined,
  expiresAt: new Date('2026-05-01T10:29:00.000Z'),
};
const event = (extra: Partial<ConversationEvent>): ConversationEvent => ({ id: 7, conversationId: approval.conversationId, at, ...extra });

describe('stored events as webhook events', () => {
  it('approval_escalated → approval.escalated, with when and to whom', () => {
    const escalated = {
      ...approval,
      quorum: { required: 2, role: 'approve', notRequester: true, requester: 'token:rita' },
      escalatesAt: new Date('2026-05-01T09:59:30.000Z'),
      escalationRole: 'admin',
      escalatedAt: at,
    };
    expect(webhookPayload(event({ approvalEscalated: escalated }))).toMatchObject({
      type: 'approval.escalated',
      data: { status: 'pending', required: 2, escalated_at: '2026-05-01T10:00:00.000Z', escalated_to: 'admin', votes: [] },
    });
  });

  it('approval_requested → approval.requested, with the approval as REST shows it', () => {
    expect(webhookPayload(event({ approvalRequested: approval }))).toEqual({
      type: 'approval.requested',
      timestamp: '2026-05-01T10:00:00.000Z',
      data: {
        uuid: approval.uuid,
        conversation_id: approval.conversationId,
        tool_name: 'resources_add',
        tool_args: { name: 'x' },
        description: approval.description,
        status: 'pending',
        requested_at: '2026-05-01T09:59:00.000Z',
        expires_at: '2026-05-01T10:29:00.000Z',
      },
    });
  });

  it('approval_resolved → approval.decided, with who, how, why and the edited arguments', () => {
    const decided = {
      ...approval,
      status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
      decidedAt: at,
      decidedBy: 'alice',
      via: 'web',
      reason: 'ok',
      editedArgsJson: '{"name":"y"}',
    };
    expect(webhookPayload(event({ approvalResolved: decided }))).toMatchObject({
      type: 'approval.decided',
      data: { status: 'approved', decided_at: at.toISOString(), decided_by: 'alice', via: 'web', reason: 'ok', edited_args: { name: 'y' } },
    });
    expect(
      webhookPayload(
        event({ approvalResolved: { ...approval, status: ApprovalStatus.APPROVAL_STATUS_EXPIRED, decidedBy: 'timeout', via: 'timeout' } }),
      )?.data,
    ).toMatchObject({ status: 'expired', decided_by: 'timeout' });
    // The status as REST names it: an approved call that runs is approved, with its execution.
    expect(
      webhookPayload(event({ approvalResolved: { ...decided, status: ApprovalStatus.APPROVAL_STATUS_EXECUTING } }))?.data,
    ).toMatchObject({ status: 'approved', execution: 'executing' });
  });

  it('turn_ended → run.completed (answered, paused) or run.failed (failed, interrupted)', () => {
    for (const [outcome, type] of [
      ['answered', 'run.completed'],
      ['paused', 'run.completed'],
      ['failed', 'run.failed'],
      ['interrupted', 'run.failed'],
    ] as const) {
      expect(webhookPayload(event({ turnEnded: { outcome } }))).toEqual({
        type,
        timestamp: at.toISOString(),
        data: { conversation_id: approval.conversationId, outcome },
      });
    }
  });

  it('everything else is no webhook event: messages, status changes, turn starts, turn ends without an outcome', () => {
    expect(webhookPayload(event({ turnStarted: {} }))).toBeUndefined();
    expect(webhookPayload(event({ turnEnded: {} }))).toBeUndefined();
    expect(webhookPayload(event({ turnEnded: { outcome: 'something-new' } }))).toBeUndefined();
    expect(webhookPayload(event({ statusChanged: 2 }))).toBeUndefined();
  });

  it('a webhook watches only the stored kinds its events come from: every event it would be sent is of one of them', () => {
    const samples: [kind: string, event: ConversationEvent][] = [
      ['message_added', event({ messageAdded: { id: 'm', role: 2, content: 'hi', seq: 2, createdAt: at } })],
      ['approval_requested', event({ approvalRequested: approval })],
      ['approval_resolved', event({ approvalResolved: { ...approval, status: ApprovalStatus.APPROVAL_STATUS_REJECTED } })],
      ['approval_escalated', event({ approvalEscalated: { ...approval, escalatedAt: at } })],
      ['status_changed', event({ statusChanged: 2 })],
      ['turn_started', event({ turnStarted: {} })],
      ['turn_ended', event({ turnEnded: { outcome: 'answered' } })],
      ['turn_ended', event({ turnEnded: { outcome: 'failed' } })],
      ['conversation_deleted', event({ conversationDeleted: {} })],
    ];
    for (const type of WEBHOOK_EVENTS) {
      const from = samples.filter(([, sample]) => webhookPayload(sample)?.type === type).map(([kind]) => kind);
      expect(from.length).toBeGreaterThan(0);
      for (const kind of from) expect(storedKindsOf([type])).toContain(kind);
    }
    expect(storedKindsOf(['run.completed', 'run.failed', 'approval.decided'])).toEqual(['turn_ended', 'approval_resolved']);
  });

  it('the webhook-id is stable per event and endpoint', () => {
    expect(webhookId('ab'.repeat(32), 7)).toBe(webhookId('ab'.repeat(32), 7));
    expect(webhookId('ab'.repeat(32), 7)).not.toBe(webhookId('cd'.repeat(32), 7));
    expect(webhookId('ab'.repeat(32), 7)).not.toBe(webhookId('ab'.repeat(32), 8));
  });
});
