import { ConfigError } from '../services/common/config/load.js';
import { createLogger, type Logger } from '../services/common/log.js';
import { loadWebConfig } from '../gateway/web/config.js';
import { startWebServer, type WebServer } from '../gateway/web/server.js';
import { findWebDist } from '../gateway/web/static-app.js';
import { stopOnSignal } from './stop.js';
import { fail } from './usage.js';

export interface WebOptions {
  /** config/web.yaml by default: host, port and agent_url. */
  config: string;
  /** `--host`, and `--port` or PORT: where the chat listens instead of the file's. */
  host?: string | undefined;
  port?: number | undefined;
}

/** `asg web --config config/web.yaml`: the chat on its own port, in front of the agent at agent_url. */
async function startWeb(options: WebOptions, log: Logger): Promise<WebServer> {
  const config = {
    ...loadWebConfig(options.config),
    ...(options.host !== undefined && { host: options.host }),
    ...(options.port !== undefined && { port: options.port }),
  };
  const dist = findWebDist();
  if (!dist) throw new ConfigError('the web app is not built (web/dist/index.html is missing); run `npm run build` first');
  const server = await startWebServer({ config, dist, log });
  log.info('web up', { url: server.url, agent_url: config.agent_url, config: options.config });
  return server;
}

/** `asg web`: the chat until a signal stops it; a bad configuration exits 2. */
export async function runWeb(options: WebOptions): Promise<void> {
  const log = createLogger('web');
  try {
    stopOnSignal((await startWeb(options, log)).stop, createLogger('asg'));
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}
