/**
 * The lifecycle sweep over a real SQLite store served over gRPC, with a clock of the test's: the event log is pruned
 * past events.keep, a consumer behind it logged and skipped past; run journals past runs.keep, never a waiting run's; and the file stops growing: after turns, a sweep and
 * as many turns again, it is hardly larger than before the sweep (without pruning it would be about twice as large).
 * Two replicas on PostgreSQL: postgres-lifecycle-sweep.test.ts.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { parseConfig } from '../common/config/load.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { DATABASE_FILE } from '../conversation-store/sqlite/driver.js';
import { sized } from '../../test/support/size.js';
import { sqliteDriver } from '../../test/support/storage-drivers.js';
import { conversationWithTurns } from '../../test/support/store-turns.js';
import { DAY_MS, KEEP_MS, RETENTION_MS, sweepReplicas } from '../../test/support/sweep-replicas.js';
import { sweepSettings } from './lifecycle-sweep.js';

const driver = sqliteDriver();
const replicas = sweepReplicas(driver);

afterEach(async () => {
  await replicas.stop();
  await driver.dropDatabase();
});

describe('pruning the event log', () => {
  it('keeps what a webhook has not passed within events.keep, then skips it past with a log line', async () => {
    await driver.createDatabase();
    const replica = await replicas.replica();
    await conversationWithTurns(replica.storage, 1);
    const lease = { owner: 'orchestrator-a', node: 'node-a', ttlMs: 60_000 };
    const { lastEventId: hookAt } = await replica.client.claimWebhookCursor({ endpoint: 'hook', lease });
    await conversationWithTurns(replica.storage, 1);
    const events = async () => (await replica.storage.readEvents({ afterId: 0, limit: 1_000 })).map((event) => event.id);
    const all = await events();

    const lines: string[] = [];
    replicas.advance(KEEP_MS / 2);
    expect(await replicas.sweep(replica, 'a', lines).sweep()).toEqual({ conversations: 0, events: 0, auditEntries: 0, runJournals: 0 });
    expect(await events()).toEqual(all);

    replicas.advance(KEEP_MS);
    expect(await replicas.sweep(replica, 'a', lines).sweep()).toMatchObject({ events: all.length });
    expect(await events()).toEqual([]);
    const skipped = lines.filter((line) => line.includes('an event consumer stayed behind longer than events.keep'));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain(`"consumer":"hook","last_event_id":${hookAt},"skipped_to":${all.at(-1)}`);
    expect((await replica.client.claimWebhookCursor({ endpoint: 'hook', lease })).lastEventId).toBe(all.at(-1));
  });
});

describe('pruning run journals', () => {
  it('keeps journals 30 days after their run ended by default, for ever with runs.keep: keep', () => {
    const holder = { owner: 'o', node: 'n' };
    expect(sweepSettings(parseConfig({}, 'agent.yaml'), holder).runsKeepMs).toBe(30 * DAY_MS);
    expect(sweepSettings(parseConfig({ runs: { keep: '90d' } }, 'agent.yaml'), holder).runsKeepMs).toBe(90 * DAY_MS);
    expect(sweepSettings(parseConfig({ runs: { keep: 'keep' } }, 'agent.yaml'), holder).runsKeepMs).toBeUndefined();
  });

  it('removes the journals of runs that ended before runs.keep, and keeps a waiting run however old', async () => {
    await driver.createDatabase();
    const replica = await replicas.replica();
    const journaled = async (status: string) => {
      const conversationId = await conversationWithTurns(replica.storage, 1);
      const runId = randomUUID();
      const step = {
        index: 0,
        kind: 'node_started',
        node: 'pipeline',
        startedAtMs: replicas.clock,
        durationMs: 0,
        bodyJson: JSON.stringify({ type: 'sequential' }),
      };
      await replica.storage.updateRun({
        conversationId,
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'done' }],
        approvals: [],
        expectedRevision: 0,
        returnConversation: false,
        journal: { runId, startedAtMs: replicas.clock, status, steps: [step] },
      });
      return runId;
    };
    const ended = await journaled('completed');
    const waiting = await journaled('waiting_approval');
    const settings = { runsKeepMs: KEEP_MS, conversationsIdleMs: undefined };

    replicas.advance(KEEP_MS / 2);
    expect(await replicas.sweep(replica, 'a', [], settings).sweep()).toMatchObject({ runJournals: 0 });
    // `keep`: never, however old.
    replicas.advance(KEEP_MS);
    expect(await replicas.sweep(replica, 'a', [], { ...settings, runsKeepMs: undefined }).sweep()).toMatchObject({ runJournals: 0 });
    const lines: string[] = [];
    expect(await replicas.sweep(replica, 'a', lines, settings).sweep()).toMatchObject({ runJournals: 1 });
    await expect(replica.client.getRun({ runId: ended })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    expect((await replica.client.getRun({ runId: waiting })).run).toMatchObject({ status: 'waiting_approval' });
    expect(lines.find((line) => line.includes('old data removed'))).toContain('"runJournals":1');
  });
});

describe('growth on SQLite', () => {
  it('switches a file made before incremental auto-vacuum at its first open', async () => {
    await driver.createDatabase();
    await (await replicas.replica()).stop();
    await driver.execute('PRAGMA auto_vacuum = NONE; VACUUM;');
    const mode = () => {
      const db = new Database(join(driver.dataDir!, DATABASE_FILE), { readonly: true });
      try {
        return db.pragma('auto_vacuum', { simple: true });
      } finally {
        db.close();
      }
    };
    expect(mode()).toBe(0);
    await replicas.replica();
    expect(mode()).toBe(2);
  });

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
    const replica = await replicas.replica();
    const round = async () => {
      for (let done = 0; done < turns; done += turnsPerConversation) await conversationWithTurns(replica.storage, turnsPerConversation);
    };
    await round();
    const beforeSweep = databaseBytes();

    // All of it is older than the retention and events.keep now: the sweeps remove it, a batch at a time.
    replicas.advance(RETENTION_MS + DAY_MS);
    const sweep = replicas.sweep(replica, 'a');
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
