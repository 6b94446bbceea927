import { randomUUID } from 'node:crypto';
import type { TaskEvent, TaskSnapshot } from '../task.js';

/** How one dialect writes tasks: the `result` of each method's JSON-RPC answer. */
export interface DialectWire {
  /** The result of a get or a cancel. */
  task(task: TaskSnapshot): unknown;
  /** The result of a send (v1.0 wraps the task as `{"task": …}`). */
  sendResult(task: TaskSnapshot): unknown;
  /** The result of one server-sent event of a stream; absent where the dialect has no streaming. */
  event?(event: TaskEvent): unknown;
}

/** The artifact every answer's text travels in; one per task, replaced by each turn. */
export const RESPONSE_ARTIFACT = { artifactId: 'response', name: 'response' } as const;

/** A status message's id; A2A wants every message to have its own. */
export function statusMessageId(): string {
  return randomUUID();
}

/** The status message's data part of an input-required task: `{"approval": {…}}`, plus `approvals` when several wait. */
export function approvalData(task: TaskSnapshot): Record<string, unknown> | undefined {
  const [first] = task.approvals;
  if (task.state !== 'input-required' || !first) return undefined;
  const json = task.approvals.map((approval) => ({
    uuid: approval.uuid,
    tool_name: approval.toolName,
    tool_args: approval.toolArgs,
    description: approval.description,
    chain: approval.chain,
  }));
  return task.approvals.length > 1 ? { approval: json[0], approvals: json } : { approval: json[0] };
}
