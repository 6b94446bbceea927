import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ApprovalTimeoutAction, type NewApproval, type PendingApproval } from '../../../gen/ts/asg/store/v1/store.js';
import { approvalsSchema } from '../../common/config/schema.js';
import { ExpiryPolicy, expiryDecision, formatDuration } from './expiry.js';

const policy = (raw: unknown) => new ExpiryPolicy(approvalsSchema.parse(raw));
const approval = (toolName: string, extra: Partial<NewApproval> = {}): NewApproval => ({
  uuid: 'u-1',
  toolCallId: 'c1',
  toolName,
  toolArgsJson: '{}',
  description: '',
  agentChain: [],
  ...extra,
});

describe('approval expiry: which rule applies to a tool', () => {
  it('without approvals configured, nothing expires', () => {
    expect(policy({}).ruleFor('resources_delete')).toBeUndefined();
    expect(policy({}).withExpiry(approval('resources_delete'))).toEqual(approval('resources_delete'));
  });

  it('the top-level timeout and on_timeout apply to every tool no pattern matches', () => {
    expect(policy({ timeout: '30m' }).ruleFor('anything')).toEqual({ timeoutMs: 1_800_000, onTimeout: 'reject' });
    expect(policy({ timeout: '2s', on_timeout: 'approve' }).ruleFor('anything')).toEqual({ timeoutMs: 2_000, onTimeout: 'approve' });
  });

  it('the first matching pattern wins, in config order, with the same wildcards as the approval rules', () => {
    const rules = policy({
      timeout: '1h',
      on_timeout: 'reject',
      tools: { 'resources_dele?e': { timeout: '5m', on_timeout: 'approve' }, 'resources_*': { timeout: '10m' }, '*': { timeout: '20m' } },
    });
    expect(rules.ruleFor('resources_delete')).toEqual({ timeoutMs: 300_000, onTimeout: 'approve' });
    // A pattern without its own on_timeout takes the top-level one.
    expect(rules.ruleFor('resources_add')).toEqual({ timeoutMs: 600_000, onTimeout: 'reject' });
    expect(rules.ruleFor('files_write')).toEqual({ timeoutMs: 1_200_000, onTimeout: 'reject' });
    // `?` is one character, `*` any run; everything else is literal and the whole name must match.
    expect(rules.ruleFor('resources_deleete')).toEqual({ timeoutMs: 600_000, onTimeout: 'reject' });
    expect(policy({ tools: { 'a.b': { timeout: '1m' } } }).ruleFor('axb')).toBeUndefined();
  });

  it('timeout 0 in a pattern means never, even under a top-level timeout', () => {
    const rules = policy({ timeout: '30m', tools: { 'a2a_*': { timeout: 0 } } });
    expect(rules.ruleFor('a2a_peer')).toBeUndefined();
    expect(rules.ruleFor('resources_add')).toEqual({ timeoutMs: 1_800_000, onTimeout: 'reject' });
  });

  it('withExpiry sets expires_in_ms and on_timeout on the approval to store', () => {
    expect(policy({ timeout: '2s' }).withExpiry(approval('resources_add'))).toEqual({
      ...approval('resources_add'),
      expiresInMs: 2_000,
      onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
    });
    expect(policy({ timeout: '2s', on_timeout: 'approve' }).withExpiry(approval('resources_add'))).toMatchObject({
      onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE,
    });
  });

  it('an approval asked again for an unknown outcome expires only when its expiry rejects: the clock never re-runs such a call', () => {
    const unknown = approval('resources_add', { outcomeUnknown: true });
    expect(policy({ timeout: '2s', on_timeout: 'approve' }).withExpiry(unknown)).toEqual(unknown);
    expect(policy({ timeout: '2s' }).withExpiry(unknown)).toMatchObject({
      expiresInMs: 2_000,
      onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
    });
  });
});

describe('what an expiry decides', () => {
  const due = (onTimeout: ApprovalTimeoutAction | undefined, waitedMs = 1_800_000): PendingApproval => ({
    uuid: 'u-1',
    conversationId: 'c-1',
    toolName: 'resources_add',
    toolArgsJson: '{}',
    description: '',
    status: ApprovalStatus.APPROVAL_STATUS_PENDING,
    argsHash: '',
    toolCallId: 'c1',
    votes: [],
    agentChain: [],
    createdAt: new Date(1_000_000),
    updatedAt: undefined,
    expiresAt: new Date(1_000_000 + waitedMs),
    ...(onTimeout !== undefined && { onTimeout }),
  });

  it('reject (also when the approval does not say): the reason names the time it waited, as configured when it was asked', () => {
    expect(expiryDecision(due(ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT))).toEqual({
      approved: false,
      reason: 'no decision within 30m; the approval expired',
    });
    expect(expiryDecision(due(undefined, 2_000))).toEqual({ approved: false, reason: 'no decision within 2s; the approval expired' });
  });

  it('approve', () => {
    expect(expiryDecision(due(ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE, 90_000))).toEqual({
      approved: true,
      reason: expect.stringMatching(/^no decision within 1m30s; approved/),
    });
  });

  it('durations read as the configuration writes them', () => {
    expect([
      formatDuration(1_500),
      formatDuration(2_000),
      formatDuration(1_800_000),
      formatDuration(5_400_000),
      formatDuration(3_601_000),
    ]).toEqual(['1500ms', '2s', '30m', '1h30m', '1h1s']);
  });
});
