/**
 * A PostgreSQL restart or failover ends every connection of the store (SQLSTATE 57P01),
 * the outbox publisher's lock connection with the rest: two mesh replicas whose events cross
 * over NATS JetStream live through every backend of their database being terminated five
 * times under load, answer every request after, run no approved call twice
 * (test/support/backend-terminations.ts), and the leader that lost its lock and the one that
 * took it after never both published: the stream holds each stored event once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { natsEventNames } from '../../services/conversation-store/postgres/nats-subjects.js';
import pg from 'pg';
import { databaseUrl } from '../support/storage-drivers.js';
import { survivesBackendTerminations } from '../support/backend-terminations.js';
import { until } from '../support/until.js';

const natsUrl = process.env.ASG_TEST_EVENTS_URL || 'nats://127.0.0.1:4222';
const prefix = `term${randomBytes(4).toString('hex')}`;
const { stream } = natsEventNames(prefix);

afterAll(async () => {
  const nats = await connect({ servers: new URL(natsUrl).host });
  await (await jetstreamManager(nats)).streams.delete(stream).catch(() => undefined);
  await nats.close();
});

survivesBackendTerminations('two replicas, events over NATS JetStream, every backend of their database terminated', {
  env: { ASG_EVENTS_URL: natsUrl },
  prefix,
  async finally(database) {
    const db = new pg.Client({ connectionString: databaseUrl(database) });
    await db.connect();
    const latest = Number((await db.query<{ id: string }>('SELECT last_id AS id FROM event_ids')).rows[0]!.id);
    await db.end();
    const nats = await connect({ servers: new URL(natsUrl).host });
    try {
      const manager = await jetstreamManager(nats);
      // Each id is published once, in order (a second leader's publish would be refused or doubled).
      await until(
        'every stored event in the stream',
        async () => (await manager.streams.info(stream)).state.messages === latest,
        15_000,
        50,
      );
      const last = await manager.streams.getMessage(stream, { last_by_subj: natsEventNames(prefix).storedSubject });
      expect(last!.json<{ id: number }>().id).toBe(latest);
    } finally {
      await nats.close();
    }
  },
});
