import { ChatRole, type ToolDefinition } from '../../gen/ts/asg/llm/v1/llm.js';
import type { ResolveApprovalResponse, SendMessageResponse, TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Compaction,
  type Conversation,
  type Message,
  type NewMessage,
  type PendingApproval,
  type ApprovalRejection,
  type A2aOrigin,
  type TokenUsage,
} from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../common/call-hash.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import { currentContext, withContextPatch } from '../common/context.js';
import { aborted, failedPrecondition, internal, invalidArgument } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import { newSessionId } from '../common/session-id.js';
import type { OrchestratorClients } from './clients.js';
import { compactionNotice, planCompaction, SUMMARY_INSTRUCTIONS, transcriptOf, visibleHistory, withSummary } from './domain/compaction.js';
import { contextWindowOf } from './domain/context-window.js';
import { systemPromptOf, type HistoryEntry } from './domain/history.js';
import { approvalRequiredText, assistantText, CANCELLED_BY_USER, gatedCall, NOT_RETRIED, rejectedResult, stillWaitingText, toolResult, userMessage } from './domain/messages.js';
import { tokenCounterFor, toolDefinitionTokens } from './domain/tokens.js';
import { PipelineRunner, type StepsOutcome } from './pipeline.js';
import { endTurn } from './turn-end.js';
import { catalogueWith, ToolCatalogue } from './tool-catalogue.js';
import { approvalOf, errorText, ToolLoop, toolDefinitionsOf, type GatedCall, type ToolOutcome } from './tool-loop.js';
import { A2A_SERVER, a2aPeers, a2aToolsOf } from './domain/a2a-tools.js';

/** Room kept for the model's answer when the budget is the context window. */
const ANSWER_RESERVE_TOKENS = 4096;

/**
 * Runs turns: the model/tool loop of simple mode or the agent tree (pipeline.ts), the
 * approval gate (stop) and the continuation after a decision (go). Holds no state between
 * calls: everything it knows about a conversation it reads from the store, and every store
 * call that changes a conversation hands the changed conversation back, so a turn pays no
 * extra reads.
 */
