/**
 * The lifecycle sweep over real stores served over gRPC, each with a clock of the test's: two replicas (two stores and
 * two sweeps on one PostgreSQL database) sweep at once and an idle conversation goes once; the event log is pruned past
 * events.keep, a consumer behind it logged and skipped past; and on SQLite the file stops growing: after turns, a sweep
 * and as many turns again, it is hardly larger than before the sweep (without pruning it would be about twice as large).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { GrpcStatus } from '../common/grpc/errors.js';
import { DATABASE_FILE } from '../conversation-store/sqlite/driver.js';
import type { ConversationStorage } from '../conversation-store/storage.js';
import { recordingLogger } from '../../test/support/recording-logger.js';
import { type ServedStore, serveStore } from '../../test/support/served-store.js';
import { conversationWithTurns } from '../../test/support/store-turns.js';
import { sized } from '../../test/support/size.js';
import { dropFinishedTestDatabases, postgresDriver, sqliteDriver, type StorageDriver } from '../../test/support/storage-drivers.js';
import { LifecycleSweep, RETENTION_ACTOR, type SweepSettings } from './lifecycle-sweep.js';

const DAY_MS = 24 * 3_600_000;
const KEEP_MS = 7 * DAY_MS;
const RETENTION_MS = 30 * DAY_MS;

let clock = Date.parse('2026-11-01T00:00:00.000Z');
const replicas: ServedStore[] = [];

/** One replica: a store of the test's clock, served over gRPC. */
async function replicaOn(driver: StorageDriver): Promise<ServedStore> {
  const replica = await serveStore(await driver.open({ now: () => clock }), 'lifecycle-sweep-test');
  replicas.push(replica);
  return replica;
}

const settings = (holder: string, change: Partial<SweepSettings> = {}): SweepSettings => ({
  intervalMs: 1_000,
  conversationsIdleMs: RETENTION_MS,
  auditKeepMs: undefined,
  eventsKeepMs: KEEP_MS,
  holder: { owner: `orchestrator-${holder}`, node: `node-${holder}` },
  ...change,
});

const sweepOf = (replica: ServedStore, holder: string, lines: string[] = [], change: Partial<SweepSettings> = {}) =>
  new LifecycleSweep({ store: replica.client }, settings(holder, change), recordingLogger('orchestrator', lines));

const deletions = async (storage: ConversationStorage) =>
  (await storage.listAudit({ kinds: ['conversation.deleted'], pageSize: 500, pageToken: '' })).entries;

afterEach(async () => {
  for (const replica of replicas.splice(0)) await replica.stop();
  clock = Date.parse('2026-11-01T00:00:00.000Z');
});

describe('two replicas sweeping one PostgreSQL database', () => {
  const driver = postgresDriver();
  afterEach(() => driver.dropDatabase());
  afterAll(dropFinishedTestDatabases);

  it('deletes a conversation idle past retention once, at the first sweep, and keeps the others', async () => {
    await driver.createDatabase();
    const [a, b] = [await replicaOn(driver), await replicaOn(driver)];
    const idle = await conversationWithTurns(a.storage, 2);
    clock += RETENTION_MS + DAY_MS;
    const fresh = await conversationWithTurns(b.storage, 1);

    const outcomes = await Promise.all([sweepOf(a, 'a').sweep(), sweepOf(b, 'b').sweep()]);
    // One holds the lease and sweeps; the other finds it held.
    expect(outcomes.filter((outcome) => outcome !== undefined)).toEqual([expect.objectContaining({ conversations: 1 })]);
    await expect(b.client.getConversation({ id: idle, includeMessages: false })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    expect((await a.client.getConversation({ id: fresh, includeMessages: false })).conversation?.id).toBe(fresh);
    const audited = await deletions(a.storage);
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ subject: idle, actor: RETENTION_ACTOR, via: RETENTION_ACTOR });

    // The next sweeps, of either replica, find nothing more to delete.
    const again = await Promise.all([sweepOf(a, 'a').sweep(), sweepOf(b, 'b').sweep()]);
    expect(again.every((outcome) => outcome === undefined || outcome.conversations === 0)).toBe(true);
    expect(await deletions(b.storage)).toHaveLength(1);
  });
});

describe('pruning the event log', () => {
  const driver = sqliteDriver();
  afterEach(() => driver.dropDatabase());

  it('keeps what a webhook has not passed within events.keep, then skips it past with a log line', async () => {
    await driver.createDatabase();
    const replica = await replicaOn(driver);
    await conversationWithTurns(replica.storage, 1);
    const lease = { owner: 'orchestrator-a', node: 'node-a', ttlMs: 60_000 };
    const { lastEventId: hookAt } = await replica.client.claimWebhookCursor({ endpoint: 'hook', lease });
    await conversationWithTurns(replica.storage, 1);
    const events = async () => (await replica.storage.readEvents({ afterId: 0, limit: 1_000 })).map((event) => event.id);
    const all = await events();

    const lines: string[] = [];
    clock += KEEP_MS / 2;
    expect(await sweepOf(replica, 'a', lines).sweep()).toEqual({ conversations: 0, events: 0, auditEntries: 0 });
    expect(await events()).toEqual(all);

    clock += KEEP_MS;
    expect(await sweepOf(replica, 'a', lines).sweep()).toMatchObject({ events: all.length });
    expect(await events()).toEqual([]);
    const skipped = lines.filter((line) => line.includes('an event consumer stayed behind longer than events.keep'));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain(`"consumer":"hook","last_event_id":${hookAt},"skipped_to":${all.at(-1)}`);
    expect((await replica.client.claimWebhookCursor({ endpoint: 'hook', lease })).lastEventId).toBe(all.at(-1));
  });
});

describe('growth on SQLite', () => {
  const driver = sqliteDriver();
  afterEach(() => driver.dropDatabase());

  /** The database's bytes on disk, its WAL checkpointed into the file first. */
  function databaseBytes(): number {
    const file = join(driver.dataDir!, DATABASE_FILE);
    const db = new Database(file);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    return statSync(file).size;
  }

  it('does not grow past its size before the sweep plus the kept window, turn for turn', async () => {
    const turns = sized(400, 10_000);
    const turnsPerConversation = 10;
    await driver.createDatabase();
    const replica = await replicaOn(driver);
    const round = async () => {
      for (let done = 0; done < turns; done += turnsPerConversation) await conversationWithTurns(replica.storage, turnsPerConversation);
    };
    await round();
    const beforeSweep = databaseBytes();

    // All of it is older than the retention and events.keep now: the sweeps remove it, a batch at a time.
    clock += RETENTION_MS + DAY_MS;
    const sweep = sweepOf(replica, 'a');
    for (;;) {
      const outcome = await sweep.sweep();
      if (!outcome || outcome.conversations + outcome.events === 0) break;
    }
    // What is left of the log: the deletions' own events, within events.keep.
    const left = await replica.storage.readEvents({ afterId: 0, limit: turns });
    expect(left.every((event) => event.conversationDeleted)).toBe(true);
    const afterSweep = databaseBytes();
    expect(afterSweep).toBeLessThan(beforeSweep / 2);

    // As many turns again: the kept window. Without pruning the file would hold both rounds (about twice its size).
    await round();
    expect(databaseBytes()).toBeLessThan(beforeSweep * 1.25);
  });
});
