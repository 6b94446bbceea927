import { createRequire } from 'node:module';
import type { Logger as PinoLogger } from 'pino';
import { redactSecrets } from './secrets.js';

/**
 * JSON log lines on **stderr**, for the built-in MCP servers (mcp-filesystem, mcp-resources):
 * in stdio mode their stdout carries the MCP protocol and nothing else may be written there.
 * The same shape as services/common/log.ts (`level`, `time`, `svc`, `msg`, fields), without
 * its request context, which these child processes do not have; secrets are redacted the same way.
 */
export type StderrLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, string | number>) => void;

export function stderrLogger(service: string): StderrLog {
  let logger: PinoLogger | undefined;
  return (level, msg, fields = {}) => {
    if (!logger) {
      const pino = createRequire(import.meta.url)('pino') as typeof import('pino');
      logger = pino(
        {
          base: { svc: service },
          messageKey: 'msg',
          timestamp: pino.stdTimeFunctions.isoTime,
          formatters: { level: (label) => ({ level: label }) },
          hooks: { streamWrite: (line) => redactSecrets(line) },
        },
        pino.destination({ dest: 2, sync: true }),
      );
    }
    logger[level](fields, msg);
  };
}
