import type { Stats } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { ROOT_TOOLS, type FilesystemConfig, type RootConfig, type RootToolName } from './config.js';
import { fsError, showPath, ToolError } from './errors.js';
import { ReadWriteLock } from './lock.js';

/**
 * Path resolution: the security core of mcp-filesystem.
 *
 * A tool names a root and a path inside it. The path is a `/`-separated string relative to the
 * root; a leading `/` means the root too (chroot-like). Resolution:
 *
 * 1. refuses null bytes and over-long input;
 * 2. cleans the path lexically — `.` and empty segments drop out, `..` removes the previous
 *    segment, and a `..` with nothing left to remove is refused (it would climb above the root).
 *    Nothing is decoded: `%2e%2e%2f` and `..\` are ordinary file names on POSIX, and so are Unicode
 *    look-alikes of `.` and `/` (no normalisation turns them into real dots or slashes);
 * 3. walks the cleaned segments down from the root's real path with `lstat`; each symbolic link on
 *    the way is resolved with `realpath`, and the walk goes on from its real target only when that
 *    target is inside **the same root** (a link into another root would bypass that root's
 *    `allowed_tools`); dangling links and link loops are refused;
 * 4. at the first segment that does not exist, the rest is appended as plain names under the
 *    nearest existing (real, checked) ancestor — they contain no links and no `..`.
 *
 * `follow` mode resolves the final segment too (reads and writes act on a link's target);
 * `entry` mode stops at it, so remove and move act on a link itself, never on what it points to.
 */

/** Linux PATH_MAX: no real path is longer, so no longer input can name anything. */
export const MAX_PATH_LENGTH = 4096;
/** NAME_MAX in bytes on every common Linux filesystem. */
const MAX_NAME_BYTES = 255;

const ROOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export type ResolveMode = 'follow' | 'entry';

export interface ResolvedPath {
  root: RootConfig;
  /** Absolute host path; never shown to a caller. */
  abs: string;
  /** Root-relative, `/`-separated; `''` is the root itself. */
  rel: string;
  /** `root:rel`, the only form in which a path appears in results and messages. */
  shown: string;
  /** The `lstat` of `abs` when it exists (in follow mode `abs` is already the real target). */
  stats: Stats | undefined;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The segments of `input` after lexical cleaning, or a refusal. */
export function cleanSegments(input: string, rootName: string): string[] {
  if (typeof input !== 'string') throw new ToolError('path must be a string');
  if (input.includes('\0')) throw new ToolError('path contains a null byte; null bytes are never valid in a path');
  if (input.length > MAX_PATH_LENGTH)
    throw new ToolError(`path is ${input.length} characters long; at most ${MAX_PATH_LENGTH} are allowed`);
  const segments: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) throw new ToolError(`path is outside root "${rootName}": ".." climbs above the root`);
      segments.pop();
      continue;
    }
    if (Buffer.byteLength(segment) > MAX_NAME_BYTES) throw new ToolError(`a name in the path is longer than ${MAX_NAME_BYTES} bytes`);
    segments.push(segment);
  }
  return segments;
}

export class Sandbox {
  readonly roots: ReadonlyMap<string, RootConfig>;
  readonly maxFullReadSize: number;
  /** Serialises mutating calls against everything else (see lock.ts). */
  readonly lock = new ReadWriteLock();

  constructor(config: Pick<FilesystemConfig, 'roots' | 'max_full_read_size'>) {
    this.roots = new Map(config.roots.map((root) => [root.name, root]));
    this.maxFullReadSize = config.max_full_read_size;
  }

  /** The root called `name`, when it allows `tool`. */
  root(name: string, tool: RootToolName): RootConfig {
    const root = this.roots.get(name);
    if (!root) {
      // Only a name that could be a root name is repeated back: a path given as a root is not echoed.
      const named = ROOT_NAME.test(name) ? `unknown root "${name}"` : 'unknown root (a root is named, not given as a path)';
      throw new ToolError(`${named}; the roots are ${[...this.roots.keys()].map((n) => `"${n}"`).join(', ')} (see list_roots)`);
    }
    if (!root.allowed.has(tool)) {
      const allowed = ROOT_TOOLS.filter((t) => root.allowed.has(t));
      throw new ToolError(`${tool} is not allowed in root "${root.name}" (it allows ${allowed.length ? allowed.join(', ') : 'no tools'})`);
    }
    return root;
  }

  /** True when `abs` (a real path) is the root's folder or lies below it. */
  contains(root: RootConfig, abs: string): boolean {
    if (abs === root.real) return true;
    const prefix = root.real.endsWith(sep) ? root.real : root.real + sep;
    return abs.startsWith(prefix);
  }

  /** Root-relative `/` form of an absolute path known to be inside `root`. */
  relativeTo(root: RootConfig, abs: string): string {
    return relative(root.real, abs).split(sep).join('/');
  }

  show(root: RootConfig, abs: string): string {
    return showPath(root.name, this.relativeTo(root, abs));
  }

  /** Resolves `input` inside `root`; see the module comment for the rules. */
  async resolve(root: RootConfig, input: string, mode: ResolveMode): Promise<ResolvedPath> {
    const segments = cleanSegments(input, root.name);
    const walked = mode === 'follow' ? segments : segments.slice(0, -1);
    let current = root.real;
    for (let index = 0; index < walked.length; index += 1) {
      const next = join(current, walked[index]!);
      let stats: Stats;
      try {
        stats = await lstat(next);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return this.missing(root, join(current, ...segments.slice(index)));
        throw fsError(error, showPath(root.name, segments.slice(0, index + 1).join('/')), 'reach');
      }
      if (stats.isSymbolicLink()) {
        current = await this.followLink(root, next, segments.slice(0, index + 1).join('/'));
      } else {
        current = next;
      }
    }
    if (mode === 'entry' && segments.length > 0) {
      const entry = join(current, segments[segments.length - 1]!);
      try {
        const stats = await lstat(entry);
        return this.found(root, entry, stats);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return this.missing(root, entry);
        throw fsError(error, this.show(root, entry), 'reach');
      }
    }
    try {
      return this.found(root, current, await lstat(current));
    } catch (error) {
      // The root folder itself vanished, or changed under us.
      if (errnoCode(error) === 'ENOENT') return this.missing(root, current);
      throw fsError(error, this.show(root, current), 'reach');
    }
  }

  /** The real target of the link at `link`, when it exists and lies inside `root`. */
  private async followLink(root: RootConfig, link: string, requested: string): Promise<string> {
    let target: string;
    try {
      target = await realpath(link);
    } catch (error) {
      const code = errnoCode(error);
      const shown = showPath(root.name, requested);
      if (code === 'ELOOP') throw new ToolError(`${shown} is a symbolic link loop; it was refused`);
      if (code === 'ENOENT' || code === 'ENOTDIR')
        throw new ToolError(`${shown} is a symbolic link whose target does not exist; it was refused`);
      throw fsError(error, shown, 'resolve');
    }
    // The target is not named: it may be a host path outside every root.
    if (!this.contains(root, target))
      throw new ToolError(
        `path is outside root "${root.name}": ${showPath(root.name, requested)} is a symbolic link that leads outside the root`,
      );
    return target;
  }

  private found(root: RootConfig, abs: string, stats: Stats): ResolvedPath {
    const rel = this.relativeTo(root, abs);
    return { root, abs, rel, shown: showPath(root.name, rel), stats };
  }

  private missing(root: RootConfig, abs: string): ResolvedPath {
    const rel = this.relativeTo(root, abs);
    return { root, abs, rel, shown: showPath(root.name, rel), stats: undefined };
  }
}
