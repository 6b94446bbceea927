/** The metrics of one process: what each record becomes in Prometheus' text format. */
import { describe, expect, it } from 'vitest';
import {
  observeGauge,
  prometheusText,
  recordApprovalDecided,
  recordError,
  recordModelCall,
  recordToolCall,
  recordTurn,
} from './metrics.js';

/** The value of the sample `name{labels}` exactly as Prometheus would read it. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  it('reads a gauge registered before anything was recorded at each scrape, and no longer once detached', async () => {
    let pending = 2;
    const detach = observeGauge('asg_test_pending', 'a test gauge', async () => pending);
    expect(sample(await prometheusText(), 'asg_test_pending')).toBe(2);
    pending = 5;
    expect(sample(await prometheusText(), 'asg_test_pending')).toBe(5);
    detach();
    pending = 9;
    // No longer asked: the exporter keeps at most the last value it read.
    expect(sample(await prometheusText(), 'asg_test_pending')).not.toBe(9);
  });

  it('leaves out a gauge whose read fails, and the scrape goes on', async () => {
    const detach = observeGauge('asg_test_broken', 'a failing gauge', async () => {
      throw new Error('the database is gone');
    });
    recordError('http_5xx');
    const text = await prometheusText();
    expect(sample(text, 'asg_test_broken')).toBeUndefined();
    expect(sample(text, 'asg_errors_total{kind="http_5xx"}')).toBe(1);
    detach();
  });

  it('names every instrument with its labels, counters with _total and the turn histogram in seconds', async () => {
    recordTurn('answered', 0.3);
    recordTurn('answered', 7);
    recordTurn('failed', 0.01);
    recordModelCall('anthropic', 'claude-sonnet-4-5', 'ok', { inputTokens: 120, outputTokens: 30 });
    recordModelCall('anthropic', 'claude-sonnet-4-5', 'failed');
    recordToolCall('resources_add', 'tool_error');
    recordApprovalDecided('expired');
    const text = await prometheusText();
    expect(sample(text, 'asg_turns_total{outcome="answered"}')).toBe(2);
    expect(sample(text, 'asg_turn_duration_seconds_count{outcome="answered"}')).toBe(2);
    expect(sample(text, 'asg_turn_duration_seconds_sum{outcome="answered"}')).toBeCloseTo(7.3);
    expect(sample(text, 'asg_turn_duration_seconds_bucket{outcome="answered",le="0.5"}')).toBe(1);
    expect(sample(text, 'asg_turn_duration_seconds_bucket{outcome="answered",le="10"}')).toBe(2);
    expect(sample(text, 'asg_turns_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'asg_model_calls_total{provider="anthropic",model="claude-sonnet-4-5",outcome="ok"}')).toBe(1);
    expect(sample(text, 'asg_model_calls_total{provider="anthropic",model="claude-sonnet-4-5",outcome="failed"}')).toBe(1);
    expect(sample(text, 'asg_model_tokens_total{provider="anthropic",model="claude-sonnet-4-5",kind="input"}')).toBe(120);
    expect(sample(text, 'asg_model_tokens_total{provider="anthropic",model="claude-sonnet-4-5",kind="output"}')).toBe(30);
    expect(sample(text, 'asg_tool_calls_total{tool="resources_add",outcome="tool_error"}')).toBe(1);
    expect(sample(text, 'asg_approvals_decided_total{outcome="expired"}')).toBe(1);
    expect(text).toContain('# TYPE asg_turn_duration_seconds histogram');
  });
});
