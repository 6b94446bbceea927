import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortable, startReading, watchLifetime } from './abortable.js';

/** A source whose reads wait until `push`; records whether it was asked to return. */
function quietSource() {
  const values: number[] = [];
  let wake: (() => void) | undefined;
  let returned = false;
  let reads = 0;
  async function* generate() {
    try {
      for (;;) {
        while (values.length) yield values.shift()!;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      returned = true;
    }
  }
  const generator = generate();
  const counted: AsyncIterator<number> = {
    next: () => {
      reads += 1;
      return generator.next();
    },
    return: (value?: unknown) => generator.return(value as undefined),
  };
  return {
    iterable: { [Symbol.asyncIterator]: () => counted },
    push(value: number) {
      values.push(value);
      wake?.();
    },
    get returned() {
      return returned;
    },
    get reads() {
      return reads;
    },
  };
}

describe('abortable', () => {
  it('passes values through and stops waiting as soon as the signal aborts', async () => {
    const source = quietSource();
    const stop = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const value of abortable(source.iterable, stop.signal)) seen.push(value);
    })();
    source.push(1);
    source.push(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    await reading; // would hang for good if the reader waited for the quiet source
    expect(seen).toEqual([1, 2]);
    // The source is asked to return; it does once it wakes up.
    expect(source.returned).toBe(false);
    source.push(3);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(source.returned).toBe(true);
  });

  it('ends at once when the signal had aborted already', async () => {
    const stop = new AbortController();
    stop.abort();
    const seen: number[] = [];
    for await (const value of abortable(quietSource().iterable, stop.signal)) seen.push(value);
    expect(seen).toEqual([]);
  });

  it('passes on a failure of the source', async () => {
    async function* failing() {
      yield 1;
      throw new Error('stream broke');
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const value of abortable(failing(), undefined)) seen.push(value);
      })(),
    ).rejects.toThrow('stream broke');
    expect(seen).toEqual([1]);
  });
});

describe('startReading', () => {
  it('begins the first read at once, and hands its result to the first next()', async () => {
    const source = quietSource();
    const iterator = startReading(source.iterable);
    expect(source.reads).toBe(1);
    source.push(7);
    expect(await iterator.next()).toEqual({ done: false, value: 7 });
    expect(source.reads).toBe(1);
    source.push(8);
    expect(await iterator.next()).toEqual({ done: false, value: 8 });
    expect(source.reads).toBe(2);
  });
});

describe('watchLifetime', () => {
  it('ends when the client goes away', () => {
    const client = new AbortController();
    const watch = watchLifetime(client.signal);
    expect(watch.signal.aborted).toBe(false);
    client.abort();
    expect(watch.signal.aborted).toBe(true);
  });

  it("ends when its owner ends it, and lets go of the client's signal then", () => {
    const client = new AbortController();
    const watch = watchLifetime(client.signal);
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(1);
    let heard = 0;
    watch.signal.addEventListener('abort', () => (heard += 1));
    watch.end();
    watch.end();
    expect(watch.signal.aborted).toBe(true);
    expect(heard).toBe(1);
    // A long-lived client signal keeps nothing of a watch that ended.
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(0);
  });

  it('starts ended when the client is gone already, and works without a client', () => {
    const gone = new AbortController();
    gone.abort();
    expect(watchLifetime(gone.signal).signal.aborted).toBe(true);
    const alone = watchLifetime(undefined);
    expect(alone.signal.aborted).toBe(false);
    alone.end();
    expect(alone.signal.aborted).toBe(true);
  });
});
