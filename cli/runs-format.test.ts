import { describe, expect, it } from 'vitest';
import type { RunJson } from '../gateway/app/run-shapes.js';
import { runListText, runText } from './runs-format.js';

const NOW = new Date('2026-03-01T10:10:00.000Z');

const run: RunJson = {
  run_id: 'r-1',
  conversation_id: 'c-1',
  status: 'completed',
  started_at: '2026-03-01T10:00:00.000Z',
  ended_at: '2026-03-01T10:00:02.000Z',
  journal_version: 1,
  message_seq: 1,
  steps: [
    {
      index: 0,
      kind: 'node_started',
      node: 'pipeline/analyzer',
      started_at: '2026-03-01T10:00:00.000Z',
      duration_ms: 0,
      message_seq: 1,
      type: 'llm',
    },
    {
      index: 1,
      kind: 'model_call',
      node: 'pipeline/analyzer',
      started_at: '2026-03-01T10:00:00.010Z',
      duration_ms: 800,
      message_seq: 1,
      model: 'gemini-2.5-flash',
      provider: 'gemini',
      input_tokens: 412,
      output_tokens: 31,
      finish_reason: 'tool-calls',
    },
    {
      index: 2,
      kind: 'tool_call',
      node: 'pipeline/analyzer',
      started_at: '2026-03-01T10:00:00.810Z',
      duration_ms: 40,
      message_seq: 1,
      tool: 'resources_add',
      arguments: { name: 'x', api_key: '[redacted]' },
      outcome: 'ok',
    },
    {
      index: 3,
      kind: 'decision',
      node: 'pipeline/analyzer',
      started_at: '2026-03-01T10:00:01.000Z',
      duration_ms: 0,
      message_seq: 1,
      approved: true,
      decided_by: 'token:carol',
      via: 'cli',
    },
  ],
};

describe('asg runs text', () => {
  it('lists runs newest first with their status, times and step counts, and the command for the next page', () => {
    const text = runListText(
      {
        runs: [{ run_id: 'r-1', status: 'completed', started_at: run.started_at, ended_at: run.ended_at, steps: 4, message_seq: 1 }],
        next_cursor: 'abc',
      },
      NOW,
      (cursor) => `asg runs list c-1 --cursor ${cursor}`,
    );
    expect(text.split('\n')[0]).toMatch(/^RUN\s+STATUS\s+STARTED\s+ENDED\s+STEPS$/);
    expect(text).toContain('r-1  completed  10 min ago  9 min ago  4');
    expect(text).toContain('More: asg runs list c-1 --cursor abc');
    expect(runListText({ runs: [] }, NOW, () => '')).toBe('No runs recorded.\n');
  });

  it('shows a run step by step: when each began after the start, how long it took, and what it was', () => {
    const text = runText(run, NOW);
    expect(text).toContain('Run r-1 of conversation c-1: completed, started 10 min ago, ended 9 min ago');
    expect(text).toMatch(
      /1\s+model_call\s+pipeline\/analyzer\s+\+10 ms\s+800 ms\s+gemini-2\.5-flash \(gemini\): 412 in, 31 out, tool-calls/,
    );
    expect(text).toContain('resources_add {"name":"x","api_key":"[redacted]"} → ok');
    expect(text).toContain('approved by token:carol via cli');
  });
});
