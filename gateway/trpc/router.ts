import { tracked } from '@trpc/server';
import { givenReason } from '../../services/common/decision-reason.js';
import { DEFAULT_HISTORY_LIMIT, type Agent } from '../app/agent.js';
import { watchConversation, type ConversationUpdate } from '../app/conversation-updates.js';
import type { EventFeed } from '../app/event-feed.js';
import { isResumable } from '../app/events.js';
import { watchPendingApprovals, type PendingApprovalUpdate } from '../app/pending-approval-updates.js';
import { currentDecider, currentWhoami, type Whoami } from '../app/decider.js';
import { approvalRecordJson, type ApprovalRecordJson } from '../app/shapes.js';
import {
  approvalListReply,
  approvalReply,
  conversationListReply,
  conversationPageReply,
  conversationReply,
  toolListReply,
  type ApprovalConflictReply,
  type ConversationReply,
  type VoteRecordedReply,
} from '../app/replies.js';
import { ApprovalConflict, trpcErrorOf } from './errors.js';
import { conversationProcedure, newWorkProcedure, router, subscriptionProcedure } from './init.js';
import {
  approvalInput,
  approvalListInput,
  conversationEventsInput,
  conversationInput,
  deleteInput,
  newConversationInput,
  pageInput,
  pendingApprovalsInput,
  resolveInput,
  runInput,
  forkInput,
  runListInput,
  sendInput,
} from './inputs.js';
import { runJson, runListReply, type RunJson, type RunListReply } from '../app/run-shapes.js';

/**
 * The tRPC face of the gateway: REST's operations with REST's JSON shapes (they are built by
 * the same functions), and the live event streams as subscriptions over SSE.
 *
 * Resuming: stored events are sent with `tracked(id, event)`, so the SSE link reconnects
 * with the last stored id and the store replays everything after it. Live-only events
 * (`text_delta`, `tool_call_*`, store id 0) and snapshots are sent untracked: tRPC then
 * blanks the SSE id for that message and restores the last tracked one right after it, so
 * a reconnect still names the last stored event. A live event has nothing to resume from —
 * the store never replays it, and its text arrives again, whole, as `message_added`.
 */
export interface AppRouterDependencies {
  agent: Agent;
  feed: EventFeed;
}

/** Maps the failures of a stream that had begun to tRPC errors (a TRPCError passes unchanged). */
async function* withTrpcErrors<T>(updates: AsyncGenerator<T, void>): AsyncGenerator<T, void> {
  try {
    yield* updates;
  } catch (error) {
    throw trpcErrorOf(error);
  }
}

function trackStored<T extends ConversationUpdate | PendingApprovalUpdate>(update: T) {
  return update.kind !== 'snapshot' && isResumable(update) ? tracked(String(update.id), update) : update;
}

