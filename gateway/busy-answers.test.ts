/** A busy conversation, as each face of the gateway answers it. */
import { describe, expect, it } from 'vitest';
import { GrpcStatus, RpcError } from '../services/common/grpc/errors.js';
import { toJsonRpcError } from './a2a/jsonrpc.js';
import { errorReply } from './rest/error-reply.js';
import { trpcErrorOf } from './trpc/errors.js';
import { busyOr, ConversationBusy } from './app/busy.js';

const ID = '6f1c2a3b-0000-4000-8000-000000000001';
const SEND = '/asg.orchestrator.v1.OrchestratorService/SendMessage';

describe('one active run per conversation, at the edges', () => {
  it("reads the orchestrator's ABORTED as busy, and leaves every other failure alone", () => {
    expect(busyOr(new RpcError(GrpcStatus.ABORTED, 'conversation is busy', SEND), ID)).toBeInstanceOf(ConversationBusy);
    const other = new RpcError(GrpcStatus.FAILED_PRECONDITION, 'still running', SEND);
    expect(busyOr(other, ID)).toBe(other);
  });

  it('is REST 409 with the conversation id and how to wait', () => {
    const reply = errorReply(new ConversationBusy(ID));
    expect(reply).toEqual({
      status: 409,
      body: { error: expect.stringContaining(`conversation ${ID} is busy`), conversation_id: ID },
      unexpected: false,
    });
    expect(reply.body.error).toContain(`GET /conversations/${ID}/events`);
  });

  it('is A2A -32004 naming the task, tRPC CONFLICT', () => {
    expect(toJsonRpcError(new ConversationBusy(ID))).toEqual({
      error: expect.objectContaining({ code: -32004, message: expect.stringContaining(`task ${ID} is busy`) }),
      unexpected: false,
    });
    expect(trpcErrorOf(new ConversationBusy(ID))).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining(`conversation ${ID} is busy`),
    });
  });
});
