/** Log lines are bounded (issue 12 item 3): no field value, user text above all, is written whole past the cap. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { capText, createLogger, LOG_VALUE_LIMIT } from './log.js';
import { redactSecrets, registerSecret } from './secrets.js';

function capture(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return { lines, restore: () => spy.mockRestore() };
}

afterEach(() => vi.restoreAllMocks());

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

describe('redactSecrets', () => {
  it('redacts a JWT wherever it appears, with or without "Bearer"', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSIsInJvbGVzIjpbImNoYXQiXX0.c2lnbmF0dXJlLXBhcnQ';
    expect(redactSecrets(`token=${jwt} next`)).toBe('token=[redacted] next');
    expect(redactSecrets('eyJ alone, or eyJabc.eyJdef. are no JWT')).toBe('eyJ alone, or eyJabc.eyJdef. are no JWT');
  });
});
