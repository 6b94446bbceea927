import { parseArgs } from 'node:util';
import { registerEnvironmentSecrets } from '../services/common/secrets.js';
import { fail, USAGE } from './usage.js';

/**
 * `asg <command>`: each command's code is imported when that command runs, so that the help
 * text, `config check`, `approvals` and the built-in MCP servers (which the tool broker starts
 * as its children) load neither the services nor gRPC, OpenTelemetry or the AI SDK (issue 16).
 * Only `up` and `serve` load the services.
 */
async function main(argv: string[]): Promise<void> {
  registerEnvironmentSecrets();
  const [command, ...rest] = argv;
  if (command === 'mcp-resources') return (await import('./mcp-servers.js')).mcpResources(rest);
  if (command === 'mcp-filesystem') return (await import('./mcp-servers.js')).mcpFilesystem(rest);
  if (command === 'web') return (await import('./web.js')).runWeb(rest);
  if (command === 'approvals') {
    const { approvalsCommand } = await import('./approvals.js');
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
      return (await import('./agent.js')).up(values.config, values.insecure);
    case 'serve':
      return (await import('./agent.js')).serve(positionals[0], values.config, values.insecure);
    case 'config':
      if (positionals[0] !== 'check') fail(`unknown config subcommand ${JSON.stringify(positionals[0] ?? '')}\n\n${USAGE}`, 2);
      return (await import('./read-config.js')).configCheck(positionals[1]);
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

main(process.argv.slice(2)).catch(async (error: unknown) => {
  const { createLogger } = await import('../services/common/log.js');
  createLogger('asg').error('failed to start', { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
