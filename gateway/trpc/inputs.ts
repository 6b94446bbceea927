import { z } from 'zod';
import { MAX_REASON_LENGTH } from '../../services/common/decision-reason.js';
import { DEFAULT_HISTORY_LIMIT } from '../app/agent.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../app/inputs.js';

/**
 * What the tRPC procedures accept (DESIGN rule 8), with REST's rules: a message is non-empty
 * text, a page is 1 to 500 conversations or 1 to 1000 messages, ids are non-empty. The SSE link adds
 * `lastEventId` to a subscription's input when it reconnects (tRPC `tracked()`).
 */

const message = z.string().refine((text) => text.trim().length > 0, 'must not be empty');
const id = z.string().min(1, 'must not be empty');

/** A stored event id as the SSE link sends it back: decimal digits. */
export const lastEventId = z
  .string()
  .regex(/^\d{1,15}$/, 'must be the id of an event this stream sent')
  .nullish()
  .transform((value) => (value ? Number(value) : 0));

export const newConversationInput = z.object({ message: message.optional() }).optional();

export const pageInput = z
  .object({
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
    cursor: id.optional(),
  })
  .default({ limit: DEFAULT_PAGE_SIZE });

/** A conversation with one page of its history, as REST's `GET /conversations/:id?limit=&before=&after=`. */
export const conversationInput = z
  .object({
    id,
    limit: z.number().int().min(1).max(DEFAULT_HISTORY_LIMIT).optional(),
    before: id.optional(),
    after: id.optional(),
  })
  .refine((input) => input.before === undefined || input.after === undefined, 'before and after cannot be used together');

export const sendInput = z.object({ conversationId: id, message });

/** `reason`: as REST's (issue 13), a string of at most 2,000 characters. */
export const resolveInput = z.object({ uuid: id, approved: z.boolean(), reason: z.string().max(MAX_REASON_LENGTH, `must be at most ${MAX_REASON_LENGTH} characters`).optional() });

export const conversationEventsInput = z.object({ conversationId: id, lastEventId });

export const pendingApprovalsInput = z.object({ lastEventId }).optional();
