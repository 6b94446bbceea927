import { z } from 'zod';
import { givenReason, MAX_REASON_LENGTH, reasonProblem } from '../../services/common/decision-reason.js';
import { invalidArgument } from '../../services/common/grpc/errors.js';
import { APPROVAL_STATUS_NAMES, decisionFromWord, type ApprovalStatusName, type Decision } from '../app/decision.js';
import { DEFAULT_HISTORY_LIMIT, type ApprovalQuery, type AuditQuery, type HistoryPage, type PageRequest } from '../app/agent.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, unknownFieldsMessage } from '../app/inputs.js';

/**
 * What the REST routes accept, checked at the edge. Each parser returns
 * the value the application layer needs or throws INVALID_ARGUMENT (→ 400) with a message
 * that says what was expected. Bodies are strict: a field a body does not take is
 * refused by name. The schemas are exported for the OpenAPI document (gateway/openapi/).
 */

export const APPROVAL_BODY_EXPECTED =
  'expected {"approved": true|false}, {"action": "approve"|"reject"} or {"answer": "yes"|"no"}, each with an optional "reason"';
const MESSAGE_EXPECTED = 'expected {"message": "<non-empty text>"}';

// An unknown field is named first: it is usually a misspelling of the field that is then "required".
function firstIssue(error: z.ZodError): string {
  return (error.issues.find((issue) => issue.code === 'unrecognized_keys') ?? error.issues[0])?.message ?? 'invalid input';
}

const messageText = z
  .string({ error: (issue) => (issue.input === undefined ? '"message" is required' : '"message" must be a string') })
  .refine((text) => text.trim().length > 0, '"message" must not be empty');

const jsonObject = {
  error: (issue: z.core.$ZodRawIssue) =>
    issue.code === 'unrecognized_keys' ? unknownFieldsMessage(issue.keys) : 'the body must be a JSON object',
};

export const newMessageBody = z.strictObject({ message: messageText.meta({ description: 'What the user says; not empty.' }) }, jsonObject);

// null is read as "no message": clients that serialise an unset field as null mean none.
export const newConversationBody = z.strictObject(
  {
    message: messageText
      .nullish()
      .meta({ description: 'A first message: the agent runs a turn at once. Absent or null: the conversation starts empty.' }),
  },
  jsonObject,
);

export const forkBody = z.strictObject(
  {
    step: z
      .number({ error: '"step" is required: the index of a step of the run, 0 or more (as GET /runs/:run_id numbers them)' })
      .int('"step" must be an integer')
      .nonnegative('"step" must be 0 or more')
      .meta({
        description: "The step the fork goes on from, as GET /runs/:run_id numbers them; the run's step count forks after its last step.",
      }),
    message: messageText
      .nullish()
      .meta({ description: "Sent as the fork's next user message once the copied history is in place. Absent or null: none." }),
  },
  jsonObject,
);

/** `POST /runs/:run_id/fork`: a step, and optionally a message. */
export function parseFork(body: unknown): { step: number; message?: string } {
  const parsed = forkBody.safeParse(body ?? {});
  if (!parsed.success)
    throw invalidArgument(`${firstIssue(parsed.error)}; expected {"step": <integer>} with an optional "message": "<non-empty text>"`);
  return { step: parsed.data.step, ...(parsed.data.message != null && { message: parsed.data.message }) };
}

/** `POST /conversations/:id/messages`: a non-empty message is required. */
export function parseNewMessage(body: unknown): string {
  const parsed = newMessageBody.safeParse(body ?? {});
  if (!parsed.success) throw invalidArgument(`${firstIssue(parsed.error)}; ${MESSAGE_EXPECTED}`);
  return parsed.data.message;
}

/** `POST /conversations`: no body, `{}`, or a non-empty message to start with. */
export function parseNewConversation(body: unknown): string | undefined {
  const parsed = newConversationBody.safeParse(body ?? {});
  if (!parsed.success) throw invalidArgument(`${firstIssue(parsed.error)}; expected no body, {} or {"message": "<non-empty text>"}`);
  return parsed.data.message ?? undefined;
}

