/**
 * `npm test`: the code generated, the tree built when its sources changed since the last build
 * (`npm install` built it), then the machine checks (scripts/check.ts) and the tests side by side.
 * The checks read only sources and the tests spend much of their time waiting on agents, so the
 * two together take little more than the tests alone. The checks' verdicts are printed after the
 * tests' summary, and the run fails when either fails. Arguments go to vitest
 * (`npm test -- test/e2e/simple-mode.test.ts`).
 */
import { spawn } from 'node:child_process';

/** Runs a command; resolves with its exit code (1 when it cannot start or dies by a signal). */
function run(command: string, args: string[], options: { quiet?: boolean } = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: options.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (error) => resolve({ code: 1, output: `${command} could not start: ${error.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
if ((await run(npm, ['run', '--silent', 'gen'])).code !== 0) process.exit(1);
if ((await run(process.execPath, ['--import', 'tsx', 'scripts/build-inputs.ts', 'unchanged'])).code !== 0) {
  if ((await run(npm, ['run', 'build'])).code !== 0) process.exit(1);
}
const [checks, tests] = await Promise.all([
  run(process.execPath, ['--import', 'tsx', 'scripts/check.ts', '--generated'], { quiet: true }),
  run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]),
]);
process.stdout.write(`\n${checks.output}`);
if (checks.code !== 0) process.stdout.write('the checks FAILED (above): the run fails whatever the tests say\n');
process.exit(tests.code !== 0 || checks.code !== 0 ? 1 : 0);
