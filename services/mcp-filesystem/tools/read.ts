import { createHash } from 'node:crypto';
import { constants, readFileSync, type Stats } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { READ_ONLY_TOOLS, ROOT_TOOLS } from '../config.js';
import { fsError, ToolError } from '../errors.js';
import { entryType, isBinaryFile, realTarget } from '../files.js';
import type { ResolvedPath, Sandbox } from '../sandbox.js';
import { defineTool, pathArg, rootArg } from './registry.js';

/** The read-only tools: list_roots, list_folder, read_file, stat_file, hash_file, permissions_file. */

/** Resolves a path that must exist, following links. */
export async function existing(
  sandbox: Sandbox,
  root: string,
  path: string,
  tool: Parameters<Sandbox['root']>[1],
): Promise<ResolvedPath & { stats: Stats }> {
  const resolved = await sandbox.resolve(sandbox.root(root, tool), path, 'follow');
  if (!resolved.stats) throw new ToolError(`${resolved.shown} not found`);
  return resolved as ResolvedPath & { stats: Stats };
}

const shownRel = (rel: string) => (rel === '' ? '.' : rel);

export const listRoots = defineTool({
  name: 'list_roots',
  title: 'List roots',
  description:
    'List the configured roots (named folders this server can reach) and the tools each root allows. Every other tool takes a root name and a path relative to that root.',
  input: z.strictObject({}),
  readOnly: true,
  idempotent: true,
  async run(sandbox) {
    // Names and allowlists only: a root's host path is never shown.
    const roots = [...sandbox.roots.values()].map((root) => {
      const allowed = ROOT_TOOLS.filter((tool) => root.allowed.has(tool));
      return { name: root.name, allowed_tools: allowed, read_only: allowed.every((tool) => READ_ONLY_TOOLS.includes(tool)) };
    });
    return { roots, count: roots.length };
  },
});

/** What a link inside `root` points at, without ever naming a target outside it. */
async function linkTargetType(sandbox: Sandbox, root: ResolvedPath['root'], link: string): Promise<string> {
  const target = await realTarget(link);
  if ('problem' in target) return target.problem === 'missing' ? 'broken' : target.problem;
  if (!sandbox.contains(root, target.real)) return 'external';
  try {
    return entryType(await stat(target.real));
  } catch {
    return 'broken';
  }
}

export const listFolder = defineTool({
  name: 'list_folder',
  title: 'List folder',
  description:
    "List a folder's entries in name order: name, type (file, directory, symlink, other), size in bytes and modification time. " +
    'A symbolic link also shows target_type: file, directory, external (points outside the root; it cannot be followed), broken or loop.',
  input: z.strictObject({
    root: rootArg,
    path: pathArg('Folder to list').default('.'),
    max_entries: z.number().int().min(1).max(10_000).default(1000).describe('Most entries to return (default 1000)'),
  }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, { root, path, max_entries }) {
    const folder = await existing(sandbox, root, path, 'list_folder');
    if (!folder.stats.isDirectory()) throw new ToolError(`${folder.shown} is not a directory; use stat_file or read_file for files`);
    let names: string[];
    try {
      names = (await readdir(folder.abs)).sort();
    } catch (error) {
      throw fsError(error, folder.shown, 'list');
    }
    const entries: Array<Record<string, unknown>> = [];
    for (const name of names.slice(0, max_entries)) {
      const abs = join(folder.abs, name);
      let stats: Stats;
      try {
        stats = await lstat(abs);
      } catch {
        continue; // removed while listing
      }
      const type = entryType(stats);
      const entry: Record<string, unknown> = { name, type, size: type === 'file' ? stats.size : 0, modified_at: stats.mtime.toISOString() };
      if (type === 'symlink') entry.target_type = await linkTargetType(sandbox, folder.root, abs);
      entries.push(entry);
    }
    return { path: shownRel(folder.rel), entries, count: names.length, truncated: names.length > max_entries };
  },
});

const CHUNK = 64 * 1024;

interface LineRead {
  content: string;
  returned: number;
  total: number;
}

/**
 * Lines `first`… of a file (1-based), at most `count` of them and at most `maxBytes` bytes, each
 * with its own line ending; the whole file is scanned to count its lines, in fixed-size chunks.
 */