export class TurnRunner {
  /** An approved call that has not finished after this long was cut off by a crash. */
  private readonly interruptedAfterMs: number;
  private readonly catalogue: ToolCatalogue;
  private readonly loop: ToolLoop;
  /** Simple mode's prompt and model: the top-level ones, or a lone llm node's own (seed 000). */
  private readonly simple: { prompt: string; model: string };
  /** Simple mode's A2A agents as tools (the top-level `a2a`, and a lone llm node's own). */
  private readonly simpleA2aTools: Tool[];
  /** Every A2A tool of the configuration, for ListTools. */
  private readonly allA2aTools: Tool[];
  /** Orchestrated mode: present when `agent` is a tree (anything but a lone llm node). */
  private readonly pipeline: PipelineRunner | undefined;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
  ) {
    this.interruptedAfterMs = Math.max(30_000, ...config.mcp_servers.map((server) => server.timeout)) + 10_000;
    this.catalogue = new ToolCatalogue(clients);
    this.loop = new ToolLoop(config, clients, log, a2aPeers(config));
    const agent = config.agent;
    const lone = agent?.type === 'llm' ? agent : undefined;
    this.simple = { prompt: lone?.prompt ?? config.prompt, model: lone?.model ?? config.llm.model };
    this.simpleA2aTools = a2aToolsOf([...config.a2a, ...(lone?.a2a ?? [])]);
    const nodeTools: Tool[] = [];
    const visit = (node: NonNullable<OrchestratorConfig['agent']>): void => {
      nodeTools.push(...a2aToolsOf(node.a2a));
      node.agents?.forEach(visit);
    };
    if (agent) visit(agent);
    this.allA2aTools = [...new Map([...this.simpleA2aTools, ...nodeTools].map((tool) => [tool.name, tool])).values()];
    this.pipeline =
      agent && !lone
        ? new PipelineRunner(agent, config, clients, this.loop, this.catalogue, log)
        : undefined;
  }

  async createConversation(message: string | undefined, a2aOrigin?: A2aOrigin): Promise<{ conversation: Conversation; result?: TurnResult }> {
    if (message !== undefined && message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const sessionId = currentContext()?.sessionId || newSessionId();
    return withContextPatch({ sessionId }, async () => {
      // Seed 000: the top-level prompt is simple mode's; each node of a tree has its own.
      const { conversation } = await this.clients.store.createConversation({ sessionId, systemPrompt: this.pipeline ? '' : this.simple.prompt, a2aOrigin });
      if (!conversation) throw internal('the store returned no conversation');
      this.log.info('conversation created', { conversation: conversation.id });
      if (message === undefined) return { conversation };
      const { result, conversation: after } = await this.startTurn(conversation.id, message);
      return { conversation: after, result };
    });
  }

  async sendMessage(conversationId: string, message: string): Promise<SendMessageResponse> {
    return this.startTurn(conversationId, message);
  }

  async resolveApproval(uuid: string, approved: boolean, reason?: string): Promise<ResolveApprovalResponse> {
    const { approval, sessionId, pipelineState } = await this.clients.store.getApproval({ uuid });
    if (!approval) throw internal('the store returned no approval');
    return withContextPatch({ sessionId: currentContext()?.sessionId || sessionId }, async () => {
      const args = approval.toolArgs ?? {};
      // A paused pipeline resumes only where the configured tree still leads to the paused
      // node; that is checked before the claim, so a refusal leaves the approval pending.
      let node: string | undefined;
      const pending = approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING;
      if (pipelineState && pending && approved) node = this.pipelineFor(uuid).pausedNode(pipelineState, uuid).node.name;
      const nodeNames = pipelineState && pending && !approved ? (this.pipeline?.nodeNames(pipelineState, uuid) ?? new Map<string, string>()) : undefined;
      if (nodeNames) node = nodeNames.get(uuid);
      // Issue 13: the model reads "Rejected by a human: <reason>" and that the call did not run.
      const rejected: NewMessage = { ...rejectedResult(gatedCall(approval), args, reason), ...(node && { node }) };
      // Also when the configuration has no tree any more: no waiting call may be orphaned.
      const others = nodeNames && pipelineState!.pauses.length > 1 ? await this.otherPending(approval) : [];
      // Simple mode goes on after a rejection so that the model answers the "no" in the same
      // run (and a repeat of the call is refused there without asking: tool-loop.ts); a
      // rejection in an agent tree cancels the pipeline (README, "rejecting any of them").
      const continuesAfterRejection = !approved && !pipelineState;
      const claim = await this.clients.store.claimApproval({
        uuid,
        approved,
        reason,
        // A rejection is recorded as the call's result in the claim's own transaction; it
        // cancels the pipeline too, and with it the pipeline's other waiting calls.
        messages: approved ? [] : [rejected],
        clearPipelineState: !approved,
        alsoReject: others.map((other) => this.cancelledWith(approval, other, nodeNames?.get(other.uuid), reason)),
        continuesTurn: continuesAfterRejection,
      });
      const decided = claim.approval ?? approval;
      const conversation = required(claim.conversation);
      if (!claim.claimed) {
        this.log.info('approval already decided', { approval: uuid, status: ApprovalStatus[decided.status] });
        return { decided: false, approval: decided, conversation };
      }
      this.log.info(approved ? 'approval approved' : 'approval rejected', { approval: uuid, tool: approval.toolName });
      if (!approved) {
        if (!continuesAfterRejection) {
          // A rejection reaches the agent that holds the call: each proxied one is answered "rejected".
          for (const refused of [approval, ...others]) await this.forwardRejection(refused, reason);
          return { decided: true, approval: decided, conversation, result: { response: CANCELLED_BY_USER, waitingApproval: false } };
        }
        // The claim marked the conversation running (the model is told of the "no"): whatever
        // ends this continuation must clear the mark, a failure included.
        return this.endTurnOnFailure(approval.conversationId, async () => {
          for (const refused of [approval, ...others]) await this.forwardRejection(refused, reason);
          const after = await this.runSteps(conversation);
          return { decided: true, approval: decided, conversation: after.conversation, result: afterRejection(after.result) };
        });
      }
      // The approving claim marked the conversation running (store.proto, StartTurn): whatever
      // ends the continuation must clear the mark (endTurnOnFailure).
      return this.endTurnOnFailure(approval.conversationId, async () => {
        const { finished, remote } = await this.executeApproved(approval, node);
        let outcome: StepsOutcome;
        if (remote) {
          // The peer asks for another approval before it finishes: the same call waits again.
          const gate: GatedCall = { kind: 'gate', call: { ...gatedCall(approval), argumentsJson: JSON.stringify(args) }, args, tool: proxiedTool(approval.toolName), proxy: remote };
          outcome = pipelineState
            ? await this.pipelineFor(uuid).repause(required(finished.conversation), pipelineState, uuid, gate)
            : await this.stopForApproval(approval.conversationId, gate, []);
        } else {
          outcome = pipelineState
            ? await this.pipelineFor(uuid).resume(required(finished.conversation), pipelineState, uuid)
            : await this.runSteps(required(finished.conversation));
        }
        return { decided: true, approval: finished.approval ?? approval, conversation: outcome.conversation, result: outcome.result };
      });
    });
  }

  /** The other waiting calls of the approval's conversation (a rejection cancels them with the pipeline). */
  private async otherPending(rejected: PendingApproval): Promise<PendingApproval[]> {
    const { conversation } = await this.clients.store.getConversation({ id: rejected.conversationId, includeMessages: false });
    return required(conversation).pendingApprovals.filter((other) => other.uuid !== rejected.uuid);
  }

  /** A waiting call cancelled with a rejected one, recorded as rejected with a result that names the rejection and its reason. */
  private cancelledWith(rejected: PendingApproval, other: PendingApproval, node: string | undefined, reason: string | undefined): ApprovalRejection {
    const said = reason?.trim() ? `: ${reason.trim()}` : '';
    const text = `Cancelled: the pipeline was cancelled when approval ${rejected.uuid} (${rejected.toolName}) was rejected by a human${said}; ${other.toolName} was not run. ${NOT_RETRIED}`;
    return { uuid: other.uuid, messages: [{ ...rejectedResult(gatedCall(other), other.toolArgs ?? {}, reason, text), ...(node && { node }) }] };
  }

  /** Tells the peer that holds a proxied call that it was rejected here; a failure to do so is logged, not fatal. */
  private async forwardRejection(approval: PendingApproval, reason: string | undefined): Promise<void> {
    if (!approval.remoteTaskId) return;
    const outcome = await this.loop.continueRemote(approval.toolName, approval.remoteTaskId, false, reason);
    if (outcome.isError && !outcome.remote) this.log.warn('rejection not confirmed by the sub-agent', { approval: approval.uuid, agent: approval.remoteAgentName, answer: outcome.text });
  }

  async listTools(): Promise<Tool[]> {
    return [...catalogueWith(await this.catalogue.current(), this.allA2aTools).values()];
  }

  /** The pipeline runner, or FAILED_PRECONDITION when the configuration has no tree any more. */
  private pipelineFor(uuid: string): PipelineRunner {
    if (this.pipeline) return this.pipeline;
    throw failedPrecondition(
      `approval ${uuid} cannot resume its pipeline: the configuration has no agent tree any more. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`,
    );
  }

  /** Appends the user's message (unless the conversation waits) and runs the loop. */
  private async startTurn(conversationId: string, message: string): Promise<{ conversation: Conversation; result: TurnResult }> {
    if (message.trim() === '') throw invalidArgument('message must be a non-empty string');
    let start = await this.clients.store.startTurn({ conversationId, message: userMessage(message) });
    return withContextPatch({ sessionId: currentContext()?.sessionId || required(start.conversation).sessionId }, async () => {
      const waiting = required(start.conversation);
      if (!start.started && waiting.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL && waiting.pendingApproval) {
        const approval = waiting.pendingApproval;
        return { conversation: waiting, result: { response: stillWaitingText(approval), waitingApproval: true, approval } };
      }
      if (start.busy) throw busy(conversationId);
      if (!start.started) {
        await this.settleInterruptedCalls(start.unfinishedApprovals);
        start = await this.clients.store.startTurn({ conversationId, message: userMessage(message) });
        if (start.busy) throw busy(conversationId);
        if (!start.started) throw failedPrecondition(`conversation ${conversationId} changed while its interrupted calls were recorded; send the message again`);
      }
      const started = required(start.conversation);
      const outcome = await this.endTurnOnFailure(conversationId, () => (this.pipeline ? this.pipeline.run(started, message) : this.runSteps(started)));
      return { conversation: outcome.conversation, result: outcome.result };
    });
  }

  /**
   * Runs a turn (or an approval's continuation) that the store marked running. Its normal
   * ends clear the mark with their last write; a turn that fails instead (a store write
   * refused or past the turn's deadline, a bug) would leave the conversation busy (issue 13),
   * so the failure clears it here before it is reported.
   */
  private async endTurnOnFailure<T>(conversationId: string, turn: () => Promise<T>): Promise<T> {
    try {
      return await turn();
    } catch (error) {
      await endTurn(this.clients, this.log, conversationId, error);
      throw error;
    }
  }

  /**
   * Runs the stored call of a won approval, at most once: executing is recorded first. A
   * proxy approval's "call" is the answer to the peer that holds the call. When the peer
   * (or a delegation approved here) then waits for another approval, no result is recorded
   * yet: the call waits again (`remote`).
   */
  private async executeApproved(approval: PendingApproval, node: string | undefined) {
    const args = approval.toolArgs ?? {};
    await this.clients.store.startApprovalExecution({ uuid: approval.uuid });
    let outcome: ToolOutcome;
    if (callHash(approval.toolName, args) !== approval.argsHash) {
      outcome = { text: `${approval.toolName} was not executed: the stored call no longer matches the one that was approved.`, isError: true };
      this.log.error('approved call does not match its hash', { approval: approval.uuid });
    } else {
      const remoteTaskId = approval.remoteTaskId;
      outcome = await this.loop.withCallEvents(approval.conversationId, gatedCall(approval), args, () =>
        remoteTaskId ? this.loop.continueRemote(approval.toolName, remoteTaskId, true) : this.loop.callTool(approval.toolName, args, approval.uuid),
      );
    }
    const finished = await this.clients.store.finishApprovalExecution({
      uuid: approval.uuid,
      success: !outcome.isError,
      messages: outcome.remote ? [] : [{ ...toolResult(gatedCall(approval), args, outcome.text, outcome.isError), ...(node && { node }) }],
    });
    return { finished, remote: outcome.remote };
  }

  /**
   * The model/tool loop from the stored conversation until the model answers with text, a
   * destructive call stops the turn, or the step budget runs out.
   */
  private async runSteps(conversation: Conversation): Promise<StepsOutcome> {
    const conversationId = conversation.id;
    let catalogue: ReadonlyMap<string, Tool>;
    try {
      catalogue = catalogueWith(await this.catalogue.current(), this.simpleA2aTools);
    } catch (error) {
      return this.finish(conversationId, [assistantText(`The tools are unavailable right now: ${errorText(error)}`)]);
    }
    const fitted = await this.fitToBudget(conversation, toolDefinitionsOf(catalogue));
    const outcome = await this.loop.run({
      conversationId,
      model: this.simple.model,
      systemPrompt: fitted.systemPrompt,
      history: fitted.history,
      catalogue,
      gateDestructive: true,
      canExitLoop: false,
      live: conversation.watched,
    });
    if (outcome.kind === 'gate') return this.stopForApproval(conversationId, outcome.gate, outcome.messages);
    return this.finish(conversationId, outcome.messages, outcome.text);
  }

  /**
   * Stops a turn of simple mode before a destructive call: one CreateApproval transaction
   * writes the steps so far and the approval (stored arguments and their hash).
   */
  async stopForApproval(conversationId: string, gate: GatedCall, messages: NewMessage[]): Promise<StepsOutcome> {
    const { uuid: _chosenByStore, ...fields } = approvalOf(gate, '');
    const { approval, conversation: waiting } = await this.clients.store.createApproval({ conversationId, ...fields, messages });
    if (!approval) throw internal('the store returned no approval');
    this.log.info('approval requested', { conversation: conversationId, approval: approval.uuid, tool: approval.toolName });
    return { result: { response: approvalRequiredText(approval), waitingApproval: true, approval }, conversation: required(waiting) };
  }

  /**
   * The history and system prompt the model gets, compacted first when they outgrow the
   * token budget (`chat.max_tokens`, or the model's context window less room for the answer).
   * A compaction is recorded in the conversation before the model sees its effect.
   */
  private async fitToBudget(conversation: Conversation, tools: ToolDefinition[]): Promise<{ history: HistoryEntry[]; systemPrompt: string }> {
    const model = this.simple.model;
    const basePrompt = systemPromptOf(conversation.messages, this.simple.prompt);
    const count = tokenCounterFor(model);
    const window = this.config.chat.max_tokens || contextWindowOf(model);
    const budget = window - Math.min(ANSWER_RESERVE_TOKENS, Math.floor(window / 4));
    const { messages: visible, latest } = visibleHistory(conversation.messages);
    const plan = planCompaction({
      messages: conversation.messages,
      strategy: this.config.chat.compaction_strategy,
      budget,
      fixedTokens: count(withSummary(basePrompt, latest?.summary)) + toolDefinitionTokens(tools, count),
      count,
    });
    if (!plan) return { history: visible, systemPrompt: withSummary(basePrompt, latest?.summary) };

    let summary: string | undefined;
    let usage: TokenUsage | undefined;
    if (plan.strategy === 'partial-summary') {
      try {
        const reply = await this.clients.llm.generate({
          model,
          systemPrompt: SUMMARY_INSTRUCTIONS,
          messages: [{ role: ChatRole.CHAT_ROLE_USER, text: transcriptOf(plan.newlyHidden, latest?.summary), toolCalls: [], toolResults: [] }],
          tools: [],
        });
        summary = reply.text.trim() || undefined;
        usage = reply.usage && { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
      } catch (error) {
        this.log.warn('summary for compaction failed; compacting without one', { conversation: conversation.id, error: errorText(error) });
      }
    }
    // Without a new summary, the earlier one still covers what it covered.
    const keptSummary = summary ?? (plan.strategy === 'partial-summary' ? latest?.summary || undefined : undefined);
    const compaction: Compaction = { strategy: plan.strategy, fromSeq: plan.fromSeq, toSeq: plan.toSeq, summary: keptSummary ?? '', tokensBefore: plan.tokensBefore, tokensAfter: plan.tokensAfter };
    const notice: NewMessage = { role: MessageRole.MESSAGE_ROLE_SYSTEM, content: compactionNotice(plan, budget, summary), compaction, usage };
    await this.clients.store.appendMessages({ ...appendRequest(conversation.id, [notice]), returnConversation: false, endsTurn: false });
    this.log.info('history compacted', { conversation: conversation.id, strategy: plan.strategy, from: plan.fromSeq, to: plan.toSeq, before: plan.tokensBefore, after: plan.tokensAfter });
    const marker: Message = { ...notice, id: '', seq: conversation.messageCount + 1, createdAt: undefined };
    return { history: visibleHistory([...conversation.messages, marker]).messages, systemPrompt: withSummary(basePrompt, keptSummary) };
  }

  /** Ends a turn: its messages (the last one says `response`) written in one transaction. */
  private async finish(conversationId: string, messages: NewMessage[], response = messages.at(-1)?.content ?? ''): Promise<StepsOutcome> {
    const { conversation } = await this.clients.store.appendMessages(appendRequest(conversationId, messages));
    return { result: { response: redactSecrets(response), waitingApproval: false }, conversation: required(conversation) };
  }

  /**
   * Approved calls whose outcome was never recorded were cut off by a crash. Each is
   * recorded as interrupted (never re-run, DESIGN rule 3) so the history is whole again. A
   * call that is younger than its deadline may still be running elsewhere: the turn waits.
   */
  private async settleInterruptedCalls(approvals: readonly PendingApproval[]): Promise<void> {
    for (const approval of approvals) {
      const text = `${approval.toolName} was approved but the service stopped before its result was recorded; it was not run again. Check its effect before retrying.`;
      const { marked } = await this.clients.store.markApprovalInterrupted({
        uuid: approval.uuid,
        minAgeMs: this.interruptedAfterMs,
        messages: [toolResult(gatedCall(approval), approval.toolArgs ?? {}, text, true)],
      });
      if (!marked) throw failedPrecondition(`the approved call ${approval.toolName} (approval ${approval.uuid}) is still running; send the message again when it has finished`);
      this.log.warn('approved call marked interrupted', { approval: approval.uuid, tool: approval.toolName });
    }
  }
}

/**
 * The answer of a simple-mode turn that went on after a rejection: it still says first that
 * the operation was cancelled (seed 003 TS-007), then what the model answered. A turn that
 * stopped again for another approval answers as any stop does.
 */
function afterRejection(result: TurnResult): TurnResult {
  if (result.waitingApproval) return result;
  return { ...result, response: result.response ? `${CANCELLED_BY_USER}\n\n${result.response}` : CANCELLED_BY_USER };
}

/** The catalogue entry an approval's tool stands for when only its name is known (a proxied delegation). */
function proxiedTool(name: string): Tool {
  return { name, description: '', inputSchema: {}, destructive: true, server: A2A_SERVER };
}

/** ABORTED: one active run per conversation (issue 13); the gateway answers it as busy (REST 409). */
function busy(conversationId: string) {
  return aborted(`conversation ${conversationId} is busy: a turn is running on it; send the message again when it has ended`);
}

function required(conversation: Conversation | undefined): Conversation {
  if (!conversation) throw internal('the store returned no conversation');
  return conversation;
}

/** The write that ends a turn (its running mark is cleared with it: store.proto, StartTurn). */
function appendRequest(conversationId: string, messages: NewMessage[]) {
  return { conversationId, messages, status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED, clearPipelineState: false, returnConversation: true, endsTurn: true };
}


