import { withContextPatch } from '../common/context.js';
import { GrpcStatus, isCode } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { Poller } from './poller.js';

/** The name of the sweep's lease in the store: one replica sweeps at a time. */
const SWEEP_LEASE = 'lifecycle-sweep';
/** Conversations asked for (and deleted one transaction each) per batch. */
const CONVERSATION_BATCH = 100;
/** Events or audit entries removed per batch: one short transaction each. */
const PRUNE_BATCH = 5_000;
/** Run journals removed per batch, each with its steps (tens to hundreds a run): one short transaction too. */
const JOURNAL_BATCH = 200;
/** Batches of each kind per sweep: what is left goes at the next sweep, so one sweep never runs for long. */
const MAX_BATCHES = 20;
/** Who deletes, in the audit, when retention does. */
export const RETENTION_ACTOR = 'retention';

export interface SweepSettings {
  intervalMs: number;
  /** A conversation unchanged this long is deleted; undefined: kept for ever. */
  conversationsIdleMs: number | undefined;
  /** Audit entries older than this are removed; undefined: kept for ever. */
  auditKeepMs: number | undefined;
  /** Events older than this are removed from the log (every consumer has passed them, or is skipped past them). */
  eventsKeepMs: number;
  /** The journals of runs that ended longer ago than this are removed; undefined: kept for ever. */
  runsKeepMs: number | undefined;
  /** The replica that sweeps, as its lease names it. */
  holder: { owner: string; node: string };
}

/** What one sweep removed. */
export interface SweepOutcome {
  conversations: number;
  events: number;
  auditEntries: number;
  /** Run journals removed (each with its steps). */
  runJournals: number;
}

/**
 * The data lifecycle's background work, on every orchestrator replica and done by one at a time: every interval, the
 * replica that holds (or takes) the store's `lifecycle-sweep` lease deletes the conversations idle past
 * `retention.conversations` (each as DELETE /conversations/:id does: a deletion is one transaction, so two replicas
 * deleting one conversation delete it once), prunes the event log's head past `events.keep`, the audit past
 * `retention.audit` and the journals of runs that ended before `runs.keep`, in batches of short transactions. Never on a turn's path: turns never wait for it.
 */
export class LifecycleSweep {
  private readonly poller: Poller;

  constructor(
    private readonly clients: Pick<OrchestratorClients, 'store'>,
    private readonly settings: SweepSettings,
    private readonly log: Logger,
  ) {
    this.poller = new Poller(settings.intervalMs, 'sweep old data', () => this.sweep().then(() => undefined), log);
  }

  start(): void {
    this.poller.start();
  }

  stop(): void {
    this.poller.stop();
  }

  /** One sweep, if this replica holds the lease; what it removed. */
  async sweep(): Promise<SweepOutcome | undefined> {
    // The lease outlives the interval, so its holder keeps it from one sweep to the next.
    const lease = { ...this.settings.holder, ttlMs: this.settings.intervalMs * 3 };
    const { held } = await this.call(() => this.clients.store.claimBackgroundLease({ name: SWEEP_LEASE, lease }));
    if (!held) return undefined;
    const outcome = {
      conversations: await this.deleteIdleConversations(),
      events: await this.pruneEvents(),
      auditEntries: await this.pruneAudit(),
      runJournals: await this.pruneRunJournals(),
    };
    if (outcome.conversations + outcome.events + outcome.auditEntries + outcome.runJournals > 0)
      this.log.info('old data removed', { ...outcome });
    return outcome;
  }

