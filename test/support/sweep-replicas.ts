import type { ConversationStorage } from '../../services/conversation-store/storage.js';
import { LifecycleSweep, type SweepSettings } from '../../services/orchestrator/lifecycle-sweep.js';
import { recordingLogger } from './recording-logger.js';
import { type ServedStore, serveStore } from './served-store.js';
import type { StorageDriver } from './storage-drivers.js';

export const DAY_MS = 24 * 3_600_000;
/** events.keep and retention.conversations of the sweeps made here. */
export const KEEP_MS = 7 * DAY_MS;
export const RETENTION_MS = 30 * DAY_MS;

const START = Date.parse('2026-11-01T00:00:00.000Z');

/**
 * Replicas of the lifecycle sweep for tests: stores on the test's database with one clock the test moves, each served
 * over gRPC, and sweeps over them (what an orchestrator replica runs), each with a holder of its own.
 */
export function sweepReplicas(driver: StorageDriver) {
  let now = START;
  const replicas: ServedStore[] = [];
  return {
    get clock() {
      return now;
    },
    advance(ms: number) {
      now += ms;
    },
    /** A store replica on the driver's current database. */
    async replica(): Promise<ServedStore> {
      const replica = await serveStore(await driver.open({ now: () => now }), 'lifecycle-sweep-test');
      replicas.push(replica);
      return replica;
    },
    /** A sweep of orchestrator replica `holder` over `replica`; its log lines go to `lines`. */
    sweep(replica: ServedStore, holder: string, lines: string[] = [], change: Partial<SweepSettings> = {}): LifecycleSweep {
      const settings: SweepSettings = {
        intervalMs: 1_000,
        conversationsIdleMs: RETENTION_MS,
        auditKeepMs: undefined,
        eventsKeepMs: KEEP_MS,
        runsKeepMs: undefined,
        holder: { owner: `orchestrator-${holder}`, node: `node-${holder}` },
        ...change,
      };
      return new LifecycleSweep({ store: replica.client }, settings, recordingLogger('orchestrator', lines));
    },
    /** Stops every replica and sets the clock back. */
    async stop(): Promise<void> {
      for (const replica of replicas.splice(0)) await replica.stop();
      now = START;
    },
  };
}

/** The conversation.deleted audit entries, newest first. */
export async function deletionEntries(storage: ConversationStorage) {
  return (await storage.listAudit({ kinds: ['conversation.deleted'], pageSize: 500, pageToken: '' })).entries;
}
