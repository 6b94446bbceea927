import { parseArgs } from 'node:util';
import { fail, USAGE } from './usage.js';

/**
 * `asg mcp-resources` and `asg mcp-filesystem`: the built-in MCP servers. The tool broker starts
 * them over stdio as its children, so each loads only its own server's modules (issue 16): the
 * HTTP face, the logger and the signal handling are imported by the HTTP path alone.
 */

/** `stopOnSignal` with the CLI's logger, loaded for the long-running HTTP servers only. */
async function signalHandling(): Promise<(close: (deadline: number) => Promise<void>) => void> {
  const [{ stopOnSignal }, { createLogger }] = await Promise.all([import('./stop.js'), import('../services/common/log.js')]);
  return (close) => stopOnSignal(close, createLogger('asg'));
}

export async function mcpResources(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { db: { type: 'string', default: './resources.db' }, http: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } } });
  if (values.http === undefined) {
    const { runMcpResourcesStdio } = await import('../services/mcp-resources/stdio.js');
    return runMcpResourcesStdio(values.db);
  }
  const port = Number(values.http);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--http needs a port number, got ${JSON.stringify(values.http)}`, 2);
  const [{ startMcpResourcesHttp }, stopOnSignal] = await Promise.all([import('../services/mcp-resources/http.js'), signalHandling()]);
  const server = await startMcpResourcesHttp({ dbPath: values.db, host: values.host, port });
  stopOnSignal(server.close);
  process.stderr.write(`mcp-resources listening url=${server.url}\n`);
}

export async function mcpFilesystem(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { config: { type: 'string' }, port: { type: 'string' }, stdio: { type: 'boolean', default: false } } });
  if (!values.config) fail(`mcp-filesystem needs --config FILE\n\n${USAGE}`, 2);
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port needs a port number (0-65535), got ${JSON.stringify(values.port)}`, 2);
  }
  const { FilesystemConfigError, loadFilesystemConfig } = await import('../services/mcp-filesystem/config.js');
  let config;
  try {
    config = loadFilesystemConfig(values.config);
  } catch (error) {
    if (error instanceof FilesystemConfigError) fail(error.message, 2);
    throw error;
  }
  if (values.stdio) {
    const { runFilesystemStdio } = await import('../services/mcp-filesystem/stdio.js');
    return runFilesystemStdio(config);
  }
  const [{ startFilesystemHttp }, stopOnSignal] = await Promise.all([import('../services/mcp-filesystem/http.js'), signalHandling()]);
  const server = await startFilesystemHttp(config, { port });
  stopOnSignal(server.close);
  process.stderr.write(`mcp-filesystem listening url=${server.url} roots=${config.roots.map((root) => root.name).join(',')}\n`);
}