export function createAppRouter({ agent, feed }: AppRouterDependencies) {
  return router({
    auth: router({
      /** Who the caller is: the web chat shows who is signed in. */
      whoami: conversationProcedure.query((): Whoami => currentWhoami()),
    }),

    conversations: router({
      create: newWorkProcedure.input(newConversationInput).mutation(async ({ input }): Promise<ConversationReply> => {
        const created = await agent.createConversation(input?.message);
        return conversationReply(created, created.result);
      }),
      list: newWorkProcedure.input(pageInput).query(async ({ input }) => conversationListReply(await agent.listConversations(input))),
      get: conversationProcedure
        .input(conversationInput)
        .query(async ({ input: { id, limit = DEFAULT_HISTORY_LIMIT, before, after } }) =>
          conversationPageReply(
            await agent.viewConversation(id, { limit, ...(before !== undefined && { before }), ...(after !== undefined && { after }) }),
          ),
        ),
      send: conversationProcedure.input(sendInput).mutation(async ({ input }): Promise<ConversationReply> => {
        const turn = await agent.sendMessage(input.conversationId, input.message);
        return conversationReply(turn, turn.result);
      }),
      /** REST's `DELETE /conversations/:id`: the conversation and everything of it but its audit entries go. */
      delete: conversationProcedure.input(deleteInput).mutation(async ({ input }): Promise<{ deleted: true }> => {
        await agent.deleteConversation(input.id, currentDecider('web'));
        return { deleted: true };
      }),
    }),

    approvals: router({
      /** REST's `GET /approvals`: every status unless filtered, oldest first, a page at a time. */
      list: newWorkProcedure.input(approvalListInput).query(async ({ input: { status, conversationId, needsMyVote, limit, cursor } }) =>
        approvalListReply(
          await agent.listApprovals({
            limit,
            ...(cursor !== undefined && { cursor }),
            ...(status && { statuses: status }),
            ...(conversationId !== undefined && { conversationId }),
            ...(needsMyVote && { needsMyVote: true }),
          }),
        ),
      ),
      /** REST's `GET /approvals/:uuid`; NOT_FOUND for an unknown uuid. */
      get: conversationProcedure.input(approvalInput).query(async ({ input }): Promise<ApprovalRecordJson> => {
        const record = await agent.getApproval(input.uuid);
        return approvalRecordJson(record.approval, record.input);
      }),
      /**
       * 409 (CONFLICT) for an approval decided earlier; its `data.conflict` has REST's decision and approval.
       * An approval of kind `input` is approved with `input`, the answer to the MCP server's question.
       */
      resolve: conversationProcedure.input(resolveInput).mutation(async ({ input }): Promise<ConversationReply | VoteRecordedReply> => {
        const reason = givenReason(input.reason);
        const details = {
          decider: currentDecider('web'),
          ...(reason !== undefined && { reason }),
          ...(input.arguments && { arguments: input.arguments }),
          ...(input.input && { input: input.input }),
        };
        const reply = approvalReply(input.uuid, await agent.resolveApproval(input.uuid, input.approved ? 'approved' : 'rejected', details));
        if (reply.status === 409) throw new ApprovalConflict(reply.body as ApprovalConflictReply);
        // A vote that did not complete the approval's quorum: REST's 202 body.
        if (reply.status === 202) return reply.body as VoteRecordedReply;
        return reply.body as ConversationReply;
      }),
      pending: subscriptionProcedure.input(pendingApprovalsInput).subscription(async function* ({ input, signal }) {
        let updates: AsyncGenerator<PendingApprovalUpdate, void>;
        try {
          updates = await watchPendingApprovals(feed, { afterId: input?.lastEventId ?? 0, signal });
        } catch (error) {
          throw trpcErrorOf(error);
        }
        for await (const update of withTrpcErrors(updates)) yield trackStored(update);
      }),
    }),

    conversation: router({
      events: subscriptionProcedure.input(conversationEventsInput).subscription(async function* ({ input, signal }) {
        let updates: AsyncGenerator<ConversationUpdate, void>;
        try {
          const sources = {
            feed,
            getConversation: (id: string) => agent.getConversation(id),
            viewConversation: (id: string) => agent.viewConversation(id),
          };
          ({ updates } = await watchConversation(sources, { conversationId: input.conversationId, afterId: input.lastEventId, signal }));
        } catch (error) {
          throw trpcErrorOf(error);
        }
        for await (const update of withTrpcErrors(updates)) yield trackStored(update);
      }),
    }),

    tools: router({
      list: newWorkProcedure.query(async () => toolListReply(await agent.listTools())),
    }),

    runs: router({
      /** REST's `GET /conversations/:id/runs`: newest first, a page at a time; NOT_FOUND for a conversation the caller may not read. */
      list: conversationProcedure
        .input(runListInput)
        .query(
          async ({ input: { conversationId, limit, cursor } }): Promise<RunListReply> =>
            runListReply(await agent.listRuns(conversationId, { limit, ...(cursor !== undefined && { cursor }) })),
        ),
      /** REST's `GET /runs/:run_id`: the run with every step; NOT_FOUND for an unknown run or one the caller may not read. */
      get: conversationProcedure.input(runInput).query(async ({ input }): Promise<RunJson> => runJson(await agent.getRun(input.runId))),
      /** REST's `POST /runs/:run_id/fork`: a new conversation of the caller's from the run's history before the step. */
      fork: newWorkProcedure.input(forkInput).mutation(async ({ input }): Promise<ConversationReply & { copied_only: boolean }> => {
        const forked = await agent.forkRun(input.runId, input.step, input.message);
        return { ...conversationReply(forked, forked.result), copied_only: forked.copiedOnly };
      }),
    }),
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;
