import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFilesystemConfig, type FilesystemConfig } from '../config.js';
import { Sandbox } from '../sandbox.js';

/**
 * A temporary tree for the tests, with sentinels outside the roots:
 *
 * ```
 * base/
 *   top-secret.txt                 sentinel beside the roots
 *   outside/                       sentinel tree, reachable only by escaping
 *     secret.txt  sub/deep.txt  SENTINEL_<token>.txt
 *   roots/
 *     workspace/  (every tool)     file.txt, sub/, links in, out, dangling, loops (see resetWorkspace)
 *     readonly/   (read tools)     readme.txt
 *     restricted/ (list_folder)    hidden.txt
 *     dest/       (every tool)     empty
 * ```
 *
 * Every sentinel holds `token`, a random string: a result containing it leaked something from
 * outside the roots.
 */
export interface Fixture {
  base: string;
  outside: string;
  roots: { workspace: string; readonly: string; restricted: string; dest: string };
  token: string;
  config: FilesystemConfig;
  sandbox: Sandbox;
  /** Puts the workspace back as it was made (after a test changed it). */
  resetWorkspace(): void;
  /** Everything outside the workspace and dest roots, as comparable text. */
  snapshotOutside(): string;
  /** The YAML of this fixture's config, written to `base/config.yaml`. */
  configFile: string;
  cleanup(): void;
}

/** tmpfs where there is one: the escape corpus rebuilds the workspace hundreds of times. */
function scratchDir(inMemory: boolean): string {
  if (inMemory) {
    try {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    } catch {
      // no tmpfs: the ordinary temporary folder
    }
  }
  return tmpdir();
}

export function makeFixture(options: { maxFullReadSize?: number; inMemory?: boolean } = {}): Fixture {
  const base = realpathSync(mkdtempSync(join(scratchDir(options.inMemory ?? false), 'mcp-fs-')));
  const token = `TOKEN${randomBytes(8).toString('hex')}`;
  const outside = join(base, 'outside');
  const roots = {
    workspace: join(base, 'roots', 'workspace'),
    readonly: join(base, 'roots', 'readonly'),
    restricted: join(base, 'roots', 'restricted'),
    dest: join(base, 'roots', 'dest'),
  };
  mkdirSync(join(outside, 'sub'), { recursive: true });
  writeFileSync(join(base, 'top-secret.txt'), `top ${token}\n`);
  writeFileSync(join(outside, 'secret.txt'), `secret ${token}\n`);
  writeFileSync(join(outside, 'sub', 'deep.txt'), `deep ${token}\n`);
  writeFileSync(join(outside, `SENTINEL_${token}.txt`), `named ${token}\n`);
  for (const dir of Object.values(roots)) mkdirSync(dir, { recursive: true });
  writeFileSync(join(roots.readonly, 'readme.txt'), 'read me\n');
  writeFileSync(join(roots.restricted, 'hidden.txt'), 'restricted\n');

  const resetWorkspace = () => {
    const ws = roots.workspace;
    // unlink for everything but folders: rmSync's recursive walk is slow on symbolic links.
    for (const name of readdirSync(ws)) {
      const abs = join(ws, name);
      if (lstatSync(abs).isDirectory()) rmSync(abs, { recursive: true, force: true });
      else unlinkSync(abs);
    }
    mkdirSync(join(ws, 'sub', 'inner'), { recursive: true });
    writeFileSync(join(ws, 'file.txt'), 'hello workspace\n');
    writeFileSync(join(ws, 'sub', 'note.md'), '# note\nline two\n');
    writeFileSync(join(ws, 'sub', 'inner', 'deep.txt'), 'deep inside\n');
    const link = (target: string, name: string) => symlinkSync(target, join(ws, name));
    link(join(ws, 'file.txt'), 'link_in_file');
    link('sub', 'link_in_dir');
    link(join(ws, 'file.txt'), 'link_abs_in');
    link(join(outside, 'secret.txt'), 'link_out_file');
    link(outside, 'link_out_dir');
    link('../../outside', 'link_out_rel');
    link('..', 'link_root_parent');
    link(roots.readonly, 'link_other_root');
    link(join(outside, 'not-there-yet.txt'), 'link_dangling_out');
    link('nothing-here.txt', 'link_dangling_in');
    link('link_loop_b', 'link_loop_a');
    link('link_loop_a', 'link_loop_b');
    link('link_self', 'link_self');
    link('link_out_dir', 'link_chain_out');
    link('.', 'link_to_root');
    link('/proc/self/root', 'link_proc');
    link('/dev/zero', 'link_dev_zero');
    link(base, 'link_base');
    symlinkSync('../..', join(ws, 'sub', 'link_up'));
  };
  resetWorkspace();

  const snapshotOutside = () => {
    const lines: string[] = [];
    const visit = (dir: string, rel: string) => {
      for (const name of readdirSync(dir).sort()) {
        const abs = join(dir, name);
        const path = rel ? `${rel}/${name}` : name;
        if (abs === roots.workspace || abs === roots.dest) continue;
        const stats = lstatSync(abs);
        if (stats.isSymbolicLink()) lines.push(`${path} -> ${readlinkSync(abs)}`);
        else if (stats.isDirectory()) {
          lines.push(`${path}/ ${stats.mode.toString(8)}`);
          visit(abs, path);
        } else lines.push(`${path} ${stats.mode.toString(8)} ${stats.size} ${readFileSync(abs, 'utf8')}`);
      }
    };
    visit(base, '');
    return lines.join('\n');
  };

  const maxFullReadSize = options.maxFullReadSize ?? 1_048_576;
  const configFile = join(base, 'config.yaml');
  writeFileSync(
    configFile,
    [
      'host: 127.0.0.1',
      'port: 0',
      `max_full_read_size: ${maxFullReadSize}`,
      'roots:',
      `  - { name: workspace, path: ${JSON.stringify(roots.workspace)}, allowed_tools: ["*"] }`,
      `  - { name: readonly, path: ${JSON.stringify(roots.readonly)}, allowed_tools: [read_file, list_folder, stat_file, grep, glob] }`,
      `  - { name: restricted, path: ${JSON.stringify(roots.restricted)}, allowed_tools: [list_folder] }`,
      `  - { name: dest, path: ${JSON.stringify(roots.dest)}, allowed_tools: ["*"] }`,
      '',
    ].join('\n'),
  );
  const config = parseFilesystemConfig(
    {
      max_full_read_size: maxFullReadSize,
      roots: [
        { name: 'workspace', path: roots.workspace, allowed_tools: ['*'] },
        { name: 'readonly', path: roots.readonly, allowed_tools: ['read_file', 'list_folder', 'stat_file', 'grep', 'glob'] },
        { name: 'restricted', path: roots.restricted, allowed_tools: ['list_folder'] },
        { name: 'dest', path: roots.dest, allowed_tools: ['*'] },
      ],
    },
    'fixture.yaml',
  );
  // The snapshot is taken after the config file exists, so it is part of the "outside" picture.
  return {
    base,
    outside,
    roots,
    token,
    config,
    sandbox: new Sandbox(config),
    resetWorkspace,
    snapshotOutside,
    configFile,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}
