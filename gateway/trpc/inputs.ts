import { z } from 'zod';
import { MAX_REASON_LENGTH } from '../../services/common/decision-reason.js';
import { DEFAULT_HISTORY_LIMIT } from '../app/agent.js';
import { APPROVAL_STATUS_NAMES, type ApprovalStatusName } from '../app/decision.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../app/inputs.js';

/**
 * What the tRPC procedures accept, with REST's rules: a message is non-empty
 * text, a page is 1 to 500 conversations or 1 to 1000 messages, ids are non-empty, and an
 * input object takes no field it does not name (BAD_REQUEST naming the field). The SSE
 * link adds `lastEventId` to a subscription's input when it reconnects (tRPC `tracked()`), so
 * subscriptions name it.
 */

const message = z.string().refine((text) => text.trim().length > 0, 'must not be empty');
const id = z.string().min(1, 'must not be empty');

/** A stored event id as the SSE link sends it back: decimal digits. */
export const lastEventId = z
  .string()
  .regex(/^\d{1,15}$/, 'must be the id of an event this stream sent')
  .nullish()
  .transform((value) => (value ? Number(value) : 0));

export const newConversationInput = z.strictObject({ message: message.optional() }).optional();

export const pageInput = z
  .strictObject({
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
    cursor: id.optional(),
  })
  .default({ limit: DEFAULT_PAGE_SIZE });

/** A conversation with one page of its history, as REST's `GET /conversations/:id?limit=&before=&after=`. */
export const conversationInput = z
  .strictObject({
    id,
    limit: z.number().int().min(1).max(DEFAULT_HISTORY_LIMIT).optional(),
    before: id.optional(),
    after: id.optional(),
  })
  .refine((input) => input.before === undefined || input.after === undefined, 'before and after cannot be used together');

export const sendInput = z.strictObject({ conversationId: id, message });
export const deleteInput = z.strictObject({ id });

/**
 * `reason`: as REST's, a string of at most 2,000 characters. `arguments`:
 * approving only, the arguments to run the call with; the orchestrator checks them against the
 * tool's input schema (BAD_REQUEST when they do not fit). `input`: approving an approval of
 * kind `input` only, the answer to the MCP server's question, checked against the schema the
 * server requested (BAD_REQUEST when it does not fit); rejecting declines the question.
 */
export const resolveInput = z
  .strictObject({
    uuid: id,
    approved: z.boolean(),
    reason: z.string().max(MAX_REASON_LENGTH, `must be at most ${MAX_REASON_LENGTH} characters`).optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    input: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((input) => input.arguments === undefined || input.approved, {
    message: 'arguments are only taken with an approval: a rejected call does not run',
    path: ['arguments'],
  })
  .refine((input) => input.input === undefined || input.approved, {
    message: 'input is only taken with an approval: a rejection declines the question',
    path: ['input'],
  });

/** REST's `GET /approvals` filters: statuses (none: every status), one conversation, a page. */
export const approvalListInput = z
  .strictObject({
    status: z.array(z.enum(APPROVAL_STATUS_NAMES as [ApprovalStatusName, ...ApprovalStatusName[]])).optional(),
    conversationId: id.max(200).optional(),
    /** Only the pending approvals the caller may still vote for or decide (REST's `needs_my_vote`). */
    needsMyVote: z.boolean().optional(),
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
    cursor: id.optional(),
  })
  .default({ limit: DEFAULT_PAGE_SIZE });

export const approvalInput = z.strictObject({ uuid: id });

/** REST's `GET /conversations/:id/runs`: a conversation's runs, a page at a time. */
export const runListInput = z.strictObject({
  conversationId: id,
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: id.optional(),
});

export const runInput = z.strictObject({ runId: id });

/** REST's fork body, beside the run id. */
export const forkInput = z.strictObject({
  runId: id,
  step: z.number().int('step: an integer').nonnegative('step: 0 or more'),
  message: message.optional(),
});

export const conversationEventsInput = z.strictObject({ conversationId: id, lastEventId });

export const pendingApprovalsInput = z.strictObject({ lastEventId }).optional();
