import type { GenerateRequest, GenerateResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import { AttemptsFailed, retry, type BackoffPolicy, type Clock, type RetryOptions } from '../common/backoff.js';
import type { AgentConfig } from '../common/config/schema.js';
import { deadlineExceeded } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { recordError, recordModelCall } from '../common/metrics.js';
import { callSettingsFor } from './call-settings.js';
import type { ModelClients } from './clients.js';
import { generateOnce } from './one-step.js';
import { toModelPrompt } from './prompt.js';
import { afterAttempts, attemptFailureOf, statusOf, timedOut, toServiceError } from './provider-errors.js';
import { toGenerateResponse } from './reply.js';
import type { AttemptFailure } from './retry.js';
import { routeModel, type ModelRoute } from './routing.js';

export interface GenerateDependencies {
  models: ModelClients;
  /** `llm.timeout`: the longest one model call may take, retries and their waits included. */
  timeoutMs: number;
  /** `llm.temperature` and `llm.max_tokens`. */
  sampling: Pick<AgentConfig['llm'], 'temperature' | 'max_tokens'>;
  retry: BackoffPolicy;
  clock: Clock;
  log: Logger;
}

/** How long this call may take: `llm.timeout`, shortened by the caller's deadline if that comes first. */
export function callBudgetMs(timeoutMs: number, deadline: number | undefined, now: number): number {
  return deadline === undefined ? timeoutMs : Math.min(timeoutMs, deadline - now);
}

/**
 * What Generate and GenerateStream decide before calling the provider: the route and client
 * (INVALID_ARGUMENT / FAILED_PRECONDITION without any request), the prompt, the request
 * parameters and the time left — DEADLINE_EXCEEDED when none is.
 */
export function prepareCall(
  request: GenerateRequest,
  deadline: number | undefined,
  { models, timeoutMs, sampling, clock }: Pick<GenerateDependencies, 'models' | 'timeoutMs' | 'sampling' | 'clock'>,
) {
  const route = routeModel(request.model);
  const model = models.get(route);
  const prompt = toModelPrompt(request);
  const settings = callSettingsFor(route.provider, sampling);
  // A node's own timeout replaces llm.timeout for this call; the caller's deadline still caps it.
  const budgetMs = callBudgetMs(request.timeoutMs || timeoutMs, deadline, clock.now());
  if (budgetMs <= 0) throw deadlineExceeded(`the caller's deadline had passed before model ${route.model} was called`);
  return { route, model, prompt, settings, budgetMs };
}

/** How the failures of one kind of model call (one answer, or a stream) are read. */
export interface FailureReading {
  classify(error: unknown, now: number): AttemptFailure;
  status(error: unknown): number | 'none';
  describe(error: unknown): string;
}

/**
 * The retry run of one model call, shared by Generate and GenerateStream: every attempt and
 * wait within the call's budget and signal, only transient failures retried (after the wait
 * their Retry-After asks for, if any), and a warn line per retry (never a key: `describe`
 * gives the redacted service error). A call cut off by our own deadline ends with the signal.
 */
export function modelRetryRun(
  { clock, log }: Pick<GenerateDependencies, 'clock' | 'log'>,
  call: { route: ModelRoute; budgetMs: number; signal: AbortSignal; stream?: boolean },
  failures: FailureReading,
): RetryOptions {
  return {
    deadline: clock.now() + call.budgetMs,
    clock,
    signal: call.signal,
    retry: (error) => failures.classify(error, clock.now()).transient,
    waitOf: (error) => failures.classify(error, clock.now()).retryAfterMs,
    onRetry: ({ attempt, error, delayMs }) =>
      log.warn('model call failed, retrying', {
        model: call.route.model,
        provider: call.route.provider,
        ...(call.stream && { stream: true }),
        attempt,
        status: failures.status(error),
        retry_in_ms: delayMs,
        error: failures.describe(error),
      }),
  };
}

/**
 * One model call, retried by the policy of retry.ts: one answer of the provider model
 * (one-step.ts, what `generateText` with one step gives, without its validation of the prompt
 * we built), and no retry inside it, so that retry.ts owns the policy and no hidden retry
 * spends the caller's deadline. Tool calls are never run here: a call to an unknown tool or
 * with unparsable arguments comes back marked invalid, and reply.ts returns it like any other.
 */
export function createGenerate(dependencies: GenerateDependencies) {
  const { log } = dependencies;
  return async function generate(request: GenerateRequest, deadline: number | undefined): Promise<GenerateResponse> {
    const { route, model, prompt, settings, budgetMs } = prepareCall(request, deadline, dependencies);
    // One signal for every attempt and every wait: retries share the call's deadline.
    const signal = AbortSignal.timeout(budgetMs);
    const started = performance.now();
    let attempts = 0;
    try {
      const result = await retry(
        () => {
          attempts += 1;
          return generateOnce(model, prompt, settings, signal);
        },
        dependencies.retry,
        modelRetryRun(
          dependencies,
          { route, budgetMs, signal },
          {
            classify: attemptFailureOf,
            status: statusOf,
            describe: (error) => toServiceError(error, route).message,
          },
        ),
      );
      for (const warning of result.warnings) log.debug('provider warning', { model: route.model, warning: JSON.stringify(warning) });
      const response = toGenerateResponse(result);
      recordModelCall(route.provider, route.model, 'ok', response.usage);
      log.debug('model answered', {
        model: route.model,
        provider: route.provider,
        ms: Math.round(performance.now() - started),
        attempts,
        finish: response.finishReason,
        tool_calls: response.toolCalls.length,
      });
      return response;
    } catch (error) {
      const failure = signal.aborted
        ? afterAttempts(timedOut(route, budgetMs), attempts)
        : error instanceof AttemptsFailed
          ? afterAttempts(toServiceError(error.lastError, route), error.attempts, error.reason === 'deadline' ? error.delayMs : undefined)
          : toServiceError(error, route);
      recordModelCall(route.provider, route.model, 'failed');
      recordError('model_call_failed', { provider: route.provider });
      log.warn('model call failed', {
        model: route.model,
        provider: route.provider,
        ms: Math.round(performance.now() - started),
        attempts,
        error: failure.message,
      });
      throw failure;
    }
  };
}
