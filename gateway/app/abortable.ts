/**
 * Reads `source` until it ends or `signal` aborts. An async generator asked to return while
 * it awaits its next value only returns once that value arrives — for a quiet event stream,
 * possibly never. Here the reader stops waiting at once when the signal aborts, and asks the
 * source to return without waiting for it to finish. What the source holds is released by
 * the same signal given to the source itself (a store stream: `watchLifetime` below), not by
 * that request to return.
 */
export async function* abortable<T>(source: AsyncIterable<T> | AsyncIterator<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  const iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    else signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  let finished = false;
  try {
    for (;;) {
      const next = iterator.next();
      // A failure of a read nobody waits for any more must not become an unhandled rejection.
      next.catch(() => undefined);
      const step = await Promise.race([next, aborted]);
      if (step === 'aborted') return;
      if (step.done) {
        finished = true;
        return;
      }
      yield step.value;
    }
  } finally {
    if (!finished) void iterator.return?.().catch(() => undefined);
  }
}

/**
 * Begins reading `source` now and hands back the iterator: its first `next()` is the read
 * already under way. For a stream that must be open before something else is read (a
 * snapshot), so that nothing that happens in between is missed.
 */
export function startReading<T>(source: AsyncIterable<T>): AsyncIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | undefined = iterator.next();
  first.catch(() => undefined);
  return {
    next() {
      const step = first ?? iterator.next();
      first = undefined;
      return step;
    },
    return(value?: unknown) {
      first = undefined;
      return iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
    },
  };
}

/** A watch's own signal (see `watchLifetime`) and the call that ends it. */
export interface WatchLifetime {
  readonly signal: AbortSignal;
  /** Ends the watch now: its store stream is cancelled. Safe to call more than once. */
  end(): void;
}

/**
 * The lifetime of one subscription's store stream: it ends when the client goes away
 * (`client` aborts) or when its owner calls `end()` — the reader left, or the watch failed
 * to open (an unknown conversation). The store stream is given this signal, so it is
 * cancelled at that moment: asking a generator that waits for its next event to return only
 * takes effect at that event, which on a quiet conversation may be an hour away, and every
 * aborted subscription would keep its stream, its store-side watcher and its buffers until then.
 */
export function watchLifetime(client: AbortSignal | undefined): WatchLifetime {
  const controller = new AbortController();
  const end = () => {
    client?.removeEventListener('abort', end);
    if (!controller.signal.aborted) controller.abort();
  };
  if (client?.aborted) end();
  else client?.addEventListener('abort', end, { once: true });
  return { signal: controller.signal, end };
}
