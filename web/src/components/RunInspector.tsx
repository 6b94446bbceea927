import type { RunJson, RunStepJson } from '../api-types.js';
import { useRun } from '../hooks/use-run.js';
import { conversationHash, runsHash } from '../hooks/use-route.js';
import { timeAgo } from '../state/decision-trace.js';
import {
  type Bar,
  durationText,
  runDuration,
  runSpan,
  STEP_LABELS,
  stepBars,
  stepDetail,
  tokenTotals,
  treeNodes,
} from '../state/run-inspector.js';
import { Collapsible, prettyJson } from './Collapsible.js';
import { ErrorNote } from './ErrorNote.js';
import { RunStatus } from './RunStatus.js';

/**
 * One run, step by step (`#/runs/<run_id>`): its status and times, the tree's nodes with
 * where each stands, and a time line of every step its journal recorded — model calls with
 * their tokens, tool calls with their (redacted) arguments and outcome, approvals asked and
 * who decided them — each with a bar on the run's own time scale.
 */
export function RunInspector({ runId, now }: { runId: string; now: number }) {
  const shown = useRun(runId);
  return (
    <div className="chat-body run-inspector" data-testid="run-inspector" data-run={runId} data-state={shown.state}>
      <header className="chat-header">
        <h2>Run</h2>
        {shown.state === 'loaded' && <RunStatus status={shown.run.status} />}
        <code className="conversation-id">{runId.slice(0, 8)}</code>
      </header>
      {shown.state === 'failed' && <ErrorNote text={shown.error} />}
      {shown.state === 'loaded' && <ErrorNote text={shown.error} />}
      <div className="messages run-body">
        {shown.state === 'loading' && <p className="placeholder">Loading…</p>}
        {shown.state === 'not-found' && (
          <p className="placeholder not-found" data-testid="not-found">
            Run not found: it does not exist, its journal is no longer kept, or it is not yours to see.
          </p>
        )}
        {shown.state === 'loaded' && <RunView run={shown.run} now={now} />}
      </div>
    </div>
  );
}

function RunView({ run, now }: { run: RunJson; now: number }) {
  const nodes = treeNodes(run);
  const bars = stepBars(run);
  const tokens = tokenTotals(run.steps);
  const { start } = runSpan(run);
  return (
    <>
      <section className="run-facts" data-testid="run-facts">
        <dl>
          <dt>started</dt>
          <dd title={run.started_at}>{timeAgo(run.started_at, now, true)}</dd>
          <dt>{run.ended_at ? 'ended' : 'so far'}</dt>
          <dd title={run.ended_at ?? undefined}>
            {run.ended_at && `${timeAgo(run.ended_at, now, true)} · `}
            took {durationText(runDuration(run))}
          </dd>
          <dt>steps</dt>
          <dd>{run.steps.length}</dd>
          <dt>tokens</dt>
          <dd data-testid="run-tokens">
            {tokens.input} in · {tokens.output} out
          </dd>
        </dl>
        <p className="run-links">
          <a href={conversationHash(run.conversation_id)}>the conversation</a>
          <span className="muted"> · </span>
          <a href={runsHash(run.conversation_id)}>all its runs</a>
        </p>
      </section>
      {nodes.length > 0 && (
        <section className="run-section" aria-label="Nodes">
          <h3>Nodes</h3>
          <ul className="run-nodes" data-testid="run-nodes">
            {nodes.map((node) => (
              <li
                key={node.path}
                className="run-node"
                data-testid="run-node"
                data-path={node.path}
                data-status={node.status}
                style={{ paddingLeft: `${node.depth * 1.2}rem` }}
              >
                <span className="run-node-name">{node.name}</span>
                {node.type && <span className="muted run-node-type">{node.type}</span>}
                {node.starts > 1 && <span className="muted"> · entered {node.starts} times</span>}
                <span className={`node-status node-${node.status}`}>{node.status}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section className="run-section" aria-label="Steps">
        <h3>Steps</h3>
        {run.steps.length === 0 && <p className="placeholder">This run recorded no step yet.</p>}
        <ol className="run-steps" data-testid="run-steps">
          {run.steps.map((step, index) => (
            <RunStepItem key={step.index} step={step} bar={bars[index]!} offsetMs={Date.parse(step.started_at) - start} />
          ))}
        </ol>
      </section>
    </>
  );
}

function RunStepItem({ step, bar, offsetMs }: { step: RunStepJson; bar: Bar; offsetMs: number }) {
  const detail = stepDetail(step);
  return (
    <li
      className={`run-step kind-${step.kind}${detail.tone ? ` tone-${detail.tone}` : ''}`}
      data-testid="run-step"
      data-kind={step.kind}
      data-node={step.node}
      data-index={step.index}
    >
      <div className="run-step-head">
        <span className="run-step-kind">{STEP_LABELS[step.kind] ?? step.kind}</span>
        <span className="node-name">{step.node}</span>
        <span className="run-step-time muted" title={step.started_at}>
          +{durationText(Math.max(0, offsetMs))}
          {step.duration_ms > 0 && ` · ${durationText(step.duration_ms)}`}
        </span>
      </div>
      <div className="run-step-track" aria-hidden>
        <span className="run-step-bar" data-testid="run-step-bar" style={{ left: `${bar.left}%`, width: `${bar.width}%` }} />
      </div>
      {detail.text && (
        <p className="run-step-text" data-testid="run-step-text">
          {detail.text}
        </p>
      )}
      {detail.tokens && (
        <p className="run-step-tokens" data-testid="run-step-tokens">
          {detail.tokens.input} input tokens · {detail.tokens.output} output tokens
        </p>
      )}
      {detail.arguments && <Collapsible summary="arguments" text={prettyJson(detail.arguments)} className="run-step-arguments" />}
      {detail.summary && <Collapsible summary="result" text={detail.summary} className="run-step-summary" />}
    </li>
  );
}
