import { randomHex } from './random-hex.js';

const SESSION_ID = /^[0-9a-f]{8}$/;

/** A new session id: 4 random bytes as 8 lowercase hex characters, the session id format every face accepts. */
export function newSessionId(): string {
  return randomHex(4);
}

/**
 * Accepts a caller's session id when it has the right shape (case is normalised); anything
 * else is refused so that arbitrary header text never reaches logs or storage.
 */
export function parseSessionId(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  const candidate = value.trim().toLowerCase();
  return SESSION_ID.test(candidate) ? candidate : undefined;
}
