import type { AgentConfig, ServiceName } from '../services/common/config/schema.js';
import type { SERVICE_NAMES } from './service-names.js';
import { createLogger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { initTelemetry } from '../services/common/telemetry.js';
import { AuthConfigError, checkAuthConfig, InsecureBindingError } from '../gateway/auth/preflight.js';
import { readConfig } from './read-config.js';
import { stopOnSignal } from './stop.js';
import { fail } from './usage.js';

/** `asg up` and `asg serve <service>`: the agent's own services, in one process or one each. */

const log = createLogger('asg');

export interface StartOptions {
  /** `--insecure`: as `insecure: true` in the file. */
  insecure: boolean;
  /** `--host`, and `--port` or PORT: where the gateway (or the served service) listens instead of the file's. */
  host?: string | undefined;
  port?: number | undefined;
}

/** The file's configuration with --host and --port (or PORT) over its `host` and `port`. */
function withListen(config: AgentConfig, options: StartOptions): AgentConfig {
  return { ...config, ...(options.host !== undefined && { host: options.host }), ...(options.port !== undefined && { port: options.port }) };
}

/**
 * The configuration of a gateway start (`--insecure` is `insecure: true`), refused before
 * anything starts when the gateway could not: a host beyond loopback without auth, a token
 * variable that is not set (issue 15).
 */
function gatewayConfig(file: string, options: StartOptions): AgentConfig {
  const config = withListen(readConfig(file), options);
  const effective = options.insecure ? { ...config, insecure: true } : config;
  try {
    checkAuthConfig(effective);
  } catch (error) {
    if (error instanceof InsecureBindingError || error instanceof AuthConfigError) fail(`${file}: ${error.message}`, 2);
    throw error;
  }
  return effective;
}

export async function up(configFile: string, options: StartOptions): Promise<void> {
  const config = gatewayConfig(configFile, options);
  initTelemetry('agent-stop-and-go');
  // Loaded once the configuration is known to be good: a refused start need not wait for the services' code.
  const { startMesh } = await import('./mesh.js');
  const mesh = await startMesh(config, (service) => createLogger(service));
  log.info('agent up', { config: configFile, url: mesh.url, services: mesh.services.map((s) => `${s.name}@${s.address}`).join(',') });
  stopOnSignal(mesh.stop, log, config.shutdown_grace);
}

/** `service` is one of SERVICE_NAMES (commander checked it). */
export async function serve(service: ServiceName | 'gateway' | (typeof SERVICE_NAMES)[number], configFile: string, options: StartOptions): Promise<void> {
  const config = service === 'gateway' ? gatewayConfig(configFile, options) : readConfig(configFile);
  initTelemetry(`asg-${service}`);
  const { startOneService } = await import('./serve.js');
  const running: RunningService = await startOneService(service, config, { host: options.host, port: options.port });
  log.info('service up', { service: running.name, address: running.address });
  stopOnSignal(running.stop, log, config.shutdown_grace);
}
