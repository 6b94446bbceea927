import { describe, expect, it } from 'vitest';
import type { RunJson, RunStepJson } from '../api-types.js';
import { durationText, runDuration, stepBars, stepDetail, tokenTotals, treeNodes } from './run-inspector.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

let index = 0;
function step(kind: string, node: string, startMs: number, durationMs: number, fields: Record<string, unknown> = {}): RunStepJson {
  return { index: index++, kind, node, started_at: at(startMs), duration_ms: durationMs, message_seq: null, ...fields };
}

function run(steps: RunStepJson[], status = 'completed', endMs: number | null = 1_000): RunJson {
  return {
    run_id: '7d0c3a52-0000-4000-8000-000000000001',
    conversation_id: 'c1',
    status,
    started_at: at(0),
    ended_at: endMs === null ? null : at(endMs),
    journal_version: 1,
    message_seq: null,
    steps,
  };
}

/** The steps of a sequential tree whose executor paused for an approval, then went on after it. */
function pausedThenResumed(): RunStepJson[] {
  return [
    step('node_started', 'pipeline', 0, 0, { type: 'sequential' }),
    step('node_started', 'pipeline/analyzer', 0, 0, { type: 'llm' }),
    step('model_call', 'pipeline/analyzer', 0, 100, { input_tokens: 10, output_tokens: 4 }),
    step('node_finished', 'pipeline/analyzer', 0, 100, { outcome: 'done', output_key: 'analysis' }),
    step('node_started', 'pipeline/executor', 100, 0, { type: 'llm' }),
    step('node_finished', 'pipeline/executor', 100, 50, { outcome: 'paused' }),
    step('node_finished', 'pipeline', 0, 150, { outcome: 'paused' }),
    step('node_started', 'pipeline/executor', 600, 0, { type: 'llm' }),
    step('node_finished', 'pipeline/executor', 600, 200, { outcome: 'done' }),
    step('node_finished', 'pipeline', 0, 800, { outcome: 'done' }),
  ];
}

describe('treeNodes', () => {
  it('lists the nodes in the order entered, with depth, type and how often each was entered', () => {
    const nodes = treeNodes(run(pausedThenResumed()));
    expect(nodes.map((node) => [node.path, node.name, node.depth, node.type, node.starts])).toEqual([
      ['pipeline', 'pipeline', 0, 'sequential', 1],
      ['pipeline/analyzer', 'analyzer', 1, 'llm', 1],
      ['pipeline/executor', 'executor', 1, 'llm', 2],
    ]);
  });

  it('says done after a node finished, even a node that paused before and went on', () => {
    expect(treeNodes(run(pausedThenResumed())).map((node) => node.status)).toEqual(['done', 'done', 'done']);
  });

  it('says paused for the nodes of a run that waits for an approval', () => {
    const waiting = run(pausedThenResumed().slice(0, 7), 'waiting_approval', null);
    expect(treeNodes(waiting).map((node) => [node.name, node.status])).toEqual([
      ['pipeline', 'paused'],
      ['analyzer', 'done'],
      ['executor', 'paused'],
    ]);
  });

  it('says running for a node started and not finished, and stopped once the run ended without finishing it', () => {
    const steps = pausedThenResumed().slice(0, 5);
    expect(treeNodes(run(steps, 'running', null)).map((node) => node.status)).toEqual(['running', 'done', 'running']);
    expect(treeNodes(run(steps, 'interrupted')).map((node) => node.status)).toEqual(['stopped', 'done', 'stopped']);
  });

  it('has no nodes for a simple-mode run', () => {
    expect(treeNodes(run([step('model_call', 'assistant', 0, 100)]))).toEqual([]);
  });
});

describe('stepBars', () => {
  it('places each step on the run span: its start as the offset, its duration as the width', () => {
    const bars = stepBars(run([step('model_call', 'a', 0, 250), step('tool_call', 'a', 250, 500), step('model_call', 'a', 750, 250)]));
    expect(bars).toEqual([
      { left: 0, width: 25 },
      { left: 25, width: 50 },
      { left: 75, width: 25 },
    ]);
  });

  it('gives a moment a sliver that shows, and never lets a bar run past the end', () => {
    const bars = stepBars(run([step('node_started', 'p', 0, 0), step('decision', 'p', 1_000, 0)]));
    expect(bars[0]).toEqual({ left: 0, width: 0.6 });
    expect(bars[1]).toEqual({ left: 99.4, width: 0.6 });
  });

  it('scales a running run to the last step it recorded', () => {
    const bars = stepBars(run([step('model_call', 'a', 0, 100), step('tool_call', 'a', 100, 100)], 'running', null));
    expect(bars).toEqual([
      { left: 0, width: 50 },
      { left: 50, width: 50 },
    ]);
    expect(runDuration(run([step('model_call', 'a', 0, 100), step('tool_call', 'a', 100, 100)], 'running', null))).toBe(200);
  });

  it('survives a run with no steps and one of no length', () => {
    expect(stepBars(run([]))).toEqual([]);
    expect(stepBars(run([step('model_call', 'a', 0, 0)], 'completed', 0))).toEqual([{ left: 0, width: 0.6 }]);
  });
});

