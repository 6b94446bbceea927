import {
  ApprovalStatus,
  ConversationStatus,
  type AuditEntry,
  type Conversation,
  type ConversationSummary,
  type PendingApproval,
  type RunRecord,
  type RunStep,
} from '../../gen/ts/asg/store/v1/store.js';
import type {
  CreateConversationRequest,
  InputView,
  PipelineView,
  Requester,
  TurnResult,
} from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Tool, ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import { internal } from '../../services/common/grpc/errors.js';
import { jsonObjectText } from '../../services/common/json-value.js';
import type { Backends } from './backends.js';
import { busyOr } from './busy.js';
import { OutcomeUnknown, unknownIfLate } from './outcome-unknown.js';
import { currentDecider, needsVoteOf, type Decider } from './decider.js';
import { storeStatusesOf, verdictOfStatus, type ApprovalStatusName, type Decision, type Verdict } from './decision.js';
import { describeRunOf, describeRunsOf, type RunViews } from './run-views.js';
import { ANONYMOUS, currentAuthScope } from './principal.js';

/**
 * The agent as every face of the gateway (REST, A2A, tRPC, MCP) sees it: the few things a
 * caller can do, over the orchestrator and the store. Adapters validate and translate;
 * this layer knows no transport. Results are the proto types; each adapter maps them to
 * its own wire shapes. gRPC failures propagate as `RpcError` with their status code.
 */
export interface Agent {
  /** `origin`: a task's A2A origin, and (set by the ownership guard, ownership.ts) the conversation's owner. */
  createConversation(message?: string, origin?: NewConversationOrigin): Promise<ConversationView & { result?: TurnResult }>;
  /**
   * One conversation with one page of its history (`hasMoreBefore`/`hasMoreAfter` say whether
   * it is all of it); by default the newest DEFAULT_HISTORY_LIMIT messages, which is the whole
   * history of all but very long conversations. The store's record only: for faces that do
   * not show the run (A2A tasks, MCP), so that their reads need no orchestrator.
   */
  getConversation(id: string, page?: HistoryPage): Promise<Conversation>;
  /** The conversation's record without its messages (status, owner, pending approvals): one cheap read of the store. */
  getConversationRecord(id: string): Promise<Conversation>;
  /** The same page of the conversation, with the view of its run: what C (shapes.ts) shows. */
  viewConversation(id: string, page?: HistoryPage): Promise<ConversationView>;
  /** A page of summaries, with the views of their runs: every conversation, or one owner's. */
  listConversations(query: ConversationQuery): Promise<ConversationPage>;
  /**
   * ConversationBusy while a turn of the conversation runs (one active run per
   * conversation). OutcomeUnknown, here and for the other turns and decisions, when how it
   * ended is not known when it answers (outcome-unknown.ts).
   */
  sendMessage(conversationId: string, message: string): Promise<Turn>;
  /**
   * The conversation of `owner` (absent: of no owner) whose latest history digest is `digest`
   * (openai/history.ts); undefined when there is none. Guarded (ownership.ts): the caller's own only.
   */
  findConversationByHistory(digest: string, owner?: string): Promise<string | undefined>;
  /** Records the digest of the history a chat client has been shown of the conversation, replacing the previous one. */
  recordHistoryDigest(conversationId: string, digest: string): Promise<void>;
  /**
   * Deletes the conversation and everything stored of it but its audit entries (store.proto DeleteConversation):
   * its pending approvals are rejected first ("conversation deleted"). 409 while an approved call of it has no outcome.
   */
  deleteConversation(id: string, decider: Decider): Promise<void>;
  /** Decides a pending approval as `details` say: who, through which face, why, and (approving) edited arguments. */
  resolveApproval(uuid: string, decision: Decision, details: DecisionDetails): Promise<ApprovalOutcome>;
  /** Approvals as resources: any status, oldest first, a page at a time. */
  listApprovals(query: ApprovalQuery): Promise<ApprovalPage>;
  /** One approval by uuid, whatever its status; NOT_FOUND when unknown. */
  getApproval(uuid: string): Promise<ApprovalRecord>;
  /** The audit trail, newest first, a page at a time. */
  listAudit(query: AuditQuery): Promise<AuditPage>;
  /** A conversation's runs as their journal keeps them, newest first, a page at a time; NOT_FOUND for an unknown conversation. */
  listRuns(conversationId: string, page: PageRequest): Promise<RunPage>;
  /** One run with every step of its journal; NOT_FOUND when unknown. */
  getRun(runId: string): Promise<RunJournal>;
  /**
   * Forks a run at a step (orchestrator ForkRun): a new conversation of `owner` with the history before the step, which
   * goes on from there (or with `message`); `copiedOnly` when nothing ran. FAILED_PRECONDITION (409) for a step outside
   * the run or a run that cannot be forked.
   */
  forkRun(runId: string, step: number, message?: string, owner?: string): Promise<Turn & { copiedOnly: boolean }>;
  listTools(): Promise<Tool[]>;
  /** The tools and the MCP servers behind them, each with its availability: GET /tools, GET /ready. */
  toolListing(): Promise<{ tools: Tool[]; servers: ToolServer[] }>;
}

