import { z } from 'zod';

/**
 * The `requestState` of a 2026-07-28 `input_required` result: what the tool needs when the
 * client retries the call with the user's answer to an approval question. The retry may reach
 * any replica, so everything lives in the state and in the store, nothing in memory.
 *
 * Not signed, by choice: the spec asks servers to integrity-protect state that influences
 * authorization or business logic, and this state names only things the caller may act on
 * anyway — the approval's UUID, which it was shown and could decide with POST /approvals/:uuid,
 * and its own deadline for asking again. Every use re-reads the approval from the store, where
 * the claim is atomic (an approval is decided once). A signing key would be one more secret for every
 * replica to share.
 */

const STATE_PREFIX = 'asg-approval.v1.';

const questionStateSchema = z.strictObject({
  conversation_id: z.string().min(1),
  approval_uuid: z.string().min(1),
  /** Epoch milliseconds: after this, the tool stops asking and returns the approval instead. */
  deadline: z.number().int().nonnegative(),
});

export type QuestionState = z.infer<typeof questionStateSchema>;

export function encodeQuestionState(state: QuestionState): string {
  return STATE_PREFIX + Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

/** The state back from its wire form; throws (the SDK answers -32602) for anything this server did not make. */
export function decodeQuestionState(wire: string): QuestionState {
  if (!wire.startsWith(STATE_PREFIX)) throw new Error('requestState was not made by this server');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(wire.slice(STATE_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw new Error('requestState is not valid base64url JSON');
  }
  const parsed = questionStateSchema.safeParse(value);
  if (!parsed.success) throw new Error(`requestState has the wrong shape: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  return parsed.data;
}
