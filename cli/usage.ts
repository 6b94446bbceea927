import { SERVICE_NAMES } from './service-names.js';

/**
 * The help texts of `asg`, kept apart from the commands: `asg --help` loads this module and
 * nothing else (issue 16).
 */

export const WEB_USAGE = `  web [--config FILE]                     the web chat on its own port, in front of an agent (default config/web.yaml)`;

export const APPROVALS_USAGE = `  approvals list [--status S] [--conversation ID] [--limit N] [--cursor C]
                                          approvals of a running agent (default: pending ones)
  approvals show UUID                     one approval: its call, arguments and decision
  approvals approve UUID [--arguments JSON] [--reason TEXT]
                                          approve; --arguments runs the call with these instead
  approvals reject UUID [--reason TEXT]   reject; the reason is told to the model`;

export const USAGE = `Usage: asg <command> [options]

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

/** Says what went wrong on stderr and exits (2: bad usage or configuration). */
export function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
