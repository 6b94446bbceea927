import {
  ConversationStatus,
  MessageRole,
  type Conversation,
  type ConversationSummary,
  type Message,
  type AuditEntry,
  type PendingApproval,
  type TokenUsage,
  type ToolCall,
} from '../../gen/ts/asg/store/v1/store.js';
import type { PipelinePauseView, PipelineView, TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Tool, ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import { quorumJson, timeoutActionName, type QuorumJson, type TimeoutActionName } from '../../services/common/approval-resource.js';
import { jsonObjectOf } from '../../services/common/json-value.js';
import { isTurnFailureText } from '../../services/common/turn-failure.js';
export { approvalRecordJson, type ApprovalRecordJson } from '../../services/common/approval-resource.js';

/**
 * The public JSON shapes (C, M, P, S, R and the tool listing; docs/api.md, "REST"), mapped from the
 * proto types. Tests written outside the project read these field by field, so the names
 * are snake_case exactly as documented, optional fields are left out rather
 * than set to null, and internal fields (tool-call ids, hashes, approval status, message
 * seq) never appear.
 */

export type ConversationStatusName = 'active' | 'waiting_approval' | 'completed';
type MessageRoleName = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCallJson {
  name: string;
  arguments: Record<string, unknown>;
  result?: string;
  is_error?: boolean;
  /** A human rejected the call; nothing ran. Shown as rejected, never as a failure. */
  rejected?: true;
  /** With rejected: the reason the human gave, when one was given. */
  reason?: string;
}

/** Token counts of model calls (per model step and summed per conversation). */
interface UsageJson {
  input_tokens: number;
  output_tokens: number;
}

/** M, plus `usage` on the first message of each model step and `node` (orchestrated mode: the agent-tree node that produced it). */
export interface MessageJson {
  id: string;
  role: MessageRoleName;
  content: string;
  tool_call?: ToolCallJson;
  usage?: UsageJson;
  node?: string;
  /** An assistant answer that says the turn could not go on (the model or the tools failed): shown as an error, with a retry. */
  is_error?: true;
  created_at: string;
  /** Its place in the conversation, 1-based: a run's message_seq names its user message by it. */
  seq: number;
}

/** P, with its quorum and escalation when it has them (QuorumJson). */
export interface PendingApprovalJson extends QuorumJson {
  uuid: string;
  conversation_id: string;
  tool_name: string;
  tool_args: Record<string, unknown>;
  description: string;
  remote_task_id?: string;
  remote_agent_name?: string;
  /** For proxy approvals: the agents the call came through, nearest first (left out when empty). */
  agent_chain?: string[];
  /** The reason given with the decision, once decided with one. */
  reason?: string;
  /**
   * The call was approved and had started when the replica running it died, before
   * its result was recorded; approving runs it again. Left out when false.
   */
  outcome_unknown?: true;
  /** With outcome_unknown: the earlier approval of the same call. */
  replaces?: string;
  /** Who decided and through which face, once decided (in a 409's `approval`). */
  decided_by?: string;
  via?: string;
  /** When the approval expires if nobody decides it, and what the expiry decides. */
  expires_at?: string;
  on_timeout?: TimeoutActionName;
  created_at: string;
}

/** One entry of the audit trail (`GET /audit`). */
export interface AuditEntryJson {
  id: number;
  at: string;
  /** approval.decided, approval.expired, auth.failed, config.loaded. */
  kind: string;
  actor: string;
  /** Left out for a service's own entries (a configuration load). */
  via?: string;
  subject: string;
  detail: Record<string, unknown>;
}

/** One node an agent-tree pipeline waits at, for one approval. */
interface PipelinePauseJson {
  approval_uuid: string;
  paused_node_path: number[];
  paused_node_output_key: string;
  /** The iteration (1-based) of each loop node above the paused node, by the loop's path ("0.1"). */
  loop_iterations: Record<string, number>;
}

/**
 * S, plus `pauses` (every node the pipeline waits at, in the order they paused) and
 * `branch_outputs` (outputs of finished branches of a parallel node whose siblings wait,
 * by the branch's path).
 */
export interface PipelineStateJson {
  paused_node_path: number[];
  paused_node_output_key: string;
  session_state: Record<string, string>;
  user_message: string;
  pauses: PipelinePauseJson[];
  branch_outputs: Record<string, string>;
}

/**
 * C, plus `usage`: the tokens of every model call of the conversation, and
 * `pending_approvals`: every pending approval while it waits, oldest first (the first is
 * `pending_approval`; more than one only when an agent tree waits at several nodes).
 */
export interface ConversationJson {
  id: string;
  session_id: string;
  status: ConversationStatusName;
  messages: MessageJson[];
  pending_approval?: PendingApprovalJson;
  pending_approvals?: PendingApprovalJson[];
  pipeline_state?: PipelineStateJson;
  /** Present (true) while a turn runs on the conversation: a message sent now gets 409. */
  turn_running?: true;
  /** Who it belongs to, when it was created with authentication on (app/ownership.ts). */
  owner?: string;
  usage: UsageJson;
  created_at: string;
  updated_at: string;
}

/**
 * One item of `GET /conversations` (lists are summaries): C without `messages`,
 * with `title` (the first words of the first user message; "" before there is one),
 * `message_count`, and `pending_approvals` as a count (C's list of them stays on C).
 */
export interface ConversationListItemJson {
  id: string;
  session_id: string;
  status: ConversationStatusName;
  title: string;
  message_count: number;
  pending_approvals: number;
  pending_approval?: PendingApprovalJson;
  pipeline_state?: PipelineStateJson;
  owner?: string;
  usage: UsageJson;
  created_at: string;
  updated_at: string;
}

/** R */
export interface TurnResultJson {
  response: string;
  waiting_approval: boolean;
  approval?: PendingApprovalJson;
  /** The turn could not go on (the model or the tools failed); `response` says why. */
  is_error?: true;
}

export interface ConversationSummaryJson {
  total: number;
  active: number;
  waiting_approval: number;
  completed: number;
}

/** One entry of `GET /tools`; these keys are camelCase, unlike the rest, as documented. */
export interface ToolJson {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  destructiveHint: boolean;
  server: string;
  /** Present (true) while the tool's MCP server is down: a call fails until it is back. */
  unavailable?: true;
}

/** One configured MCP server in GET /tools and GET /ready. */
export interface ToolServerJson {
  name: string;
  status: 'available' | 'unavailable';
  required: boolean;
  /** Why it is unavailable: command, exit code and stderr tail, or the HTTP error. */
  error?: string;
}

export function toolServerJson(server: ToolServer): ToolServerJson {
  return { ...readyServerJson(server), ...(!server.available && { error: server.error }) };
}

/** One configured MCP server in GET /ready: its state without why (the log and GET /tools say why). */
export type ReadyServerJson = Omit<ToolServerJson, 'error'>;

export function readyServerJson(server: ToolServer): ReadyServerJson {
  return { name: server.name, status: server.available ? 'available' : 'unavailable', required: server.required };
}

// The store always sets timestamps; an empty string keeps the field's type a string if a
// broken record ever lacks one, instead of failing the whole response.
function isoTime(date: Date | undefined): string {
  return date ? date.toISOString() : '';
}

export function conversationStatusName(status: ConversationStatus): ConversationStatusName {
  switch (status) {
    case ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL:
      return 'waiting_approval';
    case ConversationStatus.CONVERSATION_STATUS_COMPLETED:
      return 'completed';
    default:
      // ACTIVE, and UNSPECIFIED which the store never writes: a conversation that is
      // neither waiting nor completed accepts messages, which is what "active" means.
      return 'active';
  }
}

function messageRoleName(role: MessageRole): MessageRoleName {
  switch (role) {
    case MessageRole.MESSAGE_ROLE_SYSTEM:
      return 'system';
    case MessageRole.MESSAGE_ROLE_USER:
      return 'user';
    case MessageRole.MESSAGE_ROLE_TOOL:
      return 'tool';
    default:
      // ASSISTANT, and UNSPECIFIED which the store never writes.
      return 'assistant';
  }
}

export function toolCallJson(call: ToolCall): ToolCallJson {
  // The provider's tool-call id only pairs calls with results inside the model history.
  return {
    name: call.name,
    arguments: jsonObjectOf(call.argumentsJson),
    ...(call.result !== undefined && { result: call.result }),
    ...(call.isError !== undefined && { is_error: call.isError }),
    ...(call.rejected && { rejected: true as const }),
    ...(call.rejected && call.reason && { reason: call.reason }),
  };
}

function usageJson(usage: TokenUsage | undefined): UsageJson {
  return { input_tokens: usage?.inputTokens ?? 0, output_tokens: usage?.outputTokens ?? 0 };
}

// Objects are built in the documented key order, so responses read the way the docs show them.
function isTurnFailure(message: Message): boolean {
  return message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && !message.toolCall && isTurnFailureText(message.content);
}

export function messageJson(message: Message): MessageJson {
  return {
    id: message.id,
    role: messageRoleName(message.role),
    content: message.content,
    ...(message.toolCall && { tool_call: toolCallJson(message.toolCall) }),
    ...(message.usage && { usage: usageJson(message.usage) }),
    ...(message.node && { node: message.node }),
    ...(isTurnFailure(message) && { is_error: true as const }),
    created_at: isoTime(message.createdAt),
    seq: Number(message.seq),
  };
}

export function pendingApprovalJson(approval: PendingApproval): PendingApprovalJson {
  return {
    uuid: approval.uuid,
    conversation_id: approval.conversationId,
    tool_name: approval.toolName,
    tool_args: jsonObjectOf(approval.toolArgsJson),
    description: approval.description,
    // Only proxy approvals (a sub-agent's own approval) have these; empty means none.
    ...(approval.remoteTaskId && { remote_task_id: approval.remoteTaskId }),
    ...(approval.remoteAgentName && { remote_agent_name: approval.remoteAgentName }),
    // Built in process (not decoded), an approval may lack the repeated field altogether.
    ...(approval.agentChain?.length && { agent_chain: [...approval.agentChain] }),
    ...(approval.reason && { reason: approval.reason }),
    ...(approval.outcomeUnknown && { outcome_unknown: true as const }),
    ...(approval.outcomeUnknown && approval.replacesUuid && { replaces: approval.replacesUuid }),
    ...(approval.decidedBy && { decided_by: approval.decidedBy }),
    ...(approval.via && { via: approval.via }),
    ...(approval.expiresAt && { expires_at: isoTime(approval.expiresAt) }),
    ...(approval.expiresAt && timeoutActionName(approval.onTimeout) && { on_timeout: timeoutActionName(approval.onTimeout) }),
    ...quorumJson(approval),
    created_at: isoTime(approval.createdAt),
  };
}

/** The stored detail is a JSON object by contract; anything else is kept as text rather than lost. */
function auditDetail(detailJson: string): Record<string, unknown> {
  if (!detailJson) return {};
  try {
    const parsed: unknown = JSON.parse(detailJson);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    /* not JSON: shown as text below */
  }
  return { text: detailJson };
}

export function auditEntryJson(entry: AuditEntry): AuditEntryJson {
  return {
    id: entry.id,
    at: isoTime(entry.at),
    kind: entry.kind,
    actor: entry.actor,
    ...(entry.via && { via: entry.via }),
    subject: entry.subject,
    detail: auditDetail(entry.detailJson),
  };
}

// The run itself is the orchestrator's (opaque to the store and to the gateway); its view
// (orchestrator.proto, PipelineView) already has the public shape, field for field.
function pipelinePauseJson(pause: PipelinePauseView): PipelinePauseJson {
  return {
    approval_uuid: pause.approvalUuid,
    paused_node_path: [...pause.pausedNodePath],
    paused_node_output_key: pause.pausedNodeOutputKey,
    loop_iterations: { ...pause.loopIterations },
  };
}

/** S (with `pauses` and `branch_outputs`) from the orchestrator's view of a conversation's run. */
export function pipelineStateJson(view: PipelineView): PipelineStateJson {
  return {
    paused_node_path: [...view.pausedNodePath],
    paused_node_output_key: view.pausedNodeOutputKey,
    session_state: { ...view.sessionState },
    user_message: view.userMessage,
    pauses: view.pauses.map(pipelinePauseJson),
    branch_outputs: { ...view.branchOutputs },
  };
}

/**
 * C. `pipeline`: the view of the conversation's run (an answer's own, or app/run-views.ts for
 * a conversation read from the store); `pipeline_state` is left out without one.
 */
export function conversationJson(conversation: Conversation, pipeline?: PipelineView): ConversationJson {
  return {
    id: conversation.id,
    session_id: conversation.sessionId,
    status: conversationStatusName(conversation.status),
    messages: conversation.messages.map(messageJson),
    ...(conversation.pendingApproval && { pending_approval: pendingApprovalJson(conversation.pendingApproval) }),
    ...(conversation.pendingApprovals.length > 0 && { pending_approvals: conversation.pendingApprovals.map(pendingApprovalJson) }),
    ...(pipeline && { pipeline_state: pipelineStateJson(pipeline) }),
    ...(conversation.turnRunning && { turn_running: true as const }),
    ...(conversation.owner !== undefined && { owner: conversation.owner }),
    usage: usageJson(conversation.usage),
    created_at: isoTime(conversation.createdAt),
    updated_at: isoTime(conversation.updatedAt),
  };
}

/** A list item; `pipeline` as for conversationJson. */
export function conversationListItemJson(conversation: Conversation, pipeline?: PipelineView): ConversationListItemJson {
  return {
    id: conversation.id,
    session_id: conversation.sessionId,
    status: conversationStatusName(conversation.status),
    title: conversation.title ?? '',
    message_count: conversation.messageCount,
    pending_approvals: conversation.pendingApprovals.length,
    ...(conversation.pendingApproval && { pending_approval: pendingApprovalJson(conversation.pendingApproval) }),
    ...(pipeline && { pipeline_state: pipelineStateJson(pipeline) }),
    ...(conversation.owner !== undefined && { owner: conversation.owner }),
    usage: usageJson(conversation.usage),
    created_at: isoTime(conversation.createdAt),
    updated_at: isoTime(conversation.updatedAt),
  };
}

export function turnResultJson(result: TurnResult): TurnResultJson {
  return {
    response: result.response,
    waiting_approval: result.waitingApproval,
    ...(result.approval && { approval: pendingApprovalJson(result.approval) }),
    ...(!result.waitingApproval && isTurnFailureText(result.response) && { is_error: true as const }),
  };
}

export function conversationSummaryJson(summary: ConversationSummary | undefined): ConversationSummaryJson {
  return {
    total: summary?.total ?? 0,
    active: summary?.active ?? 0,
    waiting_approval: summary?.waitingApproval ?? 0,
    completed: summary?.completed ?? 0,
  };
}

export function toolJson(tool: Tool): ToolJson {
  return {
    name: tool.name,
    description: tool.description,
    // MCP requires an object schema; a tool that advertised none takes no arguments.
    inputSchema: tool.inputSchema ?? { type: 'object', properties: {} },
    // The effective policy (annotations and config overrides), not the raw annotation.
    destructiveHint: tool.destructive,
    server: tool.server,
    ...(tool.unavailable && { unavailable: true as const }),
  };
}
