import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { invalidArgument } from '../../common/grpc/errors.js';
import { ENDED_STATUSES, JOURNAL_FORMAT } from '../../common/run-steps.js';
import { storedId } from '../ids.js';
import { isoTimestamp } from '../records.js';
import type { SqlStatements } from './port.js';

/** A run as its journal keeps it (ddl.ts runJournal). */
export interface RunJournalRow {
  run_id: string;
  conversation_id: string;
  journal_version: number;
  status: string;
  started_at: string;
  ended_at: string | null;
  step_count: number;
  /** The seq of the run's user message (journal format 2; NULL before). */
  message_seq: number | string | null;
}

export interface RunStepRow {
  run_id: string;
  idx: number;
  kind: string;
  node: string;
  started_at: string;
  duration_ms: number | string;
  body: string;
  /** The seq of the last message before the step (journal format 2; NULL before). */
  message_seq: number | string | null;
}

/**
 * The run journal's rules (store.proto RunJournalEntry): a write's steps go in with the write, in its transaction — the
 * run's row is made on its first journaled write or moved on (status, end, step count), and its steps are numbered after
 * the run's earlier ones, all in two statements whatever their number. Requests arrive validated (server.ts: the
 * kinds and bodies fit the journal's format).
 */
export async function recordJournal(
  tx: SqlStatements,
  conversationId: string,
  entry: pb.RunJournalEntry | undefined,
  nowMs: number,
  messagesBefore: number,
): Promise<void> {
  if (!entry) return;
  const runId = storedId(entry.runId);
  if (runId === undefined) throw invalidArgument(`journal.run_id: ${JSON.stringify(entry.runId)} is not a UUID`);
  const [row] = await tx.all<{ conversation_id: string; step_count: number | string }>('upsertRunJournal', {
    run_id: runId,
    conversation_id: conversationId,
    journal_version: JOURNAL_FORMAT,
    status: entry.status,
    started_at: isoTimestamp(entry.startedAtMs || nowMs),
    ended_at: ENDED_STATUSES.has(entry.status) ? isoTimestamp(nowMs) : null,
    step_count: entry.steps.length,
  });
  // Thrown inside the transaction: the write it came with is rolled back with it.
  if (row!.conversation_id !== conversationId) throw invalidArgument(`journal.run_id: run ${runId} belongs to another conversation`);
  if (entry.steps.length === 0) return;
  const steps = entry.steps.map((step) => ({
    kind: step.kind,
    node: step.node,
    started_at: isoTimestamp(step.startedAtMs),
    duration_ms: step.durationMs,
    body: step.bodyJson,
    // A step the orchestrator could not place stands before the messages of the write that carries it.
    message_seq: step.messageSeq ?? messagesBefore,
  }));
  await tx.run('insertRunSteps', {
    run_id: runId,
    first_index: Number(row!.step_count) - steps.length,
    steps: JSON.stringify(steps),
  });
}

export function runRecordOf(row: RunJournalRow): pb.RunRecord {
  return {
    runId: row.run_id,
    conversationId: row.conversation_id,
    status: row.status,
    startedAt: new Date(row.started_at),
    ...(row.ended_at !== null && { endedAt: new Date(row.ended_at) }),
    stepCount: Number(row.step_count),
    journalVersion: Number(row.journal_version),
    ...(row.message_seq !== null && { messageSeq: Number(row.message_seq) }),
  };
}

export function runStepOf(row: RunStepRow): pb.RunStep {
  return {
    index: Number(row.idx),
    kind: row.kind,
    node: row.node,
    startedAtMs: Date.parse(row.started_at),
    durationMs: Number(row.duration_ms),
    bodyJson: row.body,
    ...(row.message_seq !== null && { messageSeq: Number(row.message_seq) }),
  };
}
