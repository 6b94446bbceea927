/**
 * Which driver the store opens and how its events cross replicas, and that the
 * database URL's password and the events URL's credentials are never shown.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../common/config/schema.js';
import { redactSecrets } from '../common/secrets.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { eventsUrl, natsServer } from './events-url.js';
import { databaseUrl, openConfiguredStorage } from './open-storage.js';
import { openPostgresStorage } from './postgres/driver.js';
import { isPostgresUrl, redactedDatabaseUrl } from './postgres/pool.js';

const config = (store: Record<string, unknown> = {}, events: Record<string, unknown> = {}) => configSchema.parse({ store, events });

describe('choosing the store database', () => {
  it('is SQLite in data_dir by default, store.url when set, and ASG_DATABASE_URL over both', () => {
    expect(databaseUrl(config(), {})).toBe('');
    expect(databaseUrl(config({ url: 'postgres://db.internal/asg' }), {})).toBe('postgres://db.internal/asg');
    expect(databaseUrl(config({ url: 'postgres://db.internal/asg' }), { ASG_DATABASE_URL: 'postgresql://other/asg' })).toBe(
      'postgresql://other/asg',
    );
    expect(databaseUrl(config(), { ASG_DATABASE_URL: '' })).toBe('');
    expect(() => databaseUrl(config(), { ASG_DATABASE_URL: 'mysql://db/asg' })).toThrow(/ASG_DATABASE_URL must be a postgres:\/\/ URL/);
  });

  it('refuses a store.url that is not a postgres:// URL, and has documented pool defaults', () => {
    expect(() => config({ url: 'sqlite:///tmp/x.db' })).toThrow(/postgres:\/\/ URL/);
    expect(config().store).toEqual({
      url: '',
      pool: { max_connections: 10, statement_timeout: 30_000, idle_in_transaction_timeout: 60_000, connect_timeout: 10_000 },
    });
    expect([isPostgresUrl('postgres://x/y'), isPostgresUrl('POSTGRESQL://x/y'), isPostgresUrl('http://x')]).toEqual([true, true, false]);
  });

  it('shows the URL without its password, and redacts the password wherever it appears', () => {
    const url = 'postgres://asg:p%40ss-word-93c1@db.internal:5432/asg';
    expect(redactedDatabaseUrl(url)).toBe('postgres://asg:***@db.internal:5432/asg');
    expect(redactSecrets('connect failed for p@ss-word-93c1')).toBe('connect failed for [redacted]');
    expect(redactSecrets(`cannot open ${url}`)).toBe('cannot open postgres://asg:[redacted]@db.internal:5432/asg');
    expect(redactedDatabaseUrl('postgres://db.internal/asg')).toBe('postgres://db.internal/asg');
  });

  it('fails to start with UNAVAILABLE naming the database without its password when nothing answers', async () => {
    const opening = openPostgresStorage({ url: 'postgres://asg:unreachable-pw-5512@127.0.0.1:1/asg', pool: { connectTimeoutMs: 2_000 } });
    await expect(opening).rejects.toMatchObject({
      code: GrpcStatus.UNAVAILABLE,
      message: expect.stringContaining('postgres://asg:***@127.0.0.1:1/asg'),
    });
    await expect(opening).rejects.not.toMatchObject({ message: expect.stringContaining('unreachable-pw-5512') });
  });
});

describe('choosing how events cross replicas', () => {
  it('is LISTEN/NOTIFY by default, events.url when set, and ASG_EVENTS_URL over both', () => {
    expect(config().events).toEqual({ url: '', prefix: 'asg', max_age: 24 * 3_600_000, keep: 7 * 24 * 3_600_000 });
    expect(eventsUrl(config(), {})).toBe('');
    expect(eventsUrl(config({}, { url: 'nats://nats.internal:4222' }), {})).toBe('nats://nats.internal:4222');
    expect(eventsUrl(config({}, { url: 'nats://nats.internal:4222' }), { ASG_EVENTS_URL: 'nats://other:4222' })).toBe('nats://other:4222');
    expect(() => eventsUrl(config(), { ASG_EVENTS_URL: 'redis://cache:6379' })).toThrow(/ASG_EVENTS_URL must be a nats:\/\/ URL/);
    expect(() => config({}, { url: 'amqp://mq' })).toThrow(/nats:\/\/ URL/);
    expect(() => config({}, { prefix: 'Has.Dots' })).toThrow(/lower-case letters/);
  });

  it('takes user and password, or a token, from the URL, and shows it without them', () => {
    expect(natsServer('nats://asg:nats-pw-4410@nats.internal:4222')).toEqual({
      server: 'nats.internal:4222',
      user: 'asg',
      pass: 'nats-pw-4410',
      redacted: 'nats://***@nats.internal:4222',
    });
    expect(natsServer('nats://token-4410-abcdef@nats.internal')).toEqual({
      server: 'nats.internal:4222',
      token: 'token-4410-abcdef',
      redacted: 'nats://***@nats.internal:4222',
    });
    expect(natsServer('nats://127.0.0.1:4222')).toEqual({ server: '127.0.0.1:4222', redacted: 'nats://127.0.0.1:4222' });
    expect(redactSecrets('auth failed for nats-pw-4410 and token-4410-abcdef')).toBe('auth failed for [redacted] and [redacted]');
  });

  it('opens SQLite in data_dir and says that it does not use an events URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'asg-open-'));
    try {
      const opened = await openConfiguredStorage(
        configSchema.parse({ data_dir: dir }),
        { ASG_EVENTS_URL: 'nats://127.0.0.1:4222' },
        () => undefined,
      );
      expect([opened.events, opened.eventsUrlIgnored]).toEqual(['in-process', true]);
      await opened.storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
