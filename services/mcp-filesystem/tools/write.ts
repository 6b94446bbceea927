import { constants } from 'node:fs';
import { mkdir, open, readFile, rm, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { fsError, ToolError } from '../errors.js';
import { looksBinary, writeFileAtomic } from '../files.js';
import { applyUnifiedDiff, parseUnifiedDiff } from '../patch.js';
import type { ResolvedPath } from '../sandbox.js';
import { defineTool, pathArg, rootArg } from './registry.js';

/** The destructive tools acting in one root: write_file, remove_file, patch_file, create_folder, remove_folder. */

const shownRel = (rel: string) => (rel === '' ? '.' : rel);

/** Creates the missing folders above a file about to be written (write_file creates parents, as clients of the server expect). */
async function ensureParent(target: ResolvedPath): Promise<void> {
  try {
    await mkdir(dirname(target.abs), { recursive: true });
  } catch (error) {
    throw fsError(error, target.shown, 'create the folders above');
  }
}

function refuseNonFile(target: ResolvedPath, tool: string): void {
  if (target.rel === '' || target.stats?.isDirectory()) throw new ToolError(`${target.shown} is a directory; ${tool} writes files`);
  if (target.stats && !target.stats.isFile()) throw new ToolError(`${target.shown} is not a regular file`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const writeFile = defineTool({
  name: 'write_file',
  title: 'Write file',
  description:
    'Write text to a file, creating missing parent folders. mode: overwrite (default; replaces the file atomically), append (adds to the end, creating the file if needed), ' +
    'create_only (fails if the file already exists).',
  input: z.strictObject({
    root: rootArg,
    path: pathArg('File to write'),
    content: z.string().describe('Text to write (UTF-8)'),
    mode: z.enum(['overwrite', 'append', 'create_only']).default('overwrite').describe('overwrite (default), append or create_only'),
  }),
  readOnly: false,
  idempotent: false,
  async run(sandbox, { root, path, content, mode }) {
    const target = await sandbox.resolve(sandbox.root(root, 'write_file'), path, 'follow');
    refuseNonFile(target, 'write_file');
    if (mode === 'create_only' && target.stats)
      throw new ToolError(`${target.shown} already exists; create_only never replaces a file (use overwrite or append)`);
    await ensureParent(target);
    const data = Buffer.from(content, 'utf8');
    try {
      if (mode === 'overwrite') {
        await writeFileAtomic(target.abs, data, target.stats?.mode);
      } else {
        const flags =
          constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (mode === 'append' ? constants.O_APPEND : constants.O_EXCL);
        const handle = await open(target.abs, flags, 0o666);
        try {
          await handle.writeFile(data);
        } finally {
          await handle.close();
        }
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && mode === 'create_only')
        throw new ToolError(`${target.shown} already exists; create_only never replaces a file`);
      throw fsError(error, target.shown, 'write');
    }
    return { path: shownRel(target.rel), mode, bytes_written: data.length, created: target.stats === undefined };
  },
});

export const removeFile = defineTool({
  name: 'remove_file',
  title: 'Remove file',
  description: 'Delete one file. A symbolic link is removed itself, never its target. Folders are removed with remove_folder.',
  input: z.strictObject({ root: rootArg, path: pathArg('File to delete') }),
  readOnly: false,
  idempotent: false,
  async run(sandbox, { root, path }) {
    const target = await sandbox.resolve(sandbox.root(root, 'remove_file'), path, 'entry');
    if (target.rel === '') throw new ToolError(`${target.shown} is the root itself; a root can never be removed`);
    if (!target.stats) throw new ToolError(`${target.shown} not found`);
    if (target.stats.isDirectory()) throw new ToolError(`${target.shown} is a directory; use remove_folder for folders`);
    try {
      await unlink(target.abs);
    } catch (error) {
      throw fsError(error, target.shown, 'remove');
    }
    return { path: shownRel(target.rel), removed: true, type: target.stats.isSymbolicLink() ? 'symlink' : 'file' };
  },
});

export const patchFile = defineTool({
  name: 'patch_file',
  title: 'Patch file',
  description:
    'Apply a unified diff (as `diff -u` or `git diff` write it) to one text file, atomically: every hunk applies or the file is left unchanged. ' +
    'A hunk not found at its stated line is looked for nearby; its context and removed lines must match exactly. ' +
    'A patch from "--- /dev/null" creates the file.',
  input: z.strictObject({
    root: rootArg,
    path: pathArg('File to patch'),
    patch: z.string().min(1).describe('The unified diff: optional ---/+++ headers, then @@ -a,b +c,d @@ hunks'),
  }),
  readOnly: false,
  idempotent: false,
  async run(sandbox, { root, path, patch }) {
    const target = await sandbox.resolve(sandbox.root(root, 'patch_file'), path, 'follow');
    refuseNonFile(target, 'patch_file');
    let original: string | undefined;
    if (target.stats) {
      if (target.stats.size > sandbox.maxFullReadSize)
        throw new ToolError(
          `${target.shown} is too large to patch: ${target.stats.size} bytes, over max_full_read_size (${sandbox.maxFullReadSize} bytes)`,
        );
      let bytes: Buffer;
      try {
        bytes = await readFile(target.abs);
      } catch (error) {
        throw fsError(error, target.shown, 'read');
      }
      if (looksBinary(bytes)) throw new ToolError(`${target.shown} is a binary file; patch_file edits text`);
      try {
        original = utf8.decode(bytes);
      } catch {
        throw new ToolError(`${target.shown} is not valid UTF-8; patch_file edits UTF-8 text only`);
      }
    }
    const outcome = applyUnifiedDiff(original, parseUnifiedDiff(patch), target.shown);
    if (!target.stats) await ensureParent(target);
    try {
      await writeFileAtomic(target.abs, outcome.content, target.stats?.mode);
    } catch (error) {
      throw fsError(error, target.shown, 'write');
    }
    return {
      path: shownRel(target.rel),
      hunks_applied: outcome.hunksApplied,
      lines_added: outcome.linesAdded,
      lines_removed: outcome.linesRemoved,
      offsets: outcome.offsets,
      created: target.stats === undefined,
    };
  },
});

export const createFolder = defineTool({
  name: 'create_folder',
  title: 'Create folder',
  description: 'Create a folder and any missing parents. Idempotent: an existing folder is not an error (created is then false).',
  input: z.strictObject({ root: rootArg, path: pathArg('Folder to create') }),
  readOnly: false,
  idempotent: true,
  async run(sandbox, { root, path }) {
    const target = await sandbox.resolve(sandbox.root(root, 'create_folder'), path, 'follow');
    if (target.stats) {
      if (target.stats.isDirectory()) return { path: shownRel(target.rel), created: false };
      throw new ToolError(`${target.shown} exists as a file; choose another name or remove the file first`);
    }
    try {
      await mkdir(target.abs, { recursive: true });
    } catch (error) {
      throw fsError(error, target.shown, 'create');
    }
    return { path: shownRel(target.rel), created: true };
  },
});

export const removeFolder = defineTool({
  name: 'remove_folder',
  title: 'Remove folder',
  description: 'Delete a folder and everything in it. Links inside are removed, never followed. A root itself can never be removed.',
  input: z.strictObject({ root: rootArg, path: pathArg('Folder to delete') }),
  readOnly: false,
  idempotent: false,
  async run(sandbox, { root, path }) {
    const target = await sandbox.resolve(sandbox.root(root, 'remove_folder'), path, 'entry');
    if (target.rel === '')
      throw new ToolError(
        `cannot remove root directory "${target.root.name}"; a root can never be removed (remove what is inside it instead)`,
      );
    if (!target.stats) throw new ToolError(`${target.shown} not found`);
    if (target.stats.isSymbolicLink()) throw new ToolError(`${target.shown} is a symbolic link; use remove_file to remove the link itself`);
    if (!target.stats.isDirectory()) throw new ToolError(`${target.shown} is a file, not a directory; use remove_file for files`);
    try {
      await rm(target.abs, { recursive: true });
    } catch (error) {
      throw fsError(error, target.shown, 'remove');
    }
    return { path: shownRel(target.rel), removed: true };
  },
});
