import { GrpcStatus, isCode } from '../../services/common/grpc/errors.js';

/**
 * One active run per conversation: a message sent while a turn of its conversation
 * runs (a message's turn, or an approved call and its continuation) is refused, not queued.
 * The orchestrator says so with ABORTED; every face answers it as a conflict that names the
 * conversation and how to wait for it: REST 409 `{"error", "conversation_id"}`, tRPC CONFLICT,
 * A2A -32004, an MCP tool error.
 */
export class ConversationBusy extends Error {
  constructor(readonly conversationId: string) {
    super(
      `conversation ${conversationId} is busy: a turn is running on it, and a conversation runs one turn at a time. ` +
        `Wait until it ends (GET /conversations/${conversationId}/events sends a turn_ended event; GET /conversations/${conversationId} shows "turn_running": true until then) and send the message again.`,
    );
    this.name = 'ConversationBusy';
  }
}

/** The busy answer for a failure of SendMessage on `conversationId`; any other failure as it is. */
export function busyOr(error: unknown, conversationId: string): unknown {
  return isCode(error, GrpcStatus.ABORTED) ? new ConversationBusy(conversationId) : error;
}
