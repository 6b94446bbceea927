import { describe, expect, it } from 'vitest';
import { compileGlob, compileRegex, globToRegExp } from './search.js';

describe('globs', () => {
  it.each([
    ['*.go', 'main.go', true],
    ['*.go', 'main.go.txt', false],
    ['*.go', 'dir/main.go', false],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['**/*.go', 'main.go', true],
    ['**/*.go', 'a/b/c/main.go', true],
    ['src/**/*.go', 'src/main.go', true],
    ['src/**/*.go', 'src/a/b.go', true],
    ['src/**/*.go', 'lib/a/b.go', false],
    ['src/**', 'src/a/b', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['[abc].txt', 'b.txt', true],
    ['[!abc].txt', 'b.txt', false],
    ['[!abc].txt', 'd.txt', true],
    ['*.{ts,js}', 'x.js', true],
    ['*.{ts,js}', 'x.py', false],
    ['a+b(c).txt', 'a+b(c).txt', true],
    ['a.b', 'aXb', false],
    ['*', '.hidden', true],
    ['[unclosed', '[unclosed', true],
  ])('%s against %s → %s', (glob, path, expected) => {
    const regex = globToRegExp(glob);
    expect(regex.test(path)).toBe(expected);
    regex.dispose();
  });

  it('matches globs without "/" against names at any depth, and globs with "/" against the whole path', () => {
    expect(compileGlob('*.go').matches('deep/down/main.go')).toBe(true);
    expect(compileGlob('down/*.go').matches('deep/down/main.go')).toBe(false);
    expect(compileGlob('deep/down/*.go').matches('deep/down/main.go')).toBe(true);
    expect(compileGlob('./deep/*/main.go').matches('deep/down/main.go')).toBe(true);
    expect(() => compileGlob('{a,b')).toThrow(/not closed/);
    expect(() => compileGlob('*'.repeat(1001))).toThrow(/at most 1000/);
  });
});

describe('outside patterns run in linear time', () => {
  it('a glob of many stars, polynomial of high degree for a backtracking engine, answers at once', () => {
    // For a backtracking engine: C(4000, 40) ways to place the stars before failing on the "b".
    const glob = compileGlob(`${'*a'.repeat(40)}*b`);
    expect(glob.matches(`dir/${'a'.repeat(4000)}`)).toBe(false);
    expect(glob.matches(`dir/${'a'.repeat(4000)}b`)).toBe(true);
    glob.dispose();
  });

  it('(a+)+$ against 50,000 a and one b completes', () => {
    const regex = compileRegex('(a+)+$', {}, 'pattern');
    expect(regex.test(`${'a'.repeat(50_000)}b`)).toBe(false);
    regex.dispose();
  });

  it('refuses lookaround and backreferences as tool errors that name them', () => {
    expect(() => compileRegex('(x)\\1', {}, 'pattern')).toThrow(
      /^invalid pattern "\(x\)\\\\1": backreferences .* not supported \(patterns are RE2 syntax/,
    );
    expect(() => compileRegex('a(?!b)', {}, 'regex')).toThrow(/^invalid regex .*lookahead/);
  });
});
