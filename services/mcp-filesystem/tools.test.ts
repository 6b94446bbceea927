import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeFixture, type Fixture } from './testing/fixture.js';
import { callTool, FILESYSTEM_TOOLS, toolNamed } from './tools/index.js';
import { annotationsOf } from './tools/registry.js';

/** Every tool, called as tools/call calls it: schema validation, the lock, the run, error mapping. */

let fx: Fixture;
let outsideBefore: string;
beforeEach(() => {
  fx = makeFixture({ maxFullReadSize: 1024 });
  outsideBefore = fx.snapshotOutside();
});
afterEach(() => {
  // Whatever a test did, nothing outside the writable roots changed.
  expect(fx.snapshotOutside()).toBe(outsideBefore);
  fx.cleanup();
});

const text = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const tool = toolNamed(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await callTool(fx.sandbox, tool, args);
  // No result, good or bad, ever names a host path or leaks a sentinel.
  expect(text(result)).not.toContain(fx.base);
  expect(text(result)).not.toContain(fx.token);
  return result;
}

async function ok(name: string, args: Record<string, unknown>): Promise<any> {
  const result = await call(name, args);
  expect(result.isError, text(result)).toBeFalsy();
  expect(JSON.parse(text(result))).toEqual(result.structuredContent);
  return result.structuredContent;
}

async function err(name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(name, args);
  expect(result.isError, `expected ${name} ${JSON.stringify(args)} to fail, got ${text(result)}`).toBe(true);
  return text(result);
}

const ws = (...parts: string[]) => join(fx.roots.workspace, ...parts);
const read = (...parts: string[]) => readFileSync(ws(...parts), 'utf8');

