import { describe, expect, it } from 'vitest';
import { ApprovalStatus, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { answerOf, approvalQuestion, canAskByForm } from './approval-question.js';
import { decodeQuestionState, encodeQuestionState } from './request-state.js';

/** The approval question the MCP face asks, and the state it carries across a 2026-07-28 retry. */

const approval: PendingApproval = {
  uuid: '9b1e6c2a-0d4f-4e8a-b7c3-5a1f2e3d4c5b',
  conversationId: 'c0ffee00-0000-4000-8000-000000000000',
  toolName: 'resources_remove',
  toolArgsJson: JSON.stringify({ pattern: '^web-1$' }),
  description: 'resources_remove on resources: {"pattern":"^web-1$"}',
  createdAt: new Date(),
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
  argsHash: '',
  toolCallId: 'call-1',
  updatedAt: new Date(),
  votes: [],
  agentChain: [],
};

describe('approvalQuestion', () => {
  it('shows the approval line, the tool and its arguments, and asks for one boolean', () => {
    const question = approvalQuestion(approval);
    expect(question.message.split('\n')).toEqual([
      'The agent wants to run a tool that needs your approval.',
      `Approval required (id: ${approval.uuid}): ${approval.description}`,
      'Tool: resources_remove',
      'Arguments: {"pattern":"^web-1$"}',
    ]);
    expect(question.requestedSchema).toMatchObject({
      type: 'object',
      properties: { approve: { type: 'boolean', default: false } },
      required: ['approve'],
    });
  });

  it('names the agents that hold a proxied call', () => {
    expect(approvalQuestion({ ...approval, agentChain: ['agent-b', 'agent-c'] }).message).toContain('Held by: agent-b → agent-c');
  });
});

describe('answerOf', () => {
  it.each([
    [{ action: 'accept', content: { approve: true } }, 'approved'],
    [{ action: 'accept', content: { approve: false } }, 'rejected'],
    [{ action: 'accept', content: { approve: 'Yes' } }, 'approved'],
    [{ action: 'accept', content: { approve: 'nope' } }, 'unclear'],
    [{ action: 'accept', content: {} }, 'unclear'],
    [{ action: 'accept' }, 'unclear'],
    [{ action: 'decline' }, 'rejected'],
    [{ action: 'cancel' }, 'rejected'],
    [{ action: 'maybe' }, 'unclear'],
    ['accept', 'unclear'],
    [undefined, 'missing'],
  ])('%j → %s', (result, expected) => {
    expect(answerOf(result)).toBe(expected);
  });
});

describe('canAskByForm', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ elicitation: {} }, true],
    [{ elicitation: { form: {} } }, true],
    [{ elicitation: { form: {}, url: {} } }, true],
    [{ elicitation: { url: {} } }, false],
  ])('%j → %s', (capabilities, expected) => {
    expect(canAskByForm(capabilities)).toBe(expected);
  });
});

describe('question state (2026-07-28 requestState)', () => {
  const state = { conversation_id: approval.conversationId, approval_uuid: approval.uuid, deadline: 1_900_000_000_000 };

  it('round-trips', () => {
    const wire = encodeQuestionState(state);
    expect(wire).toMatch(/^asg-approval\.v1\.[A-Za-z0-9_-]+$/);
    expect(decodeQuestionState(wire)).toEqual(state);
  });

  it('refuses what this server did not make', () => {
    expect(() => decodeQuestionState('forged')).toThrow(/not made by this server/);
    expect(() => decodeQuestionState('asg-approval.v1.!!!')).toThrow(/not valid base64url JSON|wrong shape/);
    const extra = `asg-approval.v1.${Buffer.from(JSON.stringify({ ...state, admin: true })).toString('base64url')}`;
    expect(() => decodeQuestionState(extra)).toThrow(/wrong shape/);
    const missing = `asg-approval.v1.${Buffer.from(JSON.stringify({ deadline: 1 })).toString('base64url')}`;
    expect(() => decodeQuestionState(missing)).toThrow(/wrong shape/);
  });
});
