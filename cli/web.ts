import { parseArgs } from 'node:util';
import { ConfigError } from '../services/common/config/load.js';
import type { Logger } from '../services/common/log.js';
import { loadWebConfig } from '../gateway/web/config.js';
import { startWebServer, type WebServer } from '../gateway/web/server.js';
import { findWebDist } from '../gateway/web/static-app.js';

export const WEB_USAGE = `  web [--config FILE]                     the web chat on its own port, in front of an agent (default config/web.yaml)`;

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
