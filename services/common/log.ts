import { currentContext } from './context.js';
import { redactSecrets } from './secrets.js';

/**
 * Plain-text logfmt lines, one per event: `ts=… level=info svc=gateway msg="…" k=v sid=…`.
 * The session id of the current request is added automatically (DESIGN rule 6) and every
 * line is passed through secret redaction (DESIGN rule 5). Every value (and the message) is
 * capped at LOG_VALUE_LIMIT characters, so no request can write an unbounded line (issue 12).
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

/** The longest a field value or message may be in a log line (issue 12: user text is capped). */
export const LOG_VALUE_LIMIT = 500;

/** `text` cut to `limit` characters, saying how many were left out: "abc…(+1200 chars)". */
export function capText(text: string, limit: number = LOG_VALUE_LIMIT): string {
  if (text.length <= limit) return text;
  // Not in the middle of a surrogate pair: the line stays valid UTF-8.
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…(+${text.length - end} chars)`;
}

function formatValue(value: string | number | boolean): string {
  // Redacted before capping, so that a cut never leaves a secret's head unrecognised.
  const text = capText(redactSecrets(String(value)));
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