/** What a decision carries besides yes or no. */
interface DecisionDetails {
  decider: Decider;
  /** The human's, stored with the decision and, for a rejection, told to the model. */
  reason?: string;
  /** Approving only: run the call with these instead of the stored arguments (checked by the orchestrator). */
  arguments?: Record<string, unknown>;
  /** Approving only: the answer to an MCP server's question (checked by the orchestrator). */
  input?: Record<string, unknown>;
}

export interface ApprovalQuery extends PageRequest {
  /** Empty or absent: every status. */
  statuses?: ApprovalStatusName[];
  conversationId?: string;
  /** Only the pending approvals the caller (the request's decider) may still vote for or decide. */
  needsMyVote?: boolean;
}

export interface ApprovalPage {
  approvals: PendingApproval[];
  /** Absent on the last page. */
  nextCursor?: string;
}

interface ApprovalRecord {
  approval: PendingApproval;
  /** The session id of the approval's conversation. */
  sessionId: string;
  /** What the approval asks, when it waits for an answer to an MCP server's question (from its run, as the orchestrator reads it). */
  input?: InputView;
}

export interface AuditQuery extends PageRequest {
  /** Empty or absent: every kind. */
  kinds?: string[];
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor?: string;
}

/**
 * A conversation as the faces show it: the store's record, and the orchestrator's view of its
 * run (REST "pipeline_state") when it has one that is an agent tree's.
 */
export interface RunPage {
  /** Newest first. */
  runs: RunRecord[];
  nextCursor?: string;
}

/** A run and its steps in order. */
export interface RunJournal {
  run: RunRecord;
  steps: RunStep[];
}

export interface ConversationView {
  conversation: Conversation;
  pipeline?: PipelineView;
}

export interface Turn extends ConversationView {
  result: TurnResult;
}

export interface PageRequest {
  limit: number;
  /** Opaque, from the previous page's `nextCursor`. */
  cursor?: string;
}

export interface ConversationQuery extends PageRequest {
  /** Only this owner's conversations, and the summary counts only them; absent: every conversation. */
  owner?: string;
}

/**
 * Where a new conversation comes from: a task's A2A origin (the A2A server), and who it belongs
 * to (set by the ownership guard when `auth` is on).
 */
export type NewConversationOrigin = Pick<CreateConversationRequest, 'a2aOrigin' | 'owner'>;

/**
 * Which messages of a conversation to read: at most `limit` (and at most the store's
 * MAX_PAGE_CONTENT_CHARS of text), the newest, or those right before or after a message id
 * (exclusive). One cursor at most.
 */
export interface HistoryPage {
  limit: number;
  before?: string;
  after?: string;
}

/** A history of up to this many messages is read whole by default (the store's largest page). */
export const DEFAULT_HISTORY_LIMIT = 1000;

export interface ConversationPage {
  conversations: Conversation[];
  /** The views of the conversations' runs, by conversation id. */
  pipelines: RunViews;
  summary: ConversationSummary | undefined;
  /** Absent on the last page. */
  nextCursor?: string;
}

/**
 * Either this request made the decision, or an earlier one had, or the approval had expired
 * (and nothing was executed), or it was a vote that did not complete the approval's quorum.
 */
