import type { CallToolResult } from '@modelcontextprotocol/server';
import { redactSecrets } from '../../services/common/secrets.js';
import { approvalRequiredLine } from './approval-question.js';
import { CONVERSATION_ID_ARGUMENT, type AskOutput, type AskToolConfig } from './tool-definition.js';
import type { TurnStep } from './turns.js';
import { jsonObjectOf } from '../../services/common/json-value.js';

/**
 * The results of the tool: the agent's answer, or the approval it waits for, as text content
 * for people and models, and as structuredContent (askOutputSchema) for programs. Pure.
 */

/** What an answered step says when the agent said nothing (e.g. a rejection that ran nothing). */
const NOTHING_SAID = 'The agent had nothing to add.';

function withNote(text: string, note: string | undefined): string {
  return note ? `${text}\n\n${note}` : text;
}

export function answerResult(step: Extract<TurnStep, { kind: 'answered' }>): CallToolResult {
  const structured: AskOutput = { conversation_id: step.conversationId, response: step.response, waiting_approval: false };
  return {
    content: [{ type: 'text', text: withNote(step.response || NOTHING_SAID, step.note) }],
    structuredContent: structured,
  };
}

/** How to decide an approval outside this call: the REST API, or the tool again with the approval words. */
function howToDecide(tool: AskToolConfig, step: Extract<TurnStep, { kind: 'waiting' }>): string {
  return (
    `To decide, call ${tool.name} again with ${CONVERSATION_ID_ARGUMENT} "${step.conversationId}" and ${tool.argument_name} "yes" or "no", ` +
    `or POST /approvals/${step.approval.uuid} with {"approved": true} or {"approved": false}.`
  );
}

/**
 * A step that waits for an approval, handed back to the client: the approval line first (which
 * programs parse), then why it was not asked here and how to decide.
 */
export function approvalResult(
  tool: AskToolConfig,
  step: Extract<TurnStep, { kind: 'waiting' }>,
  reason: string | undefined,
): CallToolResult {
  const { approval } = step;
  const structured: AskOutput = {
    conversation_id: step.conversationId,
    response: step.response,
    waiting_approval: true,
    approval: {
      uuid: approval.uuid,
      tool_name: approval.toolName,
      tool_args: jsonObjectOf(approval.toolArgsJson),
      description: approval.description,
    },
  };
  const lines = [
    approvalRequiredLine(approval),
    ...[step.note, reason].filter((line): line is string => Boolean(line)),
    howToDecide(tool, step),
  ];
  return { content: [{ type: 'text', text: lines.join('\n\n') }], structuredContent: structured };
}

/** A call that failed: an MCP tool error, which the client's model can read and act on. */
export function toolErrorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: redactSecrets(message) }], isError: true };
}
