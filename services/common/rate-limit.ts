import { setTimeout as wait } from 'node:timers/promises';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ServiceError } from './grpc/errors.js';
import { wildcardPattern } from './wildcard.js';

/**
 * Calls-per-window limits (`rate_limits`) for model and tool calls. Each rule has a
 * name pattern with `*` and `?` wildcards and one budget shared by every name it matches; the
 * first matching rule applies. A call over the limit waits for the next free slot up to
 * `maxWaitMs` (and never past its deadline); beyond that it fails with RESOURCE_EXHAUSTED.
 * Slots are counted per process: with several replicas each has the full budget, so divide
 * the provider's quota by the replica count when setting them.
 */
export interface RateRule {
  pattern: string;
  calls: number;
  windowMs: number;
}

export interface RateClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const systemClock: RateClock = { now: () => Date.now(), sleep: (ms) => wait(ms).then(() => undefined) };

function formatWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

class Bucket {
  /** Start times of the calls admitted (some may lie ahead: slots reserved by waiting calls). */
  private readonly starts: number[] = [];

  constructor(readonly rule: RateRule) {}

  /** The earliest start at or after `now` that keeps every window within the budget. */
  nextStart(now: number): number {
    while (this.starts.length > 0 && this.starts[0]! <= now - this.rule.windowMs) this.starts.shift();
    if (this.starts.length < this.rule.calls) return now;
    return Math.max(now, this.starts[this.starts.length - this.rule.calls]! + this.rule.windowMs);
  }

  reserve(start: number): void {
    this.starts.push(start);
  }
}

export class RateLimiter {
  private readonly buckets: { match: RegExp; bucket: Bucket }[];

  constructor(
    rules: readonly RateRule[],
    private readonly maxWaitMs: number,
    /** "model" or "tool", for messages. */
    private readonly kind: string,
    private readonly clock: RateClock = systemClock,
  ) {
    this.buckets = rules.map((rule) => ({ match: wildcardPattern(rule.pattern), bucket: new Bucket(rule) }));
  }

  /** Waits for a slot for a call of `name`; RESOURCE_EXHAUSTED when none comes in time. */
  async acquire(name: string, deadline?: number): Promise<void> {
    const bucket = this.buckets.find((candidate) => candidate.match.test(name))?.bucket;
    if (!bucket) return;
    const now = this.clock.now();
    const start = bucket.nextStart(now);
    const waitMs = start - now;
    const latest = Math.min(now + this.maxWaitMs, deadline ?? Number.POSITIVE_INFINITY);
    if (start > latest) {
      const { pattern, calls, windowMs } = bucket.rule;
      throw new ServiceError(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `rate limit for ${this.kind} ${name} (rule "${pattern}": ${calls} calls per ${formatWindow(windowMs)}) reached; the next slot is in ${waitMs} ms, longer than the ${start > now + this.maxWaitMs ? `wait allowed (rate_limits.max_wait ${formatWindow(this.maxWaitMs)})` : "call's deadline allows"}`,
      );
    }
    // Reserved before waiting, so concurrent calls queue behind each other instead of racing.
    bucket.reserve(start);
    if (waitMs > 0) await this.clock.sleep(waitMs);
  }
}
