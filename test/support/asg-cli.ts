import { spawn } from 'node:child_process';
import { ASG, REPO_ROOT } from './agent-process.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs bin/asg asynchronously, without ASG_URL and ASG_TOKEN from the test's environment
 * unless `env` gives them: the scripted model answers from the test's process, so a blocking
 * spawnSync would stall the very turn the CLI waits for.
 */
export function runAsg(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ASG, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ASG_URL: '', ASG_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
