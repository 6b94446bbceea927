import { z } from 'zod';
import { TaskState, type Dialect, type RemoteApproval, type RemoteTask } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { jsonValueProblem } from '../common/json-value.js';

/**
 * A task as any dialect reports it, reduced to what RemoteTask needs. Each dialect module
 * reads its own wire shape into this; the rules of what the text is and where an approval
 * comes from live here, once.
 */
export interface TaskView {
  id: string;
  contextId: string;
  state: TaskState;
  /** The text parts of the status message, joined. */
  statusText: string;
  /** The data parts of the status message. */
  statusData: unknown[];
  /** The text parts of every artifact, joined. */
  artifactText: string;
}

/** A peer's answer did not have the shape its dialect promises. */
export class UnreadableAnswer extends Error {
  override name = 'UnreadableAnswer';
}

/** The text parts of one message or artifact, one per line. */
export function joinTexts(texts: string[]): string {
  return texts.filter((text) => text.length > 0).join('\n');
}

/** v0.3 and type-parts name states in lowercase with hyphens; v0.3 spells it "canceled", some peers "cancelled". */
const STATE_WORDS: Record<string, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED,
  'auth-required': TaskState.TASK_STATE_AUTH_REQUIRED,
};

export function stateFromWord(word: string): TaskState {
  return STATE_WORDS[word.trim().toLowerCase()] ?? TaskState.TASK_STATE_UNSPECIFIED;
}

/** v1.0's TASK_STATE_* names are ours too; the SDK's enum numbers are not (its COMPLETED is 3, ours 4). */
export function stateFromName(name: string): TaskState {
  const value = (TaskState as unknown as Record<string, TaskState | undefined>)[name];
  return typeof value === 'number' ? value : TaskState.TASK_STATE_UNSPECIFIED;
}

const approvalPart = z.object({
  approval: z.object({
    uuid: z.string().min(1),
    tool_name: z.string().optional(),
    tool_args: z.record(z.string(), z.unknown()).optional(),
    description: z.string().optional(),
    chain: z.array(z.string()).optional(),
  }),
});

/** The approval line of a waiting task's status: "Approval required (id: <uuid>): <description>". */
const APPROVAL_TEXT = /Approval required \(id: ([^)\s]+)\):?\s*([\s\S]*)$/;

/** The approval a waiting peer asks for: its data part when it sent one, else parsed from its text. */
export function approvalFrom(statusText: string, statusData: unknown[]): RemoteApproval | undefined {
  for (const data of statusData) {
    const parsed = approvalPart.safeParse(data);
    if (!parsed.success) continue;
    const { uuid, tool_name, tool_args, description, chain } = parsed.data.approval;
    // A peer's arguments past the limits of a stored JSON value are left out (the description still says what waits), so that no peer can make the task unreadable.
    const args = tool_args === undefined || jsonValueProblem(tool_args, 'tool_args') ? {} : tool_args;
    return { uuid, toolName: tool_name ?? '', toolArgsJson: JSON.stringify(args), description: description ?? '', chain: chain ?? [] };
  }
  const match = APPROVAL_TEXT.exec(statusText);
  if (!match) return undefined;
  return { uuid: match[1]!, toolName: '', toolArgsJson: '{}', description: match[2]!.trim(), chain: [] };
}

export function toRemoteTask(view: TaskView, dialect: Dialect): RemoteTask {
  const completed = view.state === TaskState.TASK_STATE_COMPLETED;
  const waiting = view.state === TaskState.TASK_STATE_INPUT_REQUIRED;
  return {
    id: view.id,
    contextId: view.contextId,
    state: view.state,
    // A completed task's answer is its artifacts; a peer that put it only in the status message still has one.
    text: completed ? view.artifactText || view.statusText : view.statusText,
    approval: waiting ? approvalFrom(view.statusText, view.statusData) : undefined,
    dialect,
  };
}
