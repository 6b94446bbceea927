import { readFileSync } from 'node:fs';
import { GC_SIGNAL } from '../../cli/gc-signal.js';
import type { AsgProcess } from './agent-process.js';
import { logLines } from './log-lines.js';
import { until } from './until.js';

/**
 * Memory of an agent process, for the leak tests: the agent runs with `--expose-gc`, so SIGUSR2
 * makes it collect garbage and log `garbage collected` with its heap (cli/gc-signal.ts); RSS is
 * read from /proc (Linux), as an operator's tools read it.
 */

/** A process's resident set size in bytes (VmRSS of /proc/<pid>/status). */
export function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** The resident set of a process and all below it (the MCP servers it spawned): what the machine pays. */
export function treeResidentBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += residentBytes(pid);
    } catch {
      // It exited meanwhile: it holds nothing.
    }
  }
  return total;
}

export interface AfterCollection {
  /** V8's heap in use right after the collection. */
  heapUsed: number;
  /** V8's heap as reserved from the system (used, and free pages it keeps). */
  heapTotal: number;
  /** Memory of Buffers and other objects outside V8's heap that JavaScript holds. */
  external: number;
  /** The process's resident set right after it. */
  rss: number;
}

/** Has the agent (started with `--expose-gc`) collect its garbage, and reads what is left. */
export async function collectGarbage(agent: AsgProcess): Promise<AfterCollection> {
  // Only what the agent writes from now on: its output holds a line for every request so far.
  const from = agent.output().length;
  process.kill(agent.pid, GC_SIGNAL);
  const line = await until(
    'the agent to log "garbage collected"',
    () => logLines(agent.output().slice(from)).find((candidate) => candidate.msg === 'garbage collected'),
    20_000,
  );
  return {
    heapUsed: Number(line.heap_used),
    heapTotal: Number(line.heap_total),
    external: Number(line.external),
    rss: residentBytes(agent.pid),
  };
}

/** The value of an unlabelled gauge in Prometheus text, as GET /metrics answers it. */
function gaugeValue(metrics: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(metrics);
  if (!match) throw new Error(`no ${name} in the metrics`);
  return Number(match[1]);
}

/** How an agent's event streams stand now: its gateway's streams to the store, and the store's watchers. */
export async function openWatches(agentUrl: string): Promise<{ gateway: number; store: number }> {
  const answer = await fetch(`${agentUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await answer.text();
  return { gateway: gaugeValue(text, 'asg_gateway_event_watches'), store: gaugeValue(text, 'asg_store_event_watchers') };
}

export const MB = 1024 * 1024;
