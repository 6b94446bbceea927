import { z } from 'zod';
import type {
  ApprovalConflictReply,
  ApprovalListReply,
  AuditListReply,
  ConversationListReply,
  ConversationPageReply,
  ConversationReply,
} from '../app/replies.js';
import type { Whoami } from '../app/decider.js';
import type { RunJson, RunListReply, RunSummaryJson } from '../app/run-shapes.js';
import type {
  ApprovalRecordJson,
  AuditEntryJson,
  ConversationJson,
  ConversationListItemJson,
  PendingApprovalJson,
  ToolJson,
  ReadyServerJson,
  ToolServerJson,
} from '../app/shapes.js';

/**
 * The public response shapes as zod schemas, for the OpenAPI document only: the bodies
 * themselves are built by app/shapes.ts and app/replies.ts. `Same<>` at the bottom makes the
 * compiler refuse a schema that says other than those types, and openapi.test.ts parses the
 * examples (made by the real mapping code) with these schemas, strictly, so neither can drift.
 * Each `id` becomes a named schema under components.schemas.
 */

const isoTime = z.string().meta({ format: 'date-time', example: '2025-01-15T10:02:03.000Z' });
const jsonObject = z.record(z.string(), z.unknown());

const usage = z
  .strictObject({ input_tokens: z.number().int(), output_tokens: z.number().int() })
  .meta({ id: 'Usage', description: 'Token counts of model calls.' });

const toolCall = z
  .strictObject({
    name: z.string(),
    arguments: jsonObject,
    result: z.string().optional(),
    is_error: z.boolean().optional(),
    rejected: z.literal(true).optional().meta({ description: 'A human rejected the call: nothing ran (is_error is true too).' }),
    reason: z.string().optional().meta({ description: 'With rejected: the reason the human gave.' }),
  })
  .meta({ id: 'ToolCall' });

const message = z
  .strictObject({
    id: z.string(),
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string(),
    tool_call: toolCall.optional(),
    usage: usage.optional().meta({ description: 'On the first message of each model step.' }),
    node: z.string().optional().meta({ description: 'Orchestrated mode: the agent-tree node that produced it.' }),
    is_error: z
      .literal(true)
      .optional()
      .meta({ description: 'An assistant answer saying the turn could not go on (the model failed after its retries, or the tools).' }),
    created_at: isoTime,
    seq: z
      .number()
      .int()
      .meta({ description: "Its place in the conversation, 1-based (a run's message_seq names its user message by it)." }),
  })
  .meta({ id: 'Message', description: 'M' });

const timeoutAction = z.enum(['reject', 'approve']);

/** An approval's quorum and escalation (an approval policy's require and escalate), on A and P alike. */
const quorumFields = {
  required: z.number().int().min(1).optional().meta({
    description:
      "An approval that needs a quorum (an approval policy's `require`): how many distinct people must approve. Absent (one decision settles it) for every other approval.",
  }),
  role: z.string().optional().meta({ description: 'With a quorum: the role a voter must hold by name (admin does not stand in for it).' }),
  not_requester: z.literal(true).optional().meta({ description: 'With a quorum: the requester may not vote for their own request.' }),
  requested_by: z.string().optional().meta({ description: 'With a quorum: the principal whose message led to the call.' }),
  votes: z
    .array(
      z.strictObject({
        voter: z.string().meta({ description: 'The principal who voted, as decided_by names one.' }),
        via: z.string().optional().meta({ description: 'rest, web, a2a, mcp, cli.' }),
        reason: z.string().optional(),
        at: isoTime,
      }),
    )
    .optional()
    .meta({ description: 'With a quorum: the approving votes for the arguments in force, oldest first (an edit restarts them).' }),
  escalates_at: isoTime
    .optional()
    .meta({ description: "An approval policy's `escalate`, while pending and not escalated yet: when it escalates." }),
  escalated_at: isoTime.optional().meta({ description: 'When it escalated; from then on the votes of escalated_to count too.' }),
  escalated_to: z.string().optional().meta({ description: 'With escalated_at: the role whose votes count too.' }),
};

const pendingApproval = z
  .strictObject({
    uuid: z.string(),
    conversation_id: z.string(),
    tool_name: z.string(),
    tool_args: jsonObject,
    description: z.string(),
    remote_task_id: z.string().optional().meta({ description: 'Proxy approvals (asked by an A2A sub-agent): its task.' }),
    remote_agent_name: z.string().optional(),
    agent_chain: z.array(z.string()).optional().meta({ description: 'Proxy approvals: the agents the call came through, nearest first.' }),
    reason: z.string().optional(),
    outcome_unknown: z
      .literal(true)
      .optional()
      .meta({ description: 'Approved and started when the replica running it died; approving runs it again.' }),
    replaces: z.string().optional(),
    decided_by: z.string().optional(),
    via: z.string().optional(),
    expires_at: isoTime.optional(),
    on_timeout: timeoutAction.optional(),
    ...quorumFields,
    created_at: isoTime,
  })
  .meta({ id: 'PendingApproval', description: 'P: a destructive call waiting for a human.' });

