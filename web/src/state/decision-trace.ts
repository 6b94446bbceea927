import type { ApprovalRecordJson, MessageJson } from '../api-types.js';
import { canonicalJson } from './edited-arguments.js';

/**
 * The decision trace the chat shows under a call that waited for approval: who
 * decided, how long ago, why, and whether the arguments were edited. Pure functions of the
 * conversation's approvals (`approvals.list`) and the current time.
 */

/**
 * "just now", "42 s ago", "2 min ago", "3 h ago", "2 d ago"; "in 10 min" for a time ahead (an
 * expiry). `past`: the time is known to have passed (a decision) — the page's clock, renewed
 * every half minute, may be behind it, which is "just now", never "in a moment".
 */
export function timeAgo(iso: string | undefined, now: number, past = false): string {
  if (!iso) return '';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.round(((past ? Math.max(now, then) : now) - then) / 1000);
  const span = Math.abs(seconds);
  const text =
    span < 5
      ? undefined
      : span < 60
        ? `${span} s`
        : span < 3600
          ? `${Math.floor(span / 60)} min`
          : span < 86_400
            ? `${Math.floor(span / 3600)} h`
            : `${Math.floor(span / 86_400)} d`;
  if (text === undefined) return seconds < 0 ? 'in a moment' : 'just now';
  return seconds < 0 ? `in ${text}` : `${text} ago`;
}

export interface DecisionTrace {
  outcome: 'approved' | 'rejected' | 'expired';
  /** "approved by alice via cli · 2 min ago" (the face it was decided through, when recorded); an expiry: "expired · 2 min ago, nobody decided in time". */
  text: string;
  reason?: string;
  /** The arguments the call ran with, when a human edited them. */
  editedArgs?: Record<string, unknown>;
  /** What came of an approved call: executing, done, failed, interrupted. */
  execution?: string;
}

/** Undefined while the approval is pending: a pending approval has a card, not a trace. */
export function decisionTrace(approval: ApprovalRecordJson, now: number): DecisionTrace | undefined {
  if (approval.status === 'pending') return undefined;
  const when = timeAgo(approval.decided_at, now, true);
  const text =
    approval.status === 'expired'
      ? `expired${when ? ` · ${when}` : ''}, nobody decided in time`
      : `${approval.status} by ${approval.decided_by ?? 'someone'}${approval.via ? ` via ${approval.via}` : ''}${when ? ` · ${when}` : ''}`;
  return {
    outcome: approval.status,
    text,
    ...(approval.reason && { reason: approval.reason }),
    ...(approval.edited_args && { editedArgs: approval.edited_args }),
    ...(approval.execution && { execution: approval.execution }),
  };
}

export interface PlacedApprovals {
  /** Decided approvals by the id of the assistant message whose tool call they gated. */
  byMessage: ReadonlyMap<string, ApprovalRecordJson[]>;
  /** Assistant messages whose call waits for a decision: its card shows the arguments, the message does not. */
  awaiting: ReadonlySet<string>;
  /** Decided approvals no call of the loaded messages matches (e.g. a page of older history). */
  unplaced: ApprovalRecordJson[];
}

/** The call of an approval: its tool and the arguments as the model asked for them. */
type ApprovalCall = { tool_name: string; tool_args: Record<string, unknown> };

/**
 * Which call each approval belongs to. An approval stores the call as the model asked for it,
 * so it is the earliest not yet matched tool-call message with the same tool and arguments —
 * decided approvals first, oldest first, then the pending ones, which are the newest. A decided
 * proxy approval (a sub-agent's tool) matches no call of its own and goes to the last call made
 * before it was requested.
 */
export function placeApprovals(messages: MessageJson[], decided: ApprovalRecordJson[], pending: ApprovalCall[]): PlacedApprovals {
  const calls = messages.filter((message) => message.role === 'assistant' && message.tool_call);
  const taken = new Set<string>();
  const match = (approval: ApprovalCall) => {
    const args = canonicalJson(approval.tool_args);
    const same = calls.find(
      (message) =>
        !taken.has(message.id) && message.tool_call!.name === approval.tool_name && canonicalJson(message.tool_call!.arguments) === args,
    );
    if (same) taken.add(same.id);
    return same;
  };
  const byMessage = new Map<string, ApprovalRecordJson[]>();
  const unplaced: ApprovalRecordJson[] = [];
  const place = (message: MessageJson, approval: ApprovalRecordJson) =>
    byMessage.set(message.id, [...(byMessage.get(message.id) ?? []), approval]);
  for (const approval of decided) {
    if (approval.status === 'pending') continue;
    const message = match(approval) ?? calls.filter((call) => call.created_at <= approval.requested_at).at(-1);
    if (message) place(message, approval);
    else unplaced.push(approval);
  }
  const awaiting = new Set<string>();
  for (const approval of pending) {
    const message = match(approval);
    if (message) awaiting.add(message.id);
  }
  return { byMessage, awaiting, unplaced };
}
