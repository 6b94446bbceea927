import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { parseDecision, parseRequester } from './server.js';

const refused = (request: Parameters<typeof parseDecision>[0]) => {
  try {
    parseDecision(request);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    return (error as ServiceError).message;
  }
  throw new Error('accepted');
};

describe('ResolveApproval: who decides and how, at the gRPC edge', () => {
  it('defaults: anonymous through rest; empty strings are proto3 for "not given"', () => {
    expect(parseDecision({ approved: true })).toEqual({ decidedBy: 'anonymous', via: 'rest' });
    expect(parseDecision({ approved: false, decidedBy: '', via: '' })).toEqual({ decidedBy: 'anonymous', via: 'rest' });
  });

  it('an identity and a face pass through; edited arguments with an approval', () => {
    expect(
      parseDecision({ approved: true, decidedBy: ' alice@example.com ', via: 'web', argumentsJson: JSON.stringify({ name: 'y' }) }),
    ).toEqual({ decidedBy: 'alice@example.com', via: 'web', arguments: { name: 'y' } });
    for (const via of ['rest', 'web', 'a2a', 'mcp', 'cli']) expect(parseDecision({ approved: true, via }).via).toBe(via);
    // The decider's roles, for an approval with a quorum; none given: none held.
    expect(parseDecision({ approved: true, deciderRoles: ['approve', 'admin'] }).roles).toEqual(['approve', 'admin']);
    expect(parseDecision({ approved: true, deciderRoles: [] }).roles).toBeUndefined();
  });

  it('refused with INVALID_ARGUMENT: an unknown face (timeout is the expiry’s own), a control character, a long identity', () => {
    expect(refused({ approved: true, via: 'timeout' })).toContain('via: one of rest, web, a2a, mcp, cli');
    expect(refused({ approved: true, via: 'email' })).toContain('via: one of');
    expect(refused({ approved: true, deciderRoles: ['root'] })).toContain('decider_roles: each one of chat, approve, admin');
    expect(refused({ approved: true, decidedBy: 'ali\u0000ce' })).toContain('no control characters');
    expect(refused({ approved: true, decidedBy: 'x'.repeat(513) })).toContain('at most 512');
    expect(refused({ approved: true, decidedBy: '   ' })).toContain('non-empty');
    // The edge checks the shape only: that arguments need an approval is the run machine's rule.
    expect(parseDecision({ approved: false, argumentsJson: JSON.stringify({ name: 'y' }) })).toEqual({
      decidedBy: 'anonymous',
      via: 'rest',
      arguments: { name: 'y' },
    });
  });
});

describe('SendMessage and CreateConversation: who sends the message, at the gRPC edge', () => {
  const refusedRequester = (requester: Parameters<typeof parseRequester>[0]) => {
    try {
      parseRequester(requester);
    } catch (error) {
      expect((error as ServiceError).code).toBe(GrpcStatus.INVALID_ARGUMENT);
      return (error as ServiceError).message;
    }
    throw new Error('accepted');
  };

  it('a principal and its roles pass through as the policies read them; absent is unknown', () => {
    expect(parseRequester({ principal: 'token:alice', roles: ['chat', 'approve'] })).toEqual({
      name: 'token:alice',
      roles: ['chat', 'approve'],
    });
    expect(parseRequester(undefined)).toBeUndefined();
  });

  it('refused with INVALID_ARGUMENT: a role that is none, a blank or overlong principal', () => {
    expect(refusedRequester({ principal: 'token:alice', roles: ['root'] })).toContain('requester: roles: each one of chat, approve, admin');
    expect(refusedRequester({ principal: '  ', roles: [] })).toContain('requester:');
    expect(refusedRequester({ principal: 'x'.repeat(513), roles: [] })).toContain('at most 512');
  });
});