async function readLines(abs: string, first: number, count: number | undefined, maxBytes: number, shown: string): Promise<LineRead> {
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let returned = 0;
  let line = 1;
  let collecting = true;
  let current: Buffer[] = [];
  let currentBytes = 0;
  let pendingPartial = false;
  const wanted = (n: number) => collecting && n >= first && (count === undefined || n < first + count);
  const finishLine = () => {
    if (wanted(line)) {
      if (keptBytes + currentBytes > maxBytes) {
        if (returned === 0)
          throw new ToolError(
            `line ${line} of ${shown} is longer than max_full_read_size (${maxBytes} bytes); read it with offset_bytes/limit_bytes`,
          );
        collecting = false;
      } else {
        kept.push(...current);
        keptBytes += currentBytes;
        returned += 1;
      }
    }
    current = [];
    currentBytes = 0;
  };
  try {
    const buffer = Buffer.alloc(CHUNK);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(10, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        if (wanted(line)) {
          current.push(Buffer.from(chunk.subarray(start, end)));
          currentBytes += end - start;
          if (currentBytes > maxBytes && returned === 0)
            throw new ToolError(
              `line ${line} of ${shown} is longer than max_full_read_size (${maxBytes} bytes); read it with offset_bytes/limit_bytes`,
            );
          if (keptBytes + currentBytes > maxBytes) collecting = false;
        }
        if (newline === -1) {
          pendingPartial = true;
          start = chunk.length;
        } else {
          finishLine();
          pendingPartial = false;
          line += 1;
          start = end;
        }
      }
    }
    // A last line without a trailing newline is a line too.
    if (pendingPartial) {
      finishLine();
      line += 1;
    }
  } finally {
    await handle.close();
  }
  return { content: Buffer.concat(kept).toString('utf8'), returned, total: line - 1 };
}

