import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunLease } from '../../gen/ts/asg/store/v1/store.js';
import { withContextPatch } from '../common/context.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { errorText } from './run/io.js';

/**
 * This replica's leases on the turns it runs (store.proto "Runs with leases"). The
 * owner id is new at every start; the node names the place the process runs (host and the
 * address it serves), so that a restart of it takes over what its previous boot left at once,
 * instead of after the lease has expired.
 */
export class RunLeases {
  readonly owner = randomUUID();
  /** Runs whose activation stopped here unfinished while this replica may still hold their lease (giveUp). */
  private readonly givenUp = new Set<string>();

  constructor(
    readonly node: string,
    readonly ttlMs: number,
    private readonly clients: Pick<OrchestratorClients, 'store'>,
    private readonly log: Logger,
  ) {}

  lease(): RunLease {
    return { owner: this.owner, node: this.node, ttlMs: this.ttlMs };
  }

  /**
   * Renews the lease on `conversationId` every third of the ttl while `holds()` says the
   * activation holds its turn, until stopped. `lost` is called once when the store says the
   * lease is gone (the run was taken over, or its turn ended under it), or when no renewal
   * has succeeded for a whole ttl: another replica may have taken the run over by then.
   */
  keep(conversationId: string, holds: () => boolean, lost: (reason: string) => void): { stop(): void } {
    let lastRenewed = Date.now();
    let stopped = false;
    let renewing = false;
    const tick = async () => {
      if (stopped || renewing || !holds()) {
        if (!holds()) lastRenewed = Date.now();
        return;
      }
      renewing = true;
      try {
        const { held } = await withContextPatch({ deadline: Date.now() + this.ttlMs / 3 }, () =>
          this.clients.store.renewRunLease({ conversationId, lease: this.lease() }),
        );
        if (stopped) return;
        if (held) lastRenewed = Date.now();
        else return stop('another replica took the run over, or its turn ended');
      } catch (error) {
        this.log.warn('run lease not renewed', { conversation: conversationId, error: errorText(error) });
        if (!stopped && Date.now() - lastRenewed >= this.ttlMs) stop('the lease could not be renewed for a whole lease_ttl');
      } finally {
        renewing = false;
      }
    };
    const timer = setInterval(() => void tick(), Math.max(100, Math.floor(this.ttlMs / 3)));
    timer.unref();
    const stop = (reason?: string) => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (reason) {
        this.log.warn('run lease lost; the activation stops', { conversation: conversationId, reason });
        lost(reason);
      }
    };
    return { stop: () => stop() };
  }

  /**
   * The activation on `conversationId` stopped without finishing its run while this replica
   * may still hold the lease: the lease was lost (not renewed for a whole ttl, or the store said
   * so), or a store call failed with its outcome unknown. The run must go on from what is
   * stored, and nobody else may be there to do it: the lease is handed back (released) so that
   * the first replica to look takes it over, and the run is named as given up to this
   * replica's own takeover loop, which takes its own lease back (TakeOverRunsRequest.given_up).
   * Alone, a replica would otherwise leave the conversation busy until its mark went stale.
   */
  async giveUp(conversationId: string): Promise<void> {
    // Released first: a release that arrived after this replica took the run back would expire its fresh lease.
    await this.release(conversationId);
    this.givenUp.add(conversationId);
  }

  /** Up to `limit` runs given up here, for the next TakeOverRuns. */
  givenUpRuns(limit: number): string[] {
    return [...this.givenUp].slice(0, limit);
  }

  /**
   * The store answered a TakeOverRuns that named `named` as given up and took `taken` runs of
   * at most `limit`: the named ones it took are taken back, and, when it took fewer than it
   * could, the others are not this replica's to take (their turn ended, or another took them).
   */
  takenBack(named: readonly string[], taken: readonly string[], limit: number): void {
    const all = taken.length < limit;
    for (const id of named) if (all || taken.includes(id)) this.givenUp.delete(id);
  }

  /** Hands a lease back at once (a draining replica): the next takeover of any replica gets the run. */
  async release(conversationId: string): Promise<boolean> {
    try {
      const { released } = await withContextPatch({ deadline: Date.now() + 5_000 }, () =>
        this.clients.store.releaseRunLease({ conversationId, owner: this.owner }),
      );
      return released;
    } catch (error) {
      this.log.warn('run lease not released; it expires after lease_ttl', { conversation: conversationId, error: errorText(error) });
      return false;
    }
  }
}

/**
 * Where a replica runs, stable across its restarts: the host and the fixed address it serves.
 * An address with port 0 is a new one at every start, and shared by every process on the
 * host that asked for one: such a replica's node is its own boot alone.
 */
export function runNode(address: string): string {
  if (/:0$/.test(address)) return `${hostname()}/boot-${randomUUID()}`;
  return `${hostname()}/${address}`;
}
