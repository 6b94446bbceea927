/**
 * One validation path: `asg config check` and `asg up` give the same verdict, in
 * the same words, on a corpus of good and bad configurations (test/fixtures/config-corpus:
 * `good-*` must start, `bad-*` must be refused; each bad file's first line `# expect: …` is the
 * `line:column: path: message` both must print). Real processes: bin/asg from dist.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ASG, REPO_ROOT, spawnProcess, tempDir, testEnvironment } from '../support/agent-process.js';
import { freePort } from '../support/ports.js';
import { freshClone, SHIPPED_CONFIGS } from '../support/shipped-configs.js';
import { until } from '../support/until.js';

const CORPUS = join(REPO_ROOT, 'test', 'fixtures', 'config-corpus');
const FILES = readdirSync(CORPUS)
  .filter((name) => name.endsWith('.yaml'))
  .sort();

// No provider is ever called: a start only has to reach /health. Every key but Gemini's is unset (warnings).
const ENV = testEnvironment('http://127.0.0.1:9', {
  ANTHROPIC_API_KEY: null,
  OPENAI_API_KEY: null,
  MISTRAL_API_KEY: null,
  OPENROUTER_API_KEY: null,
  ASG_CORPUS_TOKEN: 'corpus-token-0123456789abcdef',
  ASG_CORPUS_UNSET: null,
});

function check(file: string, cwd: string) {
  const run = spawnSync(process.execPath, [ASG, 'config', 'check', file], { cwd, env: ENV, encoding: 'utf8', timeout: 30_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `asg up --config file`: 'refused' with its exit code once it exits, or 'serving' once /health answers (then stopped). */
async function start(file: string, port: number): Promise<{ verdict: 'serving' | 'refused'; code: number | null; output: string }> {
  const agent = spawnProcess(process.execPath, [ASG, 'up', '--config', file], ENV);
  let exitCode: number | null | undefined;
  void agent.exited.then((code) => (exitCode = code));
  try {
    const verdict = await until(
      `${file} to serve /health or exit`,
      async () => {
        if (exitCode !== undefined) return 'refused' as const;
        const health = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
        return health?.ok ? ('serving' as const) : undefined;
      },
      90_000,
      100,
    );
    if (verdict === 'serving') {
      const code = await agent.stop();
      return { verdict, code, output: agent.output() };
    }
    return { verdict, code: await agent.exited, output: agent.output() };
  } finally {
    await agent.stop();
  }
}

/** A copy of the corpus file in its own folder, with a free port and its own data, appended below what it says (its lines keep their numbers). */
async function placed(name: string): Promise<{ file: string; dir: string; port: number }> {
  const dir = tempDir('asg-corpus-');
  const file = join(dir, name);
  const port = await freePort();
  writeFileSync(
    file,
    `${readFileSync(join(CORPUS, name), 'utf8').trimEnd()}\nport: ${port}\ndata_dir: ${JSON.stringify(join(dir, 'data'))}\n`,
  );
  return { file, dir, port };
}

describe('the configuration corpus', () => {
  it('holds at least 20 files, good and bad, each bad one saying what both must print', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(20);
    expect(FILES.filter((name) => name.startsWith('good-')).length).toBeGreaterThanOrEqual(6);
    expect(FILES.every((name) => /^(good|bad)-/.test(name))).toBe(true);
    for (const name of FILES.filter((file) => file.startsWith('bad-')))
      expect(readFileSync(join(CORPUS, name), 'utf8'), name).toMatch(/^# expect: \d+:\d+: /);
  });
});

describe.each(FILES)('%s: asg config check and asg up agree', (name) => {
  it('same verdict, same words', async () => {
    const { file, dir, port } = await placed(name);
    const checked = check(file, dir);
    const started = await start(file, port);
    if (name.startsWith('good-')) {
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toContain(`${file}: valid (`);
      expect(started.verdict, started.output).toBe('serving');
      expect(started.code).toBe(0);
      // Warnings (a provider key that is not set) are printed by both, alike.
      for (const warning of checked.stderr.split('\n').filter(Boolean)) expect(started.output).toContain(warning);
    } else {
      const expected = /^# expect: (.*)$/m.exec(readFileSync(join(CORPUS, name), 'utf8'))![1]!;
      expect(checked.code).toBe(1);
      expect(checked.stderr).toContain(`${file}:${expected}`);
      expect(started.verdict, started.output).toBe('refused');
      expect(started.code).toBe(1);
      // The very same report, code frames and all (whatever else a start may log around it).
      expect(checked.stderr.trim()).not.toBe('');
      expect(started.output).toContain(checked.stderr.trim());
    }
  }, 120_000);
});

describe('the shipped configuration files pass asg config check on a fresh clone', () => {
  it.each(SHIPPED_CONFIGS)('$file', ({ file }) => {
    // Relative paths are relative to the working folder: a clone's root, where bin/asg is and data/ is not yet.
    const clone = freshClone();
    // The deploy configs name the admin token's variable; a deployment sets it.
    const run = spawnSync(process.execPath, [ASG, 'config', 'check', join(REPO_ROOT, file)], {
      cwd: clone,
      env: { ...ENV, ASG_ADMIN_TOKEN: 'admin-token-0123456789abcdef' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(': valid (');
    expect(run.stderr).toBe('');
    // A check changes nothing: filesystem.yaml's roots are made by a start, not by its check.
    expect(existsSync(join(clone, 'data'))).toBe(false);
  });
});
