import { parseArgs } from 'node:util';
import { ConfigError } from '../services/common/config/load.js';
import { createLogger, type Logger } from '../services/common/log.js';
import { loadWebConfig } from '../gateway/web/config.js';
import { startWebServer, type WebServer } from '../gateway/web/server.js';
import { findWebDist } from '../gateway/web/static-app.js';
import { stopOnSignal } from './stop.js';
import { fail } from './usage.js';

/** `asg web --config config/web.yaml`: host, port and agent_url from the file. */
export async function startWeb(args: string[], log: Logger): Promise<WebServer> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', default: 'config/web.yaml' } } });
  const config = loadWebConfig(values.config);
  const dist = findWebDist();
  if (!dist) throw new ConfigError('the web app is not built (web/dist/index.html is missing); run `npm run build` first');
  const server = await startWebServer({ config, dist, log });
  log.info('web up', { url: server.url, agent_url: config.agent_url, config: values.config });
  return server;
}

/** `asg web`: the chat until a signal stops it; a bad configuration exits 2. */
export async function runWeb(args: string[]): Promise<void> {
  const log = createLogger('web');
  try {
    stopOnSignal((await startWeb(args, log)).stop, createLogger('asg'));
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}
