/**
 * Vitest global set-up: before any test runs, make sure the machine has what the
 * selected test files need (test/support/requirements.ts). For each requirement: find it; else
 * install it where the system allows it (Debian/Ubuntu apt as root or with passwordless sudo),
 * its output summarised in two lines and the whole of it kept in a log file; else stop the run at
 * once with one line saying what to install or which variable to set — never a wall of failing
 * tests. What is found goes to the tests in the requirement's environment variable (the test
 * workers are forked after this, with this process's environment).
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REQUIREMENTS, onPath, type Requirement } from './requirements.js';

/** apt-get update plus the install of a browser and its libraries: minutes on a slow mirror, never unbounded. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

export default async function setup(project: TestProject): Promise<void> {
  const files = await selectedTestFiles(project);
  for (const requirement of REQUIREMENTS) {
    if (!files.some((file) => requirement.neededBy.test(file))) continue;
    process.env[requirement.env] = await provide(requirement);
  }
}

/**
 * The test files of this run, relative to the repository root. Vitest keeps the command line's
 * file filters in `filenamePattern` (not in its typed API); without it, every file counts, which
 * errs on the side of checking too much.
 */
async function selectedTestFiles(project: TestProject): Promise<string[]> {
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const { testFiles } = await project.globTestFiles(filters);
  return testFiles.map((file) => relative(project.config.root, file));
}

async function provide(requirement: Requirement): Promise<string> {
  const found = await requirement.find();
  if (found !== undefined) return found;
  // Being installed in the background since an earlier call (vitest sets up each project in turn).
  const background = requirement.installsInBackgroundTo;
  if (background !== undefined && process.env[`${requirement.env}_INSTALLING`] !== undefined) return background;
  if (requirement.start?.()) {
    const started = await requirement.find();
    if (started !== undefined) {
      console.log(`test set-up: started ${requirement.name}`);
      return started;
    }
  }
  const chosen = process.env[requirement.env];
  if (chosen && requirement.aptPackages === undefined)
    stop(`${requirement.name} not reachable at ${requirement.env}=${chosen}: ${requirement.explain}`);
  if (chosen) stop(`${requirement.env}=${chosen} is not a usable ${requirement.name}: ${requirement.explain}`);
  const apt = aptCommand();
  if (requirement.aptPackages === undefined || apt === undefined) stop(`${requirement.name} not found: ${requirement.explain}`);
  if (background !== undefined) {
    const done = join(tmpdir(), `asg-test-setup-${requirement.name}-${process.pid}.installed`);
    rmSync(done, { force: true });
    process.env[`${requirement.env}_INSTALLING`] = done;
    // Not awaited: the tests that need it start last and wait for the file; a failed install ends the run (stop).
    void installNow(requirement, apt, requirement.aptPackages).then(() => writeFileSync(done, background));
    return background;
  }
  return installNow(requirement, apt, requirement.aptPackages);
}

async function installNow(requirement: Requirement, apt: string[], packages: string[]): Promise<string> {
  await aptInstall(requirement, apt, packages);
  // A server installed just now (nats-server) may need starting too.
  const installed = (await requirement.find()) ?? (requirement.start?.() ? await requirement.find() : undefined);
  return installed ?? stop(`${requirement.name} still not found after apt-get installed ${packages.join(' ')}: ${requirement.explain}`);
}

/** How to run apt-get here: directly as root, through passwordless sudo, or not at all. */
function aptCommand(): string[] | undefined {
  if (process.platform !== 'linux' || onPath(['apt-get']) === undefined) return undefined;
  if (process.getuid?.() === 0) return [];
  if (onPath(['sudo']) === undefined) return undefined;
  return spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0 ? ['sudo', '-n'] : undefined;
}

async function aptInstall(requirement: Requirement, prefix: string[], packages: string[]): Promise<void> {
  const sudo = prefix.join(' ');
  const script = `${sudo} apt-get update && ${sudo} apt-get install -y -o DPkg::Lock::Timeout=120 ${packages.join(' ')}`
    .trim()
    .replace(/\s+/g, ' ');
  const log = join(tmpdir(), `asg-test-setup-${requirement.name}.log`);
  console.log(
    `test set-up: ${requirement.name} not found; installing it: ${script} (up to ${INSTALL_TIMEOUT_MS / 60_000} min, log: ${log})`,
  );
  const started = Date.now();
  const { code, output } = await run(script, INSTALL_TIMEOUT_MS);
  writeFileSync(log, output);
  const seconds = Math.round((Date.now() - started) / 1000);
  if (code !== 0) {
    // apt's own reason is its last "E:" line; the rest is in the log.
    const reason =
      output
        .split('\n')
        .filter((line) => line.startsWith('E:'))
        .pop() ?? (code === null ? `timed out after ${seconds} s` : `exit ${code}`);
    stop(`installing ${requirement.name} with apt-get failed (${reason.trim()}; log: ${log}): ${requirement.explain}`);
  }
  const summary = /^\d+ upgraded, \d+ newly installed.*$/m.exec(output)?.[0] ?? 'done';
  console.log(`test set-up: installed ${packages.join(' ')} in ${seconds} s (apt-get: ${summary})`);
}

function run(script: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, output: `${output}\nE: ${error.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Ends the run here with one line: the tests that need this cannot pass, and saying so once beats failing each of them. */
function stop(line: string): never {
  console.error(`test set-up: ${line}`);
  process.exit(1);
}