describe('the tool set', () => {
  it('has its 15 tools: read tools read-only, the others destructive', () => {
    const readOnly = ['list_roots', 'list_folder', 'read_file', 'stat_file', 'hash_file', 'permissions_file', 'grep', 'glob'];
    expect(FILESYSTEM_TOOLS.map((tool) => tool.name)).toEqual([
      'list_roots',
      'list_folder',
      'read_file',
      'write_file',
      'remove_file',
      'patch_file',
      'create_folder',
      'remove_folder',
      'stat_file',
      'hash_file',
      'permissions_file',
      'copy',
      'move',
      'grep',
      'glob',
    ]);
    for (const tool of FILESYSTEM_TOOLS) {
      const annotations = annotationsOf(tool);
      if (readOnly.includes(tool.name))
        expect(annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
      else expect(annotations, tool.name).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    }
  });

  it('answers bad arguments with a tool error naming the field', async () => {
    expect(await err('read_file', { path: 'file.txt' })).toMatch(/invalid arguments for read_file: root:/);
    expect(await err('read_file', { root: 'workspace' })).toMatch(/path:/);
    expect(await err('read_file', { root: 'workspace', path: 'file.txt', offset: 3 })).toMatch(/Unrecognized key/);
    expect(await err('write_file', { root: 'workspace', path: 'x' })).toMatch(/content:/);
    expect(await err('write_file', { root: 'workspace', path: 'x', content: 'y', mode: 'truncate' })).toMatch(/mode: Invalid option/);
    expect(await err('hash_file', { root: 'workspace', path: 'file.txt', algorithm: 'sha512' })).toMatch(
      /expected one of "md5"\|"sha1"\|"sha256"/,
    );
    expect(await err('read_file', { root: 'nowhere', path: 'file.txt' })).toMatch(/unknown root "nowhere"/);
  });
});

describe('list_roots', () => {
  it('lists names and allowlists, never host paths', async () => {
    const { roots, count } = await ok('list_roots', {});
    expect(count).toBe(4);
    expect(roots.map((root: any) => root.name)).toEqual(['workspace', 'readonly', 'restricted', 'dest']);
    expect(roots[0].allowed_tools).toHaveLength(14);
    expect(roots[1]).toEqual({
      name: 'readonly',
      allowed_tools: ['list_folder', 'read_file', 'stat_file', 'grep', 'glob'],
      read_only: true,
    });
    expect(roots[2]).toEqual({ name: 'restricted', allowed_tools: ['list_folder'], read_only: true });
    expect(roots[0].read_only).toBe(false);
  });
});

describe('list_folder', () => {
  it('lists entries in name order with type, size and time, and says where links lead', async () => {
    const listing = await ok('list_folder', { root: 'workspace', path: '.' });
    const byName = Object.fromEntries(listing.entries.map((entry: any) => [entry.name, entry]));
    expect(listing.path).toBe('.');
    expect(listing.count).toBe(listing.entries.length);
    expect(listing.entries.map((entry: any) => entry.name)).toEqual([...listing.entries.map((entry: any) => entry.name)].sort());
    expect(byName['file.txt']).toMatchObject({ type: 'file', size: 16 });
    expect(byName['file.txt'].modified_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(byName.sub).toMatchObject({ type: 'directory', size: 0 });
    expect(byName.link_in_file).toMatchObject({ type: 'symlink', target_type: 'file' });
    expect(byName.link_in_dir).toMatchObject({ type: 'symlink', target_type: 'directory' });
    for (const name of ['link_out_file', 'link_out_dir', 'link_other_root', 'link_proc', 'link_root_parent'])
      expect(byName[name].target_type, name).toBe('external');
    expect(byName.link_dangling_in.target_type).toBe('broken');
    expect(byName.link_dangling_out.target_type).toBe('broken');
    expect(byName.link_loop_a.target_type).toBe('loop');
    expect(byName.link_to_root.target_type).toBe('directory');
  });

  it('defaults to the root, follows links inside the root, caps the entries and refuses files', async () => {
    expect((await ok('list_folder', { root: 'workspace' })).path).toBe('.');
    expect((await ok('list_folder', { root: 'workspace', path: 'link_in_dir' })).entries.map((e: any) => e.name)).toEqual([
      'inner',
      'link_up',
      'note.md',
    ]);
    const capped = await ok('list_folder', { root: 'workspace', max_entries: 2 });
    expect(capped.entries).toHaveLength(2);
    expect(capped.truncated).toBe(true);
    expect(await err('list_folder', { root: 'workspace', path: 'file.txt' })).toMatch(/workspace:file.txt is not a directory/);
    expect(await err('list_folder', { root: 'workspace', path: 'nope' })).toBe('workspace:nope not found');
    expect((await ok('list_folder', { root: 'restricted', path: '.' })).count).toBe(1);
    expect(await err('list_folder', { root: 'workspace', path: 'link_out_dir' })).toMatch(/outside root/);
  });
});

describe('read_file', () => {
  it('reads a whole file, and refuses one over max_full_read_size with a hint to read ranges', async () => {
    expect(await ok('read_file', { root: 'workspace', path: 'file.txt' })).toEqual({
      path: 'file.txt',
      content: 'hello workspace\n',
      encoding: 'utf-8',
      binary: false,
      size: 16,
      truncated: false,
    });
    writeFileSync(ws('big.txt'), 'x'.repeat(1025));
    const message = await err('read_file', { root: 'workspace', path: 'big.txt' });
    expect(message).toMatch(/workspace:big.txt is too large for a full read: 1025 bytes, over max_full_read_size \(1024 bytes\)/);
    expect(message).toMatch(/offset_bytes\/limit_bytes or offset_lines\/limit_lines/);
    writeFileSync(ws('exact.txt'), 'y'.repeat(1024));
    expect((await ok('read_file', { root: 'workspace', path: 'exact.txt' })).size).toBe(1024);
  });

  it('reads byte ranges, saying whether more follows and where', async () => {
    writeFileSync(ws('abc.txt'), '0123456789abcdefghij');
    expect(await ok('read_file', { root: 'workspace', path: 'abc.txt', offset_bytes: 10, limit_bytes: 5 })).toMatchObject({
      content: 'abcde',
      bytes_read: 5,
      truncated: true,
      next_offset_bytes: 15,
      size: 20,
    });
    const tail = await ok('read_file', { root: 'workspace', path: 'abc.txt', offset_bytes: 15, limit_bytes: 100 });
    expect(tail).toMatchObject({ content: 'fghij', bytes_read: 5, truncated: false });
    expect(tail.next_offset_bytes).toBeUndefined();
    expect(await ok('read_file', { root: 'workspace', path: 'abc.txt', offset_bytes: 50 })).toMatchObject({
      content: '',
      bytes_read: 0,
      truncated: false,
    });
    writeFileSync(ws('big.txt'), 'z'.repeat(3000));
    expect(await ok('read_file', { root: 'workspace', path: 'big.txt', offset_bytes: 0 })).toMatchObject({
      bytes_read: 1024,
      next_offset_bytes: 1024,
    });
    expect(await err('read_file', { root: 'workspace', path: 'big.txt', limit_bytes: 2000 })).toMatch(
      /at most max_full_read_size \(1024 bytes\)/,
    );
  });

  it('reads line ranges (1-based), counting every line', async () => {
    writeFileSync(ws('lines.txt'), `${Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n')}\n`);
    expect(await ok('read_file', { root: 'workspace', path: 'lines.txt', offset_lines: 50, limit_lines: 3 })).toMatchObject({
      content: 'line 50\nline 51\nline 52\n',
      lines_returned: 3,
      lines_total: 100,
      truncated: true,
      next_offset_lines: 53,
    });
    expect(await ok('read_file', { root: 'workspace', path: 'lines.txt', offset_lines: 99 })).toMatchObject({
      content: 'line 99\nline 100\n',
      truncated: false,
      lines_total: 100,
    });
    expect(await ok('read_file', { root: 'workspace', path: 'lines.txt', offset_lines: 500, limit_lines: 5 })).toMatchObject({
      content: '',
      lines_returned: 0,
      lines_total: 100,
      truncated: false,
    });
    // Past the byte budget, a line read stops at a line boundary and says where to go on.
    writeFileSync(ws('many.txt'), `${Array.from({ length: 300 }, (_, i) => `row ${i + 1}`).join('\n')}\n`);
    const budget = await ok('read_file', { root: 'workspace', path: 'many.txt', offset_lines: 1 });
    expect(budget.truncated).toBe(true);
    expect(budget.content.endsWith('\n')).toBe(true);
    expect(budget.content.length).toBeLessThanOrEqual(1024);
    expect(budget.next_offset_lines).toBe(budget.lines_returned + 1);
    writeFileSync(ws('no-eol.txt'), 'a\nb\nc');
    expect(await ok('read_file', { root: 'workspace', path: 'no-eol.txt', offset_lines: 3 })).toMatchObject({
      content: 'c',
      lines_total: 3,
      truncated: false,
    });
    writeFileSync(ws('long-line.txt'), `${'q'.repeat(2000)}\nshort\n`);
    expect(await err('read_file', { root: 'workspace', path: 'long-line.txt', offset_lines: 1 })).toMatch(
      /line 1 of workspace:long-line.txt is longer than max_full_read_size/,
    );
    expect(await ok('read_file', { root: 'workspace', path: 'long-line.txt', offset_lines: 2 })).toMatchObject({ content: 'short\n' });
  });

  it('refuses mixing bytes and lines, folders and binary files (whose bytes come back base64 in byte ranges)', async () => {
    expect(await err('read_file', { root: 'workspace', path: 'file.txt', offset_bytes: 0, offset_lines: 1 })).toMatch(/mutually exclusive/);
    expect(await err('read_file', { root: 'workspace', path: 'sub' })).toMatch(/workspace:sub is a directory; use list_folder/);
    expect(await err('read_file', { root: 'workspace', path: 'missing.txt' })).toBe('workspace:missing.txt not found');
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]);
    writeFileSync(ws('image.png'), bytes);
    expect(await err('read_file', { root: 'workspace', path: 'image.png' })).toMatch(/binary file .* read a byte range/);
    expect(await err('read_file', { root: 'workspace', path: 'image.png', offset_lines: 1 })).toMatch(/binary file/);
    expect(await ok('read_file', { root: 'workspace', path: 'image.png', offset_bytes: 0, limit_bytes: 100 })).toMatchObject({
      content: bytes.toString('base64'),
      encoding: 'base64',
      binary: true,
      bytes_read: 7,
    });
    // Only the first 8 KB decide.
    writeFileSync(ws('late-null.txt'), Buffer.concat([Buffer.alloc(8192, 'a'), Buffer.from([0])]));
    expect(await ok('read_file', { root: 'workspace', path: 'late-null.txt', offset_bytes: 0, limit_bytes: 4 })).toMatchObject({
      content: 'aaaa',
      binary: false,
    });
  });

  it('follows links inside the root and refuses the rest', async () => {
    expect((await ok('read_file', { root: 'workspace', path: 'link_in_file' })).content).toBe('hello workspace\n');
    expect(await err('read_file', { root: 'workspace', path: 'link_out_file' })).toMatch(/outside root/);
    expect(await err('read_file', { root: 'workspace', path: 'link_dev_zero' })).toMatch(/outside root/);
    expect(await err('read_file', { root: 'restricted', path: 'hidden.txt' })).toMatch(/read_file is not allowed in root "restricted"/);
    expect((await ok('read_file', { root: 'readonly', path: 'readme.txt' })).content).toBe('read me\n');
  });
});

