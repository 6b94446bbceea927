import type { RunJson, RunStepJson } from '../api-types.js';

/**
 * What the run inspector derives from a run's journal (`runs.get`): the tree's nodes and
 * where each stands, a bar per step placed on the run's own time line, and a line per step
 * in words. Pure functions of the run as the gateway shows it (gateway/app/run-shapes.ts;
 * the fields of each kind: services/common/run-steps.ts).
 */

/** Where a node of the tree stands: its last start or finish says it. */
type NodeStatus = 'running' | 'done' | 'paused' | 'stopped';

export interface TreeNode {
  /** The node's path as the journal names it ("pipeline/executor"). */
  path: string;
  /** Its own name: the path's last part. */
  name: string;
  /** 0 for the root; a child one more than its parent. */
  depth: number;
  /** llm, a2a, sequential, parallel, loop (from its node_started). */
  type: string;
  status: NodeStatus;
  /** How often it was entered: a loop's node once per iteration, a paused node again when the run went on. */
  starts: number;
}

const ENDED = new Set(['completed', 'cancelled', 'interrupted']);

export function runEnded(run: Pick<RunJson, 'status'>): boolean {
  return ENDED.has(run.status);
}

/**
 * The tree's nodes in the order they were first entered, each with its status: `done` or
 * `paused` after its last node_finished, `running` after a node_started not yet finished —
 * `stopped` instead when the run has ended since (a cancelled or interrupted run). Empty for
 * a run with no tree (simple mode records no node steps).
 */
export function treeNodes(run: Pick<RunJson, 'status' | 'steps'>): TreeNode[] {
  const nodes = new Map<string, TreeNode>();
  const ended = runEnded(run);
  for (const step of run.steps) {
    if (step.kind !== 'node_started' && step.kind !== 'node_finished') continue;
    let node = nodes.get(step.node);
    if (!node) {
      const parts = step.node.split('/');
      node = { path: step.node, name: parts.at(-1) ?? step.node, depth: parts.length - 1, type: '', status: 'running', starts: 0 };
      nodes.set(step.node, node);
    }
    if (step.kind === 'node_started') {
      node.starts += 1;
      node.status = ended ? 'stopped' : 'running';
      if (typeof step.type === 'string') node.type = step.type;
    } else {
      node.status = step.outcome === 'paused' ? 'paused' : 'done';
    }
  }
  return [...nodes.values()];
}

export interface Bar {
  /** Where the step begins on the run's line, 0 to 100 (%). */
  left: number;
  /** How much of the line it takes (%); a moment gets a sliver, so that it shows. */
  width: number;
}

/** The narrowest bar: a step of 0 ms (a node's start, a decision) is still seen. */
const MIN_BAR_PERCENT = 0.6;

/**
 * The run's line: from its start to its end — or, while it runs, to the last step's end, the
 * latest the journal knows of (the page's clock is not the store's).
 */
export function runSpan(run: Pick<RunJson, 'started_at' | 'ended_at' | 'steps'>): { start: number; end: number } {
  const start = Date.parse(run.started_at);
  const lastStepEnd = Math.max(start, ...run.steps.map((step) => Date.parse(step.started_at) + step.duration_ms));
  const end = run.ended_at ? Math.max(Date.parse(run.ended_at), lastStepEnd) : lastStepEnd;
  return { start, end };
}

/** Each step's bar, in the order of the steps, scaled so that the run's span is the whole width. */
export function stepBars(run: Pick<RunJson, 'started_at' | 'ended_at' | 'steps'>): Bar[] {
  const { start, end } = runSpan(run);
  const span = Math.max(end - start, 1);
  return run.steps.map((step) => {
    const offset = clamp(((Date.parse(step.started_at) - start) / span) * 100, 0, 100);
    const width = clamp((step.duration_ms / span) * 100, MIN_BAR_PERCENT, 100);
    // A bar never runs past the line's end: a late sliver moves left instead.
    const left = Math.min(offset, 100 - width);
    return { left: round(left), width: round(width) };
  });
}

function clamp(value: number, low: number, high: number): number {
  return Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : low;
}

const round = (value: number) => Math.round(value * 100) / 100;

/** "0 ms", "340 ms", "1.2 s", "42 s", "3 min 5 s", "2 h 10 min". */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 3_600_000) {
    const seconds = Math.round(ms / 1_000);
    return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  }
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

/** How long the run took, or has taken so far by its journal. */
export function runDuration(run: Pick<RunJson, 'started_at' | 'ended_at' | 'steps'>): number {
  const { start, end } = runSpan(run);
  return end - start;
}

