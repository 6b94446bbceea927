import { stepCountIs, streamText } from 'ai';
import type { GenerateStreamRequest, GenerateStreamResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import { AttemptsFailed, retry } from '../common/backoff.js';
import { deadlineExceeded, type ServiceError } from '../common/grpc/errors.js';
import { recordError, recordModelCall } from '../common/metrics.js';
import { modelRetryRun, prepareCall, type GenerateDependencies } from './generate.js';
import { ModelStream } from './model-stream.js';
import { afterAttempts, formatDuration, statusOf, timedOut } from './provider-errors.js';
import type { ModelRoute } from './routing.js';
import { afterEventsSent, reportedError, streamAttemptFailureOf, streamFailureOf } from './stream-failures.js';

/** A stream that has produced its first event: the only point up to which it may be retried. */
interface OpenedStream {
  first: GenerateStreamResponse;
  rest: ModelStream;
}

/**
 * GenerateStream: the Generate call (same routing, key check, prompt, parameters, deadline
 * and error categories) with `streamText`, yielding events as the provider sends them.
 *
 * Retries (retry.ts) apply only until the first event has been produced: a 429, a 5xx or a
 * lost connection before that is retried as Generate retries it, since the client has seen
 * nothing yet. After it, a failure ends the stream with its status and is never retried — a
 * restarted stream would send the client a second, different beginning of the answer.
 *
 * `llm.timeout` (or the caller's earlier deadline) bounds the whole stream, not only its
 * start. `cancelled` is the gRPC call's signal: when the client goes away, the provider
 * request is aborted with it.
 */
export function createGenerateStream(dependencies: GenerateDependencies) {
  const { log } = dependencies;
  return async function* generateStream(
    request: GenerateStreamRequest,
    deadline: number | undefined,
    cancelled: AbortSignal,
  ): AsyncGenerator<GenerateStreamResponse> {
    const { route, model, prompt, settings, budgetMs } = prepareCall(request, deadline, dependencies);
    const timeout = AbortSignal.timeout(budgetMs);
    // Aborted on the way out, whatever the way: a consumer that stops reading must not leave
    // the provider request running.
    const done = new AbortController();
    const signal = AbortSignal.any([timeout, cancelled, done.signal]);
    const started = performance.now();
    let attempts = 0;
    let events = 0;
    let stream: ModelStream | undefined;

    const open = async (): Promise<OpenedStream> => {
      attempts += 1;
      const rest = new ModelStream(
        streamText({
          model,
          ...prompt,
          ...settings,
          // As in generate.ts: retry.ts owns retries, and one step answers without a second request.
          maxRetries: 0,
          stopWhen: stepCountIs(1),
          abortSignal: signal,
          // ModelStream tells a body without any event from an empty answer by these.
          includeRawChunks: true,
          // Failures arrive as parts of the stream and are read there; the SDK's default
          // handler would print them with console.error.
          onError: () => undefined,
        }).fullStream,
      );
      stream = rest;
      const first = await rest.next();
      if (!first) throw new Error(`model ${route.model} ended its stream without an answer`);
      return { first, rest };
    };

    try {
      const opened = await retry(
        open,
        dependencies.retry,
        modelRetryRun(
          dependencies,
          { route, budgetMs, signal, stream: true },
          {
            classify: streamAttemptFailureOf,
            status: (error) => statusOf(reportedError(error)),
            describe: (error) => streamFailureOf(error, route).message,
          },
        ),
      );
      let event: GenerateStreamResponse | undefined = opened.first;
      let usage: { inputTokens?: number; outputTokens?: number } | undefined;
      for (; event; event = await opened.rest.next()) {
        events += 1;
        usage = event.finish?.usage ?? usage;
        yield event;
      }
      recordModelCall(route.provider, route.model, 'ok', usage);
      log.debug('model answered', {
        model: route.model,
        provider: route.provider,
        stream: true,
        ms: Math.round(performance.now() - started),
        attempts,
        events,
      });
    } catch (error) {
      if (cancelled.aborted && !timeout.aborted) {
        log.debug('model stream cancelled by the caller', { model: route.model, provider: route.provider, events });
        return;
      }
      const failure = timeout.aborted ? timeoutFailure(route, budgetMs, attempts, events) : streamFailure(error, route, events);
      recordModelCall(route.provider, route.model, 'failed');
      recordError('model_call_failed', { provider: route.provider });
      log.warn('model call failed', {
        model: route.model,
        provider: route.provider,
        stream: true,
        ms: Math.round(performance.now() - started),
        attempts,
        events,
        error: failure.message,
      });
      throw failure;
    } finally {
      done.abort();
      await stream?.close();
    }
  };
}

/** The llm.timeout (or the caller's deadline) ran out: before the answer began, or during it. */
function timeoutFailure(route: ModelRoute, budgetMs: number, attempts: number, events: number): ServiceError {
  if (events === 0) return afterAttempts(timedOut(route, budgetMs), attempts);
  return afterEventsSent(deadlineExceeded(`model ${route.model} did not finish its answer within ${formatDuration(budgetMs)}`), events);
}

/** Any other failure: after the retries when no event had been sent, with the event count when some had. */
function streamFailure(error: unknown, route: ModelRoute, events: number): ServiceError {
  if (events > 0) return afterEventsSent(streamFailureOf(error, route), events);
  if (error instanceof AttemptsFailed) {
    return afterAttempts(streamFailureOf(error.lastError, route), error.attempts, error.reason === 'deadline' ? error.delayMs : undefined);
  }
  return streamFailureOf(error, route);
}