export type ApprovalOutcome =
  | ({ decided: true } & Turn)
  | { decided: false; voteRecorded?: undefined; approval: PendingApproval; decision: Verdict; decidedAt: Date | undefined }
  /** A vote of the approval's quorum was recorded; the quorum needs `required` votes and has `votes`: nothing ran. */
  | { decided: false; voteRecorded: true; approval: PendingApproval; votes: number; required: number };

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw internal(`${what} was missing from the answer`);
  return value;
}

/**
 * A turn result for responses where the orchestrator sent none (e.g. a rejection that ran
 * nothing): what the conversation itself says about waiting.
 */
export function resultFromConversation(conversation: Conversation): TurnResult {
  const waiting = conversation.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL;
  return { response: '', waitingApproval: waiting, approval: waiting ? conversation.pendingApproval : undefined };
}

export function createAgent(backends: Pick<Backends, 'orchestrator' | 'store'>): Agent {
  const { orchestrator, store } = backends;
  async function getConversation(id: string, page: HistoryPage = { limit: DEFAULT_HISTORY_LIMIT }): Promise<Conversation> {
    const answer = await store.getConversation({
      id,
      includeMessages: true,
      messageLimit: page.limit,
      ...(page.before !== undefined && { beforeMessageId: page.before }),
      ...(page.after !== undefined && { afterMessageId: page.after }),
    });
    return present(answer.conversation, `conversation ${id}`);
  }

  return {
    // Answers of turns carry the view of the run as they leave it: no second call.
    async createConversation(message, { a2aOrigin, owner } = {}) {
      const answer = await orchestrator
        .createConversation({ message, a2aOrigin, owner, requester: requester() })
        .catch((error: unknown) => {
          throw message === undefined ? error : unknownIfLate(error, {});
        });
      if (answer.unsettled) throw new OutcomeUnknown(answer.unsettled);
      return { conversation: present(answer.conversation, 'the created conversation'), result: answer.result, pipeline: answer.pipeline };
    },

    getConversation,

    async getConversationRecord(id) {
      return present((await store.getConversation({ id, includeMessages: false })).conversation, `conversation ${id}`);
    },

    async viewConversation(id, page) {
      const conversation = await getConversation(id, page);
      return { conversation, pipeline: await describeRunOf(orchestrator, conversation) };
    },

    async listConversations({ limit, cursor, owner }) {
      // Summaries: the store reads no message for a list.
      const answer = await store.listConversations({ pageSize: limit, pageToken: cursor ?? '', owner });
      return {
        conversations: answer.conversations,
        pipelines: await describeRunsOf(orchestrator, answer.conversations),
        summary: answer.summary,
        ...(answer.nextPageToken && { nextCursor: answer.nextPageToken }),
      };
    },

    async sendMessage(conversationId, message) {
      const answer = await orchestrator.sendMessage({ conversationId, message, requester: requester() }).catch((error: unknown) => {
        throw unknownIfLate(busyOr(error, conversationId), { conversationId });
      });
      if (answer.unsettled) throw new OutcomeUnknown(answer.unsettled);
      const conversation = present(answer.conversation, `conversation ${conversationId}`);
      return { conversation, result: answer.result ?? resultFromConversation(conversation), pipeline: answer.pipeline };
    },

    async findConversationByHistory(digest, owner) {
      return (await store.findConversationByHistory({ digest, owner })).conversationId;
    },

    async recordHistoryDigest(conversationId, digest) {
      await store.recordHistoryDigest({ conversationId, digest });
    },

    async deleteConversation(id, decider) {
      await store.deleteConversation({ id, actor: decider.principal, via: decider.via });
    },

    async resolveApproval(uuid, decision, { decider, reason, arguments: edited, input }) {
      const answer = await orchestrator
        .resolveApproval({
          uuid,
          approved: decision === 'approved',
          reason,
          decidedBy: decider.principal,
          via: decider.via,
          deciderRoles: decider.roles ?? [],
          // Bounded here, for every face at once: nothing over the limits of a stored JSON value leaves the edge (400).
          ...(edited !== undefined && { argumentsJson: jsonObjectText(edited, '"arguments"') }),
          ...(input !== undefined && { inputJson: jsonObjectText(input, '"input"') }),
        })
        .catch((error: unknown) => {
          throw unknownIfLate(error, { approvalUuid: uuid });
        });
      if (answer.unsettled) throw new OutcomeUnknown(answer.unsettled);
      const approval = present(answer.approval, `approval ${uuid}`);
      if (answer.voteRecorded) return { decided: false, voteRecorded: true, approval, ...answer.voteRecorded };
      if (!answer.decided) {
        const earlier = verdictOfStatus(approval.status);
        // decided=false promises an earlier decision; a pending approval here is a bug upstream.
        if (!earlier) throw internal(`the orchestrator declined to decide approval ${uuid}, yet it is still pending`);
        return { decided: false, approval, decision: earlier, decidedAt: approval.decidedAt ?? approval.updatedAt };
      }
      const conversation = present(answer.conversation, `the conversation of approval ${uuid}`);
      return { decided: true, conversation, result: answer.result ?? resultFromConversation(conversation), pipeline: answer.pipeline };
    },

    async listApprovals({ limit, cursor, statuses = [], conversationId, needsMyVote }) {
      const answer = await store.listApprovals({
        // Only a pending approval takes a vote.
        statuses: (needsMyVote ? ['pending' as const] : statuses).flatMap(storeStatusesOf),
        conversationId: conversationId ?? '',
        pageSize: limit,
        pageToken: cursor ?? '',
      });
      const voter = currentDecider('rest');
      const approvals = needsMyVote ? answer.approvals.filter((approval) => needsVoteOf(approval, voter)) : answer.approvals;
      return { approvals, ...(answer.nextPageToken && { nextCursor: answer.nextPageToken }) };
    },

    async getApproval(uuid) {
      const answer = await store.getApproval({ uuid });
      const approval = present(answer.approval, `approval ${uuid}`);
      // Only the orchestrator reads a run: a pending approval's run says whether it asks for input.
      const pending = approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING;
      const input =
        pending && answer.run
          ? (await orchestrator.describeRuns({ runs: [{ run: answer.run, pendingApprovalUuid: '' }] })).views[0]?.inputs.find(
              (view) => view.approvalUuid === uuid,
            )
          : undefined;
      return { approval, sessionId: answer.sessionId, ...(input && { input }) };
    },

    async listAudit({ limit, cursor, kinds = [] }) {
      const answer = await store.listAudit({ kinds, pageSize: limit, pageToken: cursor ?? '' });
      return { entries: answer.entries, ...(answer.nextPageToken && { nextCursor: answer.nextPageToken }) };
    },

    async listRuns(conversationId, { limit, cursor }) {
      const answer = await store.listRuns({ conversationId, pageSize: limit, pageToken: cursor ?? '' });
      return { runs: answer.runs, ...(answer.nextPageToken && { nextCursor: answer.nextPageToken }) };
    },

    async getRun(runId) {
      const answer = await store.getRun({ runId });
      return { run: present(answer.run, `run ${runId}`), steps: answer.steps };
    },

    async forkRun(runId, step, message, owner) {
      const answer = await orchestrator.forkRun({ runId, step, message, owner, requester: requester() }).catch((error: unknown) => {
        throw unknownIfLate(error, {});
      });
      if (answer.unsettled) throw new OutcomeUnknown(answer.unsettled);
      const conversation = present(answer.conversation, 'the forked conversation');
      return {
        conversation,
        result: answer.result ?? resultFromConversation(conversation),
        pipeline: answer.pipeline,
        copiedOnly: answer.copiedOnly,
      };
    },

    async listTools() {
      return (await orchestrator.listTools({})).tools;
    },

    async toolListing() {
      const { tools, servers } = await orchestrator.listTools({});
      return { tools, servers };
    },
  };
}

/**
 * Who sends the message of a turn, for the approval policies that judge its calls: the
 * request's principal and roles; without `auth`, anonymous with every role (as anonymousPrincipal).
 */
function requester(): Requester {
  const principal = currentAuthScope()?.principal;
  return principal ? { principal: principal.id, roles: [...principal.roles] } : { principal: ANONYMOUS, roles: ['admin'] };
}
