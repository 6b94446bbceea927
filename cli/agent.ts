import type { ServiceName } from '../services/common/config/schema.js';
import type { SERVICE_NAMES } from './service-names.js';
import { configureLogging, createLogger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { initTelemetry } from '../services/common/telemetry.js';
import { readConfig } from './read-config.js';
import { collectGarbageOnSignal } from './gc-signal.js';
import { stopOnSignal } from './stop.js';

/** `asg up` and `asg serve <service>`: the agent's own services, in one process or one each. */

const log = createLogger('asg');

export interface StartOptions {
  /** `--insecure`: as `insecure: true` in the file. */
  insecure: boolean;
  /** `--host`, and `--port` or PORT: where the gateway (or the served service) listens instead of the file's. */
  host?: string | undefined;
  port?: number | undefined;
}

export async function up(configFile: string, options: StartOptions): Promise<void> {
  // The whole check of `asg config check` (cli/read-config.ts): a refused start loads none of the services.
  const config = await readConfig(configFile, options);
  // The configuration's `log` section; LOG_LEVEL and LOG_FORMAT (--log-level, --log-format) still win.
  configureLogging(config.log);
  initTelemetry('agent-stop-and-go');
  // Loaded once the configuration is known to be good: a refused start need not wait for the services' code.
  const { startMesh } = await import('./mesh.js');
  const mesh = await startMesh(config, (service) => createLogger(service));
  // The handlers come before the line that says it is up: whoever waits for that line may
  // signal at once, and a signal with no handler yet would kill the process uncleanly.
  stopOnSignal(mesh.stop, log, config.shutdown_grace);
  log.info('agent up', { config: configFile, url: mesh.url, services: mesh.services.map((s) => `${s.name}@${s.address}`).join(',') });
  collectGarbageOnSignal(log);
}

/** `service` is one of SERVICE_NAMES (commander checked it). */
export async function serve(
  service: ServiceName | 'gateway' | (typeof SERVICE_NAMES)[number],
  configFile: string,
  options: StartOptions,
): Promise<void> {
  // --host/--port are the gateway's listen address only when it is the gateway that is served.
  const config = await readConfig(configFile, service === 'gateway' ? { ...options, service } : { insecure: options.insecure, service });
  configureLogging(config.log);
  initTelemetry(`asg-${service}`);
  const { startOneService } = await import('./serve.js');
  const running: RunningService = await startOneService(service, config, { host: options.host, port: options.port });
  stopOnSignal(running.stop, log, config.shutdown_grace);
  log.info('service up', { service: running.name, address: running.address });
  collectGarbageOnSignal(log);
}
