import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readdir, readlink, realpath, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** Filesystem steps the tools share. Paths here are absolute and already checked by the sandbox. */

/** A file is binary when its first 8 KB hold a null byte. */
const BINARY_SNIFF_BYTES = 8192;

export function looksBinary(head: Buffer): boolean {
  return head.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

export async function isBinaryFile(abs: string): Promise<boolean> {
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const head = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return looksBinary(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export function entryType(stats: Stats): EntryType {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  return 'other';
}

/** A name for a temporary sibling of `abs`, hidden and unlikely to collide. */
export function temporarySibling(abs: string): string {
  return join(dirname(abs), `.${basename(abs).slice(0, 64)}.${randomBytes(6).toString('hex')}.asg-tmp`);
}

/**
 * Replaces the file at `abs` with `data` atomically: written to a sibling, flushed, then renamed
 * over the target, so a reader sees the old bytes or the new, never half of each. An existing
 * file's permission bits are kept.
 */
export async function writeFileAtomic(abs: string, data: Buffer | string, mode?: number): Promise<void> {
  const temp = temporarySibling(abs);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    if (mode !== undefined) await chmod(temp, mode & 0o7777);
    await rename(temp, abs);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export interface CopyReport {
  files: number;
  folders: number;
  symlinks: number;
  /** Root-relative paths (as the caller shows them) of entries left out, with the reason. */
  skipped: Array<{ path: string; reason: string }>;
}

export interface CopyOptions {
  /**
   * Whether a symbolic link met inside a copied folder may be recreated at the destination.
   * Links are never followed inside a tree; they are copied as links (the same target text) or
   * left out. Returns a reason to leave the link out, or undefined to copy it.
   */
  linkPolicy: (link: string, target: string) => Promise<string | undefined>;
  /** How to name an absolute source path in the report. */
  show: (abs: string) => string;
}

/**
 * Copies the file or folder at `from` (a real path, not a link) to `to`, which must not exist.
 * Folders are copied recursively without following links; special files (sockets, FIFOs,
 * devices) are left out.
 */
export async function copyTree(from: string, to: string, options: CopyOptions): Promise<CopyReport> {
  const report: CopyReport = { files: 0, folders: 0, symlinks: 0, skipped: [] };
  const copyEntry = async (source: string, target: string, stats: Stats): Promise<void> => {
    if (stats.isDirectory()) {
      await mkdir(target, { mode: stats.mode & 0o7777 });
      report.folders += 1;
      const names = (await readdir(source)).sort();
      for (const name of names) {
        const child = join(source, name);
        await copyEntry(child, join(target, name), await lstat(child));
      }
      // Restored after the children: a read-only folder would refuse them.
      await chmod(target, stats.mode & 0o7777);
    } else if (stats.isFile()) {
      await copyFile(source, target, constants.COPYFILE_EXCL);
      report.files += 1;
    } else if (stats.isSymbolicLink()) {
      const text = await readlink(source);
      const refusal = await options.linkPolicy(source, text);
      if (refusal) {
        report.skipped.push({ path: options.show(source), reason: refusal });
        return;
      }
      await symlink(text, target);
      report.symlinks += 1;
    } else {
      report.skipped.push({ path: options.show(source), reason: 'not a regular file, folder or symbolic link' });
    }
  };
  await copyEntry(from, to, await lstat(from));
  return report;
}

/** Where a link's target really is, or why it cannot be said (dangling, a loop). */
export async function realTarget(link: string): Promise<{ real: string } | { problem: 'missing' | 'loop' | 'unreadable' }> {
  try {
    return { real: await realpath(link) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { problem: 'loop' };
    if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: 'missing' };
    return { problem: 'unreadable' };
  }
}

/** `target` (a link's text) made absolute against the folder holding the link, without resolving links. */
export function lexicalTarget(link: string, target: string): string {
  return resolve(dirname(link), target);
}