describe('write_file', () => {
  it('overwrites atomically (keeping the mode), appends, and creates only when asked', async () => {
    chmodSync(ws('file.txt'), 0o640);
    expect(await ok('write_file', { root: 'workspace', path: 'file.txt', content: 'new' })).toEqual({
      path: 'file.txt',
      mode: 'overwrite',
      bytes_written: 3,
      created: false,
    });
    expect(read('file.txt')).toBe('new');
    expect(statSync(ws('file.txt')).mode & 0o777).toBe(0o640);
    await ok('write_file', { root: 'workspace', path: 'file.txt', content: '+more', mode: 'append' });
    expect(read('file.txt')).toBe('new+more');
    expect(await ok('write_file', { root: 'workspace', path: 'fresh.txt', content: 'x', mode: 'create_only' })).toMatchObject({
      created: true,
    });
    expect(await err('write_file', { root: 'workspace', path: 'fresh.txt', content: 'y', mode: 'create_only' })).toMatch(/already exists/);
    expect(read('fresh.txt')).toBe('x');
    await ok('write_file', { root: 'workspace', path: 'log.txt', content: 'first\n', mode: 'append' });
    expect(read('log.txt')).toBe('first\n');
    // No temporary files are left behind.
    expect((await ok('glob', { root: 'workspace', pattern: '*.asg-tmp' })).total_matches).toBe(0);
  });

  it('creates parent folders, writes through links inside the root, and refuses folders', async () => {
    await ok('write_file', { root: 'workspace', path: 'a/b/c/deep.txt', content: 'deep', mode: 'overwrite' });
    expect(read('a', 'b', 'c', 'deep.txt')).toBe('deep');
    expect(await ok('write_file', { root: 'workspace', path: 'link_in_file', content: 'via link' })).toMatchObject({ path: 'file.txt' });
    expect(read('file.txt')).toBe('via link');
    expect(lstatSync(ws('link_in_file')).isSymbolicLink()).toBe(true);
    expect(await err('write_file', { root: 'workspace', path: 'sub', content: 'x' })).toMatch(/is a directory/);
    expect(await err('write_file', { root: 'workspace', path: '.', content: 'x' })).toMatch(/is a directory/);
    expect(await err('write_file', { root: 'workspace', path: 'file.txt/child', content: 'x' })).toMatch(
      /not found \(a part of the path is a file/,
    );
    expect(await err('write_file', { root: 'workspace', path: 'link_dangling_out', content: 'x' })).toMatch(/target does not exist/);
    expect(await err('write_file', { root: 'readonly', path: 'new.txt', content: 'x' })).toMatch(
      /write_file is not allowed in root "readonly"/,
    );
  });
});

describe('remove_file', () => {
  it('removes files and links themselves, not folders or link targets', async () => {
    expect(await ok('remove_file', { root: 'workspace', path: 'sub/note.md' })).toEqual({
      path: 'sub/note.md',
      removed: true,
      type: 'file',
    });
    expect(existsSync(ws('sub', 'note.md'))).toBe(false);
    expect(await ok('remove_file', { root: 'workspace', path: 'link_in_file' })).toMatchObject({ type: 'symlink' });
    expect(read('file.txt')).toBe('hello workspace\n');
    await ok('remove_file', { root: 'workspace', path: 'link_out_file' });
    await ok('remove_file', { root: 'workspace', path: 'link_loop_a' });
    expect(await err('remove_file', { root: 'workspace', path: 'ghost.txt' })).toBe('workspace:ghost.txt not found');
    expect(await err('remove_file', { root: 'workspace', path: 'sub' })).toMatch(/is a directory; use remove_folder/);
    expect(await err('remove_file', { root: 'workspace', path: '.' })).toMatch(/root itself/);
    expect(await err('remove_file', { root: 'readonly', path: 'readme.txt' })).toMatch(/not allowed/);
  });
});

describe('patch_file', () => {
  it('applies hunks, and leaves the file untouched when one does not match', async () => {
    writeFileSync(ws('code.txt'), 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n');
    const patch =
      '--- a/code.txt\n+++ b/code.txt\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n+line TWO\n line 3\n@@ -8,3 +8,4 @@\n line 8\n-line 9\n+line NINE\n+line 9.5\n line 10\n';
    expect(await ok('patch_file', { root: 'workspace', path: 'code.txt', patch })).toEqual({
      path: 'code.txt',
      hunks_applied: 2,
      lines_added: 3,
      lines_removed: 2,
      offsets: [0, 0],
      created: false,
    });
    expect(read('code.txt')).toBe('line 1\nline TWO\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline NINE\nline 9.5\nline 10\n');
    const before = read('code.txt');
    const bad = '@@ -1,2 +1,2 @@\n line 1\n-line TWO\n+line 2\n@@ -4,1 +4,1 @@\n-line X\n+line Y\n';
    expect(await err('patch_file', { root: 'workspace', path: 'code.txt', patch: bad })).toMatch(
      /hunk 2 .* does not match workspace:code.txt.*nothing was changed/,
    );
    expect(read('code.txt')).toBe(before);
  });

  it('creates files from /dev/null and refuses what it cannot do', async () => {
    expect(
      await ok('patch_file', {
        root: 'workspace',
        path: 'new/file.txt',
        patch: '--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n',
      }),
    ).toMatchObject({ created: true, hunks_applied: 1 });
    expect(read('new', 'file.txt')).toBe('one\ntwo\n');
    expect(await err('patch_file', { root: 'workspace', path: 'file.txt', patch: 'not a patch' })).toMatch(/no hunks/);
    expect(
      await err('patch_file', { root: 'workspace', path: 'file.txt', patch: '--- /dev/null\n+++ b/file.txt\n@@ -0,0 +1 @@\n+x\n' }),
    ).toMatch(/already exists/);
    expect(await err('patch_file', { root: 'workspace', path: 'nope.txt', patch: '@@ -1 +1 @@\n-a\n+b\n' })).toMatch(
      /not found; a patch that creates a file starts with "--- \/dev\/null"/,
    );
    expect(
      await err('patch_file', {
        root: 'workspace',
        path: 'file.txt',
        patch: '--- a/file.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hello workspace\n',
      }),
    ).toMatch(/use remove_file/);
    writeFileSync(ws('bin.dat'), Buffer.from([1, 0, 2]));
    expect(await err('patch_file', { root: 'workspace', path: 'bin.dat', patch: '@@ -1 +1 @@\n-a\n+b\n' })).toMatch(/binary file/);
    writeFileSync(ws('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await err('patch_file', { root: 'workspace', path: 'latin1.txt', patch: '@@ -1 +1 @@\n-caf\n+cafe\n' })).toMatch(
      /not valid UTF-8/,
    );
    expect(await err('patch_file', { root: 'readonly', path: 'readme.txt', patch: '@@ -1 +1 @@\n-read me\n+x\n' })).toMatch(/not allowed/);
  });
});

describe('create_folder', () => {
  it('creates nested folders idempotently and refuses a file in the way', async () => {
    expect(await ok('create_folder', { root: 'workspace', path: 'a/b/c' })).toEqual({ path: 'a/b/c', created: true });
    expect(statSync(ws('a', 'b', 'c')).isDirectory()).toBe(true);
    expect(await ok('create_folder', { root: 'workspace', path: 'a/b/c' })).toEqual({ path: 'a/b/c', created: false });
    expect(await ok('create_folder', { root: 'workspace', path: '.' })).toEqual({ path: '.', created: false });
    expect(await err('create_folder', { root: 'workspace', path: 'file.txt' })).toMatch(/exists as a file/);
    expect(await err('create_folder', { root: 'workspace', path: 'link_out_dir/new' })).toMatch(/outside root/);
  });
});

describe('remove_folder', () => {
  it('removes folders recursively without following links inside them', async () => {
    mkdirSync(ws('tree', 'deeper'), { recursive: true });
    writeFileSync(ws('tree', 'deeper', 'x.txt'), 'x');
    symlinkSync(fx.outside, ws('tree', 'escape'));
    expect(await ok('remove_folder', { root: 'workspace', path: 'tree' })).toEqual({ path: 'tree', removed: true });
    expect(existsSync(ws('tree'))).toBe(false);
    expect(readFileSync(join(fx.outside, 'secret.txt'), 'utf8')).toContain(fx.token);
  });

  it('never removes a root, and refuses files, links and missing folders', async () => {
    for (const path of ['.', '', '/', 'sub/..', './', 'link_in_dir/..']) {
      expect(await err('remove_folder', { root: 'workspace', path }), path).toMatch(/cannot remove root directory "workspace"/);
    }
    expect(existsSync(fx.roots.workspace)).toBe(true);
    expect(await err('remove_folder', { root: 'workspace', path: 'link_to_root' })).toMatch(/symbolic link; use remove_file/);
    expect(await err('remove_folder', { root: 'workspace', path: 'link_out_dir' })).toMatch(/symbolic link/);
    expect(await err('remove_folder', { root: 'workspace', path: 'file.txt' })).toMatch(/is a file, not a directory/);
    expect(await err('remove_folder', { root: 'workspace', path: 'nothing' })).toBe('workspace:nothing not found');
    expect(await err('remove_folder', { root: 'readonly', path: '.' })).toMatch(/not allowed/);
  });
});

describe('stat_file', () => {
  it('describes files and folders, following links inside the root', async () => {
    expect(await ok('stat_file', { root: 'workspace', path: 'file.txt' })).toMatchObject({
      path: 'file.txt',
      name: 'file.txt',
      type: 'file',
      is_directory: false,
      size: 16,
      mode: '0644',
    });
    expect(await ok('stat_file', { root: 'workspace', path: 'sub' })).toMatchObject({ type: 'directory', is_directory: true });
    expect(await ok('stat_file', { root: 'workspace', path: 'link_in_file' })).toMatchObject({
      path: 'file.txt',
      name: 'file.txt',
      size: 16,
    });
    expect(await ok('stat_file', { root: 'workspace', path: '.' })).toMatchObject({ path: '.', name: '.', is_directory: true });
    expect(await err('stat_file', { root: 'workspace', path: 'nothing.txt' })).toBe('workspace:nothing.txt not found');
    expect(await err('stat_file', { root: 'restricted', path: 'hidden.txt' })).toMatch(/not allowed/);
  });
});

describe('hash_file', () => {
  it('hashes with md5, sha1 and sha256 (the default)', async () => {
    const content = readFileSync(ws('file.txt'));
    for (const algorithm of ['md5', 'sha1', 'sha256']) {
      expect((await ok('hash_file', { root: 'workspace', path: 'file.txt', algorithm })).hash).toBe(
        createHash(algorithm).update(content).digest('hex'),
      );
    }
    expect(await ok('hash_file', { root: 'workspace', path: 'file.txt' })).toMatchObject({ algorithm: 'sha256', size: 16 });
    expect(await err('hash_file', { root: 'workspace', path: 'sub' })).toMatch(/is a directory/);
    expect(await err('hash_file', { root: 'workspace', path: 'ghost' })).toMatch(/not found/);
  });
});

describe('permissions_file', () => {
  it('reports mode, permissions, owner and group', async () => {
    chmodSync(ws('file.txt'), 0o755);
    mkdirSync(ws('private'), { mode: 0o750 });
    chmodSync(ws('private'), 0o750);
    const file = await ok('permissions_file', { root: 'workspace', path: 'file.txt' });
    expect(file).toMatchObject({
      path: 'file.txt',
      mode: '0755',
      permissions: '-rwxr-xr-x',
      uid: process.getuid!(),
      gid: process.getgid!(),
    });
    expect(typeof file.owner).toBe('string');
    expect(typeof file.group).toBe('string');
    expect(await ok('permissions_file', { root: 'workspace', path: 'private' })).toMatchObject({ mode: '0750', permissions: 'drwxr-x---' });
    chmodSync(ws('file.txt'), 0o4755);
    expect(await ok('permissions_file', { root: 'workspace', path: 'file.txt' })).toMatchObject({
      mode: '4755',
      permissions: '-rwsr-xr-x',
    });
    expect(await err('permissions_file', { root: 'workspace', path: 'none' })).toMatch(/not found/);
  });
});

describe('copy', () => {
  it('copies files and folders within a root and across roots, creating parents', async () => {
    expect(
      await ok('copy', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'workspace', dest_path: 'deep/nested/copy.txt' }),
    ).toMatchObject({
      source: 'workspace:file.txt',
      destination: 'workspace:deep/nested/copy.txt',
      type: 'file',
      files_copied: 1,
      replaced: false,
    });
    expect(read('deep', 'nested', 'copy.txt')).toBe('hello workspace\n');
    await ok('copy', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'dest', dest_path: 'file.txt' });
    expect(readFileSync(join(fx.roots.dest, 'file.txt'), 'utf8')).toBe('hello workspace\n');
    expect(await ok('copy', { source_root: 'workspace', source_path: 'sub', dest_root: 'dest', dest_path: 'sub-copy' })).toMatchObject({
      type: 'directory',
      files_copied: 2,
      folders_copied: 2,
    });
    expect(readFileSync(join(fx.roots.dest, 'sub-copy', 'inner', 'deep.txt'), 'utf8')).toBe('deep inside\n');
  });

  it('copies links inside a folder as links only when they stay in the source root', async () => {
    mkdirSync(ws('tree'));
    writeFileSync(ws('tree', 'a.txt'), 'a');
    symlinkSync('a.txt', ws('tree', 'to-a'));
    symlinkSync(join(fx.outside, 'secret.txt'), ws('tree', 'to-secret'));
    symlinkSync('../../../outside', ws('tree', 'to-outside-rel'));
    symlinkSync(fx.roots.readonly, ws('tree', 'to-readonly'));
    const result = await ok('copy', { source_root: 'workspace', source_path: 'tree', dest_root: 'dest', dest_path: 'tree' });
    expect(result).toMatchObject({ files_copied: 1, symlinks_copied: 1 });
    expect(result.skipped.map((s: any) => s.path).sort()).toEqual(['tree/to-outside-rel', 'tree/to-readonly', 'tree/to-secret']);
    expect(readlinkSync(join(fx.roots.dest, 'tree', 'to-a'))).toBe('a.txt');
    expect(existsSync(join(fx.roots.dest, 'tree', 'to-secret'))).toBe(false);
  });

  it('refuses copies the allowlists, the destination or the shape forbid', async () => {
    expect(await err('copy', { source_root: 'restricted', source_path: 'hidden.txt', dest_root: 'workspace', dest_path: 'h.txt' })).toMatch(
      /copy is not allowed in root "restricted"/,
    );
    expect(await err('copy', { source_root: 'readonly', source_path: 'readme.txt', dest_root: 'workspace', dest_path: 'r.txt' })).toMatch(
      /copy is not allowed in root "readonly"/,
    );
    expect(await err('copy', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'readonly', dest_path: 'f.txt' })).toMatch(
      /copy is not allowed in root "readonly"/,
    );
    expect(existsSync(ws('h.txt')) || existsSync(join(fx.roots.readonly, 'f.txt'))).toBe(false);
    expect(
      await err('copy', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'workspace', dest_path: 'sub/note.md' }),
    ).toMatch(/already exists; pass overwrite: true/);
    expect(
      await ok('copy', {
        source_root: 'workspace',
        source_path: 'file.txt',
        dest_root: 'workspace',
        dest_path: 'sub/note.md',
        overwrite: true,
      }),
    ).toMatchObject({ replaced: true });
    expect(read('sub', 'note.md')).toBe('hello workspace\n');
    expect(
      await err('copy', { source_root: 'workspace', source_path: 'sub', dest_root: 'workspace', dest_path: 'sub/inner/again' }),
    ).toMatch(/into itself/);
    expect(
      await err('copy', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'dest', dest_path: '.', overwrite: true }),
    ).toMatch(/root itself/);
    expect(await err('copy', { source_root: 'workspace', source_path: 'missing.txt', dest_root: 'workspace', dest_path: 'x' })).toBe(
      'workspace:missing.txt not found',
    );
    expect(
      await err('copy', { source_root: 'workspace', source_path: 'link_out_file', dest_root: 'workspace', dest_path: 'stolen' }),
    ).toMatch(/outside root/);
  });
});

