import type { BackoffPolicy } from '../common/backoff.js';
import type { McpServerConfig } from '../common/config/schema.js';
import type { ProcessExit } from './stdio-probe.js';

/**
 * Reconnecting a server that is down: exponential backoff from `initialMs`, doubled per failure
 * up to `maxMs`, each delay with equal jitter (half fixed, half random) so that replicas
 * restarted together do not knock on a recovering server in step. Retries go on at the cap for
 * as long as the broker runs: a server that comes up later gets its tools listed.
 * A `required` server is tried for `startupMs` at startup, then the broker refuses to start.
 */
export interface ReconnectPolicy {
  initialMs: number;
  maxMs: number;
  startupMs: number;
}

export const RECONNECT: ReconnectPolicy = { initialMs: 500, maxMs: 30_000, startupMs: 10_000 };

/** The reconnect schedule as the common backoff runs it. */
export function reconnectBackoff(policy: ReconnectPolicy): BackoffPolicy {
  return { attempts: Infinity, baseMs: policy.initialMs, maxMs: policy.maxMs, jitter: 'equal' };
}

/** The last lines a stdio server wrote to stderr while starting: what an operator needs to see why it did not. */
export class StderrTail {
  private lines: string[] = [];

  constructor(private readonly keep = 10) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.shift();
  }

  take(): string[] {
    const lines = this.lines;
    this.lines = [];
    return lines;
  }
}

function commandLine(config: McpServerConfig): string {
  return [config.command!, ...config.args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

function exitText(exit: ProcessExit | undefined): string | undefined {
  if (!exit) return undefined;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

/**
 * One message that says why a server could not be started or reached: for stdio the command,
 * how its process ended and the last lines of its stderr; for HTTP the endpoint and the error.
 * `reason` is the error's own text (a spawn ENOENT, a fetch failure, a timeout).
 */
export function startFailure(
  config: McpServerConfig,
  endpoint: string,
  reason: string,
  exit: ProcessExit | undefined,
  stderr: readonly string[],
): string {
  if (!config.command) return `MCP server ${config.name} (${endpoint}) could not be reached: ${reason}`;
  const notFound = /\bENOENT\b/.test(reason) ? ' (command not found: check "command" and PATH)' : '';
  const how = exitText(exit);
  const head = `MCP server ${config.name} could not be started: command \`${commandLine(config)}\` ${how ? `${how} before the MCP handshake` : `failed: ${reason}${notFound}`}`;
  const tail = stderr.length > 0 ? `; last stderr lines:\n  ${stderr.join('\n  ')}` : how ? '; it wrote nothing to stderr' : '';
  return head + tail;
}
