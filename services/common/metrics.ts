import { createRequire } from 'node:module';
import type { Attributes, Counter, Histogram, Meter, ObservableGauge, ObservableResult } from '@opentelemetry/api';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';

/**
 * OpenTelemetry metrics, read by Prometheus. One MeterProvider per process, made
 * when the first service starts (loadMetrics): in `asg up` every service runs in this process and records into
 * it, so `GET /metrics` shows each series once; a service run alone has its own. Nothing is
 * pushed: the Prometheus exporter is a pull reader whose own server never starts — the
 * gateway's route (and a service's small metrics port) hand it each scrape.
 *
 * The names below are what Prometheus shows (the exporter adds `_total` to counters and the
 * unit suffix to the histogram); docs/operations.md lists each with its labels.
 */

/** Turn latency buckets, in seconds: a model answer takes from a few hundred ms to minutes. */
const TURN_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

interface Instruments {
  turns: Counter;
  turnDuration: Histogram;
  modelCalls: Counter;
  modelTokens: Counter;
  toolCalls: Counter;
  approvalsDecided: Counter;
  runOutOfPhaseEvents: Counter;
  errors: Counter;
  meter: Meter;
}

let state: { provider: MeterProvider; exporter: PrometheusExporter; instruments: Instruments } | undefined;

/** The SDK, loaded at the first metric (CommonJS, as telemetry.ts loads the tracing SDK). */
function sdk() {
  const load = createRequire(import.meta.url);
  return {
    ...(load('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics')),
    ...(load('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus')),
    ...(load('@opentelemetry/resources') as typeof import('@opentelemetry/resources')),
  };
}

function setUp(): NonNullable<typeof state> {
  if (state) return state;
  const { MeterProvider, PrometheusExporter, resourceFromAttributes } = sdk();
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'agent-stop-and-go' }),
    readers: [exporter],
  });
  const meter = provider.getMeter('asg');
  const instruments: Instruments = {
    meter,
    turns: meter.createCounter('asg_turns', {
      description: 'Turns run (a user message up to its answer or its pause for approval), by outcome',
    }),
    turnDuration: meter.createHistogram('asg_turn_duration_seconds', {
      unit: 's',
      description: 'How long a turn took, by outcome',
      advice: { explicitBucketBoundaries: TURN_SECONDS_BUCKETS },
    }),
    modelCalls: meter.createCounter('asg_model_calls', { description: 'Model calls (after retries), by provider, model and outcome' }),
    modelTokens: meter.createCounter('asg_model_tokens', {
      description: 'Tokens the providers counted, by provider, model and kind (input, output)',
    }),
    toolCalls: meter.createCounter('asg_tool_calls', { description: 'MCP tool calls through the tool broker, by tool and outcome' }),
    approvalsDecided: meter.createCounter('asg_approvals_decided', {
      description: 'Approvals decided, by outcome (approved, rejected, expired)',
    }),
    runOutOfPhaseEvents: meter.createCounter('asg_run_out_of_phase_events', {
      description: 'Events a run was fed that did not fit its phase (a defect: nothing was done with them), by phase and event',
    }),
    errors: meter.createCounter('asg_errors', { description: 'Failures, by kind' }),
  };
  state = { provider, exporter, instruments };
  for (const source of gauges) attach(meter, source);
  return state;
}

/**
 * Loads the SDK and makes the provider now, at a service's start: loaded at the first record
 * instead, it would block the event loop in the middle of the first turn (long enough, on a
 * busy machine, for a run lease's renewal to miss its deadline).
 */
export function loadMetrics(): void {
  setUp();
}

function instruments(): Instruments {
  return setUp().instruments;
}

/** `unknown`: the turn's outcome was not known when its caller was answered (orchestrator.proto, Unsettled). */
export type TurnOutcome = 'answered' | 'waiting_approval' | 'failed' | 'unknown';

export function recordTurn(outcome: TurnOutcome, seconds: number): void {
  const { turns, turnDuration } = instruments();
  turns.add(1, { outcome });
  turnDuration.record(seconds, { outcome });
}

export function recordModelCall(
  provider: string,
  model: string,
  outcome: 'ok' | 'failed',
  usage?: { inputTokens?: number; outputTokens?: number },
): void {
  const { modelCalls, modelTokens } = instruments();
  modelCalls.add(1, { provider, model, outcome });
  if (usage?.inputTokens) modelTokens.add(usage.inputTokens, { provider, model, kind: 'input' });
  if (usage?.outputTokens) modelTokens.add(usage.outputTokens, { provider, model, kind: 'output' });
}

/** `outcome`: ok, tool_error (the tool answered isError), input_required (the server asks for input first), or failed (no answer: unknown tool, timeout, server down, refused). */
export function recordToolCall(tool: string, outcome: 'ok' | 'tool_error' | 'input_required' | 'failed'): void {
  instruments().toolCalls.add(1, { tool, outcome });
}

export function recordApprovalDecided(outcome: 'approved' | 'rejected' | 'expired'): void {
  instruments().approvalsDecided.add(1, { outcome });
}

/** An event the run machine refused because it did not fit the run's phase: `phase` is where the run was, `event` the event's kind. */
export function recordRunOutOfPhaseEvent(phase: string, event: string): void {
  instruments().runOutOfPhaseEvents.add(1, { phase, event });
}

/**
 * `kind`: http_5xx (the gateway answered 5xx), internal (a handler failed unexpectedly),
 * turn_failed, model_call_failed, tool_call_failed.
 */
export function recordError(kind: string, attributes: Attributes = {}): void {
  instruments().errors.add(1, { kind, ...attributes });
}

interface GaugeSource {
  name: string;
  description: string;
  read: () => Promise<number>;
  /** Set once the gauge exists (at the first record or scrape). */
  detach?: () => void;
}

// Gauges registered before the provider exists wait here and are attached when it is made.
const gauges = new Set<GaugeSource>();

function attach(meter: Meter, source: GaugeSource): void {
  const gauge: ObservableGauge = meter.createObservableGauge(source.name, { description: source.description });
  const callback = async (result: ObservableResult): Promise<void> => {
    try {
      result.observe(await source.read());
    } catch {
      // No sample is better than a wrong one; the scrape goes on.
    }
  };
  gauge.addCallback(callback);
  source.detach = () => gauge.removeCallback(callback);
}

/**
 * A gauge read at each scrape: `read` is asked then (it may query storage), so the value is
 * the truth at that moment, not a sum of what this process saw. A failing read reports
 * nothing. The returned function stops observing (the service that owns the source stopped).
 */
export function observeGauge(name: string, description: string, read: () => Promise<number>): () => void {
  const source: GaugeSource = { name, description, read };
  gauges.add(source);
  if (state) attach(state.instruments.meter, source);
  return () => {
    gauges.delete(source);
    source.detach?.();
  };
}

/** The Prometheus text of every metric of this process (text/plain; version=0.0.4). */
export async function prometheusText(): Promise<string> {
  const { exporter } = setUp();
  const { PrometheusSerializer } = sdk();
  const { resourceMetrics, errors } = await exporter.collect();
  if (errors.length > 0) recordError('metrics_collect');
  // Without the otel_scope_name label: every instrument here has the one scope "asg".
  return new PrometheusSerializer(undefined, undefined, undefined, false, true).serialize(resourceMetrics);
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
