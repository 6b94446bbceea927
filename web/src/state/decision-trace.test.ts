import { describe, expect, it } from 'vitest';
import type { ApprovalRecordJson, MessageJson } from '../api-types.js';
import { decisionTrace, placeApprovals, timeAgo } from './decision-trace.js';

const now = Date.parse('2025-01-15T10:10:00.000Z');

function record(overrides: Partial<ApprovalRecordJson>): ApprovalRecordJson {
  return {
    uuid: 'u1',
    conversation_id: 'c1',
    tool_name: 'resources_add',
    tool_args: { name: 'web-1', value: 5 },
    description: '',
    status: 'approved',
    requested_at: '2025-01-15T10:05:00.000Z',
    decided_at: '2025-01-15T10:08:00.000Z',
    decided_by: 'alice',
    ...overrides,
  };
}

function call(id: string, name: string, args: Record<string, unknown>, at: string): MessageJson {
  return { id, role: 'assistant', content: '', tool_call: { name, arguments: args }, created_at: at, seq: Number(id.slice(1)) };
}

describe('timeAgo', () => {
  it.each([
    ['2025-01-15T10:09:58.000Z', 'just now'],
    ['2025-01-15T10:09:30.000Z', '30 s ago'],
    ['2025-01-15T10:08:00.000Z', '2 min ago'],
    ['2025-01-15T07:00:00.000Z', '3 h ago'],
    ['2025-01-13T10:00:00.000Z', '2 d ago'],
    ['2025-01-15T10:40:00.000Z', 'in 30 min'],
    [undefined, ''],
  ])('%s → %s', (iso, text) => expect(timeAgo(iso, now)).toBe(text));

  it('says "just now" for a past time the page clock has not reached yet', () => {
    expect(timeAgo('2025-01-15T10:10:20.000Z', now, true)).toBe('just now');
    expect(timeAgo('2025-01-15T10:08:00.000Z', now, true)).toBe('2 min ago');
  });
});

describe('decisionTrace', () => {
  it('says who decided, when, why, and with which edited arguments', () => {
    expect(decisionTrace(record({ reason: 'value fixed', edited_args: { name: 'web-1', value: 50 }, execution: 'done' }), now)).toEqual({
      outcome: 'approved',
      text: 'approved by alice · 2 min ago',
      reason: 'value fixed',
      editedArgs: { name: 'web-1', value: 50 },
      execution: 'done',
    });
    expect(decisionTrace(record({ status: 'rejected', decided_by: 'anonymous' }), now)?.text).toBe('rejected by anonymous · 2 min ago');
    expect(decisionTrace(record({ decided_at: '2025-01-15T10:10:10.000Z' }), now)?.text).toBe('approved by alice · just now');
    // The face the decision was made through, as recorded: a CLI decision says so.
    expect(decisionTrace(record({ decided_by: 'anonymous', via: 'cli' }), now)?.text).toBe('approved by anonymous via cli · 2 min ago');
    expect(decisionTrace(record({ status: 'expired', decided_by: 'timeout' }), now)?.text).toBe(
      'expired · 2 min ago, nobody decided in time',
    );
    expect(decisionTrace(record({ status: 'pending', decided_at: undefined, decided_by: undefined }), now)).toBeUndefined();
  });
});

describe('placeApprovals', () => {
  const first = call('m1', 'resources_add', { name: 'web-1', value: 5 }, '2025-01-15T10:05:00.000Z');
  const again = call('m3', 'resources_add', { value: 5, name: 'web-1' }, '2025-01-15T10:07:00.000Z');
  const proxy = call('m5', 'a2a_agent-b', { message: 'add web-2' }, '2025-01-15T10:08:00.000Z');
  const messages: MessageJson[] = [
    first,
    { id: 'm2', role: 'tool', content: 'rejected', created_at: '2025-01-15T10:06:00.000Z', seq: 2 },
    again,
    proxy,
  ];

  it('puts each decided approval under its own call, the same call asked twice in order', () => {
    const placed = placeApprovals(messages, [record({ uuid: 'a', status: 'rejected' }), record({ uuid: 'b' })], []);
    expect([...placed.byMessage].map(([id, approvals]) => [id, approvals.map((approval) => approval.uuid)])).toEqual([
      ['m1', ['a']],
      ['m3', ['b']],
    ]);
    expect(placed.unplaced).toEqual([]);
  });

  it('marks the call a pending approval waits on, and places a proxy approval after the last call before it', () => {
    const proxied = record({
      uuid: 'p',
      tool_name: 'resources_add',
      tool_args: { name: 'web-2', value: 1 },
      requested_at: '2025-01-15T10:08:01.000Z',
    });
    const placed = placeApprovals(
      messages,
      [record({ uuid: 'a' }), proxied],
      [{ tool_name: 'resources_add', tool_args: { name: 'web-1', value: 5 } }],
    );
    expect(placed.byMessage.get('m1')!.map((approval) => approval.uuid)).toEqual(['a']);
    expect(placed.byMessage.get('m5')!.map((approval) => approval.uuid)).toEqual(['p']);
    expect([...placed.awaiting]).toEqual(['m3']);
  });

  it('leaves out pending records and keeps what matches no loaded message', () => {
    const early = record({ uuid: 'old', tool_args: { name: 'gone', value: 1 }, requested_at: '2025-01-15T09:00:00.000Z' });
    const placed = placeApprovals(messages, [early, record({ uuid: 'w', status: 'pending' })], []);
    expect(placed.unplaced.map((approval) => approval.uuid)).toEqual(['old']);
    expect(placed.byMessage.size).toBe(0);
  });
});
