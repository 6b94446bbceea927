import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../../services/common/grpc/errors.js';
import { APPROVAL_BODY_EXPECTED, parseApprovalDecision, parseNewConversation, parseNewMessage, parsePageRequest } from './requests.js';

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
    [{ approved: true, comment: 'looks fine' }, 'approved'],
  ])('%j → %s', (body, decision) => {
    expect(parseApprovalDecision(body)).toEqual({ decision });
  });

  // Issue 13: an optional reason beside each of the three forms.
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

  it.each([[{}], [{ answer: 'maybe' }], [{ approved: 'yes' }], [{ approved: 1 }], [{ action: 'yes' }], [{ answer: 42 }], [null], [[]], ['yes'], [undefined], [{ approved: null }]])(
    '%j is refused with what was expected',
    (body) => {
      const error = rejection(() => parseApprovalDecision(body));
      expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(error.message).toBe(APPROVAL_BODY_EXPECTED);
    },
  );

  it('refuses a body that both approves and rejects', () => {
    const error = rejection(() => parseApprovalDecision({ approved: true, action: 'reject' }));
    expect(error.message).toBe(`the body both approves and rejects; ${APPROVAL_BODY_EXPECTED}`);
  });

  it('refuses a body where one form decides and another says nothing sensible', () => {
    expect(rejection(() => parseApprovalDecision({ approved: true, answer: 'maybe' })).message).toBe(APPROVAL_BODY_EXPECTED);
  });
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
