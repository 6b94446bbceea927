/** Issue 14: which driver the store opens, and that the database URL's password is never shown. */
import { describe, expect, it } from 'vitest';
import { configSchema } from '../common/config/schema.js';
import { redactSecrets } from '../common/secrets.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { databaseUrl } from './open-storage.js';
import { openPostgresStorage } from './postgres/driver.js';
import { isPostgresUrl, redactedDatabaseUrl } from './postgres/pool.js';

const config = (store: Record<string, unknown> = {}) => configSchema.parse({ store });

describe('choosing the store database', () => {
  it('is SQLite in data_dir by default, store.url when set, and ASG_DATABASE_URL over both', () => {
    expect(databaseUrl(config(), {})).toBe('');
    expect(databaseUrl(config({ url: 'postgres://db.internal/asg' }), {})).toBe('postgres://db.internal/asg');
    expect(databaseUrl(config({ url: 'postgres://db.internal/asg' }), { ASG_DATABASE_URL: 'postgresql://other/asg' })).toBe('postgresql://other/asg');
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
    await expect(opening).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE, message: expect.stringContaining('postgres://asg:***@127.0.0.1:1/asg') });
    await expect(opening).rejects.not.toMatchObject({ message: expect.stringContaining('unreachable-pw-5512') });
  });
});
