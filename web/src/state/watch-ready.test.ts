import { describe, expect, it, vi } from 'vitest';
import { forgetWatched, markWatched, whenWatched } from './watch-ready.js';

describe('watch readiness (a new conversation waits for its live stream before its first message)', () => {
  it('waits until the conversation is watched, then resolves at once while it stays watched', async () => {
    let resolved = false;
    const waiting = whenWatched('c1', 60_000).then(() => (resolved = true));
    await Promise.resolve();
    expect(resolved).toBe(false);
    markWatched('c1');
    await waiting;
    expect(resolved).toBe(true);
    await whenWatched('c1', 60_000);
    forgetWatched('c1');
    let again = false;
    const later = whenWatched('c1', 20).then(() => (again = true));
    await Promise.resolve();
    expect(again).toBe(false);
    await later;
  });

  it('gives up waiting after the timeout, so a stream that cannot be had does not hold a message back', async () => {
    // The clock moved by hand: the wait ends at its timeout, not a moment before.
    vi.useFakeTimers();
    try {
      let resolved = false;
      const waiting = whenWatched('never', 30).then(() => (resolved = true));
      await vi.advanceTimersByTimeAsync(29);
      expect(resolved).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(resolved).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
