import { ChatRole } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ConversationStatus,
  MessageRole,
  type ClaimApprovalResponse,
  type Conversation,
  type Message,
  type PendingApproval,
} from '../../../gen/ts/asg/store/v1/store.js';
import { jsonObjectOf } from '../../common/json-value.js';
import { currentContext, withContextPatch } from '../../common/context.js';
import {
  aborted,
  failedPrecondition,
  GrpcStatus,
  internal,
  invalidArgument,
  permissionDenied,
  isCode,
  outcomeUnknown,
  RpcError,
  type ServiceError,
  unavailable,
} from '../../common/grpc/errors.js';
import type { Logger } from '../../common/log.js';
import { recordRunOutOfPhaseEvent } from '../../common/metrics.js';
import { redactSecrets } from '../../common/secrets.js';
import { HEADROOM_MS, type OrchestratorClients } from '../clients.js';
import { historyTexts, SUMMARY_INSTRUCTIONS } from '../domain/compaction.js';
import { countAhead, SLICE_CHARS } from '../domain/tokens.js';
import { turnOfEventLoop } from '../../common/event-loop.js';
import { modelErrorCategory } from '../domain/error-category.js';
import { toModelHistory, type HistoryEntry } from '../domain/history.js';
import type { ExpiryPolicy } from '../domain/expiry.js';
import { assistantText, editedResultText, gatedCall, toolResult } from '../domain/messages.js';
import { inputResponses } from '../domain/elicitation.js';
import type { ToolCatalogue } from '../tool-catalogue.js';
import { errorText, type AgentIo } from './io.js';
import { next } from './machine.js';
import { decodeRun, encodeRun, type StoredRun } from './state.js';
import type { CallFacts, Effect, MachineEnv, RunAnswer, RunEvent, RunState, ToolOutcome } from './types.js';
import { callHash } from '../../common/call-hash.js';
import type { RunLeases } from '../leases.js';

/** The gRPC error of each refusal the machine decides. */
const REFUSALS: Record<Extract<Effect, { kind: 'refuse' }>['code'], (message: string) => ServiceError> = {
  invalidArgument,
  failedPrecondition,
  unavailable,
  aborted,
  permissionDenied,
};

/** Effects that touch the store run one after another, in the order the machine asked for them. */
const IN_ORDER = new Set<Effect['kind']>([
  'loadHistory',
  'recordCompaction',
  'endTurnWithNote',
  'askAgain',
  'loadApprovals',
  'claim',
  'runApproved',
  'forwardRejection',
  'declineInput',
  'append',
  'checkpoint',
  'write',
  'auditPolicy',
]);

/** One activation of a run: a message's turn, or a decision and what follows it. */
export interface Activation {
  conversationId: string;
  /** Someone watches the conversation's events: model text streams and tool calls are published live. */
  watched: boolean;
  /** The conversation as the store last returned it, with its messages. */
  conversation: Conversation;
  /** The decided approval as the store last returned it (claim, execution). */
  approval?: PendingApproval;
  /** This activation holds the conversation's running mark (store.proto, StartTurn): a failure must clear it. */
  holdsTurn: boolean;
  /**
   * What of the request is stored: `yes` once its message was appended or its claim won, `maybe`
   * while a claim was sent and its answer never came (the decision may be stored or not).
   */
  stored?: 'maybe' | 'yes';
  /** Aborted, with why as its reason (a string), when the activation's lease is gone (it was lost, or handed back). */
  signal?: AbortSignal;
}

/**
 * Runs the machine (machine.ts) against the world: each effect against the llm-gateway, the
 * tool broker, the A2A bridge or the store, each outcome fed back as an event, one at a time.
 * Model and tool calls of parallel branches run at once; everything that touches the store
 * runs in the order it was asked for, so a node's messages are written before the write that
 * ends the run. The turn's deadline (the request's) is the machine's timer.
 */
export class RunDriver {
  constructor(
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
    private readonly io: AgentIo,
    private readonly catalogue: ToolCatalogue,
    readonly env: MachineEnv,
    private readonly leases: RunLeases,
    /** When the approvals this driver stores expire; absent, they wait forever. */
    private readonly expiry?: ExpiryPolicy,
  ) {}

