import { Backoff, reconnectSchedule, type BackoffPolicy } from '../common/backoff.js';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import type { ConversationStorage } from './storage.js';

/** Soon at first, then every 2 s at most: ready within about 2 s of the database's return. */
const REOPEN: BackoffPolicy = reconnectSchedule(250, 2_000);

/** The database (or NATS) could not be reached: it is tried again. */
function isUnreachable(error: unknown): boolean {
  return error instanceof ServiceError && error.code === GrpcStatus.UNAVAILABLE;
}

/** An error as the log may show it: its message, secrets redacted. */
export const reasonOf = (error: unknown): string => redactSecrets(error instanceof Error ? error.message : String(error));

/**
 * Opens the storage while its database may be away. At the start an error that needs a person stops it; an unreachable
 * database is tried again in the background with backoff until it opens or the store stops, meanwhile UNAVAILABLE. A
 * retry failing as the one before logs at debug: a long outage is one line in the log.
 */
export class StorageOpening {
  private readonly backoff: Backoff;
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;
  private stopped = false;
  private lastReason: string | undefined;

  constructor(
    /** Opens the storage and makes it ready to serve, closing it again if that fails. */
    private readonly open: () => Promise<ConversationStorage>,
    private readonly onOpen: (storage: ConversationStorage) => void,
    private readonly log: Logger,
    policy: BackoffPolicy = REOPEN,
  ) {
    this.backoff = new Backoff(policy);
  }

  /** The start's attempt: true once open, false while the database is unreachable (retried from now on); throws what needs a person. */
  async first(): Promise<boolean> {
    try {
      this.onOpen(await this.open());
      return true;
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      this.failed(error);
      return false;
    }
  }

  /** No more attempts; what an attempt in flight opens is closed, waited for until `deadline` (epoch ms). */
  async stop(deadline: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.attempt === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
    await Promise.race([this.attempt, late]);
    clearTimeout(timer);
  }

  private failed(error: unknown): void {
    const reason = reasonOf(error);
    const wait = this.backoff.next();
    const fields = { error: reason, retry_in_ms: wait, failures: this.backoff.failuresInRow };
    if (reason === this.lastReason) this.log.debug('the conversation store still cannot reach its database', fields);
    else if (isUnreachable(error))
      this.log.warn('the conversation store cannot reach its database; it is not ready and tries again', fields);
    else this.log.error('the conversation store cannot open its database; it is not ready and tries again', fields);
    this.lastReason = reason;
    this.schedule(wait);
  }

  private schedule(afterMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.attempt = this.open().then(
        async (storage) => {
          if (this.stopped) {
            await storage.close().catch(() => undefined);
            return;
          }
          this.log.info('the conversation store reached its database and is ready', { failures: this.backoff.failuresInRow });
          this.onOpen(storage);
        },
        (error: unknown) => {
          if (!this.stopped) this.failed(error);
        },
      );
    }, afterMs);
    this.timer.unref();
  }
}
