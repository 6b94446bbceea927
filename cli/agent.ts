import type { ServiceName } from '../services/common/config/schema.js';
import { createLogger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { initTelemetry } from '../services/common/telemetry.js';
import { readConfig } from './read-config.js';
import { SERVICE_NAMES } from './service-names.js';
import { stopOnSignal } from './stop.js';
import { fail, USAGE } from './usage.js';

/** `asg up` and `asg serve <service>`: the agent's own services, in one process or one each. */

const log = createLogger('asg');

export async function up(configFile: string, insecure: boolean): Promise<void> {
  // The whole check of `asg config check` (cli/read-config.ts): a refused start loads none of the services.
  const config = await readConfig(configFile, { insecure });
  initTelemetry('agent-stop-and-go');
  // Loaded once the configuration is known to be good: a refused start need not wait for the services' code.
  const { startMesh } = await import('./mesh.js');
  const mesh = await startMesh(config, (service) => createLogger(service));
  log.info('agent up', { config: configFile, url: mesh.url, services: mesh.services.map((s) => `${s.name}@${s.address}`).join(',') });
  stopOnSignal(mesh.stop, log, config.shutdown_grace);
}

export async function serve(service: string | undefined, configFile: string, insecure: boolean): Promise<void> {
  if (!service || !(SERVICE_NAMES as readonly string[]).includes(service)) fail(`serve needs one of: ${SERVICE_NAMES.join(', ')}\n\n${USAGE}`, 2);
  const config = await readConfig(configFile, { insecure, service });
  initTelemetry(`asg-${service}`);
  const { startOneService } = await import('./serve.js');
  const running: RunningService = await startOneService(service as ServiceName | 'gateway', config);
  log.info('service up', { service: running.name, address: running.address });
  stopOnSignal(running.stop, log, config.shutdown_grace);
}
