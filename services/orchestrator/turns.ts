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
  type TokenUsage,
} from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../common/call-hash.js';
import type { AgentConfig } from '../common/config/schema.js';
import { currentContext, withContextPatch } from '../common/context.js';
import { failedPrecondition, internal, invalidArgument, RpcError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import { newSessionId } from '../common/session-id.js';
import type { OrchestratorClients } from './clients.js';
import { compactionNotice, planCompaction, SUMMARY_INSTRUCTIONS, transcriptOf, visibleHistory, withSummary } from './domain/compaction.js';
import { contextWindowOf } from './domain/context-window.js';
import { systemPromptOf, toModelHistory, type HistoryEntry } from './domain/history.js';
import { approvalRequiredText, assistantCall, assistantText, CANCELLED_BY_USER, gatedCall, stillWaitingText, toolResult, userMessage } from './domain/messages.js';
import { DEFERRED_REASON, describeCall, planToolCalls } from './domain/plan.js';
import { tokenCounterFor, toolDefinitionTokens } from './domain/tokens.js';
import { ToolCatalogue } from './tool-catalogue.js';

/** Room kept for the model's answer when the budget is the context window. */
const ANSWER_RESERVE_TOKENS = 4096;

interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** How a run of model steps ended, with the conversation as stored at that point. */
interface StepsOutcome {
  result: TurnResult;
  conversation: Conversation;
}

/**
 * Runs turns in simple mode: the model/tool loop, the approval gate (stop) and the
 * continuation after a decision (go). Holds no state between calls: everything it knows
 * about a conversation it reads from the store, and every store call that changes a
 * conversation hands the changed conversation back, so a turn pays no extra reads.
 */
export class TurnRunner {
  /** An approved call that has not finished after this long was cut off by a crash. */
  private readonly interruptedAfterMs: number;
  private readonly catalogue: ToolCatalogue;

  constructor(
    private readonly config: AgentConfig,
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
  ) {
    this.interruptedAfterMs = Math.max(30_000, ...config.mcp_servers.map((server) => server.timeout)) + 10_000;
    this.catalogue = new ToolCatalogue(clients);
  }

  async createConversation(message: string | undefined): Promise<{ conversation: Conversation; result?: TurnResult }> {
    if (message !== undefined && message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const sessionId = currentContext()?.sessionId || newSessionId();
    return withContextPatch({ sessionId }, async () => {
      const { conversation } = await this.clients.store.createConversation({ sessionId, systemPrompt: this.config.prompt });
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

  async resolveApproval(uuid: string, approved: boolean): Promise<ResolveApprovalResponse> {
    const { approval, sessionId } = await this.clients.store.getApproval({ uuid });
    if (!approval) throw internal('the store returned no approval');
    return withContextPatch({ sessionId: currentContext()?.sessionId || sessionId }, async () => {
      const args = approval.toolArgs ?? {};
      const claim = await this.clients.store.claimApproval({
        uuid,
        approved,
        // A rejection is recorded as the call's result in the claim's own transaction.
        messages: approved ? [] : [toolResult(gatedCall(approval), args, CANCELLED_BY_USER, true)],
        clearPipelineState: !approved,
      });
      const decided = claim.approval ?? approval;
      const conversation = required(claim.conversation);
      if (!claim.claimed) {
        this.log.info('approval already decided', { approval: uuid, status: ApprovalStatus[decided.status] });
        return { decided: false, approval: decided, conversation };
      }
      this.log.info(approved ? 'approval approved' : 'approval rejected', { approval: uuid, tool: approval.toolName });
      if (!approved) return { decided: true, approval: decided, conversation, result: { response: CANCELLED_BY_USER, waitingApproval: false } };
      const finished = await this.executeApproved(approval);
      const outcome = await this.runSteps(required(finished.conversation));
      return { decided: true, approval: finished.approval ?? approval, conversation: outcome.conversation, result: outcome.result };
    });
  }

  async listTools(): Promise<Tool[]> {
    return this.catalogue.list();
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
      if (!start.started) {
        await this.settleInterruptedCalls(start.unfinishedApprovals);
        start = await this.clients.store.startTurn({ conversationId, message: userMessage(message) });
        if (!start.started) throw failedPrecondition(`conversation ${conversationId} changed while its interrupted calls were recorded; send the message again`);
      }
      const outcome = await this.runSteps(required(start.conversation));
      return { conversation: outcome.conversation, result: outcome.result };
    });
  }

  /** Runs the stored call of a won approval, at most once: executing is recorded first. */
  private async executeApproved(approval: PendingApproval) {
    const args = approval.toolArgs ?? {};
    await this.clients.store.startApprovalExecution({ uuid: approval.uuid });
    let outcome: ToolOutcome;
    if (callHash(approval.toolName, args) !== approval.argsHash) {
      outcome = { text: `${approval.toolName} was not executed: the stored call no longer matches the one that was approved.`, isError: true };
      this.log.error('approved call does not match its hash', { approval: approval.uuid });
    } else {
      outcome = await this.callTool(approval.toolName, args, approval.uuid);
    }
    return this.clients.store.finishApprovalExecution({
      uuid: approval.uuid,
      success: !outcome.isError,
      messages: [toolResult(gatedCall(approval), args, outcome.text, outcome.isError)],
    });
  }

  /**
   * The model/tool loop from the stored conversation until the model answers with text, a
   * destructive call stops the turn, or the step budget runs out.
   */
  private async runSteps(conversation: Conversation): Promise<StepsOutcome> {
    const conversationId = conversation.id;
    let catalogue: Map<string, Tool>;
    try {
      catalogue = await this.catalogue.current();
    } catch (error) {
      return this.finishWithText(conversationId, [], `The tools are unavailable right now: ${errorText(error)}`);
    }
    const toolDefinitions: ToolDefinition[] = [...catalogue.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
    const fitted = await this.fitToBudget(conversation, toolDefinitions);
    const history: HistoryEntry[] = fitted.history;
    const systemPrompt = fitted.systemPrompt;
    // Messages of finished steps not stored yet: they go with the write that ends the turn.
    let unsaved: NewMessage[] = [];

    for (let step = 0; step < this.config.chat.max_llm_iterations; step++) {
      let reply;
      try {
        reply = await this.clients.llm.generate({ model: this.config.llm.model, systemPrompt, messages: toModelHistory(history), tools: toolDefinitions });
      } catch (error) {
        this.log.warn('model call failed', { conversation: conversationId, error: errorText(error) });
        return this.finishWithText(conversationId, unsaved, `The model could not answer: ${errorText(error)}`);
      }
      const usage = reply.usage && { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
      if (reply.toolCalls.length === 0) return this.finishWithText(conversationId, unsaved, reply.text || '(the model returned an empty answer)', usage);

      const plan = planToolCalls(reply.toolCalls, catalogue);
      const recorded: NewMessage[] = [];
      if (reply.text) recorded.push(assistantText(reply.text));
      for (const planned of plan) recorded.push(assistantCall(planned.call, planned.args));
      // The step's tokens go on its first message, so the conversation's sum counts each call once.
      recorded[0] = { ...recorded[0]!, usage };
      for (const planned of plan) {
        if (planned.kind === 'reject') recorded.push(toolResult(planned.call, planned.args, planned.reason, true));
        else if (planned.kind === 'defer') recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
        else if (planned.kind === 'run') {
          const outcome = await this.callTool(planned.call.name, planned.args);
          recorded.push(toolResult(planned.call, planned.args, outcome.text, outcome.isError));
        }
      }

      const gate = plan.find((planned) => planned.kind === 'gate');
      if (gate && gate.kind === 'gate') {
        const { approval, conversation: waiting } = await this.clients.store.createApproval({
          conversationId,
          toolCallId: gate.call.id,
          toolName: gate.call.name,
          toolArgs: gate.args,
          description: describeCall(gate.call.name, gate.tool.server, gate.args),
          messages: [...unsaved, ...recorded],
        });
        if (!approval) throw internal('the store returned no approval');
        this.log.info('approval requested', { conversation: conversationId, approval: approval.uuid, tool: approval.toolName });
        return { result: { response: approvalRequiredText(approval), waitingApproval: true, approval }, conversation: required(waiting) };
      }
      // A step that ran only safe calls is written with whatever ends the turn, in one
      // transaction: it changed nothing that a crash could leave unrecorded.
      unsaved = [...unsaved, ...recorded];
      history.push(...recorded);
    }
    return this.finishWithText(
      conversationId,
      unsaved,
      `Stopped after ${this.config.chat.max_llm_iterations} model calls in one turn (chat.max_llm_iterations) without a final answer.`,
    );
  }

  /**
   * The history and system prompt the model gets, compacted first when they outgrow the
   * token budget (`chat.max_tokens`, or the model's context window less room for the answer).
   * A compaction is recorded in the conversation before the model sees its effect.
   */
  private async fitToBudget(conversation: Conversation, tools: ToolDefinition[]): Promise<{ history: HistoryEntry[]; systemPrompt: string }> {
    const model = this.config.llm.model;
    const basePrompt = systemPromptOf(conversation.messages, this.config.prompt);
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
    await this.clients.store.appendMessages({ ...appendRequest(conversation.id, [notice]), returnConversation: false });
    this.log.info('history compacted', { conversation: conversation.id, strategy: plan.strategy, from: plan.fromSeq, to: plan.toSeq, before: plan.tokensBefore, after: plan.tokensAfter });
    const marker: Message = { ...notice, id: '', seq: conversation.messageCount + 1, createdAt: undefined };
    return { history: visibleHistory([...conversation.messages, marker]).messages, systemPrompt: withSummary(basePrompt, keptSummary) };
  }

  private async finishWithText(conversationId: string, unsaved: NewMessage[], text: string, usage?: TokenUsage): Promise<StepsOutcome> {
    const response = redactSecrets(text);
    const { conversation } = await this.clients.store.appendMessages(appendRequest(conversationId, [...unsaved, { ...assistantText(response), usage }]));
    return { result: { response, waitingApproval: false }, conversation: required(conversation) };
  }

  private async callTool(name: string, args: Record<string, unknown>, approvalUuid = ''): Promise<ToolOutcome> {
    try {
      const result = await this.clients.tools.callTool({ name, arguments: args, approvalUuid });
      return { text: result.text, isError: result.isError };
    } catch (error) {
      this.log.warn('tool call failed', { tool: name, error: errorText(error) });
      return { text: `${name} failed: ${errorText(error)}`, isError: true };
    }
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

function required(conversation: Conversation | undefined): Conversation {
  if (!conversation) throw internal('the store returned no conversation');
  return conversation;
}

function appendRequest(conversationId: string, messages: NewMessage[]) {
  return { conversationId, messages, status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED, clearPipelineState: false, returnConversation: true };
}

function errorText(error: unknown): string {
  const message = error instanceof RpcError || error instanceof Error ? error.message : String(error);
  return redactSecrets(message);
}
