import { LlmGatewayServiceService } from '../../gen/ts/asg/llm/v1/llm.js';
import { systemClock, type Clock } from '../common/backoff.js';
import { ConfigError } from '../common/config/load.js';
import { rateRules } from '../common/config/schema.js';
import { RateLimiter } from '../common/rate-limit.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown, type ServiceHandlers } from '../common/grpc/server.js';
import { registerSecret } from '../common/secrets.js';
import type { LlmGatewayConfig } from '../common/config/slices.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { tracedFetch } from '../common/telemetry.js';
import { ModelClients } from './clients.js';
import { readProviderEnvironment } from './environment.js';
import { createGenerate, type GenerateDependencies } from './generate.js';
import { createGenerateStream } from './generate-stream.js';
import { retryPolicyFrom } from './retry.js';
import { configuredModels, routingErrors, startupWarnings } from './startup-checks.js';

const SERVICE = 'llm-gateway';

export interface LlmGatewayOptions extends ServiceOptions<LlmGatewayConfig> {
  /** Where provider keys and base URLs are read, once, at start; `process.env` by default. */
  env?: NodeJS.ProcessEnv;
  /** The clock and sleep of the retry backoff; the system's by default. */
  retryClock?: Clock;
}

/**
 * llm-gateway: one Generate call for any configured model. Holds no state but
 * its cached provider clients; API keys never leave it. A configured model that routes
 * nowhere stops the start with a ConfigError naming it and where it is configured. Ready
 * (health SERVING) once it listens, its routing checked: a provider that is down or out of
 * quota is reported per call (and retried), not by taking the whole service out.
 */
export async function startLlmGateway(options: LlmGatewayOptions): Promise<RunningService> {
  const { config, log } = options;
  const models = configuredModels(config);
  const errors = routingErrors(models);
  if (errors.length > 0) throw new ConfigError(`invalid configuration: ${errors.join('; ')}`);
  const environment = readProviderEnvironment(options.env ?? process.env);
  // The process entry registers process.env; keys handed in through `env` must be redacted too.
  for (const settings of environment.values()) registerSecret(settings.apiKey);
  for (const warning of startupWarnings(models, environment)) log.warn(warning);
  // The SDK would print its warnings with console.warn, outside our log format; generate.ts
  // logs them from each result instead.
  globalThis.AI_SDK_LOG_WARNINGS ??= false;
  // Node loads its fetch implementation (undici) when a fetch class is first used: loaded by the
  // first model call, it would hold the event loop, and every other request with it, for 100 ms
  // and more. A Headers made here loads it at start.
  new Headers();

  const dependencies: GenerateDependencies = {
    models: new ModelClients(environment, tracedFetch(SERVICE)),
    timeoutMs: config.llm.timeout,
    sampling: config.llm,
    retry: retryPolicyFrom(config.llm.retry),
    clock: options.retryClock ?? systemClock,
    log,
  };
  const generate = createGenerate(dependencies);
  const generateStream = createGenerateStream(dependencies);
  // rate_limits.models, by the model name as configured: over the limit a call waits for a
  // slot (bounded by rate_limits.max_wait and its deadline) or fails RESOURCE_EXHAUSTED.
  const limiter = new RateLimiter(rateRules(config.rate_limits.models), config.rate_limits.max_wait, 'model');
  const server = createServer(config.grpc);
  const health = new ServingHealth(server, [LlmGatewayServiceService]);
  const handlers: ServiceHandlers<typeof LlmGatewayServiceService> = {
    generate: async (request, ctx) => {
      await limiter.acquire(request.model, ctx.request.deadline);
      return generate(request, ctx.request.deadline);
    },
    generateStream: async function* (request, ctx) {
      await limiter.acquire(request.model, ctx.request.deadline);
      yield* generateStream(request, ctx.request.deadline, ctx.signal);
    },
  };
  server.addService(LlmGatewayServiceService, implement(LlmGatewayServiceService, SERVICE, handlers, log));
  const port = await listen(server, options.listen);
  const address = `${options.listen.slice(0, options.listen.lastIndexOf(':'))}:${port}`;
  const local = serveInProcess(
    options.inProcess,
    { definition: LlmGatewayServiceService, address, handlers, service: SERVICE, log },
    health,
  );
  health.markServing();
  log.info('listening', { address });
  let stopping: Promise<void> | undefined;
  return {
    name: SERVICE,
    address,
    port,
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopping ??= (async () => {
        await health.beginStop(deadline, config.grpc.drain_delay);
        await Promise.all([shutdown(server, deadline), local.stop(deadline)]);
      })()),
  };
}
