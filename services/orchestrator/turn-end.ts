import { ConversationStatus } from '../../gen/ts/asg/store/v1/store.js';
import { withContextPatch } from '../common/context.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { errorText } from './run/io.js';

/**
 * Clears the running mark of a turn that ended without its last write: a failure, or a
 * pipeline run that was superseded (a mark left behind keeps the conversation busy).
 * An AppendMessages with no message and ends_turn, made outside the request's deadline,
 * which may be what has just passed; a store that cannot be reached leaves the mark to go
 * stale (store.proto, StartTurn). Never throws: the caller reports the turn's own failure.
 */
export async function endTurn(
  clients: Pick<OrchestratorClients, 'store'>,
  log: Logger,
  conversationId: string,
  cause: unknown,
  leaseOwner?: string,
): Promise<void> {
  try {
    await withContextPatch({ deadline: undefined }, () =>
      clients.store.appendMessages({
        conversationId,
        messages: [],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        endsTurn: true,
        // Fenced: a turn another replica took over is not this one's to end.
        ...(leaseOwner !== undefined && { leaseOwner }),
      }),
    );
    log.warn('turn ended without its last write; conversation freed', { conversation: conversationId, reason: errorText(cause) });
  } catch (error) {
    log.error('running mark of an ended turn not cleared; it goes stale after chat.turn_timeout', {
      conversation: conversationId,
      error: errorText(error),
    });
  }
}
