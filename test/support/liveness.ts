/**
 * Whether a server stays live while a test loads it: GET /health polled one request after
 * another, each beside a GET to a control — an idle HTTP server in a process of its own on the
 * same machine, sent at the same moment from the same test process.
 *
 * A poll is late when the server answered later than the control by more than the bound (or not
 * with 200). Measured against the control, the figure is the server's own delay: on a loaded
 * machine every process (the test's included) waits for a core, and that wait shows in both
 * answers alike, while an event loop that the server itself holds shows only in its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export interface LivenessPoll {
  /** The server's status; 0 when it gave no answer before the poll was cut off. */
  status: number;
  /** The server's answer time, and the control's beside it. */
  ms: number;
  controlMs: number;
}

export interface LivenessProbe {
  /** Stops polling; resolves to every poll, in order. */
  stop(): Promise<LivenessPoll[]>;
}

/** A poll is cut off here: far past any bound a test judges by, so that a stalled server fails a test rather than hangs it. */
const CUT_OFF_MS = 60_000;

const CONTROL_SERVER = `
const server = require('node:http').createServer((request, response) => response.end('ok'));
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

async function startControl(): Promise<{ url: string; child: ChildProcess }> {
  // Its stdin is a pipe from this process: it goes when the test's process goes, whatever the cause.
  const child = spawn(process.execPath, ['-e', CONTROL_SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${chunk.toString().trim()}`, child };
}

async function timed(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(CUT_OFF_MS) });
    await response.text();
    return { status: response.status, ms: Math.round(performance.now() - started) };
  } catch {
    return { status: 0, ms: Math.round(performance.now() - started) };
  }
}

/** Polls `${baseUrl}/health` beside the control until stopped, a poll every `everyMs`; at least `minPolls` polls whatever the test's speed. */
export async function probeLiveness(baseUrl: string, { minPolls = 2, everyMs = 50 } = {}): Promise<LivenessProbe> {
  const control = await startControl();
  const polls: LivenessPoll[] = [];
  let running = true;
  const loop = (async () => {
    while (running || polls.length < minPolls) {
      const [server, idle] = await Promise.all([timed(`${baseUrl}/health`), timed(control.url)]);
      polls.push({ status: server.status, ms: server.ms, controlMs: idle.ms });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      try {
        await loop;
      } finally {
        control.child.stdin?.end();
        control.child.kill();
      }
      return polls;
    },
  };
}

/** The polls that did not answer 200, or answered later than the control by `boundMs` or more. */
export function latePolls(polls: readonly LivenessPoll[], boundMs: number): LivenessPoll[] {
  return polls.filter((poll) => poll.status !== 200 || poll.ms - poll.controlMs >= boundMs);
}
