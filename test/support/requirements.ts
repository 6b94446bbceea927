/**
 * What the test suites need from the machine beyond Node and npm, and how to get it (the
 * two README commands must do all the set-up on a fresh machine). Each requirement says
 * which test files need it, how to find it, which Debian packages provide it and, when neither
 * works, the one line that tells a person what to do. test/support/global-setup.ts walks this
 * list before any test runs; adding a service (PostgreSQL, NATS) is one more entry here.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import pg from 'pg';

export interface Requirement {
  /** What the requirement is, as a person names it: "chromium". */
  name: string;
  /** The environment variable that points at it: set by a person to choose one, set by the set-up for the tests. */
  env: string;
  /** Test files (paths relative to the repository root) that need it; runs that select none skip it. */
  neededBy: RegExp;
  /** The value for `env` when the machine has it already, else undefined. Reads `env` first. */
  find(): string | undefined | Promise<string | undefined>;
  /**
   * Starts it when it is installed but not running (a database server), where the system
   * allows it; true when it started. Tried before any install.
   */
  start?(): boolean;
  /** Debian/Ubuntu packages that provide it (`apt-get install -y …`), when apt may install it. */
  aptPackages?: string[];
  /**
   * Where apt's install puts it, for what only a few test files need and the sequencer starts
   * last (a browser): the install then runs beside the rest of the suite instead of before it,
   * `env` holds this path from the start, and `${env}_INSTALLING` names a file that exists once
   * the install is done (test/support/installing.ts waits for it).
   */
  installsInBackgroundTo?: string;
  /** One line: what to install or which variable to set. */
  explain: string;
}

/** An executable regular file at `path`. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first of `names` that is an executable on PATH. */
export function onPath(names: string[], path = process.env.PATH ?? ''): string | undefined {
  for (const name of names) {
    for (const dir of path.split(delimiter)) {
      if (dir !== '' && isExecutable(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

/** Names under which Linux distributions and Google ship a Chromium-based browser. */
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

export const chromium: Requirement = {
  name: 'chromium',
  env: 'CHROMIUM_PATH',
  // The web chat's browser tests drive it through playwright-core, which downloads no browser itself.
  neededBy: /\.browser\.test\.ts$/,
  find() {
    const chosen = process.env.CHROMIUM_PATH;
    // A path set by a person is taken as it is, or refused: never silently replaced by another browser.
    if (chosen !== undefined && chosen !== '') return isExecutable(chosen) ? chosen : undefined;
    if (isExecutable('/usr/bin/chromium')) return '/usr/bin/chromium';
    return onPath(CHROMIUM_NAMES);
  },
  aptPackages: ['chromium'],
  installsInBackgroundTo: '/usr/bin/chromium',
  explain: 'install Chromium or Chrome (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH to its executable',
};

/**
 * The oldest kustomize built into kubectl that renders deploy/kubernetes: `labels`, `patches`
 * with a target and `replicas` in a kustomization. kubectl 1.27 and later carry v5; older ones
 * (Debian bookworm's kubernetes-client is 1.20, with kustomize v2) cannot.
 */
const MIN_KUSTOMIZE_MAJOR = 5;

/** The major version of the kustomize built into the kubectl at `path`, or undefined when it says none. */
export function kustomizeMajor(path: string): number | undefined {
  const result = spawnSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 15_000 });
  if (result.status !== 0) return undefined;
  try {
    const version = (JSON.parse(result.stdout) as { kustomizeVersion?: string }).kustomizeVersion;
    const major = /^v?(\d+)\./.exec(version ?? '')?.[1];
    return major === undefined ? undefined : Number(major);
  } catch {
    return undefined;
  }
}

function kubectlThatRenders(path: string): boolean {
  return (kustomizeMajor(path) ?? 0) >= MIN_KUSTOMIZE_MAJOR;
}

export const kubectl: Requirement = {
  name: 'kubectl',
  env: 'KUBECTL_PATH',
  // The Kubernetes manifests are rendered with `kubectl kustomize` and checked offline (no cluster).
  neededBy: /^deploy\/kubernetes\.test\.ts$/,
  find() {
    const chosen = process.env.KUBECTL_PATH;
    if (chosen !== undefined && chosen !== '') return isExecutable(chosen) && kubectlThatRenders(chosen) ? chosen : undefined;
    const found = onPath(['kubectl']);
    return found !== undefined && kubectlThatRenders(found) ? found : undefined;
  },
  aptPackages: ['kubernetes-client'],
  explain: `install kubectl 1.27 or later, whose built-in kustomize is v${MIN_KUSTOMIZE_MAJOR} or later (Debian/Ubuntu: apt-get install -y kubernetes-client where the distribution's is that new), or set KUBECTL_PATH to one`,
};

/** The PostgreSQL server the tests create their own databases on (`CREATE DATABASE asg_test_…`). */
const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether a PostgreSQL server answers at `url` (within a few seconds). */
async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const postgres: Requirement = {
  name: 'PostgreSQL',
  env: 'ASG_TEST_DATABASE_URL',
  // The PostgreSQL driver's suites and the replicas' end-to-end test.
  neededBy: /(^|\/)postgres[^/]*\.test\.ts$/,
  async find() {
    const url = process.env.ASG_TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
    return (await reachable(url)) ? url : undefined;
  },
  start() {
    // Debian's clusters, as root (CI): pg_ctlcluster starts one without systemd.
    if (process.platform !== 'linux' || process.getuid?.() !== 0 || onPath(['pg_ctlcluster']) === undefined) return false;
    let versions: string[];
    try {
      versions = readdirSync('/etc/postgresql');
    } catch {
      return false;
    }
    return versions.some(
      (version) =>
        spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'ignore', timeout: 60_000 }).status ===
        0,
    );
  },
  explain:
    'start PostgreSQL on 127.0.0.1:5432 with user postgres and trust auth (Debian: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), or set ASG_TEST_DATABASE_URL to a server where the tests may create databases',
};

/** The NATS server (with JetStream) the tests create their own streams on. */
const DEFAULT_TEST_EVENTS_URL = 'nats://127.0.0.1:4222';

/** Whether a NATS server answers at `url`: its first line on a new connection is `INFO {…"jetstream":true…}`. */
function natsAnswers(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const parsed = new URL(url);
    host = parsed.hostname;
    port = Number(parsed.port || '4222');
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = new Socket();
    let seen = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(3_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => {
      seen += chunk.toString();
      if (seen.includes('\n')) done(seen.startsWith('INFO ') && seen.includes('"jetstream":true'));
    });
    socket.connect(port, host);
  });
}

