import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import { MessageRole, type NewMessage, type PendingApproval } from '../../../gen/ts/asg/store/v1/store.js';

/** Builders for the messages a turn appends; one place decides how a step is recorded. */

/** The turn's visible answer to a rejection: it says that the operation was cancelled, which clients look for. */
export const CANCELLED_BY_USER = 'Operation cancelled by user.';

/** Told to the model after every rejection, so that it does not ask again on its own. */
export const NOT_RETRIED = 'The call was not executed. Do not retry it unless the user asks you to.';

/** The result the model sees for a call a human rejected: `Rejected by a human: <reason>.` and the fixed sentence. */
export function rejectionText(reason: string | undefined): string {
  const said = reason?.trim();
  if (!said) return `Rejected by a human. ${NOT_RETRIED}`;
  return `Rejected by a human: ${said}${/[.!?]$/.test(said) ? '' : '.'} ${NOT_RETRIED}`;
}

/** The result the model sees for a call whose approval expired without a decision: not run, and why. */
export function expiredText(reason: string | undefined): string {
  const said = reason?.trim() || 'nobody decided in time; the approval expired';
  return `Not approved: ${said}${/[.!?]$/.test(said) ? '' : '.'} ${NOT_RETRIED}`;
}

/**
 * The result the model sees for a call a human edited before approving: the tool's
 * output, after a note of who edited and what ran, so that the model does not believe its own
 * arguments were used.
 */
export function editedResultText(by: string, args: Record<string, unknown>, result: string): string {
  return `(arguments edited by ${by} before approval: ${JSON.stringify(args)}) ${result}`;
}

export const userMessage = (text: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content: text });

export const assistantText = (text: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: text });

export const assistantCall = (
  call: Pick<ToolCallPart, 'id' | 'name' | 'providerMetadataJson'>,
  args: Record<string, unknown>,
): NewMessage => ({
  role: MessageRole.MESSAGE_ROLE_ASSISTANT,
  content: `Calling ${call.name} with ${JSON.stringify(args)}`,
  // The provider's state of the call is kept so the model gets it back with the history.
  toolCall: { id: call.id, name: call.name, argumentsJson: JSON.stringify(args), providerMetadataJson: call.providerMetadataJson },
});

export const toolResult = (
  call: Pick<ToolCallPart, 'id' | 'name'>,
  args: Record<string, unknown>,
  result: string,
  isError: boolean,
): NewMessage => ({
  role: MessageRole.MESSAGE_ROLE_TOOL,
  content: result,
  toolCall: { id: call.id, name: call.name, argumentsJson: JSON.stringify(args), result, isError },
});

/** The tool message of a rejected call: not run, marked rejected (never a tool failure), with the human's reason. */
export const rejectedResult = (
  call: Pick<ToolCallPart, 'id' | 'name'>,
  args: Record<string, unknown>,
  reason: string | undefined,
  text = rejectionText(reason),
): NewMessage => {
  const message = toolResult(call, args, text, true);
  return { ...message, toolCall: { ...message.toolCall!, rejected: true, ...(reason?.trim() && { reason: reason.trim() }) } };
};

/** The tool call an approval gates, in the shape the message builders take. */
export const gatedCall = (approval: PendingApproval) => ({ id: approval.toolCallId, name: approval.toolName });

export function approvalRequiredText(approval: PendingApproval): string {
  return `Approval required (id: ${approval.uuid}): ${approval.description}`;
}

export function stillWaitingText(approval: PendingApproval): string {
  return `This conversation is waiting for approval ${approval.uuid} (${approval.description}); the message was not processed. Approve or reject it first with POST /approvals/${approval.uuid}.`;
}
