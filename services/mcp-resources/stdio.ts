import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { logToStderr } from './log.js';
import { ResourceStore } from './store.js';
import { createResourcesServer } from './tools.js';

/**
 * Serves the tools over stdin/stdout until the client closes stdin (the MCP stdio binding's
 * "exit promptly" rule), then closes the database. `serveStdio` settles the protocol era from
 * the client's opening message, so 2025-era clients and 2026-07-28 clients are both served.
 */
export async function runMcpResourcesStdio(dbPath: string): Promise<void> {
  const store = new ResourceStore(dbPath);
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  const connection = serveStdio(() => createResourcesServer(store), {
    onerror: (error) => logToStderr('warn', 'stdio connection error', { error: error.message }),
  });
  await ended;
  await connection.close().catch(() => undefined);
  store.close();
}
