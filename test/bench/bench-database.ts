import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, onTestServer, testServerUrl } from '../support/storage-drivers.js';
import { undoOnInterrupt } from './interrupt.js';

/**
 * The PostgreSQL databases of the bench: on the server the tests use (ASG_TEST_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/postgres), one fresh `asg_bench_<random>` per
 * measurement, dropped after it even when it fails or is interrupted.
 */

/** Why the bench cannot use PostgreSQL, or undefined when the server answers and lets it create databases. */
export async function postgresUnavailable(): Promise<string | undefined> {
  const server = new URL(testServerUrl());
  const where = `${server.hostname}:${server.port || 5432}`;
  const client = new pg.Client({ connectionString: server.toString(), connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const [role] = (
      await client.query<{ can: boolean }>('SELECT rolcreatedb OR rolsuper AS can FROM pg_roles WHERE rolname = current_user')
    ).rows;
    return role?.can ? undefined : `the role of ${where} may not create databases`;
  } catch (error) {
    return `no PostgreSQL answers at ${where} (${error instanceof Error ? error.message : String(error)}); set ASG_TEST_DATABASE_URL to a server where the bench may create databases`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `asg_bench_${randomBytes(6).toString('hex')}`;
  // A name of [a-z0-9_] made here, never input: CREATE DATABASE takes no parameters.
  await onTestServer(`CREATE DATABASE ${name}`);
  const drop = undoOnInterrupt(() => onTestServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return { name, url: databaseUrl(name), drop };
}