/** A step's kind in words. */
export const STEP_LABELS: Record<string, string> = {
  node_started: 'node started',
  node_finished: 'node finished',
  model_call: 'model call',
  tool_call: 'tool call',
  approval: 'approval asked',
  decision: 'decision',
  a2a_call: 'A2A call',
  compaction: 'compaction',
};

export interface StepDetail {
  /** One line of what happened, in words. */
  text: string;
  /** A model call's tokens. */
  tokens?: { input: number; output: number };
  /** A call's (redacted) arguments, to show on demand. */
  arguments?: Record<string, unknown>;
  /** A tool call's result, or a delegation's answer, cut short and redacted by the store's writer. */
  summary?: string;
  /** How it came out, for its colour: ok, error, waiting (a call); approved, rejected (a decision). */
  tone?: 'ok' | 'error' | 'waiting' | 'approved' | 'rejected';
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);
const object = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const outcomeTone = (value: unknown): StepDetail['tone'] =>
  value === 'ok' || value === 'error' || value === 'waiting' ? value : undefined;

/** What a step says, by its kind; a kind this page does not know shows its kind only. */
export function stepDetail(step: RunStepJson): StepDetail {
  switch (step.kind) {
    case 'node_started':
      return { text: `${text(step.type) || 'node'} node` };
    case 'node_finished': {
      const paused = step.outcome === 'paused';
      const key = text(step.output_key);
      return {
        text: `${paused ? 'paused for an approval' : 'done'}${key ? ` → ${key}` : ''}${step.exit_loop === true ? ' (ends the loop)' : ''}`,
        tone: paused ? 'waiting' : 'ok',
      };
    }
    case 'model_call': {
      const asked = Array.isArray(step.tool_calls) ? step.tool_calls.filter((name) => typeof name === 'string') : [];
      const error = text(step.error);
      return {
        text: [
          text(step.model),
          error ? `failed: ${error}` : text(step.finish_reason),
          asked.length > 0 ? `asked for ${asked.join(', ')}` : '',
        ]
          .filter(Boolean)
          .join(' · '),
        tokens: { input: count(step.input_tokens), output: count(step.output_tokens) },
        ...(error && { tone: 'error' as const }),
      };
    }
    case 'tool_call':
      return {
        text: `${text(step.tool)}${step.server ? ` on ${text(step.server)}` : ''} → ${text(step.outcome)}${step.approval_uuid ? ' (approved call)' : ''}`,
        ...withArguments(step.arguments),
        summary: text(step.summary),
        tone: outcomeTone(step.outcome),
      };
    case 'approval': {
      const asks =
        step.asks === 'input'
          ? 'asked a person for input for'
          : step.asks === 'remote_approval'
            ? 'a peer agent holds'
            : 'asked to approve';
      return { text: `${asks} ${text(step.tool)}`, ...withArguments(step.arguments), tone: 'waiting' };
    }
    case 'decision':
      return { ...decisionText(step), ...withArguments(step.edited_arguments) };
    case 'a2a_call':
      return {
        text: `to ${text(step.agent)} → ${text(step.outcome)}`,
        summary: text(step.summary),
        tone: outcomeTone(step.outcome),
      };
    case 'compaction':
      return {
        text: `${text(step.strategy)}: ${count(step.tokens_before)} → ${count(step.tokens_after)} tokens${step.summarized === true ? ', summarized' : ''}`,
      };
    default:
      return { text: '' };
  }
}

function withArguments(value: unknown): Pick<StepDetail, 'arguments'> {
  const args = object(value);
  return args ? { arguments: args } : {};
}

/** "approved by token:carol via rest: “fine”", "rejected by policy:no-deletes via policy", "expired: nobody decided in time". */
function decisionText(step: RunStepJson): StepDetail {
  const approved = step.approved === true;
  const reason = text(step.reason);
  const who =
    step.expired === true
      ? `${approved ? 'approved' : 'rejected'} on expiry: nobody decided in time`
      : `${approved ? 'approved' : 'rejected'} by ${text(step.decided_by) || 'someone'}${step.via ? ` via ${text(step.via)}` : ''}`;
  return {
    text: `${who}${reason ? `: “${reason}”` : ''}${step.edited_arguments ? ' (arguments edited)' : ''}`,
    tone: approved ? 'approved' : 'rejected',
  };
}

/** The model's tokens over the whole run. */
export function tokenTotals(steps: readonly RunStepJson[]): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const step of steps) {
    if (step.kind !== 'model_call') continue;
    input += count(step.input_tokens);
    output += count(step.output_tokens);
  }
  return { input, output };
}
