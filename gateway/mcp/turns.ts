import { ConversationStatus, MessageRole, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { currentContext, withContextPatch } from '../../services/common/context.js';
import { newSessionId } from '../../services/common/session-id.js';
import type { Agent } from '../app/agent.js';
import { currentDecider } from '../app/decider.js';
import { decisionFromWord, voteRecordedText, type Decision } from '../app/decision.js';
import type { AskArguments } from './tool-definition.js';

/**
 * The steps one MCP tool call takes over the application layer, in no protocol era: start or
 * continue a turn, decide an approval, look at a conversation again. Each step ends either
 * answered or waiting for an approval; the call's driver decides what to do with a wait (ask
 * the client, or hand the approval back). Mirrors the A2A server's task operations: a
 * conversation that waits takes "yes"/"no" as its answer, never as a new message.
 */

interface StepBase {
  conversationId: string;
  /** The conversation's stored session id, reused for every later request of it. */
  sessionId: string;
  /** What the agent said in this step; may be empty. */
  response: string;
  /** Something the caller should know beyond the response (e.g. someone else decided first). */
  note?: string;
}

export type TurnStep = (StepBase & { kind: 'answered' }) | (StepBase & { kind: 'waiting'; approval: PendingApproval });

export type TurnAgent = Pick<Agent, 'createConversation' | 'getConversation' | 'sendMessage' | 'resolveApproval'>;

/** The approvals a conversation waits for, oldest first; the first is the one an answer decides. */
function pendingApprovals(conversation: Conversation): PendingApproval[] {
  if (conversation.status !== ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL) return [];
  if (conversation.pendingApprovals.length > 0) return conversation.pendingApprovals;
  return conversation.pendingApproval ? [conversation.pendingApproval] : [];
}

function lastAssistantText(conversation: Conversation): string {
  for (let i = conversation.messages.length - 1; i >= 0; i -= 1) {
    const message = conversation.messages[i]!;
    if (message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && !message.toolCall && message.content !== '') return message.content;
  }
  return '';
}

function withNote<T extends TurnStep>(step: T, note: string | undefined): T {
  return note ? { ...step, note } : step;
}

/** A conversation as it stands, e.g. after someone else decided its approval. */
function stepOfConversation(conversation: Conversation, note?: string, response = lastAssistantText(conversation)): TurnStep {
  const base = { conversationId: conversation.id, sessionId: conversation.sessionId, response };
  const [first] = pendingApprovals(conversation);
  return withNote(first ? { ...base, kind: 'waiting', approval: first } : { ...base, kind: 'answered' }, note);
}

/** Where a turn that just ran left the conversation. */
function stepAfterTurn(conversation: Conversation, result: TurnResult): TurnStep {
  if (result.waitingApproval && result.approval) {
    return {
      kind: 'waiting',
      conversationId: conversation.id,
      sessionId: conversation.sessionId,
      response: result.response,
      approval: result.approval,
    };
  }
  return stepOfConversation(conversation, undefined, result.response);
}

function unclearAnswerNote(conversationId: string): string {
  return `Conversation ${conversationId} waits for an approval, so the message was not sent to the agent; answer "yes" or "no" (also approve/reject, ok/cancel).`;
}

export class McpTurns {
  constructor(private readonly agent: TurnAgent) {}

  /** A new conversation with the message, or the message sent to an existing one. */
  async begin(args: AskArguments): Promise<TurnStep> {
    if (args.conversationId === undefined) {
      // A new conversation's session id is made here, at the entry point, unless the caller sent one.
      const sessionId = currentContext()?.sessionId || newSessionId();
      const { conversation, result } = await withContextPatch({ sessionId }, () => this.agent.createConversation(args.message));
      return result ? stepAfterTurn(conversation, result) : stepOfConversation(conversation);
    }
    const conversation = await this.agent.getConversation(args.conversationId);
    const [waitingFor] = pendingApprovals(conversation);
    if (waitingFor) {
      const decision = decisionFromWord(args.message);
      if (decision) return this.decide(waitingFor.uuid, decision);
      return stepOfConversation(conversation, unclearAnswerNote(conversation.id));
    }
    const turn = await this.agent.sendMessage(conversation.id, args.message);
    return stepAfterTurn(turn.conversation, turn.result);
  }

  /** Decides an approval and goes on; when someone decided it first, says so and runs nothing (an approval is decided once). */
  async decide(uuid: string, decision: Decision): Promise<TurnStep> {
    const outcome = await this.agent.resolveApproval(uuid, decision, { decider: currentDecider('mcp') });
    if (outcome.decided) return stepAfterTurn(outcome.conversation, outcome.result);
    const conversation = await this.agent.getConversation(outcome.approval.conversationId);
    if (outcome.voteRecorded) return stepOfConversation(conversation, voteRecordedText(uuid, outcome.votes, outcome.required));
    const when = outcome.decidedAt ? ` at ${outcome.decidedAt.toISOString()}` : '';
    return stepOfConversation(conversation, `Approval ${uuid} had already been ${outcome.decision}${when}; nothing was run this time.`);
  }

  /** The conversation as it stands now. */
  async current(conversationId: string): Promise<TurnStep> {
    return stepOfConversation(await this.agent.getConversation(conversationId));
  }
}
