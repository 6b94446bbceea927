import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../services/common/config/load.js';
import type { AgentConfig, ServiceName } from '../services/common/config/schema.js';
import { createLogger } from '../services/common/log.js';
import { registerEnvironmentSecrets } from '../services/common/secrets.js';
import type { RunningService } from '../services/common/service.js';
import { initTelemetry } from '../services/common/telemetry.js';
import { FilesystemConfigError, loadFilesystemConfig, runFilesystemStdio, startFilesystemHttp, type FilesystemConfig } from '../services/mcp-filesystem/index.js';
import { runMcpResourcesStdio, startMcpResourcesHttp } from '../services/mcp-resources/index.js';
import { AuthConfigError, checkAuthConfig, InsecureBindingError } from '../gateway/auth/preflight.js';
import { APPROVALS_USAGE, approvalsCommand } from './approvals.js';
import { SERVICE_NAMES } from './service-names.js';
import { stopOnSignal } from './stop.js';
import { startWeb, WEB_USAGE } from './web.js';

const USAGE = `Usage: asg <command> [options]

Commands:
  up [--config FILE] [--insecure]         every service in one process (what \`npm start\` runs)
  serve <service> [--config FILE] [--insecure]
                                          one service alone: ${SERVICE_NAMES.join(', ')}
  mcp-resources [--db FILE] [--http PORT] [--host HOST]
                                          the built-in resources MCP server (stdio, or Streamable HTTP at /mcp)
  mcp-filesystem --config FILE [--port N] [--stdio]
                                          the built-in sandboxed filesystem MCP server (Streamable HTTP at /mcp
                                          on the config's host and port, or stdio)
  config check FILE                       validate an agent configuration file
${WEB_USAGE}
${APPROVALS_USAGE}
                                          (asg approvals --help: --url, --token, --json, exit codes)

Options:
  --config FILE   agent configuration (default: config/agent.yaml)
  --insecure      let the gateway listen beyond loopback without auth (as insecure: true):
                  anyone who reaches the port may chat and approve
`;

const log = createLogger('asg');

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function readConfig(file: string): AgentConfig {
  try {
    return loadConfig(file);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}

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

async function up(configFile: string, insecure: boolean): Promise<void> {
  const config = gatewayConfig(configFile, insecure);
  initTelemetry('agent-stop-and-go');
  // Loaded on demand: every service's code takes a second to load, which `asg approvals` need not wait for.
  const { startMesh } = await import('./mesh.js');
  const mesh = await startMesh(config, (service) => createLogger(service));
  log.info('agent up', { config: configFile, url: mesh.url, services: mesh.services.map((s) => `${s.name}@${s.address}`).join(',') });
  stopOnSignal(mesh.stop, log, config.shutdown_grace);
}

async function serve(service: string | undefined, configFile: string, insecure: boolean): Promise<void> {
  if (!service || !(SERVICE_NAMES as readonly string[]).includes(service)) fail(`serve needs one of: ${SERVICE_NAMES.join(', ')}\n\n${USAGE}`, 2);
  const config = service === 'gateway' ? gatewayConfig(configFile, insecure) : readConfig(configFile);
  initTelemetry(`asg-${service}`);
  const { startOneService } = await import('./serve.js');
  const running: RunningService = await startOneService(service as ServiceName | 'gateway', config);
  log.info('service up', { service: running.name, address: running.address });
  stopOnSignal(running.stop, log, config.shutdown_grace);
}

async function mcpResources(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { db: { type: 'string', default: './resources.db' }, http: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } } });
  if (values.http === undefined) return runMcpResourcesStdio(values.db);
  const port = Number(values.http);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--http needs a port number, got ${JSON.stringify(values.http)}`, 2);
  const server = await startMcpResourcesHttp({ dbPath: values.db, host: values.host, port });
  process.stderr.write(`mcp-resources listening url=${server.url}\n`);
  stopOnSignal(server.close, log);
}

async function web(args: string[]): Promise<void> {
  try {
    stopOnSignal((await startWeb(args, createLogger('web'))).stop, log);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}

async function mcpFilesystem(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { config: { type: 'string' }, port: { type: 'string' }, stdio: { type: 'boolean', default: false } } });
  if (!values.config) fail(`mcp-filesystem needs --config FILE\n\n${USAGE}`, 2);
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port needs a port number (0-65535), got ${JSON.stringify(values.port)}`, 2);
  }
  let config: FilesystemConfig;
  try {
    config = loadFilesystemConfig(values.config);
  } catch (error) {
    if (error instanceof FilesystemConfigError) fail(error.message, 2);
    throw error;
  }
  if (values.stdio) return runFilesystemStdio(config);
  const server = await startFilesystemHttp(config, { port });
  process.stderr.write(`mcp-filesystem listening url=${server.url} roots=${config.roots.map((root) => root.name).join(',')}\n`);
  stopOnSignal(server.close, log);
}

function configCheck(file: string | undefined): void {
  if (!file) fail(`config check needs a FILE\n\n${USAGE}`, 2);
  const config = readConfig(file);
  process.stdout.write(`${file}: valid (model ${config.llm.model}, ${config.mcp_servers.length} MCP server(s), ${config.a2a.length} A2A agent(s), ${config.agent ? 'agent tree' : 'simple mode'})\n`);
}

async function main(argv: string[]): Promise<void> {
  registerEnvironmentSecrets();
  const [command, ...rest] = argv;
  if (command === 'mcp-resources') return mcpResources(rest);
  if (command === 'mcp-filesystem') return mcpFilesystem(rest);
  if (command === 'web') return web(rest);
  if (command === 'approvals') {
    process.exitCode = await approvalsCommand(rest, process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    return;
  }
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { config: { type: 'string', default: 'config/agent.yaml' }, insecure: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  switch (command) {
    case 'up':
      return up(values.config, values.insecure);
    case 'serve':
      return serve(positionals[0], values.config, values.insecure);
    case 'config':
      if (positionals[0] !== 'check') fail(`unknown config subcommand ${JSON.stringify(positionals[0] ?? '')}\n\n${USAGE}`, 2);
      return configCheck(positionals[1]);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      fail(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  log.error('failed to start', { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
