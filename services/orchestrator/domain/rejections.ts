import { MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../../common/call-hash.js';
import { jsonObjectOf } from '../../common/json-value.js';
import type { HistoryEntry } from './history.js';

/** A call a human rejected in the current run, as the model was told of it. */
export interface RejectedCall {
  /** The result the model saw (messages.ts rejectionText). */
  text: string;
  reason?: string;
}

/**
 * The calls rejected in the current run, by their hash (common/call-hash.ts: tool name and
 * canonical arguments). The run starts at the last user message: simple mode's turn with its
 * continuations after decisions, or an agent-tree node's history, which starts with the run's
 * user message. A later user message ends the window, so the user can ask for the call again.
 * A call identical to one rejected in the run is answered with the same rejection
 * instead of being put to a human a second time.
 */
export function rejectedInRun(history: readonly HistoryEntry[]): Map<string, RejectedCall> {
  let start = 0;
  for (let index = history.length - 1; index >= 0; index--) {
    if (history[index]!.role === MessageRole.MESSAGE_ROLE_USER) {
      start = index + 1;
      break;
    }
  }
  const rejected = new Map<string, RejectedCall>();
  for (const message of history.slice(start)) {
    const call = message.toolCall;
    if (message.role !== MessageRole.MESSAGE_ROLE_TOOL || !call?.rejected) continue;
    rejected.set(callHash(call.name, jsonObjectOf(call.argumentsJson)), {
      text: call.result ?? message.content,
      ...(call.reason && { reason: call.reason }),
    });
  }
  return rejected;
}

/** The earlier rejection a call repeats in this run, if it is identical to one (same tool, same argument hash). */
export function repeatedRejection(
  history: readonly HistoryEntry[],
  toolName: string,
  args: Record<string, unknown>,
): RejectedCall | undefined {
  return rejectedInRun(history).get(callHash(toolName, args));
}
