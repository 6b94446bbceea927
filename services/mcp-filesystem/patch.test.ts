import { describe, expect, it } from 'vitest';
import { applyUnifiedDiff, parseUnifiedDiff } from './patch.js';

const apply = (original: string | undefined, patch: string) => applyUnifiedDiff(original, parseUnifiedDiff(patch), 'r:f');

describe('unified diffs', () => {
  it('applies a git diff with its preamble and keeps the other lines', () => {
    const patch = [
      'diff --git a/f b/f',
      'index 1234..5678 100644',
      '--- a/f',
      '+++ b/f',
      '@@ -2,3 +2,3 @@ fn context',
      ' b',
      '-c',
      '+C',
      ' d',
      '',
    ].join('\n');
    expect(apply('a\nb\nc\nd\ne\n', patch)).toMatchObject({
      content: 'a\nb\nC\nd\ne\n',
      hunksApplied: 1,
      linesAdded: 1,
      linesRemoved: 1,
      offsets: [0],
    });
  });

  it('finds a hunk whose line numbers are off, nearest first, and reports the offset', () => {
    const original = 'x\nx\nx\ntarget\ny\n';
    expect(apply(original, '@@ -1,1 +1,1 @@\n-target\n+hit\n')).toMatchObject({ content: 'x\nx\nx\nhit\ny\n', offsets: [3] });
    // Two candidates: the one nearer the stated line wins.
    expect(apply('t\n1\n2\n3\n4\n5\nt\n', '@@ -6 +6 @@\n-t\n+T\n').content).toBe('t\n1\n2\n3\n4\n5\nT\n');
  });

  it('ignores miscounted hunk headers and treats empty body lines as empty context', () => {
    expect(apply('a\n\nb\n', '@@ -1,9 +1,9 @@\n a\n\n-b\n+B\n').content).toBe('a\n\nB\n');
  });

  it('keeps CRLF line endings and honours "No newline at end of file"', () => {
    expect(apply('a\r\nb\r\n', '@@ -1,2 +1,2 @@\n a\n-b\n+c\n').content).toBe('a\r\nc\r\n');
    expect(apply('a\nb', '@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n').content).toBe('a\nc');
    expect(apply('a\nb', '@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n').content).toBe('a\nc\n');
    expect(apply('a\nb\n', '@@ -2 +2,2 @@\n b\n+c\n\\ No newline at end of file\n').content).toBe('a\nb\nc');
  });

  it('inserts with pure-addition hunks and creates files', () => {
    expect(apply('a\nb\n', '@@ -1,0 +2 @@\n+between\n').content).toBe('a\nbetween\nb\n');
    expect(apply('a\n', '@@ -0,0 +1 @@\n+first\n').content).toBe('first\na\n');
    expect(apply(undefined, '--- /dev/null\n+++ b/new\n@@ -0,0 +1,2 @@\n+one\n+two')).toMatchObject({
      content: 'one\ntwo\n',
      linesAdded: 2,
    });
    expect(apply('', '@@ -0,0 +1 @@\n+only\n').content).toBe('only\n');
  });

  it('removes everything down to an empty file', () => {
    expect(apply('a\nb\n', '@@ -1,2 +0,0 @@\n-a\n-b\n').content).toBe('');
  });

  it('refuses what is not a single-file unified diff', () => {
    expect(() => parseUnifiedDiff('hello')).toThrow(/no hunks/);
    expect(() => parseUnifiedDiff('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n')).toThrow(
      /more than one file/,
    );
    expect(() => parseUnifiedDiff('--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n')).toThrow(/remove_file/);
    expect(() => parseUnifiedDiff('@@ -1 +1 @@\n-a\n*b\n')).toThrow(/line 3 of the patch is not part of a unified diff hunk/);
    expect(() => parseUnifiedDiff('@@ -1 +1 @@\n@@ -2 +2 @@\n-a\n+b\n')).toThrow(/has no lines/);
    expect(() => apply('a\nb\n', '@@ -1 +1 @@\n-zzz\n+y\n')).toThrow(
      /hunk 1 \(@@ -1 \+1 @@\) does not match r:f: its lines "zzz"… were not found \(line 1 is "a"\)/,
    );
    expect(() => apply('a\n', '--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n')).toThrow(/already exists/);
    expect(() => apply(undefined, '@@ -1 +1 @@\n-a\n+b\n')).toThrow(/not found/);
  });

  it('applies hunks in order and never lets a later hunk match above an earlier one', () => {
    // The second hunk's "dup" must be found after the first hunk's region.
    expect(apply('dup\nmid\ndup\n', '@@ -1 +1 @@\n-dup\n+one\n@@ -1 +1 @@\n-dup\n+two\n').content).toBe('one\nmid\ntwo\n');
  });
});
