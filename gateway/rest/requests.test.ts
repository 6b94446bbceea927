import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../../services/common/grpc/errors.js';
import {
  APPROVAL_BODY_EXPECTED,
  parseApprovalDecision,
  parseApprovalQuery,
  parseAuditQuery,
  parseNewConversation,
  parseNewMessage,
  parsePageRequest,
} from './requests.js';

function rejection(parse: () => unknown): ServiceError {
  try {
    parse();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected the input to be refused');
}

describe('parseApprovalDecision', () => {
  it.each([
    [{ approved: true }, 'approved'],
    [{ approved: false }, 'rejected'],
    [{ action: 'approve' }, 'approved'],
    [{ action: 'reject' }, 'rejected'],
    [{ action: 'REJECT' }, 'rejected'],
    [{ answer: 'yes' }, 'approved'],
    [{ answer: 'Confirm' }, 'approved'],
    [{ answer: 'no' }, 'rejected'],
    [{ answer: 'deny' }, 'rejected'],
    [{ answer: true }, 'approved'],
    [{ answer: false }, 'rejected'],
    [{ approved: true, answer: 'ok' }, 'approved'],
  ])('%j → %s', (body, decision) => {
    expect(parseApprovalDecision(body)).toEqual({ decision });
  });

  // An optional reason beside each of the three forms.
  it.each([
    [{ approved: false, reason: 'value too large' }, 'rejected'],
    [{ action: 'reject', reason: '  value too large ' }, 'rejected'],
    [{ answer: 'no', reason: 'value too large' }, 'rejected'],
    [{ approved: true, reason: 'value too large' }, 'approved'],
  ])('%j carries its reason', (body, decision) => {
    expect(parseApprovalDecision(body)).toEqual({ decision, reason: 'value too large' });
  });

  it('takes an empty or blank reason as none', () => {
    expect(parseApprovalDecision({ approved: false, reason: '  ' })).toEqual({ decision: 'rejected' });
  });

  it('accepts a reason of exactly 2,000 characters', () => {
    expect(parseApprovalDecision({ answer: 'no', reason: 'x'.repeat(2000) }).reason).toHaveLength(2000);
  });

  it.each([
    [{ approved: false, reason: 'x'.repeat(2001) }, '"reason" is 2001 characters long; at most 2000 are accepted'],
    [{ approved: false, reason: 42 }, '"reason" must be a string of at most 2000 characters, not number'],
    [{ action: 'reject', reason: null }, '"reason" must be a string of at most 2000 characters, not null'],
    [{ answer: 'no', reason: ['too', 'large'] }, '"reason" must be a string of at most 2000 characters, not object'],
  ])('refuses a bad reason (%#) with a clear message', (body, message) => {
    const error = rejection(() => parseApprovalDecision(body));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(message);
  });

  it.each([
    [{}],
    [{ answer: 'maybe' }],
    [{ approved: 'yes' }],
    [{ approved: 1 }],
    [{ action: 'yes' }],
    [{ answer: 42 }],
    [null],
    [[]],
    ['yes'],
    [undefined],
    [{ approved: null }],
  ])('%j is refused with what was expected', (body) => {
    const error = rejection(() => parseApprovalDecision(body));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(APPROVAL_BODY_EXPECTED);
  });

  // Bodies are strict; a field the body does not take is named, not ignored.
  it.each([
    [{ approved: true, comment: 'looks fine' }, 'unknown field "comment"'],
    [{ approve: true }, 'unknown field "approve"'],
    [{ approved: false, reasons: 'x', note: 1 }, 'unknown fields "reasons", "note"'],
  ])('%j is refused naming the unknown field', (body, named) => {
    const error = rejection(() => parseApprovalDecision(body));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(`${named}; ${APPROVAL_BODY_EXPECTED}`);
  });

  it('refuses a body that both approves and rejects', () => {
    const error = rejection(() => parseApprovalDecision({ approved: true, action: 'reject' }));
    expect(error.message).toBe(`the body both approves and rejects; ${APPROVAL_BODY_EXPECTED}`);
  });

  it('refuses a body where one form decides and another says nothing sensible', () => {
    expect(rejection(() => parseApprovalDecision({ approved: true, answer: 'maybe' })).message).toBe(APPROVAL_BODY_EXPECTED);
  });

  // Edit on approve.
  it('takes edited arguments with an approval, in any of its forms; null is none', () => {
    const args = { name: 'web-1', value: 7, tags: ['a'], nested: { deep: true } };
    expect(parseApprovalDecision({ approved: true, arguments: args })).toEqual({ decision: 'approved', arguments: args });
    expect(parseApprovalDecision({ action: 'approve', arguments: {}, reason: 'fixed the value' })).toEqual({
      decision: 'approved',
      reason: 'fixed the value',
      arguments: {},
    });
    expect(parseApprovalDecision({ answer: 'yes', arguments: null })).toEqual({ decision: 'approved' });
  });

  it.each([[[1, 2]], ['{"name":"x"}'], [42], [true]])('refuses arguments that are not an object (%j)', (args) => {
    const error = rejection(() => parseApprovalDecision({ approved: true, arguments: args }));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe('"arguments" must be a JSON object: the arguments to run the call with');
  });

  it('refuses arguments with a rejection: nothing would run with them', () => {
    const error = rejection(() => parseApprovalDecision({ approved: false, arguments: { name: 'x' } }));
    expect(error.message).toBe('"arguments" are only taken with an approval: a rejected call does not run');
  });

  it('takes the answer to an MCP server\'s question as "input" with an approval; refuses it when it is not an object or comes with a rejection', () => {
    expect(parseApprovalDecision({ approved: true, input: { name: 'Ada' } })).toEqual({ decision: 'approved', input: { name: 'Ada' } });
    expect(parseApprovalDecision({ approved: true, input: null })).toEqual({ decision: 'approved' });
    expect(rejection(() => parseApprovalDecision({ approved: true, input: 'Ada' })).message).toBe(
      '"input" must be a JSON object: the answer to the MCP server\'s question',
    );
    const declined = rejection(() => parseApprovalDecision({ approved: false, input: { name: 'Ada' } }));
    expect(declined.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(declined.message).toBe('"input" is only taken with an approval: a rejection declines the question');
  });
});

describe('parseApprovalQuery', () => {
  it('defaults to every status and conversation, 50 at a time', () => {
    expect(parseApprovalQuery({})).toEqual({ limit: 50 });
    expect(parseApprovalQuery({ other: 'ignored' })).toEqual({ limit: 50 });
  });

  it('takes a status or several, a conversation and a page', () => {
    expect(parseApprovalQuery({ status: 'pending', conversation_id: 'c1', limit: '10', cursor: 'next' })).toEqual({
      limit: 10,
      cursor: 'next',
      statuses: ['pending'],
      conversationId: 'c1',
    });
    expect(parseApprovalQuery({ status: 'approved, rejected,approved' })).toEqual({ limit: 50, statuses: ['approved', 'rejected'] });
    expect(parseApprovalQuery({ status: 'expired' }).statuses).toEqual(['expired']);
  });

  it.each([
    [{ status: 'waiting' }, '"status" must be pending, approved, rejected or expired (several separated by commas), got "waiting"'],
    [{ status: 'pending,' }, '"status" must be pending, approved, rejected or expired (several separated by commas), got ""'],
    [
      { status: ['pending', 'approved'] },
      '"status" must be given once, as pending, approved, rejected or expired (several separated by commas)',
    ],
    [{ conversation_id: '' }, '"conversation_id" must not be empty; omit it for every conversation'],
    [{ conversation_id: ['a', 'b'] }, '"conversation_id" must be given once, as the id of a conversation'],
    [{ limit: '501' }, '"limit" must be an integer from 1 to 500'],
    [{ cursor: '' }, '"cursor" must not be empty; omit it for the first page'],
  ])('refuses %j', (query, message) => {
    const error = rejection(() => parseApprovalQuery(query));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(message);
  });
});

describe('parseAuditQuery', () => {
  it('defaults to every kind, 50 at a time, and takes kinds and a page', () => {
    expect(parseAuditQuery({})).toEqual({ limit: 50 });
    expect(parseAuditQuery({ kind: 'approval.decided,auth.failed', limit: '5', cursor: 'c' })).toEqual({
      limit: 5,
      cursor: 'c',
      kinds: ['approval.decided', 'auth.failed'],
    });
  });

  it.each([[{ kind: 'Approval' }], [{ kind: 'approval..decided' }], [{ kind: '<script>' }], [{ kind: ['a', 'b'] }], [{ limit: '0' }]])(
    'refuses %j',
    (query) => {
      expect(rejection(() => parseAuditQuery(query)).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    },
  );
});

describe('parseNewMessage', () => {
  it('returns the message as sent', () => {
    expect(parseNewMessage({ message: '  list resources ' })).toBe('  list resources ');
  });

  it.each([
    [{}, '"message" is required'],
    [undefined, '"message" is required'],
    [{ message: '' }, '"message" must not be empty'],
    [{ message: ' \n\t' }, '"message" must not be empty'],
    [{ message: 5 }, '"message" must be a string'],
    [{ message: null }, '"message" must be a string'],
    [[], 'the body must be a JSON object'],
  ])('%j → 400 "%s"', (body, reason) => {
    const error = rejection(() => parseNewMessage(body));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toBe(`${reason}; expected {"message": "<non-empty text>"}`);
  });
});

describe('unknown fields in a message body', () => {
  it('are named, before a missing field they may be a misspelling of', () => {
    expect(rejection(() => parseNewMessage({ message: 'hi', stream: true })).message).toBe(
      'unknown field "stream"; expected {"message": "<non-empty text>"}',
    );
    expect(rejection(() => parseNewMessage({ mesage: 'hi' })).message).toBe(
      'unknown field "mesage"; expected {"message": "<non-empty text>"}',
    );
    expect(rejection(() => parseNewConversation({ message: 'hi', title: 'x', model: 'y' })).message).toBe(
      'unknown fields "title", "model"; expected no body, {} or {"message": "<non-empty text>"}',
    );
    expect(rejection(() => parseNewConversation({ extra: null })).code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});

describe('parseNewConversation', () => {
  it('accepts no body, an empty object, null and a message', () => {
    expect(parseNewConversation(undefined)).toBeUndefined();
    expect(parseNewConversation({})).toBeUndefined();
    expect(parseNewConversation({ message: null })).toBeUndefined();
    expect(parseNewConversation({ message: 'hello' })).toBe('hello');
  });

  it('refuses an empty or non-string message', () => {
    expect(rejection(() => parseNewConversation({ message: '' })).message).toMatch(/^"message" must not be empty; expected/);
    expect(rejection(() => parseNewConversation({ message: ['x'] })).message).toMatch(/^"message" must be a string; expected/);
    expect(rejection(() => parseNewConversation('hello')).message).toMatch(/^the body must be a JSON object/);
  });
});

describe('parsePageRequest', () => {
  it('defaults to 50 and passes the cursor', () => {
    expect(parsePageRequest({})).toEqual({ limit: 50 });
    expect(parsePageRequest({ limit: '1' })).toEqual({ limit: 1 });
    expect(parsePageRequest({ limit: '500', cursor: 'abc' })).toEqual({ limit: 500, cursor: 'abc' });
    expect(parsePageRequest({ other: 'ignored' })).toEqual({ limit: 50 });
  });

  it.each([['0'], ['501'], ['-1'], ['1.5'], ['ten'], [''], [['10', '20']]])('limit=%j is refused', (limit) => {
    const error = rejection(() => parsePageRequest({ limit }));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toMatch(/^"limit" must be (given once, as )?an integer from 1 to 500$/);
  });

  it('refuses an empty or repeated cursor', () => {
    expect(rejection(() => parsePageRequest({ cursor: '' })).message).toMatch(/^"cursor" must not be empty/);
    expect(rejection(() => parsePageRequest({ cursor: ['a', 'b'] })).message).toMatch(/^"cursor" must be given once/);
  });
});
