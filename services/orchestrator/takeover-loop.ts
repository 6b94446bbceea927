import type { TakenOverRun } from '../../gen/ts/asg/store/v1/store.js';
import { withContextPatch } from '../common/context.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import type { RunLeases } from './leases.js';
import { Poller } from './poller.js';
import { errorText } from './run/io.js';

/** Runs taken over at once by one replica: more wait for the next poll, on this replica or another. */
const MAX_CONCURRENT_TAKEOVERS = 8;

/**
 * Every `interval`, asks the store for runs whose lease expired (their replica died) or was
 * handed back (it drained), and those this replica gave up itself (RunLeases.giveUp), and goes
 * on with each. The store hands a run to exactly
 * one asking replica (TakeOverRuns), so any number of replicas may poll at once. A hand-written
 * loop rather than a job library: the lease lives on the conversation row, changed in the same
 * transaction as the turn's running mark and writes (docs/architecture.md, "Runs with leases").
 */
export class TakeoverLoop {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly poller: Poller;

  constructor(
    private readonly leases: RunLeases,
    private readonly clients: Pick<OrchestratorClients, 'store'>,
    private readonly intervalMs: number,
    private readonly takeOver: (run: TakenOverRun) => Promise<void>,
    private readonly log: Logger,
  ) {
    this.poller = new Poller(intervalMs, 'look for runs to take over', () => this.poll(), log);
  }

  start(): void {
    this.poller.start();
  }

  /** Stops polling; runs already taken over go on (the orchestrator's drain hands them back). */
  stop(): void {
    this.poller.stop();
  }

  private poll(): Promise<void> | false {
    const room = MAX_CONCURRENT_TAKEOVERS - this.inFlight.size;
    return room > 0 && this.takeOverSome(room);
  }

  private async takeOverSome(room: number): Promise<void> {
    const givenUp = this.leases.givenUpRuns(room);
    const { runs } = await withContextPatch({ deadline: Date.now() + Math.max(1_000, this.intervalMs) }, () =>
      this.clients.store.takeOverRuns({ lease: this.leases.lease(), limit: room, givenUp }),
    );
    this.leases.takenBack(
      givenUp,
      runs.map((run) => run.conversationId),
      room,
    );
    for (const run of runs) {
      if (this.poller.stopped) {
        // Taken in the same moment as the stop: give it straight back.
        void this.leases.release(run.conversationId);
        continue;
      }
      const going = this.takeOver(run)
        .catch((error: unknown) => this.log.error('taken-over run failed', { conversation: run.conversationId, error: errorText(error) }))
        .finally(() => this.inFlight.delete(going));
      this.inFlight.add(going);
    }
  }
}
