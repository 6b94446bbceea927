import type { Unsettled } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { withContextPatch } from '../common/context.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { Poller } from './poller.js';
import { errorText } from './run/io.js';

/** Expiries carried out at once by one replica: more wait for the next poll, here or on another replica. */
const MAX_CONCURRENT_EXPIRIES = 8;
/** An expiry that failed (a tree that changed under an approving expiry, a peer down) is tried again after this long. */
const RETRY_FAILED_AFTER_MS = 60_000;

/**
 * Every `interval` (the takeover loop's), asks the store for pending approvals whose
 * expires_at has passed (ListDueApprovals) and decides each as its on_timeout says, through
 * the turn runner's own decision path. The timer is durable because it is a row:
 * a restart, or any other replica, finds the approval due at its next poll. Exactly once
 * because the decision is a claim: of several replicas (or a human) deciding at once, one
 * claim wins and the others find the approval decided and do nothing.
 */
export class ExpiryLoop {
  /** Approvals being decided here now, so that the next poll does not decide them again meanwhile. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Approvals whose expiry failed here, by when to try again. */
  private readonly failedUntil = new Map<string, number>();
  private readonly poller: Poller;

  constructor(
    private readonly clients: Pick<OrchestratorClients, 'store'>,
    private readonly intervalMs: number,
    private readonly expire: (approval: PendingApproval) => Promise<{ decided: boolean; unsettled?: Unsettled | undefined }>,
    private readonly log: Logger,
  ) {
    this.poller = new Poller(intervalMs, 'look for expired approvals', () => this.poll(), log);
  }

  start(): void {
    this.poller.start();
  }

  /** Stops polling; expiries already running go on (the orchestrator's drain hands their runs back). */
  stop(): void {
    this.poller.stop();
  }

  private poll(): Promise<void> | false {
    const room = MAX_CONCURRENT_EXPIRIES - this.inFlight.size;
    return room > 0 && this.expireSome(room);
  }

  private async expireSome(room: number): Promise<void> {
    const now = Date.now();
    for (const [uuid, until] of this.failedUntil) if (until <= now) this.failedUntil.delete(uuid);
    // Asks for more than there is room for: some may be in flight here or waiting to be retried.
    const limit = Math.min(100, room + this.inFlight.size + this.failedUntil.size);
    const { approvals } = await withContextPatch({ deadline: Date.now() + Math.max(1_000, this.intervalMs) }, () =>
      this.clients.store.listDueApprovals({ limit }),
    );
    let started = 0;
    for (const approval of approvals) {
      if (this.poller.stopped || started >= room) break;
      if (this.inFlight.has(approval.uuid) || this.failedUntil.has(approval.uuid)) continue;
      started += 1;
      this.begin(approval);
    }
  }

  private begin(approval: PendingApproval): void {
    const going = this.expire(approval)
      .then(({ decided, unsettled }) => {
        if (decided)
          this.log.info('approval decided by its expiry', {
            approval: approval.uuid,
            conversation: approval.conversationId,
            tool: approval.toolName,
          });
        else if (unsettled)
          this.log.warn('expiry of an approval went on from what is stored; its outcome is not known here', {
            approval: approval.uuid,
            reason: unsettled.reason,
          });
        else this.log.info('expired approval was decided first elsewhere', { approval: approval.uuid });
      })
      .catch((error: unknown) => {
        this.failedUntil.set(approval.uuid, Date.now() + RETRY_FAILED_AFTER_MS);
        this.log.error('expiry of an approval failed; it stays pending and is tried again', {
          approval: approval.uuid,
          conversation: approval.conversationId,
          error: errorText(error),
        });
      })
      .finally(() => this.inFlight.delete(approval.uuid));
    this.inFlight.set(approval.uuid, going);
  }
}