describe('move', () => {
  it('moves files, folders and links (the link itself), within and across roots', async () => {
    expect(
      await ok('move', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'workspace', dest_path: 'a/b/renamed.txt' }),
    ).toMatchObject({ type: 'file', replaced: false });
    expect(read('a', 'b', 'renamed.txt')).toBe('hello workspace\n');
    expect(existsSync(ws('file.txt'))).toBe(false);
    await ok('move', { source_root: 'workspace', source_path: 'sub', dest_root: 'dest', dest_path: 'moved-sub' });
    expect(readFileSync(join(fx.roots.dest, 'moved-sub', 'inner', 'deep.txt'), 'utf8')).toBe('deep inside\n');
    expect(
      await ok('move', { source_root: 'workspace', source_path: 'link_out_dir', dest_root: 'workspace', dest_path: 'renamed-link' }),
    ).toMatchObject({ type: 'symlink' });
    expect(lstatSync(ws('renamed-link')).isSymbolicLink()).toBe(true);
    expect(await err('read_file', { root: 'workspace', path: 'renamed-link/secret.txt' })).toMatch(/outside root/);
  });

  it('never moves or replaces a root, and refuses what the allowlists forbid', async () => {
    for (const path of ['.', '', '/', 'sub/..']) {
      expect(await err('move', { source_root: 'workspace', source_path: path, dest_root: 'dest', dest_path: 'stolen-root' }), path).toMatch(
        /cannot move root "workspace"/,
      );
      expect(
        await err('move', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'dest', dest_path: path, overwrite: true }),
        path,
      ).toMatch(/root itself/);
    }
    expect(
      await ok('move', { source_root: 'workspace', source_path: 'link_to_root', dest_root: 'workspace', dest_path: 'root-link' }),
    ).toMatchObject({ type: 'symlink' });
    expect(existsSync(join(fx.roots.workspace, 'file.txt'))).toBe(true);
    expect(await err('move', { source_root: 'readonly', source_path: 'readme.txt', dest_root: 'workspace', dest_path: 'r' })).toMatch(
      /move is not allowed in root "readonly"/,
    );
    expect(await err('move', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'restricted', dest_path: 'f' })).toMatch(
      /move is not allowed in root "restricted"/,
    );
    expect(existsSync(ws('file.txt'))).toBe(true);
    expect(await err('move', { source_root: 'workspace', source_path: 'sub', dest_root: 'workspace', dest_path: 'sub/inner/x' })).toMatch(
      /into itself/,
    );
    expect(
      await err('move', {
        source_root: 'workspace',
        source_path: 'sub/note.md',
        dest_root: 'workspace',
        dest_path: 'sub',
        overwrite: true,
      }),
    ).toMatch(/which is inside it/);
    expect(
      await err('move', { source_root: 'workspace', source_path: 'file.txt', dest_root: 'workspace', dest_path: 'sub/note.md' }),
    ).toMatch(/already exists/);
    expect(
      await ok('move', {
        source_root: 'workspace',
        source_path: 'file.txt',
        dest_root: 'workspace',
        dest_path: 'sub/note.md',
        overwrite: true,
      }),
    ).toMatchObject({ replaced: true });
    expect(await err('move', { source_root: 'workspace', source_path: 'missing', dest_root: 'workspace', dest_path: 'x' })).toBe(
      'workspace:missing not found',
    );
  });
});

