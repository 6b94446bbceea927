import type { Unsettled } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { GrpcStatus, isCode } from '../../services/common/grpc/errors.js';

/** What a client is told to wait before it looks again at a run handed to another replica. */
export const LOOK_AGAIN_AFTER_SECONDS = 5;

/**
 * A request whose outcome is not known when it is answered (orchestrator.proto, Unsettled): the
 * conversation, the message or the decision was (or may have been) stored, and what followed
 * goes on from what is stored, or is not known yet. It is never a success (nothing is claimed
 * to have run) nor a plain failure (something may have been done): every face says the outcome
 * is unknown and names where to look — the conversation, and a decision's approval — and a
 * client looks there instead of sending the request again (which could do it twice). REST:
 * 504 `{"error", "outcome": "unknown", "conversation_id"?, "approval_uuid"?}`; 503 with
 * `Retry-After` when the replica is stopping and handed the run to another (`handedBack`).
 */
export class OutcomeUnknown extends Error {
  readonly conversationId: string | undefined;
  readonly approvalUuid: string | undefined;
  readonly handedBack: boolean;

  constructor(outcome: Unsettled) {
    const look = [
      outcome.approvalUuid && `GET /approvals/${outcome.approvalUuid}`,
      outcome.conversationId && `GET /conversations/${outcome.conversationId}`,
    ].filter(Boolean);
    const where = look.length > 0 ? `look at ${look.join(' and ')}` : 'look at GET /conversations';
    super(`outcome unknown: ${outcome.reason}. ${where.charAt(0).toUpperCase()}${where.slice(1)} before doing it again.`);
    this.name = 'OutcomeUnknown';
    this.conversationId = outcome.conversationId || undefined;
    this.approvalUuid = outcome.approvalUuid || undefined;
    this.handedBack = outcome.handedBack;
  }
}

/**
 * A failed orchestrator call of a turn or a decision whose deadline passed: the orchestrator
 * may have done all or part of it, so its outcome is unknown, at the conversation or approval
 * the request named. Any other failure as it is.
 */
export function unknownIfLate(error: unknown, where: { conversationId?: string; approvalUuid?: string }): unknown {
  if (!isCode(error, GrpcStatus.DEADLINE_EXCEEDED)) return error;
  const what = where.approvalUuid ? 'the decision' : where.conversationId ? 'the turn' : 'the new conversation and its turn';
  return new OutcomeUnknown({
    reason: `the orchestrator did not answer before the request's deadline (chat.turn_timeout), so whether ${what} finished is not known here (${(error as Error).message})`,
    conversationId: where.conversationId ?? '',
    ...(where.approvalUuid !== undefined && { approvalUuid: where.approvalUuid }),
    handedBack: false,
  });
}
