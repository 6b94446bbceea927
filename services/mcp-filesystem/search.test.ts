import { describe, expect, it } from 'vitest';
import { compileGlob, globToRegExp } from './search.js';

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
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  it('matches globs without "/" against names at any depth, and globs with "/" against the whole path', () => {
    expect(compileGlob('*.go')('deep/down/main.go')).toBe(true);
    expect(compileGlob('down/*.go')('deep/down/main.go')).toBe(false);
    expect(compileGlob('deep/down/*.go')('deep/down/main.go')).toBe(true);
    expect(compileGlob('./deep/*/main.go')('deep/down/main.go')).toBe(true);
    expect(() => compileGlob('{a,b')).toThrow(/not closed/);
    expect(() => compileGlob('*'.repeat(1001))).toThrow(/at most 1000/);
  });
});
