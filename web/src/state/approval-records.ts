import type { ApprovalRecordJson, PendingApprovalJson } from '../api-types.js';

/** A pending approval as listed (`approvals.list`) in the shape the approval card takes (P). */
export function pendingApprovalOf(record: ApprovalRecordJson): PendingApprovalJson {
  return {
    uuid: record.uuid,
    conversation_id: record.conversation_id,
    tool_name: record.tool_name,
    tool_args: record.tool_args,
    description: record.description,
    ...(record.remote_task_id && { remote_task_id: record.remote_task_id }),
    ...(record.remote_agent_name && { remote_agent_name: record.remote_agent_name }),
    ...(record.agent_chain && { agent_chain: record.agent_chain }),
    ...(record.outcome_unknown && { outcome_unknown: record.outcome_unknown }),
    ...(record.replaces && { replaces: record.replaces }),
    ...(record.expires_at && { expires_at: record.expires_at }),
    ...(record.on_timeout && { on_timeout: record.on_timeout }),
    ...(record.required !== undefined && {
      required: record.required,
      ...(record.role && { role: record.role }),
      ...(record.not_requester && { not_requester: record.not_requester }),
      ...(record.requested_by && { requested_by: record.requested_by }),
      votes: record.votes ?? [],
    }),
    ...(record.escalates_at && { escalates_at: record.escalates_at }),
    ...(record.escalated_at && { escalated_at: record.escalated_at, escalated_to: record.escalated_to ?? '' }),
    created_at: record.requested_at,
  };
}

/** Pending ones oldest first (a queue: the longest waiting on top); decisions newest first. */
export function inPageOrder(records: ApprovalRecordJson[], pendingOnly: boolean): ApprovalRecordJson[] {
  if (pendingOnly) return records;
  const decidedAt = (record: ApprovalRecordJson) => record.decided_at ?? record.requested_at;
  return [...records].sort((a, b) => decidedAt(b).localeCompare(decidedAt(a)));
}
