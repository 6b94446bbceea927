/**
 * Which tool calls stop for a human (DESIGN rule 9), from the annotations a server
 * advertises. Pure, so that config overrides (per server, per tool) can wrap it later.
 */

/** The two MCP annotations the policy reads; both are optional on the wire. */
export interface DestructiveHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * MCP spec: `readOnlyHint` defaults to false and `destructiveHint` to true, and the latter
 * means something only when the tool is not read-only. So a read-only tool is safe, and any
 * other tool is destructive unless it says `destructiveHint: false` — no annotations at all
 * means destructive.
 */
export function isDestructive(hints: DestructiveHints | undefined): boolean {
  if (hints?.readOnlyHint === true) return false;
  return hints?.destructiveHint !== false;
}
