import type { MessageJson } from '../api-types.js';

/** What the runs list tells of a run: its id, and the seq of the user message that started it (null in journal format 1). */
export interface RunStart {
  run_id: string;
  message_seq: number | null;
}

/** The web route of a run's page. */
export const runHref = (runId: string) => `#/runs/${encodeURIComponent(runId)}`;

/**
 * The run each user message started, by message id: a run's `message_seq` is the seq of its
 * user message. Runs recorded before runs kept it (null), and user messages whose run is not in
 * the list, get no link.
 */
export function runsByMessage(messages: readonly MessageJson[], runs: readonly RunStart[]): Map<string, string> {
  const bySeq = new Map<number, string>();
  for (const run of runs) if (run.message_seq !== null) bySeq.set(run.message_seq, run.run_id);
  const links = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const runId = bySeq.get(message.seq);
    if (runId !== undefined) links.set(message.id, runId);
  }
  return links;
}
