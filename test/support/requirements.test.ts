/**
 * How the test set-up finds what the suites need: the variable a person set wins,
 * and is refused rather than replaced when it names no executable; otherwise the PATH.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chromium, isExecutable, kubectl, kustomizeMajor, nats, onPath, postgres, REQUIREMENTS } from './requirements.js';

const saved = process.env.CHROMIUM_PATH;
const savedKubectl = process.env.KUBECTL_PATH;
const dirs: string[] = [];

function binDir(names: string[], mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'asg-req-'));
  dirs.push(dir);
  for (const name of names) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), mode);
  }
  return dir;
}

afterEach(() => {
  if (saved === undefined) delete process.env.CHROMIUM_PATH;
  else process.env.CHROMIUM_PATH = saved;
  if (savedKubectl === undefined) delete process.env.KUBECTL_PATH;
  else process.env.KUBECTL_PATH = savedKubectl;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('requirements of the test suites', () => {
  it('finds an executable on PATH in the order of the names, skipping files that cannot run', () => {
    const first = binDir(['chromium-browser'], 0o644);
    const second = binDir(['google-chrome', 'chromium-browser']);
    expect(onPath(['chromium', 'chromium-browser', 'google-chrome'], `${first}:${second}`)).toBe(join(second, 'chromium-browser'));
    expect(onPath(['chromium'], `${first}:${second}`)).toBeUndefined();
    expect(isExecutable(first)).toBe(false);
  });

  it('takes CHROMIUM_PATH as it is, and finds nothing when it names no executable', () => {
    const dir = binDir(['my-chrome']);
    process.env.CHROMIUM_PATH = join(dir, 'my-chrome');
    expect(chromium.find()).toBe(join(dir, 'my-chrome'));
    process.env.CHROMIUM_PATH = join(dir, 'missing');
    expect(chromium.find()).toBeUndefined();
  });

  it('asks for the browser only for the browser suites, and says in one line what to do', () => {
    expect(chromium.neededBy.test('test/e2e/web-chat.browser.test.ts')).toBe(true);
    expect(chromium.neededBy.test('test/e2e/fuzz.test.ts')).toBe(false);
    for (const requirement of REQUIREMENTS) expect(requirement.explain).not.toContain('\n');
    expect(chromium.explain).toMatch(/apt-get install -y chromium.*CHROMIUM_PATH/);
  });

  it('takes only a kubectl whose built-in kustomize renders the manifests (v5 or later)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'asg-req-'));
    dirs.push(dir);
    const fake = (name: string, kustomize: string) => {
      writeFileSync(join(dir, name), `#!/bin/sh\necho '{"clientVersion":{"gitVersion":"v1.x"},"kustomizeVersion":"${kustomize}"}'\n`);
      chmodSync(join(dir, name), 0o755);
      return join(dir, name);
    };
    const recent = fake('kubectl-recent', 'v5.5.0');
    const old = fake('kubectl-old', 'v2.0.3');
    expect(kustomizeMajor(recent)).toBe(5);
    expect(kustomizeMajor(old)).toBe(2);
    process.env.KUBECTL_PATH = recent;
    expect(kubectl.find()).toBe(recent);
    process.env.KUBECTL_PATH = old;
    expect(kubectl.find()).toBeUndefined();
    expect(kubectl.neededBy.test('deploy/kubernetes.test.ts')).toBe(true);
    expect(kubectl.neededBy.test('deploy/deploy.test.ts')).toBe(false);
    expect(kubectl.explain).toMatch(/kubernetes-client.*KUBECTL_PATH/);
  });

  it('asks for PostgreSQL only for the PostgreSQL suites, and says how to start it or where to point', () => {
    expect(postgres.neededBy.test('services/conversation-store/postgres-storage.test.ts')).toBe(true);
    expect(postgres.neededBy.test('test/e2e/postgres-replicas.test.ts')).toBe(true);
    expect(postgres.neededBy.test('services/conversation-store/sqlite-storage.test.ts')).toBe(false);
    expect(postgres.explain).toMatch(/pg_ctlcluster.*ASG_TEST_DATABASE_URL/);
  });

  it('asks for NATS only for the NATS suites (which need PostgreSQL too), and finds none where nothing answers', async () => {
    for (const file of ['services/conversation-store/postgres-nats-events.test.ts', 'test/e2e/postgres-nats-replicas.test.ts']) {
      expect(nats.neededBy.test(file)).toBe(true);
      expect(postgres.neededBy.test(file)).toBe(true);
    }
    expect(nats.neededBy.test('test/e2e/postgres-replicas.test.ts')).toBe(false);
    expect(nats.explain).toMatch(/nats-server.*-js.*ASG_TEST_EVENTS_URL/);
    const old = process.env.ASG_TEST_EVENTS_URL;
    // Port 1 on loopback: nothing listens there.
    process.env.ASG_TEST_EVENTS_URL = 'nats://127.0.0.1:1';
    try {
      expect(await nats.find()).toBeUndefined();
    } finally {
      if (old === undefined) delete process.env.ASG_TEST_EVENTS_URL;
      else process.env.ASG_TEST_EVENTS_URL = old;
    }
  });
});
