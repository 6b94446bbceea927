import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { FilesystemConfig } from './config.js';
import { logToStderr } from './log.js';
import { Sandbox } from './sandbox.js';
import { createFilesystemServer } from './server.js';

/**
 * Serves the tools over stdin/stdout until the client closes stdin (the MCP stdio binding's
 * "exit promptly" rule). `serveStdio` settles the protocol era from the client's first message,
 * so 2025-era clients (initialize) and 2026-07-28 clients are both served.
 */
export async function runFilesystemStdio(config: FilesystemConfig): Promise<void> {
  const sandbox = new Sandbox(config);
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  const connection = serveStdio(() => createFilesystemServer(sandbox), {
    onerror: (error) => logToStderr('warn', 'stdio connection error', { error: error.message }),
  });
  await ended;
  await connection.close().catch(() => undefined);
}