export const approvalRecord = z
  .strictObject({
    uuid: z.string(),
    conversation_id: z.string(),
    tool_name: z.string(),
    tool_args: jsonObject.meta({ description: 'The arguments as the model asked for them.' }),
    description: z.string(),
    status: z.enum(['pending', 'approved', 'rejected', 'expired']),
    execution: z
      .enum(['executing', 'done', 'failed', 'interrupted'])
      .optional()
      .meta({ description: 'Approved only: what came of the call once it started.' }),
    requested_at: isoTime,
    decided_at: isoTime.optional(),
    decided_by: z.string().optional().meta({
      description:
        'The principal that decided: "token:<name>" (an API token), "jwt:<issuer>#<name>" (a JWT), "anonymous" without authentication; "timeout" for an expiry. Decisions stored before principals carried their source show the bare name.',
    }),
    via: z.string().optional().meta({ description: 'rest, web, a2a, mcp, cli, timeout.' }),
    reason: z.string().optional(),
    edited_args: jsonObject.optional().meta({
      description:
        "The arguments the call ran with, when the human edited them before approving; for an approval that asked for an MCP server's input, the answer given.",
    }),
    expires_at: isoTime.optional(),
    on_timeout: timeoutAction.optional(),
    remote_task_id: z.string().optional(),
    remote_agent_name: z.string().optional(),
    agent_chain: z.array(z.string()).optional(),
    outcome_unknown: z.literal(true).optional(),
    replaces: z.string().optional(),
    kind: z.literal('input').optional().meta({
      description:
        'GET /approvals/:uuid while pending: the approval asks for an answer to an MCP server\'s question; approve with "input" (POST /approvals/:uuid), or reject to decline.',
    }),
    input_request: z
      .strictObject({
        server: z.string(),
        questions: z.array(z.string()),
        requested_schema: jsonObject.meta({ description: 'The JSON Schema the answer ("input") must fit.' }),
      })
      .optional()
      .meta({ description: 'With kind "input": who asks, what, and the schema of the answer.' }),
    ...quorumFields,
  })
  .meta({ id: 'ApprovalRecord', description: 'A: an approval as a resource, with its whole record.' });

const auditEntry = z
  .strictObject({
    id: z.number().int(),
    at: isoTime,
    kind: z.string().meta({ description: 'approval.decided, approval.expired, auth.failed, config.loaded.' }),
    actor: z.string(),
    via: z.string().optional(),
    subject: z.string(),
    detail: jsonObject,
  })
  .meta({ id: 'AuditEntry', description: 'E: one entry of the audit trail.' });

const pipelinePause = z.strictObject({
  approval_uuid: z.string(),
  paused_node_path: z.array(z.number().int()),
  paused_node_output_key: z.string(),
  loop_iterations: z.record(z.string(), z.number().int()),
});

const pipelineState = z
  .strictObject({
    paused_node_path: z.array(z.number().int()),
    paused_node_output_key: z.string(),
    session_state: z.record(z.string(), z.string()),
    user_message: z.string(),
    pauses: z.array(pipelinePause),
    branch_outputs: z.record(z.string(), z.string()),
  })
  .meta({ id: 'PipelineState', description: 'S: where an agent-tree run waits.' });

const conversationStatus = z.enum(['active', 'waiting_approval', 'completed']);

export const conversation = z
  .strictObject({
    id: z.string(),
    session_id: z.string().meta({ description: '8 lowercase hex characters; in every log line and trace about the conversation.' }),
    status: conversationStatus,
    messages: z.array(message),
    pending_approval: pendingApproval.optional(),
    pending_approvals: z.array(pendingApproval).optional(),
    pipeline_state: pipelineState.optional(),
    turn_running: z.literal(true).optional().meta({ description: 'A turn runs now: a message sent now gets 409.' }),
    owner: z.string().optional().meta({
      description:
        'The principal that created it with authentication on: "token:<name>" or "jwt:<issuer>#<name>". Absent: created without authentication.',
    }),
    usage,
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'Conversation', description: 'C' });

const conversationListItem = z
  .strictObject({
    id: z.string(),
    session_id: z.string(),
    status: conversationStatus,
    title: z.string(),
    message_count: z.number().int(),
    pending_approvals: z.number().int(),
    pending_approval: pendingApproval.optional(),
    pipeline_state: pipelineState.optional(),
    owner: z.string().optional().meta({
      description:
        'The principal that created it with authentication on: "token:<name>" or "jwt:<issuer>#<name>". Absent: created without authentication.',
    }),
    usage,
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'ConversationSummary', description: 'A conversation in a list: without its messages.' });

