import { describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { interpretAnswer, planContinuation } from './answer.js';
import { JsonRpcError } from './jsonrpc.js';
import type { InboundMessage } from './params.js';

function approval(uuid: string): PendingApproval {
  return {
    uuid,
    conversationId: 'c1',
    toolName: 'resources_add',
    toolArgsJson: '{}',
    description: 'add',
    createdAt: new Date(0),
    status: ApprovalStatus.APPROVAL_STATUS_PENDING,
    argsHash: '',
    toolCallId: '',
    updatedAt: new Date(0),
    votes: [],
    agentChain: [],
  };
}

const pending = [approval('u1'), approval('u2')];
const message = (text: string, data: Record<string, unknown>[] = []): InboundMessage => ({ text, data });

describe('interpretAnswer', () => {
  it("takes a data part as the answer to an MCP server's question, {approved: false} or a rejection word as declining it", () => {
    expect(interpretAnswer(pending, message('', [{ name: 'Ada' }]), true)).toEqual({
      kind: 'decision',
      uuid: 'u1',
      decision: 'approved',
      input: { name: 'Ada' },
    });
    expect(interpretAnswer(pending, message('', [{ approved: false, reason: 'not now' }]), true)).toEqual({
      kind: 'decision',
      uuid: 'u1',
      decision: 'rejected',
      reason: 'not now',
    });
    expect(interpretAnswer(pending, message('no'), true)).toEqual({ kind: 'decision', uuid: 'u1', decision: 'rejected' });
    // A yes in words says nothing the server asked for.
    expect(interpretAnswer(pending, message('yes'), true)).toEqual({ kind: 'unclear', text: 'yes', question: true });
  });

  it.each(['yes', 'Y', ' approve ', 'APPROVED', 'ok', 'confirm', 'true'])('"%s" approves the first approval', (text) => {
    expect(interpretAnswer(pending, message(text))).toEqual({ kind: 'decision', uuid: 'u1', decision: 'approved' });
  });

  it.each(['no', 'N', 'reject', 'Rejected', 'deny', 'cancel', 'false'])('"%s" rejects the first approval', (text) => {
    expect(interpretAnswer(pending, message(text))).toEqual({ kind: 'decision', uuid: 'u1', decision: 'rejected' });
  });

  it.each(['maybe', '', 'yes please', 'approve it'])('"%s" is no answer', (text) => {
    expect(interpretAnswer(pending, message(text))).toEqual({ kind: 'unclear', text });
  });

  // The data part carries the reason; a text answer is only the word.
  it("reads a rejection's reason from the data part", () => {
    expect(interpretAnswer(pending, message('', [{ approved: false, reason: ' value too large ' }]))).toEqual({
      kind: 'decision',
      uuid: 'u1',
      decision: 'rejected',
      reason: 'value too large',
    });
    expect(interpretAnswer(pending, message('', [{ approved: false, approval_uuid: 'u2', reason: 'not now' }]))).toEqual({
      kind: 'decision',
      uuid: 'u2',
      decision: 'rejected',
      reason: 'not now',
    });
    expect(interpretAnswer(pending, message('no, value too large'))).toEqual({ kind: 'unclear', text: 'no, value too large' });
  });

  it('refuses a reason that is not a string of at most 2,000 characters (-32602)', () => {
    expect(() => interpretAnswer(pending, message('', [{ approved: false, reason: 7 }]))).toThrow(JsonRpcError);
    expect(() => interpretAnswer(pending, message('', [{ approved: false, reason: 'x'.repeat(2001) }]))).toThrow(/at most 2000/);
  });

  it('lets a data part decide before the text, and pick an approval by uuid', () => {
    expect(interpretAnswer(pending, message('yes', [{ approved: false }]))).toEqual({ kind: 'decision', uuid: 'u1', decision: 'rejected' });
    expect(interpretAnswer(pending, message('', [{ approved: true, approval_uuid: 'u2' }]))).toEqual({
      kind: 'decision',
      uuid: 'u2',
      decision: 'approved',
    });
    expect(interpretAnswer(pending, message('', [{ approved: 'approve' }]))).toEqual({
      kind: 'decision',
      uuid: 'u1',
      decision: 'approved',
    });
    // A data part that decides nothing leaves the text to decide.
    expect(interpretAnswer(pending, message('no', [{ note: 'x' }]))).toEqual({ kind: 'decision', uuid: 'u1', decision: 'rejected' });
  });

  it('refuses an approval_uuid the task does not wait for, listing those it does', () => {
    expect(() => interpretAnswer(pending, message('', [{ approved: true, approval_uuid: 'u9' }]))).toThrow(/approval_uuid "u9".*u1, u2/);
  });
});

describe('planContinuation', () => {
  const base: Conversation = {
    id: 'c1',
    sessionId: '4be2a91c',
    status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
    messages: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
    messageCount: 0,
    usage: undefined,
    pendingApprovals: [],
    runRevision: 0,
    watched: false,
  };

  it('takes a message to a waiting task as an answer', () => {
    const waiting = {
      ...base,
      status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
      pendingApproval: pending[0],
      pendingApprovals: pending,
    };
    expect(planContinuation(waiting, message('approved'))).toEqual({ kind: 'decision', uuid: 'u1', decision: 'approved' });
  });

  it('takes a message to any other task as the next turn, even "approved"', () => {
    expect(planContinuation(base, message('approved'))).toEqual({ kind: 'message', text: 'approved' });
  });

  it('refuses a message without text to a task that waits for nothing', () => {
    expect(() => planContinuation(base, message(' ', [{ approved: true }]))).toThrow(JsonRpcError);
  });
});
