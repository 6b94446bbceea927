/** A request whose outcome is not known when it is answered, as each face of the gateway says it. */
import { describe, expect, it } from 'vitest';
import { GrpcStatus, RpcError } from '../services/common/grpc/errors.js';
import { toJsonRpcError } from './a2a/jsonrpc.js';
import { OutcomeUnknown, unknownIfLate } from './app/outcome-unknown.js';
import { errorReply } from './rest/error-reply.js';
import { trpcErrorOf } from './trpc/errors.js';

const CONVERSATION = '6f1c2a3b-0000-4000-8000-000000000001';
const APPROVAL = '6f1c2a3b-0000-4000-8000-00000000000a';
const SEND = '/asg.orchestrator.v1.OrchestratorService/SendMessage';

const unknownDecision = new OutcomeUnknown({
  reason: 'the decision is recorded, but what followed is not known here',
  conversationId: CONVERSATION,
  approvalUuid: APPROVAL,
  handedBack: false,
});

describe('an unknown outcome at the edges', () => {
  it('is REST 504 saying so, naming the approval and the conversation to look at, never a success nor a plain failure', () => {
    const reply = errorReply(unknownDecision);
    expect(reply).toEqual({
      status: 504,
      body: {
        error: expect.stringMatching(/^outcome unknown: the decision is recorded/),
        outcome: 'unknown',
        conversation_id: CONVERSATION,
        approval_uuid: APPROVAL,
      },
      unexpected: false,
    });
    expect(reply.body.error).toContain(`GET /approvals/${APPROVAL} and GET /conversations/${CONVERSATION}`);
  });

  it('is REST 503 with Retry-After when the replica stopped and handed the run to another', () => {
    const reply = errorReply(
      new OutcomeUnknown({
        reason: 'this replica is stopping and handed the run to another replica',
        conversationId: CONVERSATION,
        handedBack: true,
      }),
    );
    expect(reply).toMatchObject({
      status: 503,
      body: { outcome: 'unknown', conversation_id: CONVERSATION },
      headers: { 'Retry-After': '5' },
    });
    expect(reply.body).not.toHaveProperty('approval_uuid');
  });

  it('names where to look on A2A and tRPC too', () => {
    expect(toJsonRpcError(unknownDecision).error.message).toContain(`GET /approvals/${APPROVAL}`);
    expect(trpcErrorOf(unknownDecision)).toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      message: expect.stringContaining(`GET /conversations/${CONVERSATION}`),
    });
  });

  it('reads a deadline that passed on the orchestrator call as an unknown outcome there; every other failure as it is', () => {
    const late = unknownIfLate(new RpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded after 60.001s', SEND), {
      conversationId: CONVERSATION,
    });
    expect(late).toBeInstanceOf(OutcomeUnknown);
    expect(errorReply(late)).toMatchObject({ status: 504, body: { outcome: 'unknown', conversation_id: CONVERSATION } });
    const refused = new RpcError(GrpcStatus.UNAVAILABLE, 'approval could not be read; nothing was decided', SEND);
    expect(unknownIfLate(refused, { approvalUuid: APPROVAL })).toBe(refused);
    expect(errorReply(refused).body).not.toHaveProperty('outcome');
  });
});