const turnResult = z
  .strictObject({
    response: z.string(),
    waiting_approval: z.boolean(),
    approval: pendingApproval.optional(),
    is_error: z
      .literal(true)
      .optional()
      .meta({ description: 'The turn could not go on (the model failed after its retries, or the tools): `response` says why.' }),
  })
  .meta({ id: 'TurnResult', description: 'R: what a turn came to.' });

const tool = z
  .strictObject({
    name: z.string(),
    description: z.string(),
    inputSchema: jsonObject,
    destructiveHint: z.boolean().meta({ description: 'The effective policy: true means a call stops for a human approval.' }),
    server: z.string(),
    unavailable: z
      .literal(true)
      .optional()
      .meta({ description: "Present while the tool's MCP server is down: a call fails until it is back." }),
  })
  .meta({ id: 'Tool' });

const toolServer = z
  .strictObject({
    name: z.string(),
    status: z.enum(['available', 'unavailable']),
    required: z.boolean().meta({ description: 'required: true in the configuration: the agent does not start without it.' }),
    error: z
      .string()
      .optional()
      .meta({ description: 'Why it is unavailable: the command, exit code and last stderr lines, or the HTTP error.' }),
  })
  .meta({ id: 'ToolServer', description: 'A configured MCP server and whether its tools can be called now.' });

export const readyServer = toolServer.omit({ error: true }).meta({
  id: 'ReadyServer',
  description: 'A configured MCP server and whether its tools can be called now; why not is in the log and GET /tools.',
});

export const conversationReply = z.strictObject({ conversation, result: turnResult.optional() }).meta({ id: 'ConversationReply' });

export const forkReply = z
  .strictObject({
    conversation,
    result: turnResult.optional(),
    copied_only: z.boolean().meta({
      description: 'True when nothing ran: the copied history ends with a complete answer and no message was given.',
    }),
  })
  .meta({ id: 'ForkReply', description: 'The new conversation (C) and how it went on.' });

export const conversationPageReply = z
  .strictObject({ conversation, has_more_before: z.boolean(), has_more_after: z.boolean() })
  .meta({ id: 'ConversationPage', description: 'C with one page of its messages, oldest first.' });

const nextCursor = z.string().optional().meta({ description: 'Present when there is a next page: pass it back as ?cursor=.' });

export const conversationListReply = z
  .strictObject({
    conversations: z.array(conversationListItem),
    summary: z.strictObject({
      total: z.number().int(),
      active: z.number().int(),
      waiting_approval: z.number().int(),
      completed: z.number().int(),
    }),
    next_cursor: nextCursor,
  })
  .meta({ id: 'ConversationList' });

export const approvalListReply = z
  .strictObject({ approvals: z.array(approvalRecord), next_cursor: nextCursor })
  .meta({ id: 'ApprovalList' });

export const auditListReply = z.strictObject({ entries: z.array(auditEntry), next_cursor: nextCursor }).meta({ id: 'AuditList' });

const messageSeq = z.number().int().nullable();

const runSummary = z
  .strictObject({
    run_id: z.string(),
    status: z.string().meta({ description: 'running, waiting_approval, completed, cancelled or interrupted.' }),
    started_at: isoTime,
    ended_at: isoTime.nullable().meta({ description: 'null while the run has not ended.' }),
    steps: z.number().int().meta({ description: 'How many steps it recorded.' }),
    message_seq: messageSeq.meta({
      description:
        'The seq of the user message that started it (maps a message of the conversation to its run); null for runs of journal format 1.',
    }),
  })
  .meta({ id: 'RunSummary', description: 'A run of a conversation (one message, or one decision, through the agent until it answers).' });

const runStep = z
  .looseObject({
    index: z.number().int(),
    kind: z.string().meta({
      description: 'node_started, node_finished, model_call, tool_call, approval, decision, a2a_call or compaction; its own fields follow.',
    }),
    node: z.string().meta({ description: 'The node\'s path in the agent tree ("pipeline/analyzer"); simple mode: the agent\'s name.' }),
    started_at: isoTime,
    duration_ms: z.number().int(),
    message_seq: messageSeq.meta({
      description:
        "The seq of the conversation's last message before the step: a fork at this step (POST /runs/{run_id}/fork) copies those; null in journal format 1.",
    }),
  })
  .meta({
    id: 'RunStep',
    description:
      'One step of a run, with the fields of its kind: model_call {model, provider, input_tokens, output_tokens, finish_reason, tool_calls?, error?}; tool_call {tool, server, arguments (secrets redacted), args_hash, outcome, summary, approval_uuid?}; approval {approval_uuid, tool, arguments, args_hash, asks}; decision {approval_uuid, approved, decided_by, via, reason?, edited_arguments?, expired?}; a2a_call {agent, message, outcome, summary}; compaction {strategy, tokens_before, tokens_after, summarized}; node_started {type}; node_finished {outcome, output_key?, exit_loop?}.',
  });

