import { createRequire } from 'node:module';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { currentContext } from './context.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './log-settings.js';
import { redactSecrets, SECRET_FIELD_NAMES } from './secrets.js';

/**
 * Logs on pino: one JSON object per line on stdout by default —
 * `{"level":"info","time":"…","svc":"gateway","msg":"…",…fields,"trace_id":…,"session_id":…}` —
 * or pino-pretty's coloured lines when stdout is a terminal or LOG_FORMAT=pretty.
 *
 * Every line written while a request or turn is served carries what its context knows:
 * `trace_id` and `span_id` (the active OpenTelemetry span context, also when spans are not
 * recorded), `session_id` and `conversation_id`. Secrets are kept out twice:
 * every message and field value goes through redactSecrets (and then is
 * capped at LOG_VALUE_LIMIT characters), and pino's `redact` censors fields named
 * like a credential whatever their value looks like. The finished line is redacted once more.
 *
 * Settings, strongest first: the environment (LOG_LEVEL, LOG_FORMAT — the CLI's --log-level and
 * --log-format set them), then the configuration's `log` section (configureLogging), then
 * the defaults (info, auto). ASG_LOG_LEVEL, the earlier name, is still read after LOG_LEVEL.
 */
export type { LogLevel };
export type LogFields = Record<string, string | number | boolean | undefined | null>;

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

/** Field names whose values are credentials whatever they look like: censored by pino's redact. */
const SECRET_FIELDS = SECRET_FIELD_NAMES;

const RANK: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

function levelFrom(value: string | undefined): LogLevel | undefined {
  const name = value?.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(name ?? '') ? (name as LogLevel) : undefined;
}

function formatFrom(value: string | undefined): LogFormat | undefined {
  const name = value?.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(name ?? '') ? (name as LogFormat) : undefined;
}

let configured: LogSettings = { level: 'info', format: 'auto' };

/** The settings in force: the environment over the configuration over the defaults. */
export function logSettings(env: NodeJS.ProcessEnv = process.env): LogSettings {
  return {
    level: levelFrom(env.LOG_LEVEL) ?? levelFrom(env.ASG_LOG_LEVEL) ?? configured.level,
    format: formatFrom(env.LOG_FORMAT) ?? configured.format,
  };
}

let root: PinoLogger | undefined;
let threshold = RANK.info;
// Bumped whenever the root logger is rebuilt, so that loggers made before find their new child.
let generation = 0;

/** Pretty lines, printed synchronously in this thread: no worker to lose lines when a short process exits. */
function prettyStream(): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const prettify = prettyFactory({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    messageFormat: '{svc}: {msg}',
    ignore: 'svc',
    singleLine: true,
  });
  return { write: (line: string) => void process.stdout.write(prettify(line)) };
}

function buildRoot(): PinoLogger {
  // Loaded at the first line, not at import: a command that never logs does not pay for it.
  const pino = createRequire(import.meta.url)('pino') as typeof import('pino');
  const settings = logSettings();
  const pretty = settings.format === 'pretty' || (settings.format === 'auto' && Boolean(process.stdout.isTTY));
  threshold = RANK[settings.level];
  // Looked up at each write (not bound once), so a test that replaces process.stdout.write sees the lines.
  const json: DestinationStream = { write: (line: string) => void process.stdout.write(line) };
  return pino(
    {
      level: settings.level,
      base: undefined,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)], censor: '[redacted]' },
      mixin: contextFields,
      hooks: { streamWrite: (line) => redactSecrets(line) },
    },
    pretty ? prettyStream() : json,
  );
}

function rootLogger(): PinoLogger {
  root ??= buildRoot();
  return root;
}

/** What the current request or turn adds to every line. */
function contextFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  const span = trace.getActiveSpan()?.spanContext();
  if (span && isSpanContextValid(span)) {
    fields.trace_id = span.traceId;
    fields.span_id = span.spanId;
  }
  const ctx = currentContext();
  if (ctx?.sessionId) fields.session_id = ctx.sessionId;
  if (ctx?.conversationId) fields.conversation_id = ctx.conversationId;
  return fields;
}

/**
 * Applies the configuration's `log` section (the environment still wins) and rebuilds the
 * output; loggers made before follow. Called once the configuration is read.
 */
export function configureLogging(settings: Partial<LogSettings> = {}): void {
  configured = { ...configured, ...settings };
  root = undefined;
  generation += 1;
  threshold = RANK[logSettings().level];
}

export function isLogLevelEnabled(level: LogLevel): boolean {
  rootLogger();
  return RANK[level] >= threshold;
}

/** The longest a field value or message may be in a log line (user text is capped). */
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

// Redacted before capping, so that a cut never leaves a secret's head unrecognised.
const clean = (text: string): string => capText(redactSecrets(text));

function cleanFields(fields: LogFields): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || value === '') continue;
    out[key] = typeof value === 'string' ? clean(value) : value;
  }
  return out;
}

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/**
 * A service's logger: `svc` names the service on every line, `base` adds fields to each.
 * Made at import time by many modules, it finds the root logger at its first line, so the
 * configuration read later still applies.
 */
export function createLogger(service: string, base: LogFields = {}): Logger {
  let made: { generation: number; logger: PinoLogger } | undefined;
  const logger = (): PinoLogger => {
    if (!made || made.generation !== generation) {
      const parent = rootLogger();
      made = { generation, logger: parent.child({ svc: service, ...cleanFields(base) }) };
    }
    return made.logger;
  };
  const write = (level: LogLevel, msg: string, fields: LogFields = {}): void => {
    if (!isLogLevelEnabled(level)) return;
    logger()[level](cleanFields(fields), clean(msg));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(service, { ...base, ...fields }),
  };
}
