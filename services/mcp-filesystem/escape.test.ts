import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RootToolName } from './config.js';
import { makeFixture, type Fixture } from './testing/fixture.js';
import { callTool, toolNamed } from './tools/index.js';

/**
 * The escape corpus: every attempt below, against every path-taking tool (copy and move once on
 * each side). The assertions are on the filesystem: after each call, everything outside the
 * writable roots is byte-for-byte as before, no result carries a sentinel or a host path, and
 * nothing from outside was copied into the workspace. Attempts that must fail (a ".." above the
 * root, a null byte, a link out in a tool that follows links, a root removed or moved, a root that
 * does not allow the tool) are checked to fail; the others (literal names that merely look
 * dangerous) may succeed, inside the root.
 */

type Refusal =
  | 'always' // lexical escapes, null bytes, over-long input, unknown roots
  | 'follow' // links that lead out: refused by every tool that follows its path
  | 'destroy' // the root itself: refused by every tool that would remove, replace or move it
  | 'maybe'; // literal names: either refused or a harmless success inside the root

interface Attempt {
  label: string;
  path: string;
  root?: string;
  refuse: Refusal;
}

function corpus(fx: Fixture): Attempt[] {
  const out = fx.outside;
  const attempts: Attempt[] = [];
  const add = (refuse: Refusal, ...paths: string[]) => {
    for (const path of paths)
      attempts.push({ label: JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…(${path.length})` : path), path, refuse });
  };
  // ".." in many forms
  add(
    'always',
    '..',
    '../',
    '../..',
    '../outside/secret.txt',
    '../../outside/secret.txt',
    '../../../../../../../../../../etc/passwd',
    'sub/../../outside/secret.txt',
    'sub/../../../outside',
    './../outside',
    '.././../outside/secret.txt',
    'sub/./../..//../outside/secret.txt',
    '..//..//outside//secret.txt',
    '/../outside/secret.txt',
    '/..',
    '../workspace',
    '../workspace/file.txt',
    '../readonly/readme.txt',
    '../../roots/readonly/readme.txt',
    'sub/../../readonly',
    'sub/inner/../../../dest',
    'link_in_dir/../..',
    'link_in_dir/../../outside',
    `${'a/'.repeat(500)}${'../'.repeat(501)}outside`,
    '../'.repeat(1300),
    'sub/..//..',
    './.././..',
    '/./../.',
    'x/../../',
  );
  // literal names that only look like ".."
  add('maybe', '....//....//outside', '.../outside', '..;/outside', '...', '. ./outside', '.. /outside', ' ../outside');
  // absolute paths (a leading "/" is the root: chroot-like)
  add(
    'maybe',
    join(out, 'secret.txt'),
    out,
    '/etc/passwd',
    '/etc',
    join(fx.roots.workspace, 'file.txt'),
    join(fx.roots.readonly, 'readme.txt'),
    '/proc/self/root/etc/passwd',
    '/proc/self/cwd',
    '/dev/null',
    '/dev/zero',
    '~/.ssh/id_rsa',
    '~root',
    'file:///etc/passwd',
    fx.base,
    '//etc/passwd',
  );
  // percent-encoded separators and dots are never decoded
  add(
    'maybe',
    '%2e%2e%2f%2e%2e%2foutside%2fsecret.txt',
    '%2e%2e/%2e%2e/outside/secret.txt',
    '..%2f..%2foutside%2fsecret.txt',
    '%252e%252e%252f',
    '..%c0%af..%c0%afoutside',
    '..%5c..%5coutside',
    '%2e%2e',
    '%2F..%2F..%2Fetc%2Fpasswd',
    '%u002e%u002e/outside',
  );
  add('maybe', '%2e%2e/../outside');
  // backslashes are name characters on POSIX
  add(
    'maybe',
    '..\\..\\outside\\secret.txt',
    '..\\',
    '\\..\\..\\outside',
    'sub\\..\\..\\outside',
    'C:\\Windows\\System32',
    '\\\\server\\share',
    '..\\/secret',
  );
  add('maybe', '..\\/../outside');
  // null bytes
  add('always', 'file.txt\0', '\0', 'file.txt\0../../outside/secret.txt', '../\0/outside', 'sub/\0', '\0/etc/passwd', 'link_out_dir\0');
  // Unicode look-alikes of "." and "/" are not normalised into them
  add(
    'maybe',
    '\u2025/outside',
    '\uFF0E\uFF0E/\uFF0E\uFF0E/outside/secret.txt',
    '..\u2215..\u2215outside',
    '..\u2044..\u2044outside',
    '.\u200B./outside',
    '..\u0338/outside',
    '\uFE52\uFE52/outside',
    '..\uFF0Foutside',
    '\u3002\u3002/outside',
    '\uFF45\uFF54\uFF43/passwd',
    '..\u00A0/outside',
    '\u0131\u0307..',
  );
  add('always', '\u002E\u002E/outside');
  // symbolic links
  add(
    'follow',
    'link_out_file',
    'link_out_dir',
    'link_out_dir/secret.txt',
    'link_out_dir/sub/deep.txt',
    'link_out_dir/newfile.txt',
    'link_out_rel',
    'link_out_rel/secret.txt',
    'link_root_parent',
    'link_root_parent/readonly/readme.txt',
    'link_other_root',
    'link_other_root/readme.txt',
    'link_dangling_out',
    'link_dangling_in',
    'link_loop_a',
    'link_loop_a/x',
    'link_self',
    'link_chain_out',
    'link_chain_out/secret.txt',
    'sub/link_up',
    'sub/link_up/outside/secret.txt',
    'link_proc',
    'link_proc/etc/passwd',
    'link_dev_zero',
    'link_base',
    'link_base/top-secret.txt',
    'link_in_dir/link_up/outside',
  );
  // the root itself, under many names
  add('destroy', '.', '', '/', '//', './', 'sub/..', 'sub/inner/../..', 'link_to_root/..', '/./');
  add('maybe', 'link_to_root', 'link_to_root/file.txt', 'link_in_file', 'link_abs_in', 'link_in_dir/note.md');
  // very long paths
  add('always', 'a/'.repeat(2100), 'x'.repeat(256), `sub/${'n'.repeat(300)}`, '\u00e9'.repeat(200));
  add('maybe', 'sub/'.repeat(1000), `${'d'.repeat(255)}/${'e'.repeat(255)}`);
  // root names that try to be paths
  for (const root of [
    '..',
    '../outside',
    '/',
    'workspace/..',
    'workspace/../..',
    'WORKSPACE',
    'workspace\0',
    fx.outside,
    '',
    ' workspace',
  ]) {
    attempts.push({ label: `root ${JSON.stringify(root)}`, root, path: 'file.txt', refuse: 'always' });
  }
  // roots that exist but do not allow the tool (checked against the allowlists below)
  for (const root of ['readonly', 'restricted']) {
    attempts.push({ label: `root ${root}`, root, path: '.', refuse: 'maybe' });
    attempts.push({ label: `root ${root} file`, root, path: root === 'readonly' ? 'readme.txt' : 'hidden.txt', refuse: 'maybe' });
  }
  return attempts;
}

interface Variant {
  label: string;
  tool: RootToolName;
  /** How the attacked path is resolved: followed, or only up to its last segment. */
  follows: boolean;
  /** Removes, replaces or moves what the path names. */
  destroys: boolean;
  args: (root: string, path: string) => Record<string, unknown>;
}

const CREATE_PATCH = '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+PWNED\n';

const VARIANTS: Variant[] = [
  { label: 'list_folder', tool: 'list_folder', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  { label: 'read_file', tool: 'read_file', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  {
    label: 'read_file (bytes)',
    tool: 'read_file',
    follows: true,
    destroys: false,
    args: (root, path) => ({ root, path, offset_bytes: 0, limit_bytes: 64 }),
  },
  { label: 'write_file', tool: 'write_file', follows: true, destroys: true, args: (root, path) => ({ root, path, content: 'PWNED' }) },
  {
    label: 'write_file (append)',
    tool: 'write_file',
    follows: true,
    destroys: true,
    args: (root, path) => ({ root, path, content: 'PWNED', mode: 'append' }),
  },
  { label: 'remove_file', tool: 'remove_file', follows: false, destroys: true, args: (root, path) => ({ root, path }) },
  { label: 'patch_file', tool: 'patch_file', follows: true, destroys: true, args: (root, path) => ({ root, path, patch: CREATE_PATCH }) },
  { label: 'create_folder', tool: 'create_folder', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  { label: 'remove_folder', tool: 'remove_folder', follows: false, destroys: true, args: (root, path) => ({ root, path }) },
  { label: 'stat_file', tool: 'stat_file', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  { label: 'hash_file', tool: 'hash_file', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  { label: 'permissions_file', tool: 'permissions_file', follows: true, destroys: false, args: (root, path) => ({ root, path }) },
  {
    label: 'copy (source)',
    tool: 'copy',
    follows: true,
    destroys: false,
    args: (root, path) => ({ source_root: root, source_path: path, dest_root: 'workspace', dest_path: 'copied' }),
  },
  {
    label: 'copy (destination)',
    tool: 'copy',
    follows: false,
    destroys: true,
    args: (root, path) => ({ source_root: 'workspace', source_path: 'sub', dest_root: root, dest_path: path, overwrite: true }),
  },
  {
    label: 'move (source)',
    tool: 'move',
    follows: false,
    destroys: true,
    args: (root, path) => ({ source_root: root, source_path: path, dest_root: 'workspace', dest_path: 'moved' }),
  },
  {
    label: 'move (destination)',
    tool: 'move',
    follows: false,
    destroys: true,
    args: (root, path) => ({ source_root: 'workspace', source_path: 'file.txt', dest_root: root, dest_path: path, overwrite: true }),
  },
  { label: 'grep', tool: 'grep', follows: true, destroys: false, args: (root, path) => ({ root, path, pattern: '.', context_lines: 2 }) },
  { label: 'glob', tool: 'glob', follows: true, destroys: false, args: (root, path) => ({ root, path, pattern: '*' }) },
];

const text = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

/** Any file in the workspace (links not followed) holding the sentinel token: something was brought in from outside. */
function workspaceHolds(dir: string, token: string): string | undefined {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    const stats = lstatSync(abs);
    if (stats.isDirectory()) {
      const found = workspaceHolds(abs, token);
      if (found) return found;
    } else if (stats.isFile() && readFileSync(abs, 'utf8').includes(token)) return abs;
  }
  return undefined;
}

const sha256 = (file: string) => (existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'absent');

let fx: Fixture;
let outsideBefore: string;
let passwdBefore: string;
const tally = { calls: 0, refused: 0, harmless: 0 };
beforeAll(() => {
  fx = makeFixture({ inMemory: true });
  outsideBefore = fx.snapshotOutside();
  passwdBefore = sha256('/etc/passwd');
});
afterAll(() => fx.cleanup());

describe('the escape corpus', () => {
  it('has at least 100 attempts', () => {
    expect(corpus(fx).length).toBeGreaterThanOrEqual(100);
  });

  it.each(VARIANTS.map((variant) => [variant.label, variant] as const))('%s: no attempt escapes', async (_label, variant) => {
    const tool = toolNamed(variant.tool)!;
    fx.resetWorkspace();
    for (const attempt of corpus(fx)) {
      const root = attempt.root ?? 'workspace';
      const result = await callTool(fx.sandbox, tool, variant.args(root, attempt.path));
      tally.calls += 1;
      const where = `${variant.label} ${attempt.label}: ${text(result).slice(0, 300)}`;

      // Nothing outside the writable roots changed (checked after every call of a tool that can write,
      // and after the whole run otherwise), nothing from outside was read or listed, no host path was shown.
      if (!tool.readOnly) expect(fx.snapshotOutside(), where).toBe(outsideBefore);
      expect(text(result), where).not.toContain(fx.token);
      expect(text(result), where).not.toContain(fx.base);
      expect(existsSync(fx.roots.workspace), where).toBe(true);

      const allowed = fx.sandbox.roots.get(root)?.allowed.has(variant.tool) ?? false;
      const mustRefuse =
        attempt.refuse === 'always' ||
        !allowed ||
        (attempt.refuse === 'follow' && variant.follows) ||
        (attempt.refuse === 'destroy' && variant.destroys);
      if (mustRefuse) expect(result.isError, where).toBe(true);
      if (result.isError) {
        tally.refused += 1;
      } else {
        tally.harmless += 1;
        expect(workspaceHolds(fx.roots.workspace, fx.token), where).toBeUndefined();
        // A success may have changed the workspace (inside the root, as allowed): start the next attempt afresh.
        if (!tool.readOnly) fx.resetWorkspace();
      }
    }
    expect(fx.snapshotOutside(), variant.label).toBe(outsideBefore);
  });

  it('left /etc/passwd alone and refused most attempts', () => {
    if (process.env.MCP_FS_TALLY)
      process.stderr.write(
        `escape corpus: ${corpus(fx).length} attempts x ${VARIANTS.length} tool variants = ${tally.calls} calls, ${tally.refused} refused, ${tally.harmless} harmless successes inside the root\n`,
      );
    expect(sha256('/etc/passwd')).toBe(passwdBefore);
    expect(tally.calls).toBe(VARIANTS.length * corpus(fx).length);
    expect(tally.refused).toBeGreaterThan(tally.harmless);
  });
});