export const runListReply = z.strictObject({ runs: z.array(runSummary), next_cursor: nextCursor }).meta({ id: 'RunList' });

export const runReply = z
  .strictObject({
    run_id: z.string(),
    conversation_id: z.string(),
    status: z.string(),
    started_at: isoTime,
    ended_at: isoTime.nullable(),
    journal_version: z.number().int().meta({ description: "The format of its steps' fields." }),
    message_seq: messageSeq.meta({ description: 'The seq of the user message that started it; null for runs of journal format 1.' }),
    steps: z.array(runStep),
  })
  .meta({ id: 'Run', description: 'A run with every step of its journal, in order.' });

export const toolListReply = z.strictObject({ tools: z.array(tool), servers: z.array(toolServer).optional() }).meta({ id: 'ToolList' });

export const voteRecordedReply = z
  .strictObject({
    status: z.literal('pending'),
    votes: z.number().int().meta({ description: 'The approving votes for the arguments in force, this one included.' }),
    required: z.number().int().meta({ description: 'How many the quorum needs.' }),
  })
  .meta({ id: 'VoteRecorded', description: "A vote that did not complete the approval's quorum: recorded, and nothing ran." });

export const approvalConflictReply = z
  .strictObject({ error: z.string(), decision: z.enum(['approved', 'rejected', 'expired']), approval: pendingApproval })
  .meta({ id: 'ApprovalConflict', description: 'The approval was decided (or expired) earlier: nothing ran again.' });

export const whoami = z
  .strictObject({
    principal: z.string().meta({
      description:
        'The principal, as decided_by and a conversation\'s owner name it: "token:<name>", "jwt:<issuer>#<name>" or "anonymous".',
    }),
    name: z.string().meta({ description: "The name within its source (the token's name, the JWT's name claim)." }),
    roles: z.array(z.string()),
    authentication: z.enum(['on', 'off']),
  })
  .meta({ id: 'Whoami', description: 'Who the caller is; "anonymous" with every role when auth is off.' });

export const errorReply = z
  .strictObject({ error: z.string() })
  .meta({ id: 'Error', description: 'Every refusal and failure: a message that says what was wrong.' });

export const unknownOutcomeReply = z
  .strictObject({
    error: z.string(),
    outcome: z.literal('unknown'),
    conversation_id: z.string().optional().meta({
      description: 'The conversation to look at (GET /conversations/{id}); absent when a new conversation may not have been created.',
    }),
    approval_uuid: z.string().optional().meta({ description: "A decision's approval (GET /approvals/{uuid}): decided or still pending." }),
  })
  .meta({
    id: 'UnknownOutcome',
    description:
      'The outcome is not known when the request is answered: what it asked for was, or may have been, stored, and goes on from there. Do not send it again: look where it says.',
  });

// Compile-time: each schema says exactly what the mapping code's type says.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(): T | undefined => undefined;
agree<Same<z.infer<typeof conversation>, ConversationJson>>();
agree<Same<z.infer<typeof conversationListItem>, ConversationListItemJson>>();
agree<Same<z.infer<typeof pendingApproval>, PendingApprovalJson>>();
agree<Same<z.infer<typeof approvalRecord>, ApprovalRecordJson>>();
agree<Same<z.infer<typeof auditEntry>, AuditEntryJson>>();
agree<Same<z.infer<typeof tool>, ToolJson>>();
agree<Same<z.infer<typeof toolServer>, ToolServerJson>>();
agree<Same<z.infer<typeof readyServer>, ReadyServerJson>>();
agree<Same<z.infer<typeof conversationReply>, ConversationReply>>();
agree<Same<z.infer<typeof conversationPageReply>, ConversationPageReply>>();
agree<Same<z.infer<typeof conversationListReply>, ConversationListReply>>();
agree<Same<z.infer<typeof approvalListReply>, ApprovalListReply>>();
agree<Same<z.infer<typeof auditListReply>, AuditListReply>>();
agree<Same<z.infer<typeof approvalConflictReply>, ApprovalConflictReply>>();
agree<Same<z.infer<typeof whoami>, Whoami>>();
agree<Same<z.infer<typeof runSummary>, RunSummaryJson>>();
agree<Same<z.infer<typeof runListReply>, RunListReply>>();
agree<Same<z.infer<typeof runReply>, RunJson>>();
