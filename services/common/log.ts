import { currentContext } from './context.js';
import { redactSecrets } from './secrets.js';

/**
 * Plain-text logfmt lines, one per event: `ts=… level=info svc=gateway msg="…" k=v sid=…`.
 * The session id of the current request is added automatically (DESIGN rule 6) and every
 * line is passed through secret redaction (DESIGN rule 5).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | undefined | null>;

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function configuredLevel(): number {
  const name = (process.env.ASG_LOG_LEVEL ?? 'info').toLowerCase() as LogLevel;
  return LEVELS[name] ?? LEVELS.info;
}

let threshold = configuredLevel();

export function isLogLevelEnabled(level: LogLevel): boolean {
  return LEVELS[level] >= threshold;
}

/** Re-reads ASG_LOG_LEVEL (for tests that change it at run time). */
export function refreshLogLevel(): void {
  threshold = configuredLevel();
}

function formatValue(value: string | number | boolean): string {
  const text = String(value);
  return /^[A-Za-z0-9._:/@+\-[\]]+$/.test(text) ? text : JSON.stringify(text);
}

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export function createLogger(service: string, base: LogFields = {}): Logger {
  const write = (level: LogLevel, msg: string, fields: LogFields = {}): void => {
    if (LEVELS[level] < threshold) return;
    const all: LogFields = { ...base, ...fields };
    if (all.sid === undefined) {
      const sid = currentContext()?.sessionId;
      if (sid) all.sid = sid;
    }
    let line = `ts=${new Date().toISOString()} level=${level} svc=${service} msg=${formatValue(msg)}`;
    for (const [key, value] of Object.entries(all)) {
      if (value === undefined || value === null || value === '') continue;
      line += ` ${key}=${formatValue(value)}`;
    }
    process.stdout.write(redactSecrets(line) + '\n');
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(service, { ...base, ...fields }),
  };
}
