import type { RunRecord, RunStep } from '../../gen/ts/asg/store/v1/store.js';
import type { RunJournal, RunPage } from './agent.js';

/**
 * The public JSON of runs and their journals (REST `/conversations/:id/runs`, `/runs/:run_id`;
 * tRPC `runs.list`, `runs.get`; `asg runs`): snake_case, times as ISO text. A step's own
 * fields (services/common/run-steps.ts, by kind) sit beside its index, kind, node, start and
 * duration, as the store keeps them (secrets were redacted before they were stored).
 */

export interface RunSummaryJson {
  run_id: string;
  status: string;
  started_at: string;
  /** null while the run has not ended. */
  ended_at: string | null;
  /** How many steps it recorded. */
  steps: number;
  /** The seq of the user message that started it; null for runs of journal format 1. */
  message_seq: number | null;
}

export type RunStepJson = {
  index: number;
  kind: string;
  node: string;
  started_at: string;
  duration_ms: number;
  /** The seq of the conversation's last message before the step (a fork at it copies those); null in journal format 1. */
  message_seq: number | null;
} & { [field: string]: unknown };

export interface RunJson {
  run_id: string;
  conversation_id: string;
  status: string;
  started_at: string;
  ended_at: string | null;
  /** The format of its steps' fields. */
  journal_version: number;
  /** The seq of the user message that started it; null for runs of journal format 1. */
  message_seq: number | null;
  steps: RunStepJson[];
}

export interface RunListReply {
  runs: RunSummaryJson[];
  next_cursor?: string;
}

const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();

function runSummaryJson(run: RunRecord): RunSummaryJson {
  return {
    run_id: run.runId,
    status: run.status,
    started_at: iso(run.startedAt),
    ended_at: run.endedAt ? run.endedAt.toISOString() : null,
    steps: run.stepCount,
    message_seq: run.messageSeq ?? null,
  };
}

function runStepJson(step: RunStep): RunStepJson {
  return {
    ...stepFields(step.bodyJson),
    index: step.index,
    kind: step.kind,
    node: step.node,
    started_at: new Date(step.startedAtMs).toISOString(),
    duration_ms: step.durationMs,
    message_seq: step.messageSeq ?? null,
  };
}

/** The kind's own fields; the store accepted only bodies that fit the format, so anything else is shown as none. */
function stepFields(bodyJson: string): Record<string, unknown> {
  try {
    const body: unknown = JSON.parse(bodyJson);
    return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function runJson({ run, steps }: RunJournal): RunJson {
  return {
    run_id: run.runId,
    conversation_id: run.conversationId,
    status: run.status,
    started_at: iso(run.startedAt),
    ended_at: run.endedAt ? run.endedAt.toISOString() : null,
    journal_version: run.journalVersion,
    message_seq: run.messageSeq ?? null,
    steps: steps.map(runStepJson),
  };
}

export function runListReply(page: RunPage): RunListReply {
  return { runs: page.runs.map(runSummaryJson), ...(page.nextCursor && { next_cursor: page.nextCursor }) };
}
