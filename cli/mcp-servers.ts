import type { FilesystemConfig } from '../services/mcp-filesystem/config.js';
import { fail } from './usage.js';

/**
 * `asg mcp-resources` and `asg mcp-filesystem`: the built-in MCP servers. The tool broker starts
 * them over stdio as its children, so each loads only its own server's modules: the
 * HTTP face, the logger and the signal handling are imported by the HTTP path alone. Their
 * options were parsed by commander (cli/main.ts).
 */

/** `stopOnSignal` with the CLI's logger, loaded for the long-running HTTP servers only. */
async function signalHandling(): Promise<(close: (deadline: number) => Promise<void>) => void> {
  const [{ stopOnSignal }, { createLogger }] = await Promise.all([import('./stop.js'), import('../services/common/log.js')]);
  return (close) => stopOnSignal(close, createLogger('asg'));
}

/** Over stdio, unless a port is given (`--http` or `--port`): then Streamable HTTP at /mcp on host:port. */
export async function mcpResources(options: { db: string; host: string; port?: number | undefined }): Promise<void> {
  if (options.port === undefined) {
    const { runMcpResourcesStdio } = await import('../services/mcp-resources/stdio.js');
    return runMcpResourcesStdio(options.db);
  }
  const [{ startMcpResourcesHttp }, stopOnSignal] = await Promise.all([import('../services/mcp-resources/http.js'), signalHandling()]);
  const server = await startMcpResourcesHttp({ dbPath: options.db, host: options.host, port: options.port });
  stopOnSignal(server.close);
  process.stderr.write(`mcp-resources listening url=${server.url}\n`);
}

/** Over HTTP on the config's host and port (or --host and --port), or over stdio. */
export async function mcpFilesystem(options: {
  config: string;
  stdio: boolean;
  host?: string | undefined;
  port?: number | undefined;
}): Promise<void> {
  const { FilesystemConfigError, loadFilesystemConfig } = await import('../services/mcp-filesystem/config.js');
  let config: FilesystemConfig;
  try {
    config = loadFilesystemConfig(options.config);
  } catch (error) {
    if (error instanceof FilesystemConfigError) fail(error.message, 2);
    throw error;
  }
  if (options.stdio) {
    const { runFilesystemStdio } = await import('../services/mcp-filesystem/stdio.js');
    return runFilesystemStdio(config);
  }
  const [{ startFilesystemHttp }, stopOnSignal] = await Promise.all([import('../services/mcp-filesystem/http.js'), signalHandling()]);
  const server = await startFilesystemHttp(config, {
    ...(options.host !== undefined && { host: options.host }),
    ...(options.port !== undefined && { port: options.port }),
  });
  stopOnSignal(server.close);
  process.stderr.write(`mcp-filesystem listening url=${server.url} roots=${config.roots.map((root) => root.name).join(',')}\n`);
}
