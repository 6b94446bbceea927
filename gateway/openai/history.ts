import { createHash } from 'node:crypto';

/**
 * How the OpenAI-compatible face recognises a resent history. Chat clients built for OpenAI
 * keep no conversation id: each request carries the whole history, and the last user message
 * is the new input. After each turn the gateway records, on the conversation, the digest of
 * the history the client has now been shown (the earlier messages, the input, and the answer
 * exactly as sent); a request that names no conversation continues the one whose latest digest
 * is the digest of its earlier messages, among the caller's own conversations only (the
 * store's index of digests: one lookup, never a scan). What counts:
 *
 * - user and assistant messages only, in order: system and developer prompts (the agent has
 *   its own), tool messages and empty messages do not;
 * - each message's text normalized: Unicode NFC, every run of white space one space, trimmed —
 *   so that a client that re-wraps lines or trims the answer still matches.
 *
 * A history that is not the latest one of a conversation (a message edited, an answer
 * regenerated) matches nothing and starts a new conversation, so that a conversation never
 * goes on from a history its client no longer shows. Of several conversations with the same
 * history, the one recorded last continues.
 */

export interface HistoryMessage {
  role: 'user' | 'assistant';
  text: string;
}

const normalized = (text: string) => text.normalize('NFC').replace(/\s+/gu, ' ').trim();

/** The digest of a history: hex SHA-256 of the normalized, non-empty user and assistant messages. */
export function historyDigest(history: readonly HistoryMessage[]): string {
  const counted = history.map(({ role, text }) => [role, normalized(text)]).filter(([, text]) => text !== '');
  return createHash('sha256').update(JSON.stringify(counted)).digest('hex');
}

/** Whether a history has anything to match: at least one non-empty message. */
export function hasHistory(history: readonly HistoryMessage[]): boolean {
  return history.some(({ text }) => normalized(text) !== '');
}