  private async deleteIdleConversations(): Promise<number> {
    const idleForMs = this.settings.conversationsIdleMs;
    if (idleForMs === undefined) return 0;
    let deleted = 0;
    for (let batch = 0; batch < MAX_BATCHES && !this.poller.stopped; batch += 1) {
      const { conversationIds } = await this.call(() => this.clients.store.listIdleConversations({ idleForMs, limit: CONVERSATION_BATCH }));
      let deletedNow = 0;
      for (const id of conversationIds) {
        if (this.poller.stopped) break;
        if (await this.deleteConversation(id)) deletedNow += 1;
      }
      deleted += deletedNow;
      // A short page is the last; a page of which none could go (busy with approved calls) waits for the next sweep.
      if (conversationIds.length < CONVERSATION_BATCH || deletedNow === 0) break;
    }
    return deleted;
  }

  /** Deletes one idle conversation; false when it was gone already or runs an approved call (kept until the next sweep). */
  private async deleteConversation(id: string): Promise<boolean> {
    try {
      await this.call(() => this.clients.store.deleteConversation({ id, actor: RETENTION_ACTOR, via: RETENTION_ACTOR }));
      return true;
    } catch (error) {
      if (isCode(error, GrpcStatus.NOT_FOUND)) return false;
      if (isCode(error, GrpcStatus.FAILED_PRECONDITION)) {
        this.log.info('idle conversation kept for now: an approved call of it has no outcome yet', { conversation: id });
        return false;
      }
      throw error;
    }
  }

  /** Batches of `limit` until one removes fewer (the rest is younger), at most MAX_BATCHES a sweep; how many went. */
  private async inBatches(limit: number, prune: (limit: number) => Promise<{ removed: number }>): Promise<number> {
    let removed = 0;
    for (let batch = 0; batch < MAX_BATCHES && !this.poller.stopped; batch += 1) {
      const pruned = await this.call(() => prune(limit));
      removed += pruned.removed;
      if (pruned.removed < limit) break;
    }
    return removed;
  }

  private pruneEvents(): Promise<number> {
    return this.inBatches(PRUNE_BATCH, async (limit) => {
      const pruned = await this.clients.store.pruneEvents({ olderThanMs: this.settings.eventsKeepMs, limit });
      for (const consumer of pruned.skipped) {
        this.log.warn('an event consumer stayed behind longer than events.keep: skipped past the events pruned', {
          consumer: consumer.name,
          last_event_id: consumer.lastEventId,
          skipped_to: pruned.throughId,
        });
      }
      return pruned;
    });
  }

  private async pruneAudit(): Promise<number> {
    const olderThanMs = this.settings.auditKeepMs;
    if (olderThanMs === undefined) return 0;
    return this.inBatches(PRUNE_BATCH, (limit) => this.clients.store.pruneAudit({ olderThanMs, limit }));
  }

  /** The journals of runs that ended before runs.keep; a run that runs or waits is never one of them (the store's rule). */
  private async pruneRunJournals(): Promise<number> {
    const olderThanMs = this.settings.runsKeepMs;
    if (olderThanMs === undefined) return 0;
    return this.inBatches(JOURNAL_BATCH, (limit) => this.clients.store.pruneRunJournals({ olderThanMs, limit }));
  }

  /** Each store call with a deadline of its own: an interval, at least 10 s. */
  private call<T>(work: () => Promise<T>): Promise<T> {
    return withContextPatch({ deadline: Date.now() + Math.max(10_000, this.settings.intervalMs) }, work);
  }
}

/** The sweep's settings from the configuration: `keep` is kept for ever. */
export function sweepSettings(
  config: {
    retention: { conversations: number | 'keep'; audit: number | 'keep'; sweep_interval: number };
    events: { keep: number };
    runs: { keep: number | 'keep' };
  },
  holder: SweepSettings['holder'],
): SweepSettings {
  const kept = (value: number | 'keep') => (value === 'keep' ? undefined : value);
  return {
    intervalMs: config.retention.sweep_interval,
    conversationsIdleMs: kept(config.retention.conversations),
    auditKeepMs: kept(config.retention.audit),
    eventsKeepMs: config.events.keep,
    runsKeepMs: kept(config.runs.keep),
    holder,
  };
}
