import { type Message, MessageRole, type RunRecord, type RunStep } from '../../gen/ts/asg/store/v1/store.js';
import { unansweredCallIds } from './domain/history.js';

/**
 * A fork of a run at one of its steps, decided from its journal alone: which of its
 * conversation's messages the new conversation gets (those before the step), or why the run
 * cannot be forked. The rule that never bends: nothing of the original's approvals or
 * decisions goes with the copy, so a destructive call at or after the step runs only after an
 * approval of its own in the fork.
 */
export type ForkPlan = { kind: 'copy'; upToSeq: number } | { kind: 'refuse'; message: string };

/** Kinds only an agent tree records. */
const TREE_KINDS = new Set(['node_started', 'node_finished']);

export const TREE_FORK_REFUSED = (runId: string) =>
  `run ${runId} is a run of an agent tree: forking an agent-tree run is not supported yet; fork a run of a simple-mode agent, or send the message again`;

export function planFork(input: {
  run: RunRecord;
  steps: readonly RunStep[];
  step: number;
  /** The message_seq of the conversation's next run after this one, if any. */
  nextRunSeq: number | undefined;
  /** The conversation's message count now. */
  messageCount: number;
}): ForkPlan {
  const { run, steps, step } = input;
  const last = steps.length;
  if (step < 0 || step > last)
    return {
      kind: 'refuse',
      message: `step ${step} is outside run ${run.runId}: its steps are 0..${last - 1}${last === 0 ? ' (none)' : ''}, and ${last} forks after its last step`,
    };
  if (steps.some((recorded) => TREE_KINDS.has(recorded.kind))) return { kind: 'refuse', message: TREE_FORK_REFUSED(run.runId) };
  if (run.journalVersion < 2 || steps.some((recorded) => recorded.messageSeq === undefined))
    return {
      kind: 'refuse',
      message: `run ${run.runId} was recorded in journal format ${run.journalVersion}, whose steps do not record their place in the conversation; it cannot be forked (runs recorded in format 2 and later can)`,
    };
  if (step < last) return { kind: 'copy', upToSeq: Number(steps[step]!.messageSeq) };
  // After its last step: everything up to the next run's user message (or the conversation's end).
  return { kind: 'copy', upToSeq: input.nextRunSeq === undefined ? input.messageCount : input.nextRunSeq - 1 };
}

/**
 * Whether a copied history goes on by itself: it ends in the middle of a turn (a user message
 * not answered yet, or calls of the model whose results are missing or not yet read by it).
 * A history that ends with a complete answer (or holds no user message) is only a copy.
 */
export function goesOn(messages: readonly Message[]): boolean {
  const lastUser = messages.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
  if (lastUser < 0) return false;
  const tail = messages.slice(lastUser + 1).filter((message) => message.role !== MessageRole.MESSAGE_ROLE_SYSTEM);
  const final = tail.at(-1);
  if (!final) return true;
  if (unansweredCallIds(tail).length > 0) return true;
  return !(final.role === MessageRole.MESSAGE_ROLE_ASSISTANT && !final.toolCall);
}
