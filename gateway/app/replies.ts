import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Tool, ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import type { ApprovalOutcome, ApprovalPage, AuditPage, ConversationPage, ConversationView } from './agent.js';
import type { Verdict } from './decision.js';
import {
  approvalRecordJson,
  auditEntryJson,
  conversationJson,
  conversationListItemJson,
  conversationSummaryJson,
  pendingApprovalJson,
  toolJson,
  toolServerJson,
  turnResultJson,
  type ApprovalRecordJson,
  type AuditEntryJson,
  type ConversationJson,
  type ConversationListItemJson,
  type ConversationSummaryJson,
  type PendingApprovalJson,
  type ToolJson,
  type ToolServerJson,
  type TurnResultJson,
} from './shapes.js';

/**
 * The public response bodies (docs/api.md, "REST"), built from the application layer's results: REST answers
 * with them and tRPC returns the same JSON (they are built by the same functions).
 */

export interface ConversationReply {
  conversation: ConversationJson;
  result?: TurnResultJson;
}

/**
 * `GET /conversations/:id`: C with one page of its messages, oldest first. The whole history
 * unless it is longer than the page (docs/api.md, "REST"): `has_more_before` says older messages
 * exist (read them with `?before=<id of the first message>`), `has_more_after` newer ones.
 */
export interface ConversationPageReply extends ConversationReply {
  has_more_before: boolean;
  has_more_after: boolean;
}

export interface ConversationListReply {
  /** Summaries: no messages. */
  conversations: ConversationListItemJson[];
  summary: ConversationSummaryJson;
  /** Present when there is a next page; pass it back as `?cursor=`. */
  next_cursor?: string;
}

/** `GET /approvals`: oldest first. */
export interface ApprovalListReply {
  approvals: ApprovalRecordJson[];
  /** Present when there is a next page; pass it back as `?cursor=`. */
  next_cursor?: string;
}

/** `GET /audit`: newest first. */
export interface AuditListReply {
  entries: AuditEntryJson[];
  next_cursor?: string;
}

/** 202: a vote that did not complete the approval's quorum; nothing ran. */
export interface VoteRecordedReply {
  status: 'pending';
  votes: number;
  required: number;
}

export interface ApprovalConflictReply {
  error: string;
  decision: Verdict;
  approval: PendingApprovalJson;
}

export interface RestReply<B> {
  status: number;
  body: B;
  /** The conversation's session id, when the request did not bring one: later requests of the conversation reuse it. */
  sessionId?: string;
}

export function conversationReply({ conversation, pipeline }: ConversationView, result?: TurnResult): ConversationReply {
  return { conversation: conversationJson(conversation, pipeline), ...(result && { result: turnResultJson(result) }) };
}

export function conversationPageReply({ conversation, pipeline }: ConversationView): ConversationPageReply {
  return {
    conversation: conversationJson(conversation, pipeline),
    has_more_before: conversation.hasMoreBefore ?? false,
    has_more_after: conversation.hasMoreAfter ?? false,
  };
}

export function conversationListReply(page: ConversationPage): ConversationListReply {
  return {
    conversations: page.conversations.map((conversation) => conversationListItemJson(conversation, page.pipelines.get(conversation.id))),
    summary: conversationSummaryJson(page.summary),
    ...(page.nextCursor && { next_cursor: page.nextCursor }),
  };
}

export function approvalListReply(page: ApprovalPage): ApprovalListReply {
  return {
    approvals: page.approvals.map((approval) => approvalRecordJson(approval)),
    ...(page.nextCursor && { next_cursor: page.nextCursor }),
  };
}

export function auditListReply(page: AuditPage): AuditListReply {
  return { entries: page.entries.map(auditEntryJson), ...(page.nextCursor && { next_cursor: page.nextCursor }) };
}

export function toolListReply(tools: Tool[], servers?: ToolServer[]): { tools: ToolJson[]; servers?: ToolServerJson[] } {
  return { tools: tools.map(toolJson), ...(servers && { servers: servers.map(toolServerJson) }) };
}

/**
 * 200 with the turn that followed the decision, 202 for a vote that did not complete the
 * approval's quorum, or 409 naming the earlier decision (an approval is decided once).
 */
export function approvalReply(
  uuid: string,
  outcome: ApprovalOutcome,
): RestReply<ConversationReply | ApprovalConflictReply | VoteRecordedReply> {
  if (outcome.decided) {
    return { status: 200, body: conversationReply(outcome, outcome.result), sessionId: outcome.conversation.sessionId };
  }
  if (outcome.voteRecorded) return { status: 202, body: { status: 'pending', votes: outcome.votes, required: outcome.required } };
  const when = outcome.decidedAt ? ` at ${outcome.decidedAt.toISOString()}` : '';
  const by = outcome.approval.decidedBy ? ` by ${outcome.approval.decidedBy}` : '';
  return {
    status: 409,
    body: {
      error:
        outcome.decision === 'expired'
          ? `approval ${uuid} had expired${when}; nobody decided it in time`
          : `approval ${uuid} was already ${outcome.decision}${by}${when}`,
      decision: outcome.decision,
      approval: pendingApprovalJson(outcome.approval),
    },
  };
}
