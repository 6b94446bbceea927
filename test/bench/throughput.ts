import { summarize, type Summary } from './stats.js';

/**
 * The accounting of a throughput run, apart from the HTTP that feeds it: which replica the
 * next request goes to, what each turn took, what failed, and turns per second over the
 * time the run took.
 */

/** The next of `count` targets, in turn, shared by every client of a run. */
export function roundRobin(count: number): () => number {
  if (!Number.isInteger(count) || count < 1) throw new Error(`a round robin needs at least one target, got ${count}`);
  let next = 0;
  return () => {
    const index = next;
    next = (next + 1) % count;
    return index;
  };
}

/** Completed turns per second over `elapsedMs`, rounded to 0.01. */
export function turnsPerSecond(turns: number, elapsedMs: number): number {
  if (!(elapsedMs > 0)) throw new Error(`a throughput needs a positive elapsed time, got ${elapsedMs} ms`);
  return Math.round((turns / (elapsedMs / 1000)) * 100) / 100;
}

export interface ThroughputResult {
  clients: number;
  targets: number;
  /** Turns answered 200. */
  turns: number;
  /** Turns that failed (another status, or no answer): counted apart, never as throughput. */
  failures: number;
  /** Up to five of the failures' messages, to tell why. */
  failureSamples: string[];
  elapsedMs: number;
  turnsPerSecond: number;
  /** Latency of the successful turns under this load. */
  latency: Summary;
  /** Successful turns served by each target, in the order of the targets. */
  turnsPerTarget: number[];
}

export class ThroughputTally {
  private readonly samples: number[] = [];
  private readonly perTarget: number[];
  private failed = 0;
  private readonly failureSamples: string[] = [];

  constructor(
    private readonly clients: number,
    targets: number,
  ) {
    this.perTarget = Array.from({ length: targets }, () => 0);
  }

  turn(target: number, ms: number): void {
    this.samples.push(ms);
    this.perTarget[target]! += 1;
  }

  failure(message: string): void {
    this.failed += 1;
    if (this.failureSamples.length < 5) this.failureSamples.push(message);
  }

  result(elapsedMs: number): ThroughputResult {
    return {
      clients: this.clients,
      targets: this.perTarget.length,
      turns: this.samples.length,
      failures: this.failed,
      failureSamples: [...this.failureSamples],
      elapsedMs: Math.round(elapsedMs),
      turnsPerSecond: turnsPerSecond(this.samples.length, elapsedMs),
      latency: summarize(this.samples),
      turnsPerTarget: [...this.perTarget],
    };
  }
}