describe('grep', () => {
  it('finds lines with context, paths relative to the root', async () => {
    writeFileSync(ws('greek.txt'), 'alpha\nbeta\ngamma\ndelta\nepsilon\n');
    const found = await ok('grep', { root: 'workspace', pattern: 'gam+a', context_lines: 1 });
    expect(found).toMatchObject({ total_matches: 1, truncated: false, binary_files_skipped: 0 });
    expect(found.matches[0]).toEqual({
      path: 'greek.txt',
      line_number: 3,
      line: 'gamma',
      context_before: ['beta'],
      context_after: ['delta'],
    });
    expect((await ok('grep', { root: 'workspace', pattern: 'DEEP', case_insensitive: true })).matches.map((m: any) => m.path)).toEqual([
      'sub/inner/deep.txt',
    ]);
    expect((await ok('grep', { root: 'workspace', pattern: 'line', path: 'sub' })).matches).toEqual([
      { path: 'sub/note.md', line_number: 2, line: 'line two', context_before: [], context_after: [] },
    ]);
    expect((await ok('grep', { root: 'workspace', pattern: 'e', path: 'greek.txt' })).matches.map((m: any) => [m.path, m.line])).toEqual([
      ['greek.txt', 'beta'],
      ['greek.txt', 'delta'],
      ['greek.txt', 'epsilon'],
    ]);
    expect((await ok('grep', { root: 'workspace', pattern: 'ZZZ_NOTHING' })).total_matches).toBe(0);
  });

  it('filters by glob and depth, caps results, skips binary files and never follows links', async () => {
    writeFileSync(ws('a.go'), '// TODO\n');
    writeFileSync(ws('a.py'), '# TODO\n');
    writeFileSync(ws('sub', 'b.go'), '// TODO\n');
    writeFileSync(ws('blob.bin'), Buffer.from('TODO\0TODO'));
    expect((await ok('grep', { root: 'workspace', pattern: 'TODO', glob_filter: '*.go' })).matches.map((m: any) => m.path)).toEqual([
      'a.go',
      'sub/b.go',
    ]);
    expect((await ok('grep', { root: 'workspace', pattern: 'TODO', glob_filter: '*.go', max_depth: 0 })).total_matches).toBe(1);
    const all = await ok('grep', { root: 'workspace', pattern: 'TODO' });
    expect(all).toMatchObject({ total_matches: 3, binary_files_skipped: 1 });
    expect(await ok('grep', { root: 'workspace', pattern: 'TODO', max_results: 2 })).toMatchObject({ total_matches: 2, truncated: true });
    expect(await ok('grep', { root: 'workspace', pattern: 'TODO', max_results: 3 })).toMatchObject({ total_matches: 3, truncated: false });
    // link_out_dir, link_in_dir and link_to_root are not entered: each real file is found once, nothing outside at all.
    expect((await ok('grep', { root: 'workspace', pattern: '.' })).matches.filter((m: any) => m.path.endsWith('deep.txt'))).toHaveLength(1);
    expect(await err('grep', { root: 'workspace', pattern: '[invalid' })).toMatch(/invalid pattern "\[invalid"/);
    expect(await err('grep', { root: 'restricted', pattern: 'x' })).toMatch(/grep is not allowed in root "restricted"/);
  });
  it('runs catastrophic patterns in linear time and names unsupported syntax', async () => {
    writeFileSync(ws('long.txt'), `short\n${'a'.repeat(50_000)}b\n${'a'.repeat(10)}\n`);
    // (a+)+$ backtracks 2^50000 ways on the long line in a JavaScript engine; RE2 does one pass.
    const found = await ok('grep', { root: 'workspace', pattern: '^(a+)+$', path: 'long.txt' });
    expect(found.matches.map((m: any) => m.line_number)).toEqual([3]);
    expect(await err('grep', { root: 'workspace', pattern: '(a)\\1' })).toMatch(/backreferences .*not supported.*RE2 syntax/);
    expect(await err('grep', { root: 'workspace', pattern: 'a(?<=a)' })).toMatch(/lookbehind .*not supported/);
    expect(await err('glob', { root: 'workspace', regex: '(?=x)' })).toMatch(/invalid regex "\(\?=x\)": lookahead/);
  });
});