describe('stepDetail', () => {
  it('tells a model call by its model, finish, the tools it asked for and its tokens', () => {
    const detail = stepDetail(
      step('model_call', 'p/e', 0, 10, {
        model: 'gemini-2.5-flash',
        provider: 'gemini',
        input_tokens: 120,
        output_tokens: 7,
        finish_reason: 'tool-calls',
        tool_calls: ['resources_add'],
      }),
    );
    expect(detail).toEqual({ text: 'gemini-2.5-flash · tool-calls · asked for resources_add', tokens: { input: 120, output: 7 } });
    expect(stepDetail(step('model_call', 'p', 0, 1, { model: 'm', error: 'timeout', input_tokens: 0, output_tokens: 0 }))).toMatchObject({
      text: 'm · failed: timeout',
      tone: 'error',
    });
  });

  it('tells a tool call by its tool, server, outcome, arguments and summary', () => {
    const detail = stepDetail(
      step('tool_call', 'p/e', 0, 10, {
        tool: 'resources_add',
        server: 'resources',
        arguments: { name: '[redacted]', value: 5 },
        args_hash: 'h',
        outcome: 'ok',
        summary: 'added',
        approval_uuid: 'u1',
      }),
    );
    expect(detail).toEqual({
      text: 'resources_add on resources → ok (approved call)',
      arguments: { name: '[redacted]', value: 5 },
      summary: 'added',
      tone: 'ok',
    });
  });

  it('tells who decided, through which face and why', () => {
    const decision = (fields: Record<string, unknown>) =>
      stepDetail(step('decision', 'p/e', 0, 0, { approval_uuid: 'u1', decided_by: 'token:carol', via: 'rest', ...fields }));
    expect(decision({ approved: true, reason: 'fine' })).toEqual({ text: 'approved by token:carol via rest: “fine”', tone: 'approved' });
    expect(decision({ approved: false })).toEqual({ text: 'rejected by token:carol via rest', tone: 'rejected' });
    expect(decision({ approved: true, edited_arguments: { value: 6 } })).toEqual({
      text: 'approved by token:carol via rest (arguments edited)',
      tone: 'approved',
      arguments: { value: 6 },
    });
    expect(decision({ approved: false, expired: true }).text).toBe('rejected on expiry: nobody decided in time');
  });

  it('tells an approval asked, a node finished, a delegation and a compaction', () => {
    expect(stepDetail(step('approval', 'p/e', 0, 0, { tool: 'resources_add', arguments: { value: 5 }, asks: 'approval' }))).toEqual({
      text: 'asked to approve resources_add',
      arguments: { value: 5 },
      tone: 'waiting',
    });
    expect(stepDetail(step('node_finished', 'p/a', 0, 0, { outcome: 'done', output_key: 'analysis' }))).toEqual({
      text: 'done → analysis',
      tone: 'ok',
    });
    expect(stepDetail(step('node_finished', 'p/a', 0, 0, { outcome: 'paused' })).text).toBe('paused for an approval');
    expect(stepDetail(step('a2a_call', 'p/d', 0, 0, { agent: 'helper', message: 'hi', outcome: 'error', summary: 'down' }))).toEqual({
      text: 'to helper → error',
      summary: 'down',
      tone: 'error',
    });
    expect(
      stepDetail(step('compaction', 'a', 0, 0, { strategy: 'delete-old', tokens_before: 900, tokens_after: 300, summarized: false })).text,
    ).toBe('delete-old: 900 → 300 tokens');
    expect(stepDetail(step('something_new', 'a', 0, 0)).text).toBe('');
  });
});

describe('tokenTotals and durationText', () => {
  it('adds the tokens of the model calls only', () => {
    const steps = [
      step('model_call', 'a', 0, 1, { input_tokens: 10, output_tokens: 2 }),
      step('tool_call', 'a', 0, 1),
      step('model_call', 'a', 0, 1, { input_tokens: 5, output_tokens: 3 }),
    ];
    expect(tokenTotals(steps)).toEqual({ input: 15, output: 5 });
  });

  it.each([
    [0, '0 ms'],
    [340, '340 ms'],
    [1_240, '1.2 s'],
    [42_000, '42 s'],
    [185_000, '3 min 5 s'],
    [120_000, '2 min'],
    [7_800_000, '2 h 10 min'],
  ])('%i ms reads "%s"', (ms, expected) => {
    expect(durationText(ms)).toBe(expected);
  });
});
