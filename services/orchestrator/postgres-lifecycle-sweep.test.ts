/**
 * Two replicas of the lifecycle sweep on one PostgreSQL database — two stores, each served over gRPC, and two sweeps,
 * as two orchestrator replicas run them — with a clock of the test's: they sweep at once, one holds the lease, and a
 * conversation idle past retention goes once, at that sweep, while the others stay.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { GrpcStatus } from '../common/grpc/errors.js';
import { dropFinishedTestDatabases, postgresDriver } from '../../test/support/storage-drivers.js';
import { conversationWithTurns } from '../../test/support/store-turns.js';
import { DAY_MS, deletionEntries, RETENTION_MS, sweepReplicas } from '../../test/support/sweep-replicas.js';
import { RETENTION_ACTOR } from './lifecycle-sweep.js';

const driver = postgresDriver();
const replicas = sweepReplicas(driver);

afterEach(async () => {
  await replicas.stop();
  await driver.dropDatabase();
});
afterAll(dropFinishedTestDatabases);

describe('two replicas sweeping one PostgreSQL database', () => {
  it('deletes a conversation idle past retention once, at the first sweep, and keeps the others', async () => {
    await driver.createDatabase();
    const [a, b] = [await replicas.replica(), await replicas.replica()];
    const idle = await conversationWithTurns(a.storage, 2);
    replicas.advance(RETENTION_MS + DAY_MS);
    const fresh = await conversationWithTurns(b.storage, 1);

    const outcomes = await Promise.all([replicas.sweep(a, 'a').sweep(), replicas.sweep(b, 'b').sweep()]);
    // One holds the lease and sweeps; the other finds it held.
    expect(outcomes.filter((outcome) => outcome !== undefined)).toEqual([expect.objectContaining({ conversations: 1 })]);
    await expect(b.client.getConversation({ id: idle, includeMessages: false })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    expect((await a.client.getConversation({ id: fresh, includeMessages: false })).conversation?.id).toBe(fresh);
    const audited = await deletionEntries(a.storage);
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ subject: idle, actor: RETENTION_ACTOR, via: RETENTION_ACTOR });

    // The next sweeps, of either replica, find nothing more to delete.
    const again = await Promise.all([replicas.sweep(a, 'a').sweep(), replicas.sweep(b, 'b').sweep()]);
    expect(again.every((outcome) => outcome === undefined || outcome.conversations === 0)).toBe(true);
    expect(await deletionEntries(b.storage)).toHaveLength(1);
  });
});
