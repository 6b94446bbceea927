import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesystemConfigError, loadFilesystemConfig, loadFilesystemConfigReport, parseFilesystemConfig, ROOT_TOOLS } from './config.js';
import { ToolError } from './errors.js';
import { ReadWriteLock } from './lock.js';
import { cleanSegments, MAX_PATH_LENGTH, type ResolveMode } from './sandbox.js';
import { makeFixture, type Fixture } from './testing/fixture.js';

let fx: Fixture;
beforeAll(() => {
  fx = makeFixture();
});
afterAll(() => fx.cleanup());

const ws = () => fx.sandbox.roots.get('workspace')!;
const resolve = (path: string, mode: ResolveMode = 'follow') => fx.sandbox.resolve(ws(), path, mode);
const refusal = async (path: string, mode: ResolveMode = 'follow') => {
  const error = await resolve(path, mode).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${JSON.stringify(path)} to be refused`).toBeInstanceOf(ToolError);
  return (error as ToolError).message;
};

describe('lexical cleaning', () => {
  it('drops "." and empty segments and applies ".." within the path', () => {
    expect(cleanSegments('a/./b//c/', 'r')).toEqual(['a', 'b', 'c']);
    expect(cleanSegments('a/b/../c', 'r')).toEqual(['a', 'c']);
    expect(cleanSegments('/a/b', 'r')).toEqual(['a', 'b']);
    for (const root of ['', '.', '/', '//', './', 'a/..', 'a/b/../..']) expect(cleanSegments(root, 'r')).toEqual([]);
  });

  it('refuses ".." that climbs above the root, in every position', () => {
    for (const path of ['..', '../', '../a', 'a/../..', 'a/../../b', '/..', './..', 'a/b/../../../c']) {
      expect(() => cleanSegments(path, 'r'), path).toThrow(/outside root "r"/);
    }
  });

  it('decodes nothing: encoded and backslash separators and look-alikes stay literal names', () => {
    expect(cleanSegments('%2e%2e%2f..%2f', 'r')).toEqual(['%2e%2e%2f..%2f']);
    expect(cleanSegments('..\\..\\etc', 'r')).toEqual(['..\\..\\etc']);
    expect(cleanSegments('\u2025/\uFF0E\uFF0E/..\u2215x', 'r')).toEqual(['\u2025', '\uFF0E\uFF0E', '..\u2215x']);
    expect(cleanSegments('...', 'r')).toEqual(['...']);
  });

  it('refuses null bytes, over-long paths and over-long names', () => {
    expect(() => cleanSegments('a\0b', 'r')).toThrow(/null byte/);
    expect(() => cleanSegments('a/'.repeat(MAX_PATH_LENGTH), 'r')).toThrow(/at most 4096/);
    expect(() => cleanSegments('x'.repeat(256), 'r')).toThrow(/longer than 255 bytes/);
    expect(() => cleanSegments('é'.repeat(128), 'r')).toThrow(/longer than 255 bytes/);
    expect(cleanSegments('x'.repeat(255), 'r')).toEqual(['x'.repeat(255)]);
  });
});

describe('resolution', () => {
  it('resolves existing paths to real paths inside the root', async () => {
    const file = await resolve('sub/../file.txt');
    expect(file.abs).toBe(join(fx.roots.workspace, 'file.txt'));
    expect(file.rel).toBe('file.txt');
    expect(file.shown).toBe('workspace:file.txt');
    expect(file.stats?.isFile()).toBe(true);
    const root = await resolve('/');
    expect(root.abs).toBe(fx.roots.workspace);
    expect(root.shown).toBe('workspace:.');
  });

  it('resolves a missing path through its nearest existing parent', async () => {
    const missing = await resolve('sub/new/deeper/file.txt');
    expect(missing.stats).toBeUndefined();
    expect(missing.abs).toBe(join(fx.roots.workspace, 'sub', 'new', 'deeper', 'file.txt'));
    // Through a link inside the root: the real parent is used.
    const viaLink = await resolve('link_in_dir/new.txt');
    expect(viaLink.abs).toBe(join(fx.roots.workspace, 'sub', 'new.txt'));
    expect(viaLink.rel).toBe('sub/new.txt');
  });

  it('follows links that stay inside the root, and stops at the link in entry mode', async () => {
    expect((await resolve('link_in_file')).rel).toBe('file.txt');
    expect((await resolve('link_abs_in')).rel).toBe('file.txt');
    expect((await resolve('link_in_dir/note.md')).rel).toBe('sub/note.md');
    expect((await resolve('link_to_root')).rel).toBe('');
    const entry = await resolve('link_in_file', 'entry');
    expect(entry.rel).toBe('link_in_file');
    expect(entry.stats?.isSymbolicLink()).toBe(true);
    // Entry mode still follows the links above the last segment.
    expect((await resolve('link_in_dir/note.md', 'entry')).rel).toBe('sub/note.md');
  });

  it('refuses links that lead outside the root, without naming their target', async () => {
    for (const path of [
      'link_out_file',
      'link_out_dir',
      'link_out_dir/secret.txt',
      'link_out_rel/sub',
      'link_root_parent',
      'link_chain_out/x',
      'sub/link_up',
      'link_proc/etc/passwd',
      'link_base',
    ]) {
      const message = await refusal(path);
      expect(message).toMatch(/outside root "workspace"/);
      expect(message).not.toContain(fx.base);
      expect(message).not.toContain('/proc');
    }
    // Another root is outside this one too: its allowlist must not be bypassed through a link.
    expect(await refusal('link_other_root/readme.txt')).toMatch(/outside root/);
    // In entry mode the last segment is not followed, but the ones above it are.
    expect((await resolve('link_out_dir', 'entry')).rel).toBe('link_out_dir');
    expect(await refusal('link_out_dir/secret.txt', 'entry')).toMatch(/outside root/);
  });

  it('refuses dangling links and link loops', async () => {
    expect(await refusal('link_dangling_out')).toMatch(/target does not exist/);
    expect(await refusal('link_dangling_in')).toMatch(/target does not exist/);
    expect(await refusal('link_loop_a')).toMatch(/loop/);
    expect(await refusal('link_self/x')).toMatch(/loop/);
    expect((await resolve('link_loop_a', 'entry')).stats?.isSymbolicLink()).toBe(true);
  });

  it('treats absolute host paths as paths inside the root (chroot-like)', async () => {
    const abs = await resolve(join(fx.outside, 'secret.txt'));
    expect(abs.stats).toBeUndefined();
    expect(abs.abs.startsWith(`${fx.roots.workspace}/`)).toBe(true);
  });

  it('says when a path goes through a file', async () => {
    expect(await refusal('file.txt/x')).toMatch(/not found \(a part of the path is a file/);
  });
});

describe('allowlists', () => {
  it('refuses unknown roots and tools a root does not allow', () => {
    expect(() => fx.sandbox.root('nope', 'read_file')).toThrow(
      /unknown root "nope"; the roots are "workspace", "readonly", "restricted", "dest"/,
    );
    expect(() => fx.sandbox.root('readonly', 'write_file')).toThrow(
      /write_file is not allowed in root "readonly" \(it allows list_folder, read_file, stat_file, grep, glob\)/,
    );
    expect(() => fx.sandbox.root('restricted', 'grep')).toThrow(/not allowed/);
    expect(fx.sandbox.root('restricted', 'list_folder').name).toBe('restricted');
    expect([...fx.sandbox.root('workspace', 'move').allowed]).toEqual([...ROOT_TOOLS]);
  });
});

describe('configuration', () => {
  it('applies the defaults and expands "*"', () => {
    const config = parseFilesystemConfig({ roots: [{ name: 'a', path: fx.roots.dest }] }, 'f.yaml');
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8091, max_full_read_size: 1_048_576 });
    expect([...config.roots[0]!.allowed].sort()).toEqual([
      'glob',
      'grep',
      'hash_file',
      'list_folder',
      'permissions_file',
      'read_file',
      'stat_file',
    ]);
    expect(config.roots[0]!.real).toBe(fx.roots.dest);
  });

  it('names the file, the field and what was expected', () => {
    const bad = () =>
      parseFilesystemConfig({ port: 'x', extra: 1, roots: [{ name: 'a b', path: fx.roots.dest, allowed_tools: ['raed_file'] }] }, 'f.yaml');
    expect(bad).toThrow(FilesystemConfigError);
    const message = (() => {
      try {
        bad();
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toContain('f.yaml: port: expected number, got string');
    expect(message).toContain('f.yaml: (top level): unknown field "extra"');
    expect(message).toContain('f.yaml: roots[0].name: expected a name of up to 64 letters');
    expect(message).toContain('f.yaml: roots[0].allowed_tools[0]: expected one of "list_folder"');
    const duplicate = {
      roots: [
        { name: 'c', path: fx.roots.readonly },
        { name: 'c', path: fx.roots.restricted },
      ],
    };
    expect(() => parseFilesystemConfig(duplicate, 'f.yaml')).toThrow(
      'f.yaml: roots[1].name: expected a unique root name ("c" is used twice)',
    );
    expect(() => parseFilesystemConfig({ roots: [] }, 'f.yaml')).toThrow('f.yaml: roots: expected at least one root');
    expect(() => parseFilesystemConfig({}, 'f.yaml')).toThrow(/roots: expected array \(required\)/);
  });

  it('refuses missing folders, files as roots and overlapping roots', () => {
    writeFileSync(join(fx.base, 'plain-file'), 'x');
    expect(() => parseFilesystemConfig({ roots: [{ name: 'a', path: join(fx.base, 'missing') }] }, 'f.yaml')).toThrow(
      /roots\[0\]\.path: ".*missing" does not exist/,
    );
    expect(() => parseFilesystemConfig({ roots: [{ name: 'a', path: join(fx.base, 'plain-file') }] }, 'f.yaml')).toThrow(/is not a folder/);
    expect(() =>
      parseFilesystemConfig(
        {
          roots: [
            { name: 'outer', path: join(fx.base, 'roots') },
            { name: 'inner', path: fx.roots.dest },
          ],
        },
        'f.yaml',
      ),
    ).toThrow(/roots\[1\]\.path: root "inner" lies inside root "outer"; roots may not overlap/);
    expect(() =>
      parseFilesystemConfig(
        {
          roots: [
            { name: 'a', path: fx.roots.dest },
            { name: 'b', path: `${fx.roots.dest}/.` },
          ],
        },
        'f.yaml',
      ),
    ).toThrow(/overlap/);
  });

  it('reads YAML files, with relative root paths taken from the working directory', () => {
    mkdirSync(join(fx.base, 'cwd', 'data'), { recursive: true });
    const file = join(fx.base, 'cwd', 'fs.yaml');
    writeFileSync(file, 'roots:\n  - name: data\n    path: ./data\n    allowed_tools: ["*"]\n');
    expect(loadFilesystemConfig(file, join(fx.base, 'cwd')).roots[0]!.real).toBe(join(fx.base, 'cwd', 'data'));
    expect(() => loadFilesystemConfig(join(fx.base, 'nope.yaml'))).toThrow(/nope\.yaml: cannot read the configuration file \(ENOENT\)/);
    writeFileSync(file, 'roots: [\n');
    expect(() => loadFilesystemConfig(file)).toThrow(/not valid YAML/);
  });

  it('accepts the shipped config/filesystem.yaml in an empty folder: the check makes nothing, a start makes its roots', () => {
    const cwd = join(fx.base, 'example');
    mkdirSync(cwd);
    const shipped = new URL('../../config/filesystem.yaml', import.meta.url).pathname;
    expect(loadFilesystemConfigReport(shipped, cwd).errors).toEqual([]);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    const config = loadFilesystemConfig(shipped, cwd);
    expect(config.roots.map((root) => root.name)).toEqual(['workspace', 'readonly']);
    expect(config.roots.map((root) => root.real)).toEqual([join(cwd, 'data', 'workspace'), join(cwd, 'data', 'docs')]);
    expect(statSync(join(cwd, 'data', 'workspace')).isDirectory()).toBe(true);
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8091, max_full_read_size: 1_048_576 });
  });

  it('still refuses a missing root that is not marked create', () => {
    const file = join(fx.base, 'no-create.yaml');
    writeFileSync(file, 'roots:\n  - name: data\n    path: ./absent\n');
    expect(loadFilesystemConfigReport(file, fx.base).errors.map((error) => error.message)).toEqual([
      '"./absent" does not exist (create the folder first, or set create: true)',
    ]);
  });
});

describe('the call lock', () => {
  it('lets reads overlap, runs writes alone, and keeps arrival order', async () => {
    const lock = new ReadWriteLock();
    const events: string[] = [];
    const task = (name: string, ms: number) => async () => {
      events.push(`${name}+`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      events.push(`${name}-`);
    };
    await Promise.all([
      lock.run(false, task('r1', 20)),
      lock.run(false, task('r2', 5)),
      lock.run(true, task('w', 5)),
      lock.run(false, task('r3', 1)),
    ]);
    expect(events.slice(0, 2).sort()).toEqual(['r1+', 'r2+']);
    expect(events.indexOf('w+')).toBe(events.indexOf('r1-') + 1);
    expect(events.indexOf('r3+')).toBe(events.indexOf('w-') + 1);
  });
});
