import type { Logger } from '../services/common/log.js';

/** The signal that asks for a collection; SIGUSR1 is Node's own (it opens the inspector). */
export const GC_SIGNAL = 'SIGUSR2';

/**
 * For memory measurements (the leak tests, an operator comparing heap snapshots): a process
 * started with `node --expose-gc` runs a full garbage collection on SIGUSR2 and logs
 * `garbage collected` with its heap and RSS after it, so that what is left is what is still
 * referenced. Without `--expose-gc` — every production start — nothing is installed and the
 * signal keeps Node's default (it ends the process, as it always did).
 */
export function collectGarbageOnSignal(log: Logger): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return;
  process.on(GC_SIGNAL, () => {
    // Twice: what the first one's finalizers and weak callbacks let go of is freed by the second,
    // and V8 gives back the pages it emptied; one alone left heap_total tens of MB higher.
    gc();
    gc();
    const memory = process.memoryUsage();
    log.info('garbage collected', { heap_used: memory.heapUsed, heap_total: memory.heapTotal, external: memory.external, rss: memory.rss });
  });
}
