import type { RunJson, RunListReply, RunStepJson } from '../gateway/app/run-shapes.js';
import { compactJson, relativeTime, table } from './approvals-format.js';
import type { ForkReply } from './approvals-client.js';

/**
 * What `asg runs` prints for people (with `--json` it prints the agent's JSON instead): pure
 * functions of the agent's answers and the current time, so they are tested without one.
 */

export function runListText(reply: RunListReply, now: Date, nextCommand: (cursor: string) => string): string {
  if (reply.runs.length === 0) return 'No runs recorded.\n';
  const rows = [
    ['RUN', 'STATUS', 'STARTED', 'ENDED', 'STEPS'],
    ...reply.runs.map((run) => [
      run.run_id,
      run.status,
      relativeTime(run.started_at, now),
      run.ended_at ? relativeTime(run.ended_at, now) : '',
      String(run.steps),
    ]),
  ];
  const more = reply.next_cursor ? `\nMore: ${nextCommand(reply.next_cursor)}\n` : '';
  return `${table(rows)}\n${more}`;
}

const DETAIL_WIDTH = 60;

/** The one line a step's own fields come to. */
function stepDetail(step: RunStepJson): string {
  const field = (name: string) => step[name];
  switch (step.kind) {
    case 'model_call':
      return `${field('model')} (${field('provider')}): ${field('input_tokens')} in, ${field('output_tokens')} out, ${field('finish_reason')}`;
    case 'tool_call':
      return `${field('tool')} ${compactJson(field('arguments'), DETAIL_WIDTH)} → ${field('outcome')}`;
    case 'approval':
      return `asks for ${field('tool')} ${compactJson(field('arguments'), DETAIL_WIDTH)} (${field('approval_uuid')})`;
    case 'decision': {
      const how = field('via') ? ` via ${field('via')}` : '';
      const why = typeof field('reason') === 'string' ? `: ${field('reason')}` : '';
      return `${field('approved') ? 'approved' : field('expired') ? 'expired' : 'rejected'} by ${field('decided_by')}${how}${why}`;
    }
    case 'a2a_call':
      return `${field('agent')} → ${field('outcome')}`;
    case 'compaction':
      return `${field('strategy')}: ${field('tokens_before')} → ${field('tokens_after')} tokens`;
    case 'node_started':
      return String(field('type') ?? '');
    case 'node_finished':
      return field('output_key') ? `${field('outcome')} → ${field('output_key')}` : String(field('outcome') ?? '');
    default:
      return '';
  }
}

export function runText(run: RunJson, now: Date): string {
  const ended = run.ended_at ? `, ended ${relativeTime(run.ended_at, now)}` : '';
  const head = `Run ${run.run_id} of conversation ${run.conversation_id}: ${run.status}, started ${relativeTime(run.started_at, now)}${ended}\n`;
  if (run.steps.length === 0) return `${head}No steps recorded.\n`;
  const start = Date.parse(run.started_at);
  const rows = [
    ['#', 'KIND', 'NODE', 'AT', 'TOOK', 'DETAIL'],
    ...run.steps.map((step) => [
      String(step.index),
      step.kind,
      step.node,
      `+${Math.max(0, Date.parse(step.started_at) - start)} ms`,
      `${step.duration_ms} ms`,
      stepDetail(step),
    ]),
  ];
  return `${head}\n${table(rows)}\n`;
}

/** What a fork did: the new conversation, and how it went on (its answer, the approval it waits for, or nothing ran). */
export function forkText(runId: string, step: number, reply: ForkReply): string {
  const id = reply.conversation.id;
  const head = `Forked run ${runId} at step ${step}: conversation ${id}\n`;
  if (reply.copied_only) return `${head}The copy ends with a complete answer; nothing ran. Send a message to go on.\n`;
  const result = reply.result;
  if (result?.waiting_approval && result.approval)
    return `${head}Waits for approval ${result.approval.uuid} (${result.approval.tool_name}): asg approvals show ${result.approval.uuid}\n`;
  return `${head}${result?.response ?? ''}\n`;
}
