/**
 * Retrying something that is down: exponential backoff from `initialMs`, doubled per failure up
 * to `maxMs`, each delay with "equal jitter" (half fixed, half random), so that replicas that
 * lost a peer together do not knock on it in step when it recovers. One rule for every
 * reconnect of the services (MCP servers, the database's connections).
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/** The delay before retry number `failures` (1-based), with jitter; `random` is in [0, 1). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The failures of one thing in a row: each `next()` is the delay before the next try; `reset()` once it worked. */
export class Backoff {
  private failures = 0;

  constructor(private readonly policy: BackoffPolicy) {}

  next(): number {
    this.failures += 1;
    return backoffDelay(this.policy, this.failures);
  }

  reset(): void {
    this.failures = 0;
  }

  /** Failures since the last success. */
  get failuresInRow(): number {
    return this.failures;
  }
}