  async drive(initial: RunState, first: RunEvent, activation: Activation): Promise<RunAnswer> {
    let state = initial;
    const events: RunEvent[] = [first];
    let wake: (() => void) | undefined;
    // Set from effects' callbacks: read through failed(), which the compiler cannot narrow away.
    let failure: { error: unknown } | undefined;
    const failed = () => failure;
    let inOrder: Promise<void> = Promise.resolve();
    const push = (event: RunEvent | undefined) => {
      if (event) events.push(event);
      wake?.();
    };
    const fail = (error: unknown) => {
      failure ??= { error };
      wake?.();
    };
    const deadline = currentContext()?.deadline;
    const timer = deadline === undefined ? undefined : setTimeout(() => push({ kind: 'timerFired' }), Math.max(0, deadline - Date.now()));
    timer?.unref();
    // A lost lease is the machine's to judge: the write that ends the turn may already be stored.
    const abort = () => push({ kind: 'leaseLost', reason: String(activation.signal?.reason) });
    if (activation.signal?.aborted) abort();
    activation.signal?.addEventListener('abort', abort);
    // Once the activation is over, store effects still queued behind others are not started.
    let over = false;
    try {
      for (;;) {
        while (events.length === 0) {
          if (failed()) throw failed()!.error;
          if (state.inFlight === 0) throw internal('the run stalled: nothing is in flight and no answer was decided');
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
        if (failed()) throw failed()!.error;
        const stepped = next(state, events.shift()!, this.env, Date.now());
        state = stepped.state;
        let answer: RunAnswer | undefined;
        for (const effect of stepped.effects) {
          if (effect.kind === 'done') answer = effect.answer;
          else if (effect.kind === 'log')
            this.log[effect.level](effect.message, { conversation: activation.conversationId, ...effect.fields });
          else if (effect.kind === 'outOfPhase') this.outOfPhase(effect, activation);
          else if (effect.kind === 'refuse') throw REFUSALS[effect.code](effect.message);
          else if (IN_ORDER.has(effect.kind))
            inOrder = inOrder.then(() => (over ? undefined : this.execute(effect, activation).then(push, fail)));
          else void this.execute(effect, activation).then(push, fail);
        }
        // A lost run is left at once: what is queued for the store is no longer this activation's to write.
        if (answer?.kind === 'lost') return answer;
        if (answer) {
          // What the machine asked the store for before it answered (a rejection forwarded, a node's messages) is done first.
          await inOrder;
          if (failed()) throw failed()!.error;
          return answer;
        }
      }
    } finally {
      over = true;
      if (timer) clearTimeout(timer);
      activation.signal?.removeEventListener('abort', abort);
    }
  }

  private async execute(effect: Effect, activation: Activation): Promise<RunEvent | undefined> {
    switch (effect.kind) {
      case 'loadTools':
        try {
          return { kind: 'toolsLoaded', tools: [...(await this.catalogue.current()).values()], facts: callFacts(activation) };
        } catch (error) {
          return { kind: 'toolsFailed', error: errorText(error) };
        }
      case 'loadHistory':
        if (effect.node === undefined) {
          const { messages } = activation.conversation;
          // The machine plans compaction synchronously over the counts of the whole history, and
          // the model call follows at once: a long message is counted here first, in slices that
          // let the event loop go. The in-process mesh crosses services without letting it go, so
          // the event loop serves other requests here first, between the store's work for this
          // turn and this count and model call: not one long stretch together.
          if (holdsLongText(messages)) {
            await turnOfEventLoop();
            await countAhead(this.env.simple.model, historyTexts(messages));
          }
          return { kind: 'conversationLoaded', path: effect.path, messages };
        }
        return {
          kind: 'historyLoaded',
          path: effect.path,
          history: nodeStepsOf(activation.conversation, effect.node, effect.nodeMessages),
        };
      case 'callModel':
        return this.callModel(effect, activation);
      case 'summarize':
        return this.summarize(effect);
      case 'recordCompaction':
        // A compaction notice is part of no turn's record: it is written unfenced and ends nothing.
        await this.clients.store.appendMessages({
          conversationId: activation.conversationId,
          messages: [effect.notice],
          status: 0,
          returnConversation: false,
          endsTurn: false,
        });
        return { kind: 'compactionRecorded' };
      case 'callTool': {
        // A policy's approval is audited before its call runs: a call whose approval is not on record does not run.
        const unaudited = effect.policy === undefined ? undefined : await this.auditPolicy(effect.policy, effect, activation, true);
        if (unaudited !== undefined)
          return {
            kind: 'toolFinished',
            path: effect.path,
            callId: effect.call.id,
            outcome: {
              text: `${effect.call.name} was not executed: the approval of policy "${effect.policy}" could not be written to the audit (${unaudited}). Try again later.`,
              isError: true,
            },
          };
        const outcome = await this.io.withCallEvents(
          activation.conversationId,
          effect.call,
          effect.args,
          () => this.io.callTool(effect.call.name, effect.args, '', effect.unapprovedReason),
          activation.watched,
        );
        return { kind: 'toolFinished', path: effect.path, callId: effect.call.id, outcome };
      }
      case 'loadApprovals': {
        const { conversation } = await this.clients.store.getConversation({ id: activation.conversationId, includeMessages: false });
        return { kind: 'approvalsLoaded', approvals: required(conversation).pendingApprovals };
      }
      case 'claim': {
        let claim: ClaimApprovalResponse;
        // From here until the store answers, the decision may be stored: a claim that gets no answer leaves it unknown.
        activation.stored = 'maybe';
        try {
          claim = await this.clients.store.claimApproval({
            uuid: effect.uuid,
            approved: effect.approved,
            reason: effect.reason,
            messages: effect.messages,
            clearRun: effect.clearRun,
            alsoReject: effect.alsoReject,
            continuesTurn: effect.continuesTurn,
            expectedRunRevision: effect.expectedRunRevision,
            ...(effect.continuesTurn && { lease: this.leases.lease() }),
            // Who decided and how, recorded with the decision (and audited) in the claim's transaction.
            decidedBy: effect.decidedBy,
            via: effect.via,
            ...(effect.editedArgs && { editedArgsJson: JSON.stringify(effect.editedArgs) }),
            ...(effect.expired && { expired: true }),
            ...(effect.decisionId !== undefined && { decisionId: effect.decisionId }),
            ...(effect.journal && { journal: effect.journal }),
          });
        } catch (error) {
          if (!outcomeUnknown(error)) activation.stored = undefined;
          if (effect.expectedRunRevision === undefined || !isCode(error, GrpcStatus.ABORTED)) throw error;
          const { latest, revision } = await this.storedRun(activation);
          return { kind: 'claimConflict', latest, revision };
        }
        activation.stored = claim.claimed ? 'yes' : undefined;
        activation.conversation = required(claim.conversation);
        activation.watched = activation.conversation.watched;
        activation.approval = claim.approval ?? activation.approval;
        if (claim.voteRecorded)
          return { kind: 'claimed', won: false, voteRecorded: true, ...(claim.approval && { approval: claim.approval }) };
        if (!claim.claimed) {
          this.log.info('approval already decided', { approval: effect.uuid });
          return { kind: 'claimed', won: false };
        }
        activation.holdsTurn = effect.continuesTurn;
        this.log.info(effect.expired ? 'approval expired' : effect.approved ? 'approval approved' : 'approval rejected', {
          approval: effect.uuid,
          tool: activation.approval?.toolName,
          decided_by: effect.decidedBy,
          via: effect.via,
          ...(effect.editedArgs && { edited: true }),
        });
        return { kind: 'claimed', won: true, ...(claim.approval && { approval: claim.approval }) };
      }
      case 'runApproved':
        // A taken-over claim has no claim's answer here: the approval is the one the machine carries out.
        activation.approval ??= effect.approval;
        return {
          kind: 'approvedCallFinished',
          uuid: effect.uuid,
          outcome: await this.runApproved(activation.approval!, effect, activation),
        };
      case 'declineInput': {
        // The decline is recorded already (the claim); the server hears it once, and its answer is only logged.
        const { approval, request } = effect;
        const outcome = await this.io.callTool(approval.toolName, jsonObjectOf(approval.toolArgsJson), '', '', {
          requestState: request.requestState,
          responses: inputResponses(request, undefined),
        });
        this.log.info('declined input sent to the MCP server', {
          approval: approval.uuid,
          tool: approval.toolName,
          server: request.server,
          answer: outcome.text,
        });
        return undefined;
      }
      case 'forwardRejection': {
        const outcome = await this.io.continueRemote(effect.approval.toolName, effect.approval.remoteTaskId!, false, effect.reason);
        if (outcome.isError && !outcome.remote)
          this.log.warn('rejection not confirmed by the sub-agent', {
            approval: effect.approval.uuid,
            agent: effect.approval.remoteAgentName,
            answer: outcome.text,
          });
        return undefined;
      }
      case 'append':
        await outsideDeadline(() =>
          this.clients.store.appendMessages({
            conversationId: activation.conversationId,
            messages: effect.messages,
            status: 0,
            returnConversation: false,
            ...this.fence(activation),
            ...(effect.journal && { journal: effect.journal }),
          }),
        );
        return undefined;
      case 'write':
        return outsideDeadline(() => this.write(effect, activation));
      case 'checkpoint':
        return outsideDeadline(() => this.checkpoint(effect, activation));
      case 'auditPolicy': {
        const failed = await this.auditPolicy(effect.rule, effect, activation, false);
        if (failed !== undefined)
          this.log.error('a policy rejection could not be written to the audit', {
            rule: effect.rule,
            tool: effect.call.name,
            error: failed,
          });
        return undefined;
      }
      case 'endTurnWithNote':
        // Until the store answers, the note may be stored: a failure leaves the run to be taken over again, as a crash would.
        activation.stored = 'maybe';
        await this.clients.store.appendMessages({
          conversationId: activation.conversationId,
          messages: [assistantText(effect.note)],
          status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
          returnConversation: false,
          endsTurn: true,
          leaseOwner: this.leases.owner,
          ...(effect.journal && { journal: effect.journal }),
        });
        return undefined;
      case 'askAgain':
        await this.askAgain(effect, activation);
        return undefined;
      case 'log':
      case 'outOfPhase':
      case 'refuse':
      case 'done':
        return undefined;
    }
  }

  /** An event the machine refused because it did not fit the run's phase: a defect to see, logged and counted; the run goes on without it. */
  private outOfPhase(effect: Extract<Effect, { kind: 'outOfPhase' }>, activation: Activation): void {
    this.log.error('run event out of phase; nothing was done with it', {
      conversation: activation.conversationId,
      phase: effect.phase,
      event: effect.event,
      detail: effect.detail,
    });
    recordRunOutOfPhaseEvent(effect.phase, effect.event);
  }

  private async callModel(effect: Extract<Effect, { kind: 'callModel' }>, activation: Activation): Promise<RunEvent> {
    try {
      const reply = await this.io.generate(
        { conversationId: activation.conversationId, watched: activation.watched, ...(effect.node !== undefined && { node: effect.node }) },
        {
          model: effect.model,
          systemPrompt: effect.systemPrompt,
          messages: toModelHistory(effect.history),
          tools: effect.tools,
          timeoutMs: effect.timeoutMs,
        },
        // The gRPC deadline leaves the llm-gateway room to report its own timeout first.
        effect.timeoutMs === undefined ? {} : { timeoutMs: effect.timeoutMs + HEADROOM_MS },
      );
      return {
        kind: 'modelAnswered',
        path: effect.path,
        reply: {
          text: redactSecrets(reply.text),
          toolCalls: reply.toolCalls,
          ...(reply.usage && { usage: reply.usage }),
          finishReason: reply.finishReason,
        },
        facts: callFacts(activation),
      };
    } catch (error) {
      this.log.warn('model call failed', { conversation: activation.conversationId, node: effect.node, error: errorText(error) });
      return {
        kind: 'modelFailed',
        path: effect.path,
        category: modelErrorCategory(error instanceof RpcError ? error.code : undefined),
        error: errorText(error),
      };
    }
  }

  /** The model's summary of what a compaction hides; its failure is the machine's to judge (it compacts without one). */
  private async summarize(effect: Extract<Effect, { kind: 'summarize' }>): Promise<RunEvent> {
    try {
      const reply = await this.clients.llm.generate({
        model: effect.model,
        systemPrompt: SUMMARY_INSTRUCTIONS,
        messages: [{ role: ChatRole.CHAT_ROLE_USER, text: effect.transcript, toolCalls: [], toolResults: [] }],
        tools: [],
      });
      return { kind: 'summaryAnswered', text: reply.text, ...(reply.usage && { usage: reply.usage }) };
    } catch (error) {
      return { kind: 'summaryFailed', error: errorText(error) };
    }
  }

  /**
   * A policy's decision in the audit, as a human's is (store.proto, ClaimApprovalRequest):
   * kind approval.decided, actor `policy:<rule>`, via "policy", and as subject the conversation
   * (no approval exists). Undefined when written; else why not.
   */
  private async auditPolicy(
    rule: string,
    decided: { call: { id: string; name: string }; args: Record<string, unknown>; reason?: string },
    activation: Activation,
    approved: boolean,
  ): Promise<string | undefined> {
    const detail = {
      conversation_id: activation.conversationId,
      tool_name: decided.call.name,
      tool_call_id: decided.call.id,
      args_hash: callHash(decided.call.name, decided.args),
      approved,
      status: approved ? 'approved' : 'rejected',
      ...(decided.reason !== undefined && { reason: decided.reason }),
      policy: rule,
    };
    try {
      await outsideDeadline(() =>
        this.clients.store.appendAudit({
          entry: {
            id: 0,
            at: undefined,
            kind: 'approval.decided',
            actor: `policy:${rule}`,
            via: 'policy',
            subject: activation.conversationId,
            detailJson: JSON.stringify(detail),
          },
          // Told as a decision too (the webhook approval.decided), as a human's is.
          policyDecision: {
            conversationId: activation.conversationId,
            toolCallId: decided.call.id,
            toolName: decided.call.name,
            toolArgsJson: JSON.stringify(decided.args),
            approved,
            ...(decided.reason !== undefined && { reason: decided.reason }),
            rule,
          },
        }),
      );
      return undefined;
    } catch (error) {
      return errorText(error);
    }
  }

  /** The approvals asked again, one write each; the first ends the turn (the conversation waits) and the others follow it unfenced. */
  private async askAgain(effect: Extract<Effect, { kind: 'askAgain' }>, activation: Activation): Promise<void> {
    let revision = effect.expectedRevision;
    // Until the last write is stored, what was asked again is not known: a failure leaves the run to be taken over again, as a crash would.
    activation.stored = 'maybe';
    for (const [index, write] of effect.writes.entries()) {
      const written = await this.clients.store.updateRun({
        conversationId: activation.conversationId,
        messages: [],
        approvals: [this.expiry ? this.expiry.withExpiry(write.approval) : write.approval],
        run: write.run && { ...encodeRun(write.run), revision: 0 },
        expectedRevision: revision,
        returnConversation: false,
        interruptedApproval: write.interrupted,
        ...(index === 0 && { leaseOwner: this.leases.owner }),
      });
      revision = written.revision;
    }
  }

  /** A compare-and-set write of the run; a lost race comes back with what is stored now. */
  private async write(effect: Extract<Effect, { kind: 'write' }>, activation: Activation): Promise<RunEvent> {
    try {
      const { revision, conversation } = await this.clients.store.updateRun({
        conversationId: activation.conversationId,
        messages: effect.messages,
        // Each new approval with its expiry, from the configuration (the machine knows no clock).
        approvals: this.expiry ? effect.approvals.map((approval) => this.expiry!.withExpiry(approval)) : effect.approvals,
        run: effect.run && { ...encodeRun(effect.run), revision: 0 },
        expectedRevision: effect.expectedRevision,
        returnConversation: true,
        ...this.fence(activation),
        ...(effect.journal && { journal: effect.journal }),
      });
      activation.conversation = required(conversation);
      return { kind: 'written', revision };
    } catch (error) {
      if (!isCode(error, GrpcStatus.ABORTED)) throw error;
      return { kind: 'writeConflict', ...(await this.storedRun(activation)) };
    }
  }

  /**
   * A node's finish: its messages and the run with its checkpoint, compare-and-set, fenced. A
   * refusal at the revision it named is the fence (another replica holds the run now): the
   * lease is lost; at another revision, a lost race.
   */
  private async checkpoint(effect: Extract<Effect, { kind: 'checkpoint' }>, activation: Activation): Promise<RunEvent> {
    try {
      const { revision } = await this.clients.store.updateRun({
        conversationId: activation.conversationId,
        messages: effect.messages,
        approvals: [],
        run: { ...encodeRun(effect.run), revision: 0 },
        expectedRevision: effect.expectedRevision,
        returnConversation: false,
        ...this.fence(activation),
        ...(effect.journal && { journal: effect.journal }),
      });
      return { kind: 'checkpointed', revision };
    } catch (error) {
      if (!isCode(error, GrpcStatus.ABORTED)) throw error;
      const stored = await this.storedRun(activation);
      if (stored.revision === effect.expectedRevision) return { kind: 'leaseLost', reason: errorText(error) };
      return { kind: 'checkpointConflict', ...stored };
    }
  }

  /**
   * Writes of an activation that holds the turn name this replica's lease: once another replica
   * has taken the run over, they are refused (ABORTED) and nothing of them is stored.
   */
  private fence(activation: Activation): { leaseOwner?: string } {
    return activation.holdsTurn ? { leaseOwner: this.leases.owner } : {};
  }

  /** The conversation's run as stored now, after a compare-and-set lost a race. */
  private async storedRun(activation: Activation): Promise<{ latest: StoredRun | undefined; revision: number }> {
    const { conversation } = await this.clients.store.getConversation({ id: activation.conversationId, includeMessages: false });
    const latest = required(conversation);
    return { latest: latest.run && decodeRun(latest.run, latest.pendingApproval?.uuid), revision: latest.runRevision };
  }

  /**
   * Runs the stored call of a won approval, at most once: executing is recorded first. A
   * proxy approval's "call" is the answer to the peer that holds the call. When the peer
   * (or a delegation approved here) then waits for another approval, no result is recorded
   * yet: the call waits again (`remote`). What runs, and whether it runs at all, is the
   * machine's decision (`notRun`, `edited`, `input`); with `edited`, the result the model
   * reads says who edited the arguments and what ran.
   */
  private async runApproved(
    approval: PendingApproval,
    effect: Extract<Effect, { kind: 'runApproved' }>,
    activation: Activation,
  ): Promise<ToolOutcome> {
    const { edited, input, node, notRun } = effect;
    const args = edited?.args ?? jsonObjectOf(approval.toolArgsJson);
    await this.clients.store.startApprovalExecution({ uuid: approval.uuid });
    const outcome: ToolOutcome =
      notRun !== undefined
        ? { text: notRun, isError: true }
        : await this.io.withCallEvents(
            approval.conversationId,
            gatedCall(approval),
            args,
            () => this.callApproved(approval, args, input),
            activation.watched,
          );
    const finished = await this.clients.store.finishApprovalExecution({
      uuid: approval.uuid,
      success: !outcome.isError,
      messages:
        outcome.remote || outcome.input
          ? []
          : [
              {
                ...toolResult(
                  gatedCall(approval),
                  args,
                  edited && notRun === undefined ? editedResultText(edited.by, edited.args, outcome.text) : outcome.text,
                  outcome.isError,
                ),
                ...(node && { node }),
              },
            ],
    });
    activation.conversation = required(finished.conversation);
    activation.approval = finished.approval ?? approval;
    return outcome;
  }

  /** The approved call itself: the peer told to go on, the server given the human's answer, or the tool called. */
  private callApproved(
    approval: PendingApproval,
    args: Record<string, unknown>,
    input: Extract<Effect, { kind: 'runApproved' }>['input'],
  ): Promise<ToolOutcome> {
    if (approval.remoteTaskId) return this.io.continueRemote(approval.toolName, approval.remoteTaskId, true);
    if (input)
      return this.io.callTool(approval.toolName, args, approval.uuid, '', {
        requestState: input.request.requestState,
        responses: input.responses,
      });
    return this.io.callTool(approval.toolName, args, approval.uuid);
  }
}

/**
 * The paused node's steps in the run of it that paused, and the approved call's result:
 * its latest `nodeMessages + 1` messages. States stored before the count existed: its
 * messages since the run's user message (a node that gates ran once per run then).
 */
export function nodeStepsOf(conversation: Conversation, node: string, nodeMessages: number | null): HistoryEntry[] {
  if (nodeMessages === null) {
    const lastUser = conversation.messages.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
    return conversation.messages.slice(lastUser + 1).filter((message) => message.node === node);
  }
  const own = conversation.messages.filter((message) => message.node === node);
  return own.slice(Math.max(0, own.length - nodeMessages - 1));
}

/**
 * The run's record is written whatever the caller's patience, outside the request's deadline
 * (bounded by the store client's own timeout), as endTurn does: a run stopped by its deadline
 * (timerFired) records what it did and its note only once the deadline has passed, and a
 * call that ends at the deadline leads to a write after it.
 */
function outsideDeadline<T>(write: () => Promise<T>): Promise<T> {
  return withContextPatch({ deadline: undefined }, write);
}

/** What the policies of the calls planned after an event know of the world: now, and the conversation with its owner. */
function callFacts(activation: Activation): CallFacts {
  return { now: Date.now(), conversation: { id: activation.conversationId, owner: activation.conversation.owner ?? '' } };
}

function required(conversation: Conversation | undefined): Conversation {
  if (!conversation) throw internal('the store returned no conversation');
  return conversation;
}

/** Whether a message of the history holds a text longer than one slice of counting: only then is it counted ahead. */
function holdsLongText(messages: readonly Message[]): boolean {
  return messages.some(
    ({ content, toolCall }) =>
      content.length > SLICE_CHARS || (toolCall?.argumentsJson?.length ?? 0) > SLICE_CHARS || (toolCall?.result?.length ?? 0) > SLICE_CHARS,
  );
}