export const nats: Requirement = {
  name: 'NATS',
  env: 'ASG_TEST_EVENTS_URL',
  // The NATS event suites and the replicas-over-NATS end-to-end test.
  neededBy: /(^|\/)[^/]*nats[^/]*\.test\.ts$/,
  async find() {
    const url = process.env.ASG_TEST_EVENTS_URL || DEFAULT_TEST_EVENTS_URL;
    return (await natsAnswers(url)) ? url : undefined;
  },
  start() {
    // Debian's nats-server, as root (CI): started in the background with JetStream, without systemd.
    if (
      process.platform !== 'linux' ||
      process.getuid?.() !== 0 ||
      !isExecutable('/usr/sbin/nats-server') ||
      onPath(['start-stop-daemon']) === undefined
    )
      return false;
    const args = [
      '--start',
      '--oknodo',
      '--background',
      '--exec',
      '/usr/sbin/nats-server',
      '--',
      '-a',
      '127.0.0.1',
      '-p',
      '4222',
      '-js',
      '-sd',
      '/var/lib/nats-server',
      '-l',
      '/var/log/nats-server.log',
    ];
    if (spawnSync('start-stop-daemon', args, { stdio: 'ignore', timeout: 30_000 }).status !== 0) return false;
    // It answers a moment after the daemon forked.
    spawnSync('sleep', ['1']);
    return true;
  },
  aptPackages: ['nats-server'],
  explain:
    'start nats-server with JetStream on 127.0.0.1:4222 (Debian: apt-get install -y nats-server; start-stop-daemon --start --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server), or set ASG_TEST_EVENTS_URL to one',
};

/** Everything the suites may need, in the order they are checked. */
// In this order: one installed in the background (chromium) comes last, so that apt never runs twice at once.
export const REQUIREMENTS: Requirement[] = [kubectl, postgres, nats, chromium];
