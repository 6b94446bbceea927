import type { Logger } from '../common/log.js';
import { errorText } from './run/io.js';

/** A store that keeps failing is reported once a minute, not at every poll. */
const FAILURE_REPORT_EVERY_MS = 60_000;

/**
 * The timer shared by the orchestrator's background loops (takeover, expiry): one poll every
 * `intervalMs`, never two at once, none after stop, and a failing poll reported at most once a
 * minute (`could not <what>; trying again`) since the next poll retries it anyway.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stoppedFlag = false;
  private lastFailureReport = 0;

  constructor(
    private readonly intervalMs: number,
    /** What a poll does, for the failure report: "look for runs to take over". */
    private readonly what: string,
    /** One poll; `false` skips it (no room for more work now). */
    private readonly pollOnce: () => Promise<void> | false,
    private readonly log: Logger,
  ) {}

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
    void this.poll();
  }

  stop(): void {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling || this.stoppedFlag) return;
    this.polling = true;
    try {
      await this.pollOnce();
    } catch (error) {
      if (Date.now() - this.lastFailureReport >= FAILURE_REPORT_EVERY_MS) {
        this.lastFailureReport = Date.now();
        this.log.warn(`could not ${this.what}; trying again`, { error: errorText(error) });
      }
    } finally {
      this.polling = false;
    }
  }
}
