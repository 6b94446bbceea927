/**
 * Log lines are JSON on pino, carry the request's context, honour LOG_LEVEL, and
 * are bounded: no field value, user text above all, is written whole past the cap.
 */
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseLogLines } from '../../test/support/log-lines.js';
import { runWithContext } from './context.js';
import { capText, configureLogging, createLogger, LOG_VALUE_LIMIT, logSettings } from './log.js';
import { redactSecrets, registerSecret } from './secrets.js';

function capture(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return { lines, restore: () => spy.mockRestore() };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  configureLogging({ level: 'info', format: 'auto' });
});

describe('capText', () => {
  it('leaves short text alone and says how much was cut from long text', () => {
    expect(capText('short')).toBe('short');
    expect(capText('x'.repeat(LOG_VALUE_LIMIT))).toBe('x'.repeat(LOG_VALUE_LIMIT));
    expect(capText('x'.repeat(1_200), 500)).toBe(`${'x'.repeat(500)}…(+700 chars)`);
  });

  it('never cuts a surrogate pair in half', () => {
    const capped = capText(`${'x'.repeat(9)}😀tail`, 10);
    expect(capped).toBe(`${'x'.repeat(9)}…(+6 chars)`);
  });
});

describe('createLogger', () => {
  it('caps every field value and the message at LOG_VALUE_LIMIT', () => {
    const out = capture();
    createLogger('test').warn('m'.repeat(2_000), { text: 'a'.repeat(100_000), id: 'b'.repeat(600) });
    out.restore();
    const line = out.lines.join('');
    expect(line.length).toBeLessThan(4 * LOG_VALUE_LIMIT);
    expect(line).toContain('…(+99500 chars)');
    expect(line).toContain('…(+1500 chars)');
    expect(line).toContain('…(+100 chars)');
  });

  it('redacts a secret before capping, so a cut never leaves its head in the line', () => {
    const secret = 'S3cr3t-value-for-the-log-cap-test';
    registerSecret(secret);
    const out = capture();
    createLogger('test').info('x', { text: `${'a'.repeat(LOG_VALUE_LIMIT - 10)}${secret}` });
    out.restore();
    expect(out.lines.join('')).not.toContain('S3cr3t');
  });
});

describe('JSON lines', () => {
  it('writes one JSON object per line with level, time, svc, msg and the fields as JSON types', () => {
    vi.stubEnv('LOG_FORMAT', 'json');
    configureLogging();
    const out = capture();
    createLogger('gateway', { node: 'root' }).info('gateway listening', {
      url: 'http://127.0.0.1:1',
      port: 1,
      tls: false,
      gone: undefined,
      empty: '',
    });
    out.restore();
    const { lines, malformed } = parseLogLines(out.lines.join(''));
    expect(malformed).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      svc: 'gateway',
      msg: 'gateway listening',
      node: 'root',
      url: 'http://127.0.0.1:1',
      port: 1,
      tls: false,
    });
    expect(Date.parse(lines[0]!.time)).not.toBeNaN();
    expect(lines[0]).not.toHaveProperty('gone');
    expect(lines[0]).not.toHaveProperty('empty');
  });

  it('adds trace_id, span_id, session_id and conversation_id from the request context', () => {
    const spanContext = {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    };
    const out = capture();
    context.with(trace.setSpanContext(context.active(), spanContext), () =>
      runWithContext({ sessionId: '0badc0de', conversationId: '3f1c2d4e-0000-4000-8000-000000000001' }, () =>
        createLogger('orchestrator').warn('turn step'),
      ),
    );
    createLogger('orchestrator').info('outside');
    out.restore();
    const [inside, outside] = parseLogLines(out.lines.join('')).lines;
    expect(inside).toMatchObject({
      trace_id: spanContext.traceId,
      span_id: spanContext.spanId,
      session_id: '0badc0de',
      conversation_id: '3f1c2d4e-0000-4000-8000-000000000001',
    });
    expect(outside).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('session_id');
  });

  it('takes the level from LOG_LEVEL over the configuration, and the configuration over the default', () => {
    const log = createLogger('test');
    configureLogging({ level: 'warn' });
    let out = capture();
    log.info('dropped');
    log.warn('kept');
    out.restore();
    expect(parseLogLines(out.lines.join('')).lines.map((line) => line.msg)).toEqual(['kept']);

    vi.stubEnv('LOG_LEVEL', 'debug');
    configureLogging({ level: 'warn' });
    expect(logSettings().level).toBe('debug');
    out = capture();
    log.debug('now shown');
    out.restore();
    expect(parseLogLines(out.lines.join('')).lines).toMatchObject([{ level: 'debug', msg: 'now shown' }]);
  });

  it('prints pretty lines, in this thread, when LOG_FORMAT=pretty', () => {
    vi.stubEnv('LOG_FORMAT', 'pretty');
    configureLogging();
    const out = capture();
    createLogger('gateway').warn('pretty please', { status: 503 });
    out.restore();
    const text = out.lines.join('');
    expect(text).toContain('gateway: pretty please');
    expect(text).toContain('503');
    expect(() => JSON.parse(text)).toThrow();
  });

  it('censors a field named like a credential whatever its value, and redacts secrets in the message', () => {
    registerSecret('message-borne-secret-123');
    const out = capture();
    createLogger('test').info('sent message-borne-secret-123 along', { authorization: 'opaque', password: 'hunter22', api_key: 'k' });
    out.restore();
    const [line] = parseLogLines(out.lines.join('')).lines;
    expect(line).toMatchObject({
      authorization: '[redacted]',
      password: '[redacted]',
      api_key: '[redacted]',
      msg: 'sent [redacted] along',
    });
    expect(out.lines.join('')).not.toContain('hunter22');
  });
});

describe('redactSecrets', () => {
  it('redacts a JWT wherever it appears, with or without "Bearer"', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSIsInJvbGVzIjpbImNoYXQiXX0.c2lnbmF0dXJlLXBhcnQ';
    expect(redactSecrets(`token=${jwt} next`)).toBe('token=[redacted] next');
    expect(redactSecrets('eyJ alone, or eyJabc.eyJdef. are no JWT')).toBe('eyJ alone, or eyJabc.eyJdef. are no JWT');
  });
});
