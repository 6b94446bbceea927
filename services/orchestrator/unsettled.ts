import { setTimeout as sleep } from 'node:timers/promises';
import type { Unsettled } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStatus, MessageRole, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { currentContext, withContextPatch } from '../common/context.js';
import type { OrchestratorClients } from './clients.js';
import { approvalRequiredText } from './domain/messages.js';

/**
 * What a request answers when this replica cannot tell how it ended (orchestrator.proto,
 * Unsettled): a client is told a success only for what succeeded, a failure only for what did
 * nothing, and otherwise that the outcome is not known here, with where to look.
 */

/** Of the time a request has, at most this much is kept to answer it before its deadline. */
const ANSWER_MARGIN_MS = 1_000;
/** How often a request whose run went on without it reads the conversation to see whether the turn ended. */
const FOLLOW_EVERY_MS = 200;

/**
 * When a request must answer by: a little before its caller's deadline (a tenth of the time it
 * has, at most ANSWER_MARGIN_MS), so that what is not known by then is said to be unknown
 * instead of the caller's own deadline cutting it with no word. Undefined without a deadline.
 */
export function answerDeadline(now = Date.now()): number | undefined {
  const deadline = currentContext()?.deadline;
  if (deadline === undefined) return undefined;
  return deadline - Math.min(ANSWER_MARGIN_MS, Math.max(0, deadline - now) / 10);
}

/**
 * `work`'s reply, or `late()`'s when `by` comes first; the work goes on (its turn is stopped
 * by the turn's own deadline, and its failure is reported through `onLateFailure`).
 */
export async function answerBy<T>(
  by: number | undefined,
  work: Promise<T>,
  late: () => T,
  onLateFailure: (error: unknown) => void,
): Promise<T> {
  if (by === undefined) return work;
  // A bare timer, cleared once the work answers: every turn passes here, and a cancellable
  // sleep would cost an AbortController and the DOMException of its abort each time.
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise<{ late: true }>((resolve) => {
    timer = setTimeout(() => resolve({ late: true }), Math.max(0, by - Date.now()));
    timer.unref();
  });
  try {
    const first = await Promise.race([work.then((reply) => ({ reply })), tooLate]);
    if ('reply' in first) return first.reply;
    work.catch(onLateFailure);
    return late();
  } finally {
    clearTimeout(timer);
  }
}

export function unsettled(reason: string, conversationId: string, approvalUuid?: string, handedBack = false): Unsettled {
  return { reason, conversationId, ...(approvalUuid !== undefined && { approvalUuid }), handedBack };
}

/**
 * The conversation once its running turn has ended (another replica finished the run, or
 * this one took it back), read until `by`; undefined when it has not ended by then or the
 * store could not say. The reads are cheap (no messages) until the last one.
 */
export async function turnEnded(
  store: OrchestratorClients['store'],
  conversationId: string,
  by: number,
): Promise<Conversation | undefined> {
  for (;;) {
    const left = by - Date.now();
    if (left <= 0) return undefined;
    try {
      const { conversation } = await withContextPatch({ deadline: Date.now() + left }, () =>
        store.getConversation({ id: conversationId, includeMessages: false }),
      );
      if (conversation && !conversation.turnRunning) {
        return (
          await withContextPatch({ deadline: Date.now() + Math.max(1, by - Date.now()) }, () =>
            store.getConversation({ id: conversationId, includeMessages: true }),
          )
        ).conversation;
      }
    } catch {
      // The store may be away for a while: the next read may find it.
    }
    await sleep(Math.max(0, Math.min(FOLLOW_EVERY_MS, by - Date.now())));
  }
}

/** The result of a turn that ended without this replica: what the conversation shows now. */
export function storedResult(conversation: Conversation): TurnResult {
  const waiting: PendingApproval | undefined =
    conversation.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL ? conversation.pendingApproval : undefined;
  if (waiting) return { response: approvalRequiredText(waiting), waitingApproval: true, approval: waiting };
  const last = conversation.messages.at(-1);
  return { response: last?.role === MessageRole.MESSAGE_ROLE_ASSISTANT ? last.content : '', waitingApproval: false };
}