describe('glob', () => {
  it('matches names at any depth, paths with **, and regexes', async () => {
    writeFileSync(ws('a.go'), 'a');
    mkdirSync(ws('src', 'pkg', 'sub'), { recursive: true });
    writeFileSync(ws('src', 'b.go'), 'b');
    writeFileSync(ws('src', 'pkg', 'sub', 'test_12.go'), 'c');
    expect((await ok('glob', { root: 'workspace', pattern: '*.go' })).matches.map((m: any) => m.path)).toEqual([
      'a.go',
      'src/b.go',
      'src/pkg/sub/test_12.go',
    ]);
    expect((await ok('glob', { root: 'workspace', pattern: 'src/**/*.go' })).matches.map((m: any) => m.path)).toEqual([
      'src/b.go',
      'src/pkg/sub/test_12.go',
    ]);
    expect((await ok('glob', { root: 'workspace', pattern: '*.go', path: 'src/pkg' })).matches.map((m: any) => m.path)).toEqual([
      'src/pkg/sub/test_12.go',
    ]);
    expect((await ok('glob', { root: 'workspace', regex: 'test_\\d+\\.go$' })).matches[0]).toMatchObject({
      path: 'src/pkg/sub/test_12.go',
      type: 'file',
      size: 1,
    });
    expect((await ok('glob', { root: 'workspace', pattern: '*.go', max_depth: 1 })).total_matches).toBe(2);
    expect((await ok('glob', { root: 'workspace', pattern: '*.{go,md}', max_depth: 1 })).matches.map((m: any) => m.path)).toEqual([
      'a.go',
      'src/b.go',
      'sub/note.md',
    ]);
  });

  it('filters by type, caps results, lists links without following them, and checks its arguments', async () => {
    const dirs = await ok('glob', { root: 'workspace', pattern: '*', type_filter: 'directory' });
    expect(dirs.matches.map((m: any) => m.path)).toEqual(['sub', 'sub/inner']);
    const links = await ok('glob', { root: 'workspace', pattern: 'link_*' });
    expect(links.matches.every((m: any) => m.type === 'symlink')).toBe(true);
    expect(links.matches.some((m: any) => m.path.startsWith('link_out_dir/'))).toBe(false);
    expect(await ok('glob', { root: 'workspace', pattern: '*', max_results: 3 })).toMatchObject({ total_matches: 3, truncated: true });
    expect((await ok('glob', { root: 'workspace', pattern: '*.xyz' })).total_matches).toBe(0);
    expect(await err('glob', { root: 'workspace', pattern: '*.go', regex: '.*' })).toMatch(/exactly one/);
    expect(await err('glob', { root: 'workspace' })).toMatch(/exactly one/);
    expect(await err('glob', { root: 'workspace', regex: '[unclosed' })).toMatch(/invalid regex/);
    expect(await err('glob', { root: 'workspace', pattern: '*', path: 'file.txt' })).toMatch(/not a directory/);
    expect((await ok('glob', { root: 'readonly', pattern: '*.txt' })).total_matches).toBe(1);
  });
});
