import type { A2aOrigin, Conversation, ConversationEvent, ConversationSummary } from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Agent, ApprovalOutcome, PageRequest, Turn } from '../app/agent.js';
import type { EventFeed } from '../app/event-feed.js';
import { currentDecider } from '../app/decider.js';
import type { Decision } from '../app/decision.js';

/**
 * What the A2A server needs of the rest of the mesh: the application layer's operations, a
 * conversation created with its A2A origin (the dialect and context id its task is answered
 * with) among them. They pass the ownership guard as every face's do (app/ownership.ts).
 */
export interface TaskBackend {
  createConversation(message: string | undefined, origin: A2aOrigin): Promise<{ conversation: Conversation; result?: TurnResult }>;
  getConversation(id: string): Promise<Conversation>;
  sendMessage(conversationId: string, message: string): Promise<Turn>;
  /** `input`: approving an MCP server's question, the answer. */
  resolveApproval(uuid: string, decision: Decision, reason?: string, input?: Record<string, unknown>): Promise<ApprovalOutcome>;
  /** Whether a pending approval is an MCP server's question (an approval of kind `input`). */
  asksForInput(uuid: string): Promise<boolean>;
  listTools(): Promise<Tool[]>;
  /** A page of the caller's conversations (summaries, newest first), as the ownership guard lists them. */
  listConversations(page: PageRequest): Promise<{ conversations: Conversation[]; summary?: ConversationSummary; nextCursor?: string }>;
  /** The conversation's live events (after its access was checked by a read): a turn beginning and ending, until `signal` aborts. */
  watch(conversationId: string, signal: AbortSignal): AsyncIterable<ConversationEvent>;
}

export function taskBackend(agent: Agent, feed: Pick<EventFeed, 'watch'>): TaskBackend {
  return {
    async createConversation(message, origin) {
      const { conversation, result } = await agent.createConversation(message, { a2aOrigin: origin });
      return { conversation, result };
    },
    getConversation: (id) => agent.getConversation(id),
    sendMessage: (conversationId, message) => agent.sendMessage(conversationId, message),
    resolveApproval: (uuid, decision, reason, input) =>
      agent.resolveApproval(uuid, decision, { decider: currentDecider('a2a'), reason, ...(input && { input }) }),
    asksForInput: async (uuid) => (await agent.getApproval(uuid)).input !== undefined,
    listTools: () => agent.listTools(),
    async listConversations(page) {
      const { conversations, summary, nextCursor } = await agent.listConversations(page);
      return { conversations, ...(summary && { summary }), ...(nextCursor && { nextCursor }) };
    },
    watch: (conversationId, signal) => feed.watch({ conversationId, afterId: 0, signal }),
  };
}