const pageSize = z
  .string({ error: `"limit" must be given once, as an integer from 1 to ${MAX_PAGE_SIZE}` })
  .regex(/^\d+$/, `"limit" must be an integer from 1 to ${MAX_PAGE_SIZE}`)
  .transform(Number)
  .refine((size) => size >= 1 && size <= MAX_PAGE_SIZE, `"limit" must be an integer from 1 to ${MAX_PAGE_SIZE}`);

export const listQuery = z.object({
  limit: pageSize.optional().meta({ description: `How many per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
  cursor: z
    .string({ error: '"cursor" must be given once, as the next_cursor of the previous page' })
    .min(1, '"cursor" must not be empty; omit it for the first page')
    .optional()
    .meta({ description: 'The next_cursor of the previous page; omit it for the first.' }),
});

/** `GET /conversations?limit=&cursor=`; other query parameters are ignored. */
export function parsePageRequest(query: unknown): PageRequest {
  const parsed = listQuery.safeParse(query ?? {});
  if (!parsed.success) throw invalidArgument(firstIssue(parsed.error));
  const { limit = DEFAULT_PAGE_SIZE, cursor } = parsed.data;
  return cursor === undefined ? { limit } : { limit, cursor };
}

/** A comma-separated list given once (`?status=approved,rejected`), each item checked by `item`. */
function listParameter<T extends string>(name: string, expected: string, item: (word: string) => word is T) {
  return z.string({ error: `"${name}" must be given once, as ${expected} (several separated by commas)` }).transform((text, context) => {
    const words = text.split(',').map((word) => word.trim());
    const wrong = words.find((word) => !item(word));
    if (wrong !== undefined) {
      context.addIssue({
        code: 'custom',
        message: `"${name}" must be ${expected} (several separated by commas), got ${JSON.stringify(wrong.slice(0, 40))}`,
      });
      return z.NEVER;
    }
    return [...new Set(words as T[])];
  });
}

const isStatusName = (word: string): word is ApprovalStatusName => (APPROVAL_STATUS_NAMES as readonly string[]).includes(word);

export const approvalsQuery = listQuery.extend({
  status: listParameter('status', APPROVAL_STATUS_NAMES.join(', ').replace(/, (?=[^,]*$)/, ' or '), isStatusName)
    .optional()
    .meta({ description: `${APPROVAL_STATUS_NAMES.join(', ')}; several separated by commas (default: every status).`, example: 'pending' }),
  conversation_id: z
    .string({ error: '"conversation_id" must be given once, as the id of a conversation' })
    .min(1, '"conversation_id" must not be empty; omit it for every conversation')
    .max(200, '"conversation_id" must be the id of a conversation')
    .optional()
    .meta({ description: 'Only the approvals of this conversation.' }),
  needs_my_vote: z.enum(['true', 'false'], { error: '"needs_my_vote" must be true or false' }).optional().meta({
    description:
      'true: only the pending approvals the caller may still vote for or decide (their role, not their own request under not_requester, no vote of theirs yet); a page may then hold fewer than limit.',
    example: 'true',
  }),
});

/**
 * `GET /approvals?status=&conversation_id=&needs_my_vote=&limit=&cursor=`: a status (or several) of
 * pending, approved, rejected, expired — approved covers every approval said yes to, whatever
 * came of its call (app/decision.ts) — one conversation, and a page; other parameters are ignored.
 */
export function parseApprovalQuery(query: unknown): ApprovalQuery {
  const parsed = approvalsQuery.safeParse(query ?? {});
  if (!parsed.success) throw invalidArgument(firstIssue(parsed.error));
  const { limit = DEFAULT_PAGE_SIZE, cursor, status, conversation_id: conversationId, needs_my_vote: needsMyVote } = parsed.data;
  return {
    limit,
    ...(cursor !== undefined && { cursor }),
    ...(status && { statuses: status }),
    ...(conversationId !== undefined && { conversationId }),
    ...(needsMyVote === 'true' && { needsMyVote: true }),
  };
}

// approval.decided, auth.failed, …: lowercase words joined by dots.
const isAuditKind = (word: string): word is string => /^[a-z][a-z_]*(\.[a-z][a-z_]*)*$/.test(word) && word.length <= 64;

export const auditQuery = listQuery.extend({
  kind: listParameter('kind', 'an entry kind such as approval.decided', isAuditKind).optional().meta({
    description:
      'Entry kinds (approval.decided, approval.expired, auth.failed, config.loaded, conversation.deleted); several separated by commas.',
    example: 'approval.decided',
  }),
});

/** `GET /audit?kind=&limit=&cursor=`: newest first; other parameters are ignored. */
export function parseAuditQuery(query: unknown): AuditQuery {
  const parsed = auditQuery.safeParse(query ?? {});
  if (!parsed.success) throw invalidArgument(firstIssue(parsed.error));
  const { limit = DEFAULT_PAGE_SIZE, cursor, kind } = parsed.data;
  return { limit, ...(cursor !== undefined && { cursor }), ...(kind && { kinds: kind }) };
}

const historyLimit = z
  .string({ error: `"limit" must be given once, as an integer from 1 to ${DEFAULT_HISTORY_LIMIT}` })
  .regex(/^\d+$/, `"limit" must be an integer from 1 to ${DEFAULT_HISTORY_LIMIT}`)
  .transform(Number)
  .refine((size) => size >= 1 && size <= DEFAULT_HISTORY_LIMIT, `"limit" must be an integer from 1 to ${DEFAULT_HISTORY_LIMIT}`);

const messageCursor = (name: 'before' | 'after') =>
  z
    .string({ error: `"${name}" must be given once, as the id of a message of this conversation` })
    .regex(/^[0-9a-fA-F-]{36}$/, `"${name}" must be the id of a message of this conversation`);

export const historyQuery = z
  .object({
    limit: historyLimit
      .optional()
      .meta({ description: `How many messages, 1 to ${DEFAULT_HISTORY_LIMIT} (default ${DEFAULT_HISTORY_LIMIT}).` }),
    before: messageCursor('before').optional().meta({ description: 'Only messages before this one (a message id, exclusive).' }),
    after: messageCursor('after').optional().meta({ description: 'Only messages after this one (a message id, exclusive).' }),
  })
  .refine(
    (query) => query.before === undefined || query.after === undefined,
    '"before" and "after" cannot be used together; page one way at a time',
  );

/**
 * `GET /conversations/:id?limit=&before=&after=`: at most `limit` messages (default and most
 * DEFAULT_HISTORY_LIMIT), the newest or those before / after a message id; other query
 * parameters are ignored.
 */
export function parseHistoryPage(query: unknown): HistoryPage {
  const parsed = historyQuery.safeParse(query ?? {});
  if (!parsed.success) throw invalidArgument(firstIssue(parsed.error));
  const { limit = DEFAULT_HISTORY_LIMIT, before, after } = parsed.data;
  return { limit, ...(before !== undefined && { before }), ...(after !== undefined && { after }) };
}

function decisionFromAction(action: unknown): Decision | undefined {
  if (typeof action !== 'string') return undefined;
  const normalised = action.trim().toLowerCase();
  return normalised === 'approve' ? 'approved' : normalised === 'reject' ? 'rejected' : undefined;
}

function decisionFromAnswer(answer: unknown): Decision | undefined {
  if (typeof answer === 'boolean') return answer ? 'approved' : 'rejected';
  return typeof answer === 'string' ? decisionFromWord(answer) : undefined;
}

/** A decision as `POST /approvals/:uuid` says it: yes or no, the human's reason if given, and edited arguments. */
export interface ApprovalDecision {
  decision: Decision;
  /** Trimmed; absent when none (or only blanks) was given. */
  reason?: string;
  /** Approving only: the arguments to run the call with instead of the stored ones. */
  arguments?: Record<string, unknown>;
  /** Approving only: the answer to an MCP server's question. */
  input?: Record<string, unknown>;
}

// null reads as "none", as for other optional fields; the orchestrator checks them against the tool's schema.
const editedArguments = z
  .record(z.string(), z.unknown(), { error: '"arguments" must be a JSON object: the arguments to run the call with' })
  .nullish();

const inputAnswer = z
  .record(z.string(), z.unknown(), { error: '"input" must be a JSON object: the answer to the MCP server\'s question' })
  .nullish();

/**
 * The fields `POST /approvals/:uuid` takes, as documented. The parser below reads the decision
 * itself by hand (the three forms must agree, each with its own message); this schema says
 * which fields exist, so that any other is refused by name.
 */
export const approvalDecisionBody = z.strictObject({
  approved: z.boolean().optional().meta({ description: 'true approves, false rejects (the original form).' }),
  action: z.enum(['approve', 'reject']).optional().meta({ description: 'approve or reject (any case).' }),
  answer: z.union([z.boolean(), z.string()]).optional().meta({
    description:
      'A free answer in the A2A vocabulary: yes, y, true, approve, approved, ok, confirm approve; no, n, false, reject, rejected, deny, cancel reject (any case).',
  }),
  reason: z
    .string()
    .max(MAX_REASON_LENGTH)
    .optional()
    .meta({ description: 'Why: stored with the decision; with a rejection it is told to the model.' }),
  arguments: editedArguments.meta({
    description:
      "Approving only: the arguments to run the call with instead of the model's; at most 32 levels of objects and arrays and 1 MiB of JSON (the limit of a stored JSON value), and checked against the tool's input schema first (400, nothing decided, when they do not fit).",
  }),
  input: inputAnswer.meta({
    description:
      "Approving an approval that asks for input (an MCP server's question) only: the answer, bounded as arguments are and checked against the schema the server requested (400, nothing decided, when it does not fit). One question: the form's content; several: the contents keyed by the server's request ids. Rejecting declines the question.",
  }),
});

const DECISION_FIELDS: ReadonlySet<string> = new Set(Object.keys(approvalDecisionBody.shape));

/**
 * `POST /approvals/:uuid`: the original `{"approved": bool}`, or `{"action": …}`, or a free
 * `{"answer": …}` in the A2A vocabulary, each with an optional `"reason"` (a string
 * of at most 2,000 characters, told to the model with a rejection) and, approving, optional
 * `"arguments"` (a JSON object the call runs with instead). Every form the body uses
 * must say the same thing; a body that says neither yes nor no (or both) decides nothing.
 */
export function parseApprovalDecision(body: unknown): ApprovalDecision {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidArgument(APPROVAL_BODY_EXPECTED);
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !DECISION_FIELDS.has(key));
  if (unknown.length > 0) throw invalidArgument(`${unknownFieldsMessage(unknown)}; ${APPROVAL_BODY_EXPECTED}`);
  const said: (Decision | undefined)[] = [];
  if ('approved' in fields) said.push(typeof fields.approved === 'boolean' ? (fields.approved ? 'approved' : 'rejected') : undefined);
  if ('action' in fields) said.push(decisionFromAction(fields.action));
  if ('answer' in fields) said.push(decisionFromAnswer(fields.answer));
  const [first] = said;
  if (first === undefined || said.some((decision) => decision !== first)) {
    const conflicting = said.includes('approved') && said.includes('rejected');
    throw invalidArgument(conflicting ? `the body both approves and rejects; ${APPROVAL_BODY_EXPECTED}` : APPROVAL_BODY_EXPECTED);
  }
  const problem = reasonProblem(fields.reason);
  if (problem) throw invalidArgument(problem);
  const reason = givenReason(fields.reason as string | undefined);
  const edited = editedArguments.safeParse(fields.arguments);
  if (!edited.success) throw invalidArgument(firstIssue(edited.error));
  const args = edited.data ?? undefined;
  // Edited arguments are what an approved call runs with: with a rejection nothing runs, so they would be silently lost.
  if (args !== undefined && first !== 'approved')
    throw invalidArgument('"arguments" are only taken with an approval: a rejected call does not run');
  const answered = inputAnswer.safeParse(fields.input);
  if (!answered.success) throw invalidArgument(firstIssue(answered.error));
  const input = answered.data ?? undefined;
  if (input !== undefined && first !== 'approved')
    throw invalidArgument('"input" is only taken with an approval: a rejection declines the question');
  return {
    decision: first,
    ...(reason !== undefined && { reason }),
    ...(args !== undefined && { arguments: args }),
    ...(input !== undefined && { input }),
  };
}
