/**
 * `npm run check`: the machine checks of the code — biome (format and lint), tsc over the
 * product, the tests and the web app, and knip — each failing on any finding. They read the
 * sources and nothing of each other's, so they run side by side (the generated code first,
 * which tsc and knip read); each one's output is printed whole when it ends, and the run fails
 * when any of them does.
 */
import { spawn } from 'node:child_process';

interface Check {
  name: string;
  command: string;
}

const GENERATE: Check = { name: 'gen', command: 'npm run gen' };
const CHECKS: Check[] = [
  { name: 'lint', command: 'npm run lint' },
  { name: 'typecheck (product and tests)', command: 'tsc -p tsconfig.test.json' },
  { name: 'typecheck (web)', command: 'tsc -p web/tsconfig.json' },
  { name: 'knip', command: 'npm run knip' },
];

function run(check: Check): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(check.command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (error) => {
      process.stdout.write(`check ${check.name}: could not start: ${error.message}\n`);
      resolve(false);
    });
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verdict = code === 0 ? 'passed' : `FAILED (exit ${code})`;
      // A passing check's output is only its summary; a failing one's is what the person needs.
      process.stdout.write(`check ${check.name}: ${verdict} in ${seconds} s\n${code === 0 ? '' : output}`);
      resolve(code === 0);
    });
  });
}

// `--generated`: the caller has just generated the code (npm test, which runs the checks beside the tests).
if (!process.argv.includes('--generated') && !(await run(GENERATE))) process.exit(1);
const results = await Promise.all(CHECKS.map(run));
if (results.includes(false)) process.exit(1);
