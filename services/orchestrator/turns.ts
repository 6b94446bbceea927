import type { ToolDefinition } from '../../gen/ts/asg/llm/v1/llm.js';
import type { ResolveApprovalResponse, SendMessageResponse, TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStatus, type Conversation, type NewMessage, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../common/call-hash.js';
import type { AgentConfig } from '../common/config/schema.js';
import { currentContext, withContextPatch } from '../common/context.js';
import { failedPrecondition, internal, invalidArgument, RpcError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import { newSessionId } from '../common/session-id.js';
import type { OrchestratorClients } from './clients.js';
import { systemPromptOf, toModelHistory, unansweredCallIds, type HistoryEntry } from './domain/history.js';
import { approvalRequiredText, assistantCall, assistantText, CANCELLED_BY_USER, gatedCall, stillWaitingText, toolResult, userMessage } from './domain/messages.js';
import { DEFERRED_REASON, describeCall, planToolCalls } from './domain/plan.js';

interface ToolOutcome {
  text: string;
  isError: boolean;
}

/**
 * Runs turns in simple mode: the model/tool loop, the approval gate (stop) and the
 * continuation after a decision (go). Holds no state between calls: everything it knows
 * about a conversation it reads from the store at the start of each call.
 */
export class TurnRunner {
  /** An approved call that has not finished after this long was cut off by a crash. */
  private readonly interruptedAfterMs: number;

  constructor(
    private readonly config: AgentConfig,
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
  ) {
    this.interruptedAfterMs = Math.max(30_000, ...config.mcp_servers.map((server) => server.timeout)) + 10_000;
  }

  async createConversation(message: string | undefined): Promise<{ conversation: Conversation; result?: TurnResult }> {
    if (message !== undefined && message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const sessionId = currentContext()?.sessionId || newSessionId();
    return withContextPatch({ sessionId }, async () => {
      const { conversation } = await this.clients.store.createConversation({ sessionId, systemPrompt: this.config.prompt });
      if (!conversation) throw internal('the store returned no conversation');
      this.log.info('conversation created', { conversation: conversation.id });
      if (message === undefined) return { conversation };
      await this.clients.store.appendMessages(appendRequest(conversation.id, [userMessage(message)]));
      const result = await this.runSteps(conversation.id, [...conversation.messages, userMessage(message)]);
      return { conversation: await this.fetch(conversation.id), result };
    });
  }

  async sendMessage(conversationId: string, message: string): Promise<SendMessageResponse> {
    if (message.trim() === '') throw invalidArgument('message must be a non-empty string');
    let conversation = await this.fetch(conversationId);
    return withContextPatch({ sessionId: currentContext()?.sessionId || conversation.sessionId }, async () => {
      if (conversation.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL && conversation.pendingApproval) {
        const approval = conversation.pendingApproval;
        return { conversation, result: { response: stillWaitingText(approval), waitingApproval: true, approval } };
      }
      if (await this.settleInterruptedCalls(conversation)) conversation = await this.fetch(conversationId);
      await this.clients.store.appendMessages(appendRequest(conversationId, [userMessage(message)]));
      const result = await this.runSteps(conversationId, [...conversation.messages, userMessage(message)]);
      return { conversation: await this.fetch(conversationId), result };
    });
  }

  async resolveApproval(uuid: string, approved: boolean): Promise<ResolveApprovalResponse> {
    const { approval } = await this.clients.store.getApproval({ uuid });
    if (!approval) throw internal('the store returned no approval');
    const head = await this.fetch(approval.conversationId, false);
    return withContextPatch({ sessionId: currentContext()?.sessionId || head.sessionId }, async () => {
      const call = gatedCall(approval);
      const args = approval.toolArgs ?? {};
      const claim = await this.clients.store.claimApproval({
        uuid,
        approved,
        // A rejection is recorded as the call's result in the claim's own transaction.
        messages: approved ? [] : [toolResult(call, args, CANCELLED_BY_USER, true)],
        clearPipelineState: !approved,
      });
      const decided = claim.approval ?? approval;
      if (!claim.claimed) {
        this.log.info('approval already decided', { approval: uuid, status: ApprovalStatus[decided.status] });
        return { decided: false, approval: decided, conversation: await this.fetch(approval.conversationId) };
      }
      this.log.info(approved ? 'approval approved' : 'approval rejected', { approval: uuid, tool: approval.toolName });
      if (!approved) {
        return {
          decided: true,
          approval: decided,
          conversation: await this.fetch(approval.conversationId),
          result: { response: CANCELLED_BY_USER, waitingApproval: false },
        };
      }
      const finished = await this.executeApproved(approval);
      const conversation = await this.fetch(approval.conversationId);
      const result = await this.runSteps(conversation.id, conversation.messages);
      return { decided: true, approval: finished, conversation: await this.fetch(conversation.id), result };
    });
  }

  async listTools(): Promise<Tool[]> {
    return (await this.clients.tools.listTools({})).tools;
  }

  /** Runs the stored call of a won approval, at most once: executing is recorded first. */
  private async executeApproved(approval: PendingApproval): Promise<PendingApproval> {
    const call = gatedCall(approval);
    const args = approval.toolArgs ?? {};
    await this.clients.store.startApprovalExecution({ uuid: approval.uuid });
    let outcome: ToolOutcome;
    if (callHash(approval.toolName, args) !== approval.argsHash) {
      outcome = { text: `${approval.toolName} was not executed: the stored call no longer matches the one that was approved.`, isError: true };
      this.log.error('approved call does not match its hash', { approval: approval.uuid });
    } else {
      outcome = await this.callTool(approval.toolName, args);
    }
    const { approval: finished } = await this.clients.store.finishApprovalExecution({
      uuid: approval.uuid,
      success: !outcome.isError,
      messages: [toolResult(call, args, outcome.text, outcome.isError)],
    });
    return finished ?? approval;
  }

  /**
   * The model/tool loop from the given history until the model answers with text, a
   * destructive call stops the turn, or the step budget runs out.
   */
  private async runSteps(conversationId: string, stored: readonly HistoryEntry[]): Promise<TurnResult> {
    const history: HistoryEntry[] = [...stored];
    const systemPrompt = systemPromptOf(history, this.config.prompt);
    let catalogue: Map<string, Tool>;
    try {
      catalogue = new Map((await this.listTools()).map((tool) => [tool.name, tool]));
    } catch (error) {
      return this.finishWithText(conversationId, `The tools are unavailable right now: ${errorText(error)}`);
    }
    const toolDefinitions: ToolDefinition[] = [...catalogue.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));

    for (let step = 0; step < this.config.chat.max_llm_iterations; step++) {
      let reply;
      try {
        reply = await this.clients.llm.generate({ model: this.config.llm.model, systemPrompt, messages: toModelHistory(history), tools: toolDefinitions });
      } catch (error) {
        this.log.warn('model call failed', { conversation: conversationId, error: errorText(error) });
        return this.finishWithText(conversationId, `The model could not answer: ${errorText(error)}`);
      }
      if (reply.toolCalls.length === 0) return this.finishWithText(conversationId, reply.text || '(the model returned an empty answer)');

      const plan = planToolCalls(reply.toolCalls, catalogue);
      const recorded: NewMessage[] = [];
      if (reply.text) recorded.push(assistantText(reply.text));
      for (const planned of plan) recorded.push(assistantCall(planned.call, planned.args));
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
        const { approval } = await this.clients.store.createApproval({
          conversationId,
          toolCallId: gate.call.id,
          toolName: gate.call.name,
          toolArgs: gate.args,
          description: describeCall(gate.call.name, gate.tool.server, gate.args),
          messages: recorded,
        });
        if (!approval) throw internal('the store returned no approval');
        this.log.info('approval requested', { conversation: conversationId, approval: approval.uuid, tool: approval.toolName });
        return { response: approvalRequiredText(approval), waitingApproval: true, approval };
      }
      await this.clients.store.appendMessages(appendRequest(conversationId, recorded));
      history.push(...recorded);
    }
    return this.finishWithText(
      conversationId,
      `Stopped after ${this.config.chat.max_llm_iterations} model calls in one turn (chat.max_llm_iterations) without a final answer.`,
    );
  }

  private async finishWithText(conversationId: string, text: string): Promise<TurnResult> {
    const response = redactSecrets(text);
    await this.clients.store.appendMessages(appendRequest(conversationId, [assistantText(response)]));
    return { response, waitingApproval: false };
  }

  private async callTool(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    try {
      const result = await this.clients.tools.callTool({ name, arguments: args });
      return { text: result.text, isError: result.isError };
    } catch (error) {
      this.log.warn('tool call failed', { tool: name, error: errorText(error) });
      return { text: `${name} failed: ${errorText(error)}`, isError: true };
    }
  }

  /**
   * An approved call whose result never arrived was cut off by a crash. It is recorded as
   * interrupted (never re-run, DESIGN rule 3) so the history is whole again. Returns true
   * when something was recorded.
   */
  private async settleInterruptedCalls(conversation: Conversation): Promise<boolean> {
    const open = new Set(unansweredCallIds(conversation.messages));
    if (open.size === 0) return false;
    const { approvals } = await this.clients.store.listUnfinishedApprovals({ conversationId: conversation.id });
    let recorded = false;
    for (const approval of approvals) {
      if (!open.has(approval.toolCallId)) continue;
      const text = `${approval.toolName} was approved but the service stopped before its result was recorded; it was not run again. Check its effect before retrying.`;
      const { marked } = await this.clients.store.markApprovalInterrupted({
        uuid: approval.uuid,
        minAgeMs: this.interruptedAfterMs,
        messages: [toolResult(gatedCall(approval), approval.toolArgs ?? {}, text, true)],
      });
      if (!marked) throw failedPrecondition(`the approved call ${approval.toolName} (approval ${approval.uuid}) is still running; send the message again when it has finished`);
      this.log.warn('approved call marked interrupted', { approval: approval.uuid, tool: approval.toolName });
      recorded = true;
    }
    return recorded;
  }

  private async fetch(id: string, includeMessages = true): Promise<Conversation> {
    const { conversation } = await this.clients.store.getConversation({ id, includeMessages });
    if (!conversation) throw internal('the store returned no conversation');
    return conversation;
  }
}

function appendRequest(conversationId: string, messages: NewMessage[]) {
  return { conversationId, messages, status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED, clearPipelineState: false };
}

function errorText(error: unknown): string {
  const message = error instanceof RpcError || error instanceof Error ? error.message : String(error);
  return redactSecrets(message);
}