export const readFile = defineTool({
  name: 'read_file',
  title: 'Read file',
  description:
    "Read a text file. With no offsets the whole file is returned, up to the server's max_full_read_size; larger files are read in parts, " +
    'either by bytes (offset_bytes from 0, limit_bytes) or by lines (offset_lines from 1, limit_lines) — not both. ' +
    'Binary files (a null byte in the first 8 KB) are refused for full and line reads; a byte-range read returns their bytes base64-encoded. ' +
    'truncated is true when more of the file follows what was returned; next_offset_bytes / next_offset_lines say where to continue.',
  input: z.strictObject({
    root: rootArg,
    path: pathArg('File to read'),
    offset_bytes: z.number().int().min(0).optional().describe('Byte offset to start at (0-based)'),
    limit_bytes: z.number().int().min(1).optional().describe('Most bytes to read (at most max_full_read_size)'),
    offset_lines: z.number().int().min(1).optional().describe('First line to return (1-based)'),
    limit_lines: z.number().int().min(1).optional().describe('Most lines to return'),
  }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, args) {
    const byBytes = args.offset_bytes !== undefined || args.limit_bytes !== undefined;
    const byLines = args.offset_lines !== undefined || args.limit_lines !== undefined;
    if (byBytes && byLines)
      throw new ToolError('offset_bytes/limit_bytes and offset_lines/limit_lines are mutually exclusive; read by bytes or by lines');
    const file = await existing(sandbox, args.root, args.path, 'read_file');
    if (file.stats.isDirectory()) throw new ToolError(`${file.shown} is a directory; use list_folder to see its entries`);
    if (!file.stats.isFile()) throw new ToolError(`${file.shown} is not a regular file`);
    const max = sandbox.maxFullReadSize;
    const size = file.stats.size;
    const path = shownRel(file.rel);
    try {
      const binary = await isBinaryFile(file.abs);
      if (byBytes) {
        const offset = args.offset_bytes ?? 0;
        if (args.limit_bytes !== undefined && args.limit_bytes > max)
          throw new ToolError(`limit_bytes is ${args.limit_bytes}; at most max_full_read_size (${max} bytes) can be read at once`);
        const limit = args.limit_bytes ?? max;
        const buffer = Buffer.alloc(Math.max(0, Math.min(limit, size - offset)));
        const handle = await open(file.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
        let bytesRead = 0;
        try {
          if (buffer.length > 0) ({ bytesRead } = await handle.read(buffer, 0, buffer.length, offset));
        } finally {
          await handle.close();
        }
        const eof = offset + bytesRead >= size;
        const bytes = buffer.subarray(0, bytesRead);
        return {
          path,
          content: binary ? bytes.toString('base64') : bytes.toString('utf8'),
          encoding: binary ? 'base64' : 'utf-8',
          binary,
          size,
          offset_bytes: offset,
          bytes_read: bytesRead,
          truncated: !eof,
          ...(eof ? {} : { next_offset_bytes: offset + bytesRead }),
        };
      }
      if (binary) {
        throw new ToolError(
          `${file.shown} is a binary file (it has a null byte in its first 8 KB); read a byte range with offset_bytes/limit_bytes to get its bytes base64-encoded`,
        );
      }
      if (byLines) {
        const first = args.offset_lines ?? 1;
        const lines = await readLines(file.abs, first, args.limit_lines, max, file.shown);
        const next = first + lines.returned;
        const eof = next > lines.total;
        return {
          path,
          content: lines.content,
          encoding: 'utf-8',
          binary: false,
          size,
          offset_lines: first,
          lines_returned: lines.returned,
          lines_total: lines.total,
          truncated: !eof,
          ...(eof ? {} : { next_offset_lines: next }),
        };
      }
      if (size > max) {
        throw new ToolError(
          `${file.shown} is too large for a full read: ${size} bytes, over max_full_read_size (${max} bytes); ` +
            'read it in parts with offset_bytes/limit_bytes or offset_lines/limit_lines',
        );
      }
      const handle = await open(file.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
      let content: Buffer;
      try {
        // One byte over the limit tells a file that grew since stat apart from one that did not.
        const buffer = Buffer.alloc(max + 1);
        let filled = 0;
        for (;;) {
          const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
          if (bytesRead === 0 || filled + bytesRead === buffer.length) {
            filled += bytesRead;
            break;
          }
          filled += bytesRead;
        }
        if (filled > max)
          throw new ToolError(`${file.shown} grew past max_full_read_size (${max} bytes) while being read; read it in parts`);
        content = buffer.subarray(0, filled);
      } finally {
        await handle.close();
      }
      return { path, content: content.toString('utf8'), encoding: 'utf-8', binary: false, size: content.length, truncated: false };
    } catch (error) {
      throw fsError(error, file.shown, 'read');
    }
  },
});

export const statFile = defineTool({
  name: 'stat_file',
  title: 'File metadata',
  description:
    'Metadata of a file or folder: type, size in bytes, modification, access and creation times, permission bits. A symbolic link inside the root is followed: the result describes its target, whose root-relative path is `path`.',
  input: z.strictObject({ root: rootArg, path: pathArg('File or folder') }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, { root, path }) {
    const entry = await existing(sandbox, root, path, 'stat_file');
    const { stats } = entry;
    return {
      path: shownRel(entry.rel),
      name: entry.rel === '' ? '.' : basename(entry.abs),
      type: entryType(stats),
      is_directory: stats.isDirectory(),
      size: stats.size,
      modified_at: stats.mtime.toISOString(),
      accessed_at: stats.atime.toISOString(),
      created_at: stats.birthtime.toISOString(),
      mode: octalMode(stats.mode),
    };
  },
});

const HASHES = ['md5', 'sha1', 'sha256'] as const;

export const hashFile = defineTool({
  name: 'hash_file',
  title: 'Hash file',
  description: "Hex digest of a file's bytes with md5, sha1 or sha256 (default sha256). The file is streamed, so any size works.",
  input: z.strictObject({
    root: rootArg,
    path: pathArg('File to hash'),
    algorithm: z.enum(HASHES).default('sha256').describe('md5, sha1 or sha256'),
  }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, { root, path, algorithm }) {
    const file = await existing(sandbox, root, path, 'hash_file');
    if (file.stats.isDirectory()) throw new ToolError(`${file.shown} is a directory; hash_file hashes files`);
    if (!file.stats.isFile()) throw new ToolError(`${file.shown} is not a regular file`);
    const hash = createHash(algorithm);
    try {
      const handle = await open(file.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        await pipeline(handle.createReadStream({ autoClose: false }), hash);
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw fsError(error, file.shown, 'hash');
    }
    return { path: shownRel(file.rel), algorithm, hash: hash.digest('hex'), size: file.stats.size };
  },
});

function octalMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** `drwxr-x---` as `ls -l` shows it, set-id and sticky bits included. */
function symbolicMode(stats: Stats): string {
  const mode = stats.mode;
  const type = stats.isDirectory() ? 'd' : stats.isSymbolicLink() ? 'l' : stats.isFile() ? '-' : '?';
  const triplet = (shift: number, special: number, specialChar: string) => {
    const r = mode & (4 << shift) ? 'r' : '-';
    const w = mode & (2 << shift) ? 'w' : '-';
    const executable = mode & (1 << shift);
    const x = mode & special ? (executable ? specialChar : specialChar.toUpperCase()) : executable ? 'x' : '-';
    return r + w + x;
  };
  return type + triplet(6, 0o4000, 's') + triplet(3, 0o2000, 's') + triplet(0, 0o1000, 't');
}

/** uid/gid → name from the host's account databases, read once; numbers when a name is unknown. */
const accountNames = (() => {
  let cache: { users: Map<number, string>; groups: Map<number, string> } | undefined;
  const parse = (file: string) => {
    const names = new Map<number, string>();
    try {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const [name, , id] = line.split(':');
        if (name && id !== undefined && /^\d+$/.test(id) && !names.has(Number(id))) names.set(Number(id), name);
      }
    } catch {
      // no account database (a minimal container): numeric ids it is
    }
    return names;
  };
  return () => (cache ??= { users: parse('/etc/passwd'), groups: parse('/etc/group') });
})();

export const permissionsFile = defineTool({
  name: 'permissions_file',
  title: 'File permissions',
  description:
    'Owner, group and permission bits of a file or folder: mode as octal ("0755"), permissions as ls shows them ("-rwxr-xr-x"), owner and group names with their numeric ids.',
  input: z.strictObject({ root: rootArg, path: pathArg('File or folder') }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, { root, path }) {
    const entry = await existing(sandbox, root, path, 'permissions_file');
    const { stats } = entry;
    const { users, groups } = accountNames();
    return {
      path: shownRel(entry.rel),
      mode: octalMode(stats.mode),
      permissions: symbolicMode(stats),
      owner: users.get(stats.uid) ?? String(stats.uid),
      group: groups.get(stats.gid) ?? String(stats.gid),
      uid: stats.uid,
      gid: stats.gid,
    };
  },
});
