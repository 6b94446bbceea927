import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { trpcCodeForStatus, trpcErrorOf, validationMessage } from './errors.js';

describe('trpcCodeForStatus', () => {
  it.each([
    [400, 'BAD_REQUEST'],
    [404, 'NOT_FOUND'],
    [409, 'CONFLICT'],
    [413, 'PAYLOAD_TOO_LARGE'],
    [503, 'SERVICE_UNAVAILABLE'],
    [504, 'GATEWAY_TIMEOUT'],
    [500, 'INTERNAL_SERVER_ERROR'],
  ])('HTTP %i → %s', (status, code) => {
    expect(trpcCodeForStatus(status)).toBe(code);
  });
});

describe('trpcErrorOf', () => {
  it('keeps REST’s message, redacted, and drops the original error', () => {
    const error = trpcErrorOf(
      new RpcError(
        GrpcStatus.UNAUTHENTICATED,
        'MCP server refused Bearer eyJhbGciOi.secret.part',
        '/asg.orchestrator.v1.OrchestratorService/SendMessage',
      ),
    );
    expect(error.code).toBe('INTERNAL_SERVER_ERROR');
    expect(error.message).toContain('Bearer [redacted]');
    expect(error.message).not.toContain('eyJhbGciOi');
    expect(error.cause).toBeUndefined();
  });

  it('passes a TRPCError through', () => {
    const original = new TRPCError({ code: 'FORBIDDEN', message: 'no' });
    expect(trpcErrorOf(original)).toBe(original);
  });
});

describe('validationMessage', () => {
  it('names each failing field', () => {
    expect(
      validationMessage({
        issues: [
          { path: ['message'], message: 'must not be empty' },
          { path: [], message: 'bad' },
        ],
      }),
    ).toBe('message: must not be empty; bad');
    expect(validationMessage(new Error('plain'))).toBeUndefined();
  });
});
