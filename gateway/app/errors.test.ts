import { describe, expect, it } from 'vitest';
import { GrpcStatus, RpcError, ServiceError, invalidArgument } from '../../services/common/grpc/errors.js';
import { failureOf, httpStatusForGrpc } from './errors.js';

const ORCHESTRATOR = '/asg.orchestrator.v1.OrchestratorService/SendMessage';
const STORE = '/asg.store.v1.ConversationStoreService/GetConversation';

describe('httpStatusForGrpc', () => {
  it.each([
    [GrpcStatus.NOT_FOUND, 404],
    [GrpcStatus.INVALID_ARGUMENT, 400],
    [GrpcStatus.FAILED_PRECONDITION, 409],
    // A pipeline write that lost a race with another branch's (store UpdatePipeline).
    [GrpcStatus.ABORTED, 409],
    [GrpcStatus.DEADLINE_EXCEEDED, 504],
    [GrpcStatus.UNAVAILABLE, 503],
    [GrpcStatus.INTERNAL, 500],
    [GrpcStatus.UNKNOWN, 500],
    // A vote a quorum does not count (the requester's, or one without the quorum's role), and a second vote of one voter.
    [GrpcStatus.PERMISSION_DENIED, 403],
    [GrpcStatus.ALREADY_EXISTS, 409],
  ])('gRPC %i → HTTP %i', (code, status) => {
    expect(httpStatusForGrpc(code)).toBe(status);
  });
});

describe('failureOf', () => {
  it('passes the message of a caller mistake through unchanged', () => {
    expect(failureOf(new RpcError(GrpcStatus.NOT_FOUND, 'conversation 6f1c… not found', ORCHESTRATOR))).toEqual({
      status: 404,
      message: 'conversation 6f1c… not found',
      unexpected: false,
    });
    expect(failureOf(invalidArgument('"message" is required'))).toMatchObject({ status: 400, message: '"message" is required' });
  });

  it('names the call that met an outage', () => {
    const down = failureOf(
      new RpcError(
        GrpcStatus.UNAVAILABLE,
        'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7104. Resolution note: ',
        ORCHESTRATOR,
      ),
    );
    expect(down).toEqual({
      status: 503,
      message:
        'service unavailable: SendMessage on the orchestrator failed: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7104.',
      unexpected: false,
    });
    const slow = failureOf(new RpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded after 10.001s', STORE));
    expect(slow.status).toBe(504);
    expect(slow.message).toBe(
      'deadline exceeded: GetConversation on the conversation store did not finish in time: Deadline exceeded after 10.001s',
    );
  });

  it('marks internal failures as unexpected', () => {
    const reply = failureOf(new RpcError(GrpcStatus.INTERNAL, 'disk full', STORE));
    expect(reply).toEqual({ status: 500, message: 'GetConversation on the conversation store failed: disk full', unexpected: true });
    expect(failureOf(new ServiceError(GrpcStatus.INTERNAL, 'approval u1 was missing from the answer')).unexpected).toBe(true);
  });

  it('redacts bearer tokens and key-shaped strings from every message', () => {
    const reply = failureOf(
      new RpcError(
        GrpcStatus.UNAUTHENTICATED,
        'MCP server refused Bearer eyJhbGciOi.secret.part with key sk-abcdefghijklmnopqrstuv',
        ORCHESTRATOR,
      ),
    );
    expect(reply.message).not.toContain('eyJhbGciOi');
    expect(reply.message).not.toContain('sk-abcdefghijklmnopqrstuv');
    expect(reply.message).toContain('Bearer [redacted]');
  });

  it('maps the body parser’s rejections to 400 and 413', () => {
    const malformed = Object.assign(new SyntaxError("Expected property name or '}' in JSON at position 1"), {
      type: 'entity.parse.failed',
      status: 400,
    });
    expect(failureOf(malformed)).toEqual({
      status: 400,
      message: "malformed JSON body: Expected property name or '}' in JSON at position 1",
      unexpected: false,
    });
    const tooLarge = Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413 });
    expect(failureOf(tooLarge)).toEqual({ status: 413, message: 'the request body is larger than the limit of 1 MB', unexpected: false });
  });

  it('keeps a deliberate client error status from a library', () => {
    const undecodable = Object.assign(new URIError("Failed to decode param '%E0%A4%A'"), { status: 400 });
    expect(failureOf(undecodable)).toMatchObject({ status: 400, message: "Failed to decode param '%E0%A4%A'" });
  });

  it('answers anything else with 500 and the message only, never a stack trace', () => {
    const error = new TypeError('cannot read properties of undefined');
    const reply = failureOf(error);
    expect(reply.status).toBe(500);
    expect(reply.unexpected).toBe(true);
    expect(reply.message).toBe('internal error: cannot read properties of undefined');
    expect(reply.message).not.toContain(' at ');
    expect(failureOf('plain text').message).toBe('internal error: plain text');
  });
});
