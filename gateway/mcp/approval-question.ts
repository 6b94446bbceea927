import type { ClientCapabilities, ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { decisionFromWord, type Decision } from '../app/decision.js';

/**
 * An approval asked of the MCP client's user through form elicitation (`elicitation/create`),
 * and the answer read back. Pure.
 */

/** The key of the one input request in a 2026-07-28 `input_required` result. */
export const APPROVAL_INPUT_KEY = 'approval';

/** The form's one field. */
const APPROVE_FIELD = 'approve';

/** The approval line, which remote agents and people parse: `Approval required (id: <uuid>): <description>`. */
export function approvalRequiredLine(approval: PendingApproval): string {
  return `Approval required (id: ${approval.uuid}): ${approval.description}`;
}

export function approvalQuestion(approval: PendingApproval): ElicitRequestFormParams {
  const lines = [
    'The agent wants to run a tool that needs your approval.',
    approvalRequiredLine(approval),
    `Tool: ${approval.toolName}`,
    `Arguments: ${approval.toolArgsJson || '{}'}`,
  ];
  if (approval.agentChain.length > 0) lines.push(`Held by: ${approval.agentChain.join(' → ')}`);
  return {
    mode: 'form',
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        [APPROVE_FIELD]: {
          type: 'boolean',
          title: 'Approve',
          description: `Run ${approval.toolName} with these arguments? Rejecting cancels the call; nothing is run.`,
          default: false,
        },
      },
      required: [APPROVE_FIELD],
    },
  };
}

/**
 * What an elicitation result says: accept with `approve: true` approves; accept with
 * `approve: false`, decline and cancel reject (nothing runs without an explicit yes).
 * `missing`: there was no answer at all (the client left it out); `unclear`: an answer that
 * says neither yes nor no.
 */
export type QuestionAnswer = Decision | 'missing' | 'unclear';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function answerOf(result: unknown): QuestionAnswer {
  if (result === undefined) return 'missing';
  if (!isObject(result)) return 'unclear';
  switch (result.action) {
    case 'decline':
    case 'cancel':
      return 'rejected';
    case 'accept': {
      const value = isObject(result.content) ? result.content[APPROVE_FIELD] : undefined;
      if (typeof value === 'boolean') return value ? 'approved' : 'rejected';
      // Lenient with clients that render the field as text.
      return (typeof value === 'string' && decisionFromWord(value)) || 'unclear';
    }
    default:
      return 'unclear';
  }
}

/**
 * Whether the client can answer a form elicitation. MCP 2025-11-25: an empty `elicitation`
 * object means form mode (what clients of 2025-06-18 declare); one that lists only `url`
 * supports URL mode alone.
 */
export function canAskByForm(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (!isObject(elicitation)) return false;
  return 'form' in elicitation || !('url' in elicitation);
}
