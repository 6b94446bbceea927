/**
 * A decision's reason ("value too large"), as every edge accepts it: a string of at
 * most this many characters. Told to the model and stored with the approval.
 */
export const MAX_REASON_LENGTH = 2000;

/** Why a reason is refused, or undefined when it is acceptable (absent counts as acceptable). */
export function reasonProblem(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (typeof reason !== 'string')
    return `"reason" must be a string of at most ${MAX_REASON_LENGTH} characters, not ${reason === null ? 'null' : typeof reason}`;
  if (reason.length > MAX_REASON_LENGTH) return `"reason" is ${reason.length} characters long; at most ${MAX_REASON_LENGTH} are accepted`;
  return undefined;
}

/** The reason to pass on: trimmed, and absent when it says nothing. */
export function givenReason(reason: string | undefined): string | undefined {
  const trimmed = reason?.trim();
  return trimmed ? trimmed : undefined;
}
