/**
 * Which conversations this page watches live, known once their event stream has delivered its
 * first update (the snapshot: the server opens the watch before it reads the snapshot). Text
 * deltas are live-only — a watcher that starts after the first words were streamed never sees
 * them — so a new conversation's first message is sent only once its watch is up, or after
 * `timeoutMs` at the latest (a stream that cannot be had must not hold the message back).
 */
const watched = new Set<string>();
const waiting = new Map<string, Set<() => void>>();

export function markWatched(conversationId: string): void {
  watched.add(conversationId);
  for (const resolve of waiting.get(conversationId) ?? []) resolve();
  waiting.delete(conversationId);
}

export function forgetWatched(conversationId: string): void {
  watched.delete(conversationId);
}

export function whenWatched(conversationId: string, timeoutMs: number): Promise<void> {
  if (watched.has(conversationId)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiting.get(conversationId)?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const set = waiting.get(conversationId) ?? new Set<() => void>();
    set.add(done);
    waiting.set(conversationId, set);
  });
}
