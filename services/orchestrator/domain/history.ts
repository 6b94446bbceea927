import { ChatRole, type ChatMessage, type ToolCallPart, type ToolResultPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import { MessageRole, type Message } from '../../../gen/ts/asg/store/v1/store.js';

/** The parts of a stored message the model history needs (stored and not-yet-stored ones alike). */
export type HistoryEntry = Pick<Message, 'role' | 'content' | 'toolCall'>;

/** Stored when a call has no recorded result, so providers never see an orphaned call. */
export const MISSING_RESULT = 'No result was recorded for this call; it was not completed.';

/**
 * The conversation as the model sees it. Consecutive assistant messages form one model
 * turn (text plus its tool calls); consecutive tool messages form one tool-result turn.
 * Providers reject a call without its result and a result without its call (Gemini wants
 * as many function responses as calls), so the pairing is repaired here rather than
 * trusted: results of unknown calls are dropped, calls without results get an error result.
 */
export function toModelHistory(messages: readonly HistoryEntry[]): ChatMessage[] {
  const history: ChatMessage[] = [];
  let openCalls = new Map<string, ToolCallPart>();

  const closeOpenCalls = (): void => {
    if (openCalls.size === 0) return;
    const last = history[history.length - 1];
    const results: ToolResultPart[] = [...openCalls.values()].map((call) => ({
      id: call.id,
      name: call.name,
      output: MISSING_RESULT,
      isError: true,
    }));
    if (last?.role === ChatRole.CHAT_ROLE_TOOL) last.toolResults.push(...results);
    else history.push({ role: ChatRole.CHAT_ROLE_TOOL, text: '', toolCalls: [], toolResults: results });
    openCalls = new Map();
  };

  for (const message of messages) {
    const last = history[history.length - 1];
    switch (message.role) {
      case MessageRole.MESSAGE_ROLE_USER:
        closeOpenCalls();
        history.push({ role: ChatRole.CHAT_ROLE_USER, text: message.content, toolCalls: [], toolResults: [] });
        break;
      case MessageRole.MESSAGE_ROLE_ASSISTANT: {
        const call = message.toolCall;
        if (!call) {
          closeOpenCalls();
          history.push({ role: ChatRole.CHAT_ROLE_ASSISTANT, text: message.content, toolCalls: [], toolResults: [] });
          break;
        }
        const part: ToolCallPart = {
          id: call.id,
          name: call.name,
          argumentsJson: call.argumentsJson || '{}',
          providerMetadataJson: call.providerMetadataJson,
        };
        // A call joins the preceding assistant turn unless that turn's calls were already answered.
        if (last?.role === ChatRole.CHAT_ROLE_ASSISTANT) {
          last.toolCalls.push(part);
        } else {
          closeOpenCalls();
          history.push({ role: ChatRole.CHAT_ROLE_ASSISTANT, text: '', toolCalls: [part], toolResults: [] });
        }
        openCalls.set(call.id, part);
        break;
      }
      case MessageRole.MESSAGE_ROLE_TOOL: {
        const call = message.toolCall;
        if (!call || !openCalls.has(call.id)) break;
        openCalls.delete(call.id);
        const result: ToolResultPart = {
          id: call.id,
          name: call.name,
          output: call.result ?? message.content,
          isError: call.isError ?? false,
        };
        if (last?.role === ChatRole.CHAT_ROLE_TOOL) last.toolResults.push(result);
        else history.push({ role: ChatRole.CHAT_ROLE_TOOL, text: '', toolCalls: [], toolResults: [result] });
        break;
      }
      default:
        // System messages travel as the system prompt, not in the history.
        break;
    }
  }
  closeOpenCalls();
  return history;
}

/** The system prompt a conversation was created with, so later config edits don't rewrite old conversations. */
export function systemPromptOf(messages: readonly HistoryEntry[], fallback: string): string {
  const first = messages[0];
  return first?.role === MessageRole.MESSAGE_ROLE_SYSTEM ? first.content : fallback;
}

/** Ids of assistant tool calls that have no tool message yet. */
export function unansweredCallIds(messages: readonly HistoryEntry[]): string[] {
  const open = new Set<string>();
  for (const message of messages) {
    if (!message.toolCall) continue;
    if (message.role === MessageRole.MESSAGE_ROLE_ASSISTANT) open.add(message.toolCall.id);
    else if (message.role === MessageRole.MESSAGE_ROLE_TOOL) open.delete(message.toolCall.id);
  }
  return [...open];
}
