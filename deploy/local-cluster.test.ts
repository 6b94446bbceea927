/**
 * deploy/local-cluster.sh: N replicas of the mesh, each `npm start` on its own
 * port with a config that differs from the given one in `port:` alone, sharing ASG_DATABASE_URL
 * and ASG_EVENTS_URL. What a cluster of real replicas does on PostgreSQL and NATS is the store's
 * and the events' own acceptance tests; here the script's part is checked: the configs it
 * writes, what it refuses, and that it starts every replica and stops them all — with a stand-in
 * for `npm` on PATH that records how it was started and waits for its signal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../services/common/config/load.js';

const here = import.meta.dirname;
const script = join(here, 'local-cluster.sh');
const shippedConfig = join(here, '..', 'config', 'agent.yaml');
const URLS = { ASG_DATABASE_URL: 'postgres://asg:secret@127.0.0.1:5432/asg', ASG_EVENTS_URL: 'nats://127.0.0.1:4222' };

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'asg-cluster-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string>) {
  return spawnSync('bash', [script, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env }, timeout: 30_000 });
}

async function until(condition: () => boolean, what: string, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('deploy/local-cluster.sh', () => {
  it('writes one valid config per replica that differs from the given one only in its port', () => {
    const dir = tempDir();
    const result = run(['3', '--port', '9100', '--config', shippedConfig], { ...URLS, ASG_CLUSTER_DIR: dir, ASG_CLUSTER_DRY_RUN: '1' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([1, 2, 3].map((i) => `npm start -- --config ${join(dir, `replica-${i}.yaml`)}`));
    const original = loadConfig(shippedConfig);
    [9100, 9101, 9102].forEach((port, index) => {
      const replica = loadConfig(join(dir, `replica-${index + 1}.yaml`));
      expect(replica).toEqual({ ...original, port });
    });
  });

  it('refuses to start without a shared PostgreSQL and NATS, or with an argument it does not know', () => {
    const missingDatabase = run(['2'], { ASG_EVENTS_URL: URLS.ASG_EVENTS_URL });
    expect(missingDatabase.status).toBe(2);
    expect(missingDatabase.stderr).toMatch(/set ASG_DATABASE_URL to a PostgreSQL URL/);
    const sqlite = run(['2'], { ASG_DATABASE_URL: 'sqlite:./data/conversations.db', ASG_EVENTS_URL: URLS.ASG_EVENTS_URL });
    expect(sqlite.status).toBe(2);
    const missingEvents = run(['2'], { ASG_DATABASE_URL: URLS.ASG_DATABASE_URL });
    expect(missingEvents.status).toBe(2);
    expect(missingEvents.stderr).toMatch(/set ASG_EVENTS_URL to a NATS URL/);
    const unknown = run(['two'], URLS);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown argument "two"/);
  });

  it('starts every replica with the shared URLs and stops them all on SIGTERM', async () => {
    const dir = tempDir();
    const bin = join(dir, 'bin');
    const records = join(dir, 'records');
    spawnSync('mkdir', ['-p', bin, records]);
    // The stand-in: records its arguments and environment, then waits for SIGTERM and records that.
    // Its trap is set before it says it started: a SIGTERM right after the record must find it.
    writeFileSync(
      join(bin, 'npm'),
      `#!/usr/bin/env bash
record="${records}/$$"
trap 'echo stopped > "$record.stopped"; exit 0' TERM
echo "$* | $ASG_DATABASE_URL | $ASG_EVENTS_URL" > "$record.started"
while true; do sleep 0.1; done
`,
    );
    chmodSync(join(bin, 'npm'), 0o755);
    const cluster = spawn('bash', [script, '2', '--port', '9200', '--config', shippedConfig], {
      env: { PATH: `${bin}:${process.env.PATH}`, ...URLS, ASG_CLUSTER_DIR: join(dir, 'cluster') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => cluster.on('exit', (code) => resolve(code)));
    const started = () => readdirSync(records).filter((name) => name.endsWith('.started'));
    await until(() => started().length === 2, 'two replicas to start');
    const lines = started()
      .map((name) => readFileSync(join(records, name), 'utf8').trim())
      .sort();
    expect(lines).toEqual(
      [1, 2].map(
        (i) =>
          `start --silent -- --config ${join(dir, 'cluster', `replica-${i}.yaml`)} | ${URLS.ASG_DATABASE_URL} | ${URLS.ASG_EVENTS_URL}`,
      ),
    );
    cluster.kill('SIGTERM');
    expect(await exited).toBe(143);
    for (const name of started()) expect(existsSync(join(records, name.replace('.started', '.stopped'))), name).toBe(true);
  });
});
