import { describe, expect, it } from 'vitest';
import { compileSafeRegex, MAX_SUBJECT_CHARS, PatternError, withSafeRegex } from './safe-regex.js';

describe('safe regex (outside patterns run in linear time)', () => {
  it('matches like a JavaScript regex on ordinary patterns', () => {
    const cases: [string, string, boolean][] = [
      ['^res_[0-9a-z]+$', 'res_abc123', true],
      ['foo|bar', 'a bar b', true],
      ['\\d{3}-\\d{4}', 'call 555-1234', true],
      ['^\\p{L}+$', 'Grüße', true],
      ['(?<year>\\d{4})', 'in 2024', true],
      ['^a.c$', 'abd', false],
    ];
    for (const [pattern, text, expected] of cases) {
      const regex = compileSafeRegex(pattern);
      expect(regex.test(text), `${pattern} on ${text}`).toBe(expected);
      expect(new RegExp(pattern, 'u').test(text)).toBe(expected);
      regex.dispose();
    }
  });

  it('ignores case when asked', () => {
    const regex = compileSafeRegex('hello', { ignoreCase: true });
    expect(regex.test('say HELLO')).toBe(true);
    regex.dispose();
  });

  it('runs a catastrophic pattern in linear time: (a+)+$ against 50,000 a and one b completes', () => {
    // With backtracking this is 2^50000 steps; RE2 answers in one pass over the text.
    const regex = compileSafeRegex('(a+)+$');
    expect(regex.test(`${'a'.repeat(50_000)}b`)).toBe(false);
    expect(regex.test('a'.repeat(50_000))).toBe(true);
    regex.dispose();
  });

  it('refuses lookaround and backreferences, naming what is unsupported', () => {
    expect(() => compileSafeRegex('(a)\\1')).toThrow(/backreferences .* not supported.*RE2/);
    expect(() => compileSafeRegex('(?<n>a)\\k<n>')).toThrow(/backreferences/);
    expect(() => compileSafeRegex('foo(?=bar)')).toThrow(/lookahead .* not supported/);
    expect(() => compileSafeRegex('foo(?!bar)')).toThrow(/lookahead/);
    expect(() => compileSafeRegex('(?<=a)b')).toThrow(/lookbehind/);
    expect(() => compileSafeRegex('(?<!a)b')).toThrow(/lookbehind/);
    expect(() => compileSafeRegex('(?>a)')).toThrow(/atomic group/);
    // Escaped or inside a class, the same characters are plain text.
    expect(() => compileSafeRegex('\\\\1|[(?=]').dispose()).not.toThrow();
  });

  it('refuses invalid patterns with RE2 reason and the name it was given', () => {
    expect(() => compileSafeRegex('[abc', { what: 'regex' })).toThrow(PatternError);
    expect(() => compileSafeRegex('[abc', { what: 'regex' })).toThrow(/^invalid regex "\[abc": missing \]/);
    expect(() => compileSafeRegex('a{2000}')).toThrow(/invalid repetition size/);
  });

  it('searches only the first MAX_SUBJECT_CHARS characters of a text, so one long line cannot exhaust the engine', () => {
    const regex = compileSafeRegex('b');
    expect(regex.test(`${'a'.repeat(MAX_SUBJECT_CHARS)}b`)).toBe(false);
    expect(regex.test(`${'a'.repeat(MAX_SUBJECT_CHARS - 1)}b`)).toBe(true);
    expect(regex.test('x'.repeat(20_000_000))).toBe(false);
    regex.dispose();
  });

  it('matches text with lone surrogates', () => {
    const regex = compileSafeRegex('b');
    expect(regex.test('a\ud800b')).toBe(true);
    regex.dispose();
  });

  it('frees compiled patterns: many more compilations than the fixed heap holds without freeing', async () => {
    // Measured with re2-wasm 1.0.2: about 1,800 undisposed patterns fill its 16 MiB heap.
    for (let i = 0; i < 3000; i += 1) {
      expect(await withSafeRegex(`(abc|def)+[a-z]{3}${i}`, {}, (regex) => regex.test(`abcdefxyz${i}`))).toBe(true);
    }
    const regex = compileSafeRegex('x');
    regex.dispose();
    regex.dispose();
    expect(() => regex.test('x')).toThrow(/disposed/);
  });
});
