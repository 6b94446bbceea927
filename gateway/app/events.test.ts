import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus, MessageRole, type ConversationEvent } from '../../gen/ts/asg/store/v1/store.js';
import { approvalRecord, messageRecord } from '../../test/support/store-records.js';
import { conversationEventJson, isResumable } from './events.js';

const at = new Date('2025-01-15T10:02:03.000Z');
const event = (id: number, kind: Partial<ConversationEvent>): ConversationEvent => ({ id, conversationId: 'c1', at, ...kind });
const base = { conversation_id: 'c1', at: '2025-01-15T10:02:03.000Z' };

describe('conversationEventJson', () => {
  it('maps stored events to their kind with the REST shapes inside', () => {
    expect(
      conversationEventJson(
        event(7, { messageAdded: messageRecord({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Done.', node: 'executor' }) }),
      ),
    ).toEqual({
      id: 7,
      ...base,
      kind: 'message_added',
      message: { id: 'm1', role: 'assistant', content: 'Done.', node: 'executor', created_at: '2025-01-15T10:02:00.000Z', seq: 1 },
    });
    expect(conversationEventJson(event(8, { approvalRequested: approvalRecord({ agentChain: ['agent-b', 'agent-c'] }) }))).toMatchObject({
      id: 8,
      kind: 'approval_requested',
      approval: {
        uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
        tool_name: 'resources_add',
        tool_args: { name: 'web-1', value: 5 },
        agent_chain: ['agent-b', 'agent-c'],
      },
    });
    expect(conversationEventJson(event(9, { statusChanged: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL }))).toEqual({
      id: 9,
      ...base,
      kind: 'status_changed',
      status: 'waiting_approval',
    });
  });

  it('says how a resolved approval was decided; internal fields stay out', () => {
    const approved = conversationEventJson(
      event(10, { approvalResolved: approvalRecord({ status: ApprovalStatus.APPROVAL_STATUS_EXECUTING }) }),
    );
    expect(approved).toMatchObject({ kind: 'approval_resolved', decision: 'approved' });
    expect(JSON.stringify(approved)).not.toMatch(/args_hash|argsHash|tool_call_id|status":"/);
    expect(
      conversationEventJson(event(11, { approvalResolved: approvalRecord({ status: ApprovalStatus.APPROVAL_STATUS_REJECTED }) })),
    ).toMatchObject({ decision: 'rejected' });
    expect(conversationEventJson(event(12, { approvalResolved: approvalRecord() }))).not.toHaveProperty('decision');
  });

  it('maps live-only events with id 0', () => {
    expect(conversationEventJson(event(0, { textDelta: { text: 'Hel', node: 'writer' } }))).toEqual({
      id: 0,
      ...base,
      kind: 'text_delta',
      text: 'Hel',
      node: 'writer',
    });
    expect(conversationEventJson(event(0, { textDelta: { text: 'lo' } }))).toEqual({ id: 0, ...base, kind: 'text_delta', text: 'lo' });
    expect(conversationEventJson(event(0, { toolCallStarted: { id: 'call-1', name: 'resources_list', argumentsJson: '{}' } }))).toEqual({
      id: 0,
      ...base,
      kind: 'tool_call_started',
      tool_call: { name: 'resources_list', arguments: {} },
    });
    expect(
      conversationEventJson(
        event(0, { toolCallFinished: { id: 'call-1', name: 'resources_list', argumentsJson: '{}', result: '[]', isError: false } }),
      ),
    ).toMatchObject({
      kind: 'tool_call_finished',
      tool_call: { name: 'resources_list', result: '[]', is_error: false },
    });
  });

  it('skips an event of a kind it does not know', () => {
    expect(conversationEventJson(event(13, {}))).toBeUndefined();
  });

  it('resumes only from stored events', () => {
    expect(isResumable({ id: 5 })).toBe(true);
    expect(isResumable({ id: 0 })).toBe(false);
  });
});
