import type { AgentConfig, ServiceName } from '../services/common/config/schema.js';
import { configureLogging, createLogger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { initTelemetry } from '../services/common/telemetry.js';
import { AuthConfigError, checkAuthConfig, InsecureBindingError } from '../gateway/auth/preflight.js';
import { readConfig } from './read-config.js';
import { SERVICE_NAMES } from './service-names.js';
import { stopOnSignal } from './stop.js';
import { fail, USAGE } from './usage.js';

/** `asg up` and `asg serve <service>`: the agent's own services, in one process or one each. */

const log = createLogger('asg');

/**
 * The configuration of a gateway start (`--insecure` is `insecure: true`), refused before
 * anything starts when the gateway could not: a host beyond loopback without auth, a token
 * variable that is not set (issue 15).
 */
function gatewayConfig(file: string, insecure: boolean): AgentConfig {
  const config = readConfig(file);
  const effective = insecure ? { ...config, insecure: true } : config;
  try {
    checkAuthConfig(effective);
  } catch (error) {
    if (error instanceof InsecureBindingError || error instanceof AuthConfigError) fail(`${file}: ${error.message}`, 2);
    throw error;
  }
  return effective;
}

export async function up(configFile: string, insecure: boolean): Promise<void> {
  const config = gatewayConfig(configFile, insecure);
  // The configuration's `log` section; LOG_LEVEL and LOG_FORMAT (--log-level, --log-format) still win.
  configureLogging(config.log);
  initTelemetry('agent-stop-and-go');
  // Loaded once the configuration is known to be good: a refused start need not wait for the services' code.
  const { startMesh } = await import('./mesh.js');
  const mesh = await startMesh(config, (service) => createLogger(service));
  log.info('agent up', { config: configFile, url: mesh.url, services: mesh.services.map((s) => `${s.name}@${s.address}`).join(',') });
  stopOnSignal(mesh.stop, log, config.shutdown_grace);
}

export async function serve(service: string | undefined, configFile: string, insecure: boolean): Promise<void> {
  if (!service || !(SERVICE_NAMES as readonly string[]).includes(service)) fail(`serve needs one of: ${SERVICE_NAMES.join(', ')}\n\n${USAGE}`, 2);
  const config = service === 'gateway' ? gatewayConfig(configFile, insecure) : readConfig(configFile);
  configureLogging(config.log);
  initTelemetry(`asg-${service}`);
  const { startOneService } = await import('./serve.js');
  const running: RunningService = await startOneService(service as ServiceName | 'gateway', config);
  log.info('service up', { service: running.name, address: running.address });
  stopOnSignal(running.stop, log, config.shutdown_grace);
}
