/** What `asg approvals` prints for people: tables, one approval, a decision. */
import { describe, expect, it } from 'vitest';
import type { ApprovalRecordJson } from '../gateway/app/shapes.js';
import { personOf } from '../services/common/quorum-text.js';
import { approvalListText, approvalText, compactJson, decisionText, quorumText, relativeTime } from './approvals-format.js';

const now = new Date('2025-01-15T10:10:00.000Z');

const pending: ApprovalRecordJson = {
  uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
  conversation_id: '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13',
  tool_name: 'resources_add',
  tool_args: { name: 'web-1', value: 5 },
  description: 'resources_add on resources with arguments {"name":"web-1","value":5}',
  status: 'pending',
  requested_at: '2025-01-15T10:07:30.000Z',
  expires_at: '2025-01-15T10:37:30.000Z',
  on_timeout: 'reject',
};

const decided: ApprovalRecordJson = {
  ...pending,
  uuid: '9c7d2e10-4b5a-4f36-8d21-6e0a3b9c5f78',
  status: 'approved',
  execution: 'done',
  decided_at: '2025-01-15T08:10:00.000Z',
  decided_by: 'alice',
  via: 'web',
  reason: 'value fixed',
  edited_args: { name: 'web-1', value: 50 },
  expires_at: undefined,
};

describe('relativeTime', () => {
  it.each([
    ['2025-01-15T10:09:58.000Z', 'just now'],
    ['2025-01-15T10:09:18.000Z', '42 s ago'],
    ['2025-01-15T10:07:00.000Z', '3 min ago'],
    ['2025-01-15T05:00:00.000Z', '5 h ago'],
    ['2025-01-13T10:00:00.000Z', '2 d ago'],
    ['2025-01-15T10:20:00.000Z', 'in 10 min'],
    [undefined, ''],
  ])('%s → %s', (iso, text) => {
    expect(relativeTime(iso, now)).toBe(text);
  });
});

describe('approvalListText', () => {
  it('is a table with the full uuid, status, tool, conversation, times, decider and arguments', () => {
    const text = approvalListText({ approvals: [pending, decided] }, now, () => '');
    expect(text.split('\n')).toEqual([
      'UUID                                  STATUS           TOOL           CONVERSATION  REQUESTED  DECIDED            ARGUMENTS',
      'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47  pending          resources_add  6f1c9a52      2 min ago  expires in 27 min  {"name":"web-1","value":5}',
      '9c7d2e10-4b5a-4f36-8d21-6e0a3b9c5f78  approved (done)  resources_add  6f1c9a52      2 min ago  alice 2 h ago      {"name":"web-1","value":50}',
      '',
    ]);
  });

  it('says how to read the next page, and when nothing matches', () => {
    expect(
      approvalListText({ approvals: [pending], next_cursor: 'abc' }, now, (cursor) => `asg approvals list --cursor ${cursor}`),
    ).toContain('\nMore: asg approvals list --cursor abc\n');
    expect(approvalListText({ approvals: [] }, now, () => '')).toBe('No approvals match.\n');
  });

  it('cuts long arguments', () => {
    expect(compactJson({ text: 'x'.repeat(100) }, 20)).toBe('{"text":"xxxxxxxxxx…');
  });
});

describe('approvalText', () => {
  it('shows a decided approval with who, how, why and both sets of arguments', () => {
    const text = approvalText(decided, now);
    expect(text).toContain('Status:       approved (done)\n');
    expect(text).toContain('Decided by:   alice via web\n');
    expect(text).toContain('Reason:       value fixed\n');
    expect(text).toContain('Decided:      2025-01-15T08:10:00.000Z (2 h ago)\n');
    expect(text).toContain(
      'Arguments:\n  {\n    "name": "web-1",\n    "value": 5\n  }\nRan with edited arguments:\n  {\n    "name": "web-1",\n    "value": 50\n  }\n',
    );
  });

  it('shows when a pending approval expires and what then happens', () => {
    expect(approvalText(pending, now)).toContain('Expires:      2025-01-15T10:37:30.000Z (in 27 min), then rejected\n');
  });

  it("shows an MCP server's question and the shape of its answer", () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const question: ApprovalRecordJson = {
      ...pending,
      kind: 'input',
      input_request: { server: 'rooms', questions: ['Who is the room for?'], requested_schema: schema },
    };
    const text = approvalText(question, now);
    expect(text).toContain(
      'Question of MCP server rooms:\n  Who is the room for?\nAnswer with approve --input JSON, fitting:\n  {\n    "type": "object",',
    );
    expect(approvalText(pending, now)).not.toContain('Question of');
  });
});

describe('decisionText', () => {
  it("says what was decided, the agent's answer, and a next approval", () => {
    const reply = {
      conversation: {} as never,
      result: { response: 'Done.', waiting_approval: true, approval: { ...pending, created_at: pending.requested_at } },
    };
    expect(decisionText('u1', true, reply)).toBe(
      `Approved u1.\nThe agent answered: Done.\nIt now waits for another approval: ${pending.uuid} (resources_add); see asg approvals show ${pending.uuid}\n`,
    );
    expect(decisionText('u2', false, { conversation: {} as never })).toBe('Rejected u2.\n');
  });
});

describe('quorums', () => {
  const voting: ApprovalRecordJson = {
    ...pending,
    required: 2,
    role: 'approve',
    not_requester: true,
    requested_by: 'token:rita',
    votes: [{ voter: 'token:alice', via: 'rest', at: '2025-01-15T10:07:00.000Z' }],
  };

  it('says where the quorum stands, who voted when, and that the requester cannot approve their own request', () => {
    expect(quorumText(voting, now)).toBe('1 of 2 approvals — alice approved 3 min ago');
    expect(quorumText(voting, now, 'token:rita')).toBe('1 of 2 approvals — alice approved 3 min ago; you cannot approve your own request');
    expect(quorumText(voting, now, 'token:alice')).toBe('1 of 2 approvals — you approved 3 min ago');
    expect(quorumText({ ...voting, votes: [] }, now, 'token:bob')).toBe('0 of 2 approvals');
    expect(quorumText(pending, now)).toBe('');
  });

  it('says when it escalates, and once it did, to whom', () => {
    expect(quorumText({ ...voting, escalates_at: '2025-01-15T10:40:00.000Z' }, now)).toBe(
      '1 of 2 approvals — alice approved 3 min ago; escalates in 30 min',
    );
    expect(quorumText({ ...voting, escalated_at: '2025-01-15T10:08:00.000Z', escalated_to: 'admin' }, now)).toBe(
      '1 of 2 approvals — alice approved 3 min ago; escalated to admin 2 min ago',
    );
  });

  it('shows the count in the list and the votes in show; a vote that did not complete the quorum says so', () => {
    expect(approvalListText({ approvals: [voting] }, now, () => '')).toContain('pending (1 of 2)');
    const shown = approvalText(voting, now, 'token:rita');
    expect(shown).toContain('Votes:        1 of 2 approvals — alice approved 3 min ago; you cannot approve your own request');
    expect(shown).toContain('Voters:       role approve, not the requester');
    expect(decisionText(voting.uuid, true, { status: 'pending', votes: 1, required: 2 })).toBe(
      `Voted for ${voting.uuid}: 1 of 2 approvals. The call runs once the quorum is complete; nothing ran yet.\n`,
    );
  });

  it('names people by their name within their source', () => {
    expect(personOf('token:alice')).toBe('alice');
    expect(personOf('jwt:https://idp.example#bob')).toBe('bob');
    expect(personOf('anonymous')).toBe('anonymous');
  });
});
