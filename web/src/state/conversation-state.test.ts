import { describe, expect, it } from 'vitest';
import type { ConversationJson, ConversationUpdate, MessageJson, PendingApprovalJson } from '../api-types.js';
import { applyUpdate, emptyChat, replaceConversation, type ChatState } from './conversation-state.js';

const message = (id: string, overrides: Partial<MessageJson> = {}): MessageJson => ({
  id,
  role: 'user',
  content: id,
  created_at: `2025-01-15T10:00:0${id.length}.000Z`,
  seq: id.length,
  ...overrides,
});
const approval = (uuid: string): PendingApprovalJson => ({
  uuid,
  conversation_id: 'c1',
  tool_name: 'resources_add',
  tool_args: { name: 'web-1' },
  description: 'add',
  created_at: '2025-01-15T10:00:00.000Z',
});
const conversation = (overrides: Partial<ConversationJson> = {}): ConversationJson => ({
  id: 'c1',
  session_id: '4be2a91c',
  status: 'active',
  messages: [message('m1')],
  usage: { input_tokens: 0, output_tokens: 0 },
  created_at: '2025-01-15T10:00:00.000Z',
  updated_at: '2025-01-15T10:00:01.000Z',
  ...overrides,
});
const event = (id: number, update: { kind: ConversationUpdate['kind'] } & Record<string, unknown>, at = ''): ConversationUpdate =>
  ({ id, conversation_id: 'c1', at, ...update }) as unknown as ConversationUpdate;

const start: ChatState = { ...emptyChat, conversation: conversation() };

describe('applyUpdate', () => {
  it('starts from a snapshot', () => {
    expect(applyUpdate(emptyChat, { kind: 'snapshot', conversation: conversation() }).conversation).toEqual(conversation());
  });

  it('appends a message once, however often it arrives', () => {
    const added = event(3, { kind: 'message_added', message: message('m2') });
    const once = applyUpdate(start, added);
    expect(applyUpdate(once, added)).toBe(once);
    expect(once.conversation!.messages.map((m) => m.id)).toEqual(['m1', 'm2']);
  });

  it('follows the running turn: turn_started sets it, turn_ended clears it with what was still streaming', () => {
    let state = applyUpdate(start, event(4, { kind: 'turn_started' }, '2025-01-15T10:00:01.000Z'));
    expect(state.conversation!.turn_running).toBe(true);
    state = applyUpdate(state, event(0, { kind: 'text_delta', text: 'Half an ans' }));
    expect(state.streaming).toHaveLength(1);
    state = applyUpdate(state, event(5, { kind: 'turn_ended' }, '2025-01-15T10:00:01.000Z'));
    expect(state.conversation).not.toHaveProperty('turn_running');
    expect(state.streaming).toEqual([]);
  });

  it('tracks pending approvals and the status', () => {
    let state = applyUpdate(start, event(4, { kind: 'approval_requested', approval: approval('u1') }));
    state = applyUpdate(state, event(5, { kind: 'status_changed', status: 'waiting_approval' }));
    expect(state.conversation).toMatchObject({
      status: 'waiting_approval',
      pending_approval: { uuid: 'u1' },
      pending_approvals: [{ uuid: 'u1' }],
    });
    state = applyUpdate(state, event(6, { kind: 'approval_resolved', approval: approval('u1'), decision: 'approved' }));
    expect(state.conversation).not.toHaveProperty('pending_approval');
    expect(state.conversation).not.toHaveProperty('pending_approvals');
  });

  it('streams text per node until the finished message replaces it', () => {
    let state = applyUpdate(start, event(0, { kind: 'text_delta', text: 'Hel' }));
    state = applyUpdate(state, event(0, { kind: 'text_delta', text: 'lo', node: 'writer' }));
    state = applyUpdate(state, event(0, { kind: 'text_delta', text: 'lo' }));
    expect(state.streaming).toEqual([
      { node: '', text: 'Hello' },
      { node: 'writer', text: 'lo' },
    ]);
    state = applyUpdate(state, event(7, { kind: 'message_added', message: message('m3', { role: 'assistant', content: 'Hello' }) }));
    expect(state.streaming).toEqual([{ node: 'writer', text: 'lo' }]);
  });

  it('shows each tool step as it runs and keeps it, finished, until its result is stored or the turn ends', () => {
    const call = { name: 'resources_list', arguments: {} };
    let state = applyUpdate(start, event(4, { kind: 'turn_started' }));
    state = applyUpdate(state, event(0, { kind: 'tool_call_started', tool_call: call }));
    expect(state.steps).toEqual([{ call, state: 'running' }]);
    state = applyUpdate(state, event(0, { kind: 'tool_call_finished', tool_call: { ...call, result: '[]' } }));
    expect(state.steps).toEqual([{ call: { ...call, result: '[]' }, state: 'finished' }]);
    const failing = { name: 'resources_add', arguments: { name: 'x' } };
    state = applyUpdate(state, event(0, { kind: 'tool_call_started', tool_call: failing }));
    state = applyUpdate(state, event(0, { kind: 'tool_call_finished', tool_call: { ...failing, result: 'no', is_error: true } }));
    expect(state.steps.map((step) => step.state)).toEqual(['finished', 'failed']);
    // A snapshot read while the turn runs keeps the steps.
    expect(replaceConversation(state, { ...state.conversation!, turn_running: true }).steps).toHaveLength(2);
    const stored = applyUpdate(
      state,
      event(8, { kind: 'message_added', message: message('m4', { role: 'tool', tool_call: { ...call, result: '[]' } }) }),
    );
    expect(stored.steps.map((step) => step.call.name)).toEqual(['resources_add']);
    expect(applyUpdate(state, event(9, { kind: 'turn_ended' })).steps).toEqual([]);
  });

  it('ignores events of another conversation', () => {
    expect(
      applyUpdate(start, { ...event(9, { kind: 'status_changed', status: 'completed' }), conversation_id: 'c2' } as ConversationUpdate),
    ).toBe(start);
  });
});

describe('replaceConversation', () => {
  it('keeps messages that arrived by event before a slower response', () => {
    const withEvent = applyUpdate(start, event(3, { kind: 'message_added', message: message('m22') }, '2025-01-15T10:00:03.000Z'));
    expect(withEvent.conversation!.updated_at).toBe('2025-01-15T10:00:03.000Z');
    const response = conversation({
      status: 'waiting_approval',
      messages: [message('m1'), message('m2')],
      updated_at: '2025-01-15T10:00:04.000Z',
    });
    const state = replaceConversation(withEvent, response);
    expect(state.conversation!.status).toBe('waiting_approval');
    expect(state.conversation!.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm22']);
  });

  it('keeps the newer status when the response is older than the events', () => {
    const withEvent = applyUpdate(start, event(3, { kind: 'status_changed', status: 'completed' }, '2025-01-15T10:00:09.000Z'));
    expect(replaceConversation(withEvent, conversation({ updated_at: '2025-01-15T10:00:05.000Z' })).conversation!.status).toBe('completed');
  });

  it('takes another conversation whole and ends what was streaming', () => {
    const streaming = applyUpdate(start, event(0, { kind: 'text_delta', text: 'x' }));
    expect(replaceConversation(streaming, conversation({ id: 'c2' }))).toEqual({
      conversation: conversation({ id: 'c2' }),
      streaming: [],
      steps: [],
    });
  });
});
