import { redactSecrets } from '../common/secrets.js';

/**
 * Log lines for mcp-filesystem, in the logfmt of services/common/log.ts but on **stderr**: in
 * stdio mode stdout carries the MCP protocol and nothing else may be written there.
 */
export function logToStderr(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, string | number> = {}): void {
  let line = `ts=${new Date().toISOString()} level=${level} svc=mcp-filesystem msg=${JSON.stringify(msg)}`;
  for (const [key, value] of Object.entries(fields)) line += ` ${key}=${JSON.stringify(String(value))}`;
  process.stderr.write(redactSecrets(line) + '\n');
}
