import { createLogger, type Logger } from '../../services/common/log.js';

/**
 * A service's real logger that also keeps each line it writes, as
 * `<service> <level> <message> <fields as JSON>`, in `lines`: for tests that read what a
 * service said (a run handed back, a webhook given up) rather than only what it answered.
 */
export function recordingLogger(service: string, lines: string[]): Logger {
  const base = createLogger(service);
  const keep = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: Record<string, unknown>) => {
    lines.push(`${service} ${level} ${message} ${JSON.stringify(fields ?? {})}`);
    base[level](message, fields as never);
  };
  return { ...base, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') } as Logger;
}
