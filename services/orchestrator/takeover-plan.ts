import { ApprovalStatus, MessageRole, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { childGates, type AgentNode } from './domain/tree.js';
import type { StoredRun } from './run/state.js';

/**
 * What a replica does with a run it took over, decided from what is stored alone:
 * the conversation, its approvals that were approved but never finished, and its run value.
 * The rule that never bends: a destructive call whose outcome is unknown (started, no result
 * recorded) is never run again silently — a human decides on a new approval marked so.
 */
export type TakeoverPlan =
  /** Approved calls that started and have no recorded outcome: each waits again, as "outcome unknown". */
  | { kind: 'outcomeUnknown'; executing: PendingApproval[] }
  /** The run goes on here (machine event takenOver). */
  | { kind: 'drive'; event: TakeoverDrive }
  /** The run cannot go on without doing something twice: the turn ends with this note. */
  | { kind: 'end'; note: string };

/**
 * How the run goes on. `approved`: an approval claimed but whose call never started — it runs
 * now. `resumed`: a decided approval whose continuation was cut off — it goes on after it.
 * Neither: a message's turn, run again from its stored history.
 */
export interface TakeoverDrive {
  userMessage: string;
  approved?: PendingApproval;
  resumed?: { uuid: string; rejected: boolean };
  /** An agent tree goes on from its run's checkpoint: at its first unfinished node. */
  fromCheckpoint?: boolean;
}

export interface TakeoverInput {
  conversation: Pick<Conversation, 'messages' | 'pendingApprovals'>;
  /** The conversation's approvals that were approved but never finished (ListUnfinishedApprovals). */
  unfinished: readonly PendingApproval[];
  /** The stored run, decoded; undefined when none is stored. */
  run: StoredRun | undefined;
  /** How the configuration runs turns now. */
  mode: 'simple' | 'tree';
  /** The agent tree runs destructive calls without approval somewhere (inside a parallel or loop node with `approvals: auto`): such a call leaves no record until its step ends. */
  treeRunsUnapproved: boolean;
  /**
   * An approval policy may approve a call (a rule with `decide: approve`): such a call runs at
   * once and, like an unapproved one, leaves no record of its own until its step is written.
   */
  policyApproves: boolean;
  /** The how-manieth takeover of this turn this is, and the most allowed (runs.max_takeovers). */
  takeovers: number;
  maxTakeovers: number;
  /** The configured tree's fingerprint (domain/tree.ts wholeTreeFingerprint): a checkpoint is walked only in the tree it was written in. */
  treeFingerprint?: string;
}

export const TOO_MANY_TAKEOVERS = (count: number) =>
  `This turn was stopped: it was taken over ${count} times after the replica running it stopped, so it may be what stops them (runs.max_takeovers). What it recorded is kept; send your message again to retry.`;
export const NOT_RESUMABLE =
  'This turn was interrupted: the replica running it stopped after some of its steps were recorded, and running it again would repeat them. What it recorded is kept; send your message again to retry.';
export const TREE_CHANGED =
  'This turn was interrupted: the replica running it stopped, and the agent tree has changed since, so it cannot go on where it stood. What it recorded is kept; send your message again to retry.';
export const MODE_CHANGED =
  'This turn was interrupted: the replica running it stopped, and the configuration now runs turns differently, so it cannot go on. Send your message again to retry.';

export function planTakeover(input: TakeoverInput): TakeoverPlan {
  const executing = input.unfinished.filter((approval) => approval.status === ApprovalStatus.APPROVAL_STATUS_EXECUTING);
  // Before anything else: asking a human is right however many times the run was taken over.
  if (executing.length > 0) return { kind: 'outcomeUnknown', executing };
  if (input.takeovers > input.maxTakeovers) return { kind: 'end', note: TOO_MANY_TAKEOVERS(input.takeovers - 1) };
  const run = input.run;
  if (run && run.mode !== input.mode) return { kind: 'end', note: MODE_CHANGED };
  const messages = input.conversation.messages;
  const userMessage = messages.findLast((message) => message.role === MessageRole.MESSAGE_ROLE_USER)?.content ?? '';
  const approved = input.unfinished.find((approval) => approval.status === ApprovalStatus.APPROVAL_STATUS_APPROVED);
  // Claimed, never started: running it now is the one run the human approved.
  if (approved) return { kind: 'drive', event: { userMessage, approved } };

  const pending = new Set(input.conversation.pendingApprovals.map((approval) => approval.uuid));
  const decided = run?.pending.find((pause) => !pending.has(pause.approvalUuid));
  const last = messages.at(-1);
  if (decided) {
    // The decision's outcome is the last thing recorded (the call's result, or the "no"); after it the continuation had written nothing.
    const outcome = last?.role === MessageRole.MESSAGE_ROLE_TOOL && last.toolCall?.name === decided.toolName ? last : undefined;
    if ((input.mode === 'tree' && (!outcome || input.treeRunsUnapproved)) || input.policyApproves)
      return { kind: 'end', note: NOT_RESUMABLE };
    return {
      kind: 'drive',
      event: { userMessage, resumed: { uuid: decided.approvalUuid, rejected: outcome?.toolCall?.rejected === true } },
    };
  }
  // A message's turn. Simple mode reads the whole stored history, whatever it holds (its
  // destructive calls always stop for approval). An agent tree goes on from its checkpoint
  // (each node's finish wrote its messages with it, so nothing it recorded is done again) or,
  // stored before checkpoints, starts again only if none of its nodes recorded anything. Where
  // a destructive call may run without approval (inside a parallel or loop node, or approved
  // by a policy), neither may run again: such a call may have run with no record yet.
  if (input.treeRunsUnapproved && input.mode === 'tree') return { kind: 'end', note: NOT_RESUMABLE };
  if (input.policyApproves) return { kind: 'end', note: NOT_RESUMABLE };
  const checkpoint = input.mode === 'tree' ? run?.checkpoint : undefined;
  if (checkpoint) {
    if (checkpoint.tree !== input.treeFingerprint) return { kind: 'end', note: TREE_CHANGED };
    return { kind: 'drive', event: { userMessage, fromCheckpoint: true } };
  }
  if (input.mode === 'tree' && last?.role !== MessageRole.MESSAGE_ROLE_USER) return { kind: 'end', note: NOT_RESUMABLE };
  return { kind: 'drive', event: { userMessage } };
}

/** The text of an approval asked again because its call's outcome is unknown. */
export function outcomeUnknownText(approval: PendingApproval): string {
  return `Outcome unknown: ${approval.toolName} was approved and had started when the replica running it stopped, before its result was recorded. It may or may not have taken effect. Approving runs it again; check its effect first. (The approval was: ${approval.description})`;
}

/** Whether destructive calls run without approval anywhere below `node` (childGates). */
export function runsUnapproved(node: AgentNode, gates: boolean): boolean {
  if (!gates && (node.type === 'llm' || node.type === 'a2a')) return true;
  const below = childGates(gates, node);
  return (node.agents ?? []).some((child) => runsUnapproved(child, below));
}
