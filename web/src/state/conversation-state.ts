import type { ConversationJson, ConversationUpdate, MessageJson, PendingApprovalJson, ToolCallJson } from '../api-types.js';

/**
 * One open conversation as the chat shows it: the stored conversation (C), kept current by
 * its events, plus what only exists while a turn runs — text the model is still writing
 * (per agent-tree node) and the tool steps of the turn as they happen. Pure: every change is
 * a new state.
 */
export interface ChatState {
  conversation?: ConversationJson;
  /** Text being produced, by node ('' in simple mode), in order of appearance. */
  streaming: { node: string; text: string }[];
  /**
   * The tool calls of the running turn, in order: running until they finish, then kept (as
   * finished) until the turn ends or their stored result shows them, so that a step never
   * vanishes while the turn still runs.
   */
  steps: TurnStep[];
}

export interface TurnStep {
  call: ToolCallJson;
  state: 'running' | 'finished' | 'failed';
}

export const emptyChat: ChatState = { streaming: [], steps: [] };

const sameCall = (a: ToolCallJson, b: ToolCallJson) => a.name === b.name && JSON.stringify(a.arguments) === JSON.stringify(b.arguments);

function withApprovals(conversation: ConversationJson, approvals: PendingApprovalJson[]): ConversationJson {
  const { pending_approval: _first, pending_approvals: _all, ...rest } = conversation;
  return approvals.length === 0 ? rest : { ...rest, pending_approval: approvals[0], pending_approvals: approvals };
}

function pendingOf(conversation: ConversationJson): PendingApprovalJson[] {
  return conversation.pending_approvals ?? (conversation.pending_approval ? [conversation.pending_approval] : []);
}

function addMessage(state: ChatState, conversation: ConversationJson, message: MessageJson): ChatState {
  if (conversation.messages.some((known) => known.id === message.id)) return state;
  let { streaming, steps } = state;
  // The finished text replaces what was streamed for that node.
  if (message.role === 'assistant' && !message.tool_call) streaming = streaming.filter((entry) => entry.node !== (message.node ?? ''));
  // A stored result shows the call from now on: its step gives way to it.
  if (message.role === 'tool' && message.tool_call) {
    const index = steps.findIndex((step) => sameCall(step.call, message.tool_call!));
    if (index >= 0) steps = steps.filter((_, i) => i !== index);
  }
  return { conversation: { ...conversation, messages: [...conversation.messages, message] }, streaming, steps };
}

/** A stored event changed the conversation at `at`: that is when it was last updated. */
function touched(conversation: ConversationJson, at: string): ConversationJson {
  return at > conversation.updated_at ? { ...conversation, updated_at: at } : conversation;
}

/** Applies one update of `conversation.events`. Applying an event the state already shows changes nothing. */
export function applyUpdate(state: ChatState, update: ConversationUpdate): ChatState {
  if (update.kind === 'snapshot') return replaceConversation(state, update.conversation);
  if (!state.conversation || state.conversation.id !== update.conversation_id) return state;
  const conversation = update.id > 0 ? touched(state.conversation, update.at) : state.conversation;
  switch (update.kind) {
    case 'message_added':
      return addMessage(state, conversation, update.message);
    case 'status_changed':
      return { ...state, conversation: { ...conversation, status: update.status } };
    // While a turn runs the conversation refuses messages; the chat's input follows.
    case 'turn_started':
      return { ...state, conversation: { ...conversation, turn_running: true } };
    case 'turn_ended': {
      const { turn_running: _ended, ...rest } = conversation;
      // Whatever was still streaming belonged to the turn (one that failed leaves no final message to replace it).
      return { conversation: rest, streaming: [], steps: [] };
    }
    case 'approval_requested': {
      const pending = pendingOf(conversation).filter((approval) => approval.uuid !== update.approval.uuid);
      return { ...state, conversation: withApprovals(conversation, [...pending, update.approval]) };
    }
    case 'approval_escalated':
      // Still pending: the card shows it as it stands now.
      return {
        ...state,
        conversation: withApprovals(
          conversation,
          pendingOf(conversation).map((approval) => (approval.uuid === update.approval.uuid ? update.approval : approval)),
        ),
      };
    case 'approval_resolved':
      return {
        ...state,
        conversation: withApprovals(
          conversation,
          pendingOf(conversation).filter((approval) => approval.uuid !== update.approval.uuid),
        ),
      };
    case 'text_delta': {
      const node = update.node ?? '';
      const existing = state.streaming.find((entry) => entry.node === node);
      const streaming = existing
        ? state.streaming.map((entry) => (entry.node === node ? { node, text: entry.text + update.text } : entry))
        : [...state.streaming, { node, text: update.text }];
      return { ...state, streaming };
    }
    case 'tool_call_started':
      return { ...state, steps: [...state.steps, { call: update.tool_call, state: 'running' }] };
    case 'tool_call_finished': {
      const index = state.steps.findIndex((step) => step.state === 'running' && sameCall(step.call, update.tool_call));
      const finished: TurnStep = { call: update.tool_call, state: update.tool_call.is_error ? 'failed' : 'finished' };
      // A finish heard without its start (the page connected in between) is still a step of the turn.
      return {
        ...state,
        steps: index < 0 ? [...state.steps, finished] : state.steps.map((step, i) => (i === index ? finished : step)),
      };
    }
    default:
      return state;
  }
}

/**
 * The conversation as a response or snapshot has it. The newer of the two versions wins for
 * status and approvals; messages are the union, so an event that arrived before a slower
 * response is not lost. A whole conversation whose turn is over also ends whatever was
 * streaming and the steps of the turn.
 */
export function replaceConversation(state: ChatState, incoming: ConversationJson): ChatState {
  const current = state.conversation;
  if (!current || current.id !== incoming.id) return { conversation: incoming, streaming: [], steps: [] };
  const newer = incoming.updated_at >= current.updated_at ? incoming : current;
  const older = newer === incoming ? current : incoming;
  const known = new Set(newer.messages.map((message) => message.id));
  const messages = [...newer.messages, ...older.messages.filter((message) => !known.has(message.id))];
  const ended = incoming.turn_running !== true && incoming.messages.length >= current.messages.length;
  return {
    conversation: { ...newer, messages },
    streaming: ended ? [] : state.streaming,
    steps: ended ? [] : state.steps,
  };
}
