import type { ApprovalListReply, ConversationReply, VoteRecordedReply } from '../gateway/app/replies.js';
import type { ApprovalRecordJson } from '../gateway/app/shapes.js';
import { quorumText as sharedQuorumText } from '../services/common/quorum-text.js';

/**
 * What `asg approvals` prints for people (with `--json` it prints the agent's JSON instead):
 * pure functions of the agent's answers and the current time, so they are tested without one.
 */

/** "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago"; "in 10 min" for a time ahead (an expiry). */
export function relativeTime(iso: string | undefined, now: Date): string {
  if (!iso) return '';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now.getTime() - then) / 1000);
  const ahead = seconds < 0;
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
  if (text === undefined) return ahead ? 'in a moment' : 'just now';
  return ahead ? `in ${text}` : `${text} ago`;
}

/** Arguments on one line, cut to `width` characters. */
export function compactJson(value: unknown, width: number): string {
  const text = JSON.stringify(value) ?? '';
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** Where an approval's quorum stands (services/common/quorum-text.ts), with times as this command words them. */
export function quorumText(approval: ApprovalRecordJson, now: Date, viewer?: string): string {
  return sharedQuorumText(approval, (iso) => relativeTime(iso, now), viewer);
}

/** The status as people read it: "approved (done)", "expired", "pending (1 of 2)", … */
function statusText(approval: ApprovalRecordJson): string {
  if (approval.status === 'pending' && approval.required !== undefined)
    return `pending (${approval.votes?.length ?? 0} of ${approval.required})`;
  return approval.execution ? `${approval.status} (${approval.execution})` : approval.status;
}

function decidedText(approval: ApprovalRecordJson, now: Date): string {
  if (approval.status === 'pending') return approval.expires_at ? `expires ${relativeTime(approval.expires_at, now)}` : '';
  const who = approval.decided_by ?? 'unknown';
  const when = relativeTime(approval.decided_at, now);
  return when ? `${who} ${when}` : who;
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const ARGS_WIDTH = 40;

export function approvalListText(reply: ApprovalListReply, now: Date, nextCommand: (cursor: string) => string): string {
  if (reply.approvals.length === 0) return 'No approvals match.\n';
  const rows = [
    ['UUID', 'STATUS', 'TOOL', 'CONVERSATION', 'REQUESTED', 'DECIDED', 'ARGUMENTS'],
    ...reply.approvals.map((approval) => [
      approval.uuid,
      statusText(approval),
      approval.tool_name,
      approval.conversation_id.slice(0, 8),
      relativeTime(approval.requested_at, now),
      decidedText(approval, now),
      compactJson(approval.edited_args ?? approval.tool_args, ARGS_WIDTH),
    ]),
  ];
  const more = reply.next_cursor ? `\nMore: ${nextCommand(reply.next_cursor)}\n` : '';
  return `${table(rows)}\n${more}`;
}

function indented(json: unknown): string {
  return JSON.stringify(json, null, 2)
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

export function approvalText(approval: ApprovalRecordJson, now: Date, viewer?: string): string {
  const at = (iso: string | undefined) => (iso ? `${iso} (${relativeTime(iso, now)})` : '');
  const fields: [string, string | undefined][] = [
    ['Approval', approval.uuid],
    ['Status', statusText(approval)],
    ['Tool', approval.tool_name],
    ['Conversation', approval.conversation_id],
    ['Description', approval.description],
    ['Votes', quorumText(approval, now, viewer)],
    [
      'Voters',
      approval.required !== undefined ? `role ${approval.role ?? 'approve'}${approval.not_requester ? ', not the requester' : ''}` : '',
    ],
    ['Requested', at(approval.requested_at)],
    ['Expires', approval.expires_at && `${at(approval.expires_at)}, then ${approval.on_timeout === 'approve' ? 'approved' : 'rejected'}`],
    ['Decided', approval.decided_at && at(approval.decided_at)],
    ['Decided by', approval.decided_by && (approval.via ? `${approval.decided_by} via ${approval.via}` : approval.decided_by)],
    ['Reason', approval.reason],
    ['Held by', approval.agent_chain?.join(' → ')],
    [
      'Outcome unknown',
      approval.outcome_unknown &&
        `it was approved and had started when its service stopped; approving runs it again (replaces ${approval.replaces ?? 'an earlier approval'})`,
    ],
  ];
  const shown = fields.filter(([, value]) => value);
  const width = Math.max(...shown.map(([label]) => label.length)) + 1;
  const lines = shown.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`);
  lines.push('Arguments:', indented(approval.tool_args));
  // An MCP server's question: what it asks, and the shape of the answer (`approve --input`).
  if (approval.input_request) {
    lines.push(
      `Question of MCP server ${approval.input_request.server}:`,
      ...approval.input_request.questions.map((question) => `  ${question}`),
    );
    lines.push('Answer with approve --input JSON, fitting:', indented(approval.input_request.requested_schema));
  }
  if (approval.edited_args) lines.push('Ran with edited arguments:', indented(approval.edited_args));
  return `${lines.join('\n')}\n`;
}

/** After a decision: what was decided, and what the agent did next; or where the quorum stands after a vote. */
export function decisionText(uuid: string, approved: boolean, reply: ConversationReply | VoteRecordedReply): string {
  if ('votes' in reply)
    return `Voted for ${uuid}: ${reply.votes} of ${reply.required} approvals. The call runs once the quorum is complete; nothing ran yet.\n`;
  const lines = [`${approved ? 'Approved' : 'Rejected'} ${uuid}.`];
  const result = reply.result;
  if (result?.response) lines.push(`The agent answered: ${result.response}`);
  if (result?.waiting_approval && result.approval) {
    lines.push(
      `It now waits for another approval: ${result.approval.uuid} (${result.approval.tool_name}); see asg approvals show ${result.approval.uuid}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
