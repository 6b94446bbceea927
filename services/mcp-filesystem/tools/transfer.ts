import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
import { z } from 'zod';
import type { RootConfig } from '../config.js';
import { fsError, ToolError } from '../errors.js';
import { copyTree, lexicalTarget, realTarget, temporarySibling, type CopyOptions, type CopyReport } from '../files.js';
import type { ResolvedPath, Sandbox } from '../sandbox.js';
import { defineTool, pathArg, rootArg } from './registry.js';

/**
 * copy and move, within a root or across two. Both roots must allow the tool: a copy out of a
 * root that does not allow `copy` is refused as firmly as a copy into one.
 */

const transferInput = z.strictObject({
  source_root: rootArg.describe('Root the source is in'),
  source_path: pathArg('File or folder to take'),
  dest_root: rootArg.describe('Root to put it in (may be the same root)'),
  dest_path: pathArg('Where to put it: the new path itself, not a folder to put it into'),
  overwrite: z.boolean().default(false).describe('Replace an existing destination (default false: an existing destination is an error)'),
});

const shownRel = (rel: string) => (rel === '' ? '.' : rel);

function inside(ancestor: string, abs: string): boolean {
  return abs.startsWith(ancestor.endsWith(sep) ? ancestor : ancestor + sep);
}

/** Refuses a destination that is a root, or that exists when overwriting was not asked for. */
function checkDestination(dest: ResolvedPath, overwrite: boolean): void {
  if (dest.rel === '') throw new ToolError(`${dest.shown} is the root itself; a root can never be replaced — name a path inside it`);
  if (dest.stats && !overwrite) throw new ToolError(`${dest.shown} already exists; pass overwrite: true to replace it`);
}

/**
 * Links met inside a copied folder are recreated only when they lead inside the source root, so a
 * copy never plants a way out of the sandbox (nor into another root) where there was none.
 */
function linkPolicy(sandbox: Sandbox, root: RootConfig): CopyOptions['linkPolicy'] {
  return async (link, text) => {
    const target = await realTarget(link);
    if ('problem' in target) {
      // A dangling link is kept only when its text stays inside the root.
      return sandbox.contains(root, lexicalTarget(link, text)) ? undefined : 'a symbolic link whose target is missing and outside the root';
    }
    return sandbox.contains(root, target.real) ? undefined : 'a symbolic link that leads outside the root';
  };
}

async function copyInto(sandbox: Sandbox, source: ResolvedPath, dest: ResolvedPath, overwrite: boolean): Promise<CopyReport> {
  // Copied next to the destination first, then renamed into place: a failed copy leaves no half tree.
  const staging = temporarySibling(dest.abs);
  let report: CopyReport;
  try {
    report = await copyTree(source.abs, staging, {
      linkPolicy: linkPolicy(sandbox, source.root),
      show: (abs) => shownRel(sandbox.relativeTo(source.root, abs)),
    });
    if (dest.stats && overwrite) await rm(dest.abs, { recursive: true });
    await rename(staging, dest.abs);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return report;
}

export const copy = defineTool({
  name: 'copy',
  title: 'Copy',
  description:
    'Copy a file or a folder (recursively) to a new path, in the same root or another one; missing parent folders are created. ' +
    'Both roots must allow copy. Symbolic links inside a copied folder are copied as links when they stay inside the source root, and left out (listed in skipped) otherwise.',
  input: transferInput,
  readOnly: false,
  idempotent: false,
  async run(sandbox, args) {
    const sourceRoot = sandbox.root(args.source_root, 'copy');
    const destRoot = sandbox.root(args.dest_root, 'copy');
    const source = await sandbox.resolve(sourceRoot, args.source_path, 'follow');
    if (!source.stats) throw new ToolError(`${source.shown} not found`);
    if (!source.stats.isFile() && !source.stats.isDirectory()) throw new ToolError(`${source.shown} is not a regular file or folder`);
    const dest = await sandbox.resolve(destRoot, args.dest_path, 'entry');
    checkDestination(dest, args.overwrite);
    if (source.stats.isDirectory() && (dest.abs === source.abs || inside(source.abs, dest.abs)))
      throw new ToolError(`cannot copy folder ${source.shown} into itself (${dest.shown})`);
    if (dest.abs === source.abs) throw new ToolError(`${source.shown} and ${dest.shown} are the same file`);
    try {
      await mkdir(dirname(dest.abs), { recursive: true });
    } catch (error) {
      throw fsError(error, dest.shown, 'create the folders above');
    }
    let report: CopyReport;
    try {
      report = await copyInto(sandbox, source, dest, args.overwrite);
    } catch (error) {
      throw fsError(error, dest.shown, `copy ${source.shown} to`);
    }
    return {
      source: source.shown,
      destination: dest.shown,
      type: source.stats.isDirectory() ? 'directory' : 'file',
      files_copied: report.files,
      folders_copied: report.folders,
      symlinks_copied: report.symlinks,
      skipped: report.skipped,
      replaced: dest.stats !== undefined,
    };
  },
});

export const move = defineTool({
  name: 'move',
  title: 'Move',
  description:
    'Move or rename a file or folder, in the same root or into another one; missing parent folders are created. Both roots must allow move. ' +
    'A symbolic link is moved itself, not its target. A root itself can never be moved.',
  input: transferInput,
  readOnly: false,
  idempotent: false,
  async run(sandbox, args) {
    const sourceRoot = sandbox.root(args.source_root, 'move');
    const destRoot = sandbox.root(args.dest_root, 'move');
    const source = await sandbox.resolve(sourceRoot, args.source_path, 'entry');
    if (source.rel === '')
      throw new ToolError(`cannot move root "${sourceRoot.name}"; a root can never be moved (move what is inside it instead)`);
    if (!source.stats) throw new ToolError(`${source.shown} not found`);
    const dest = await sandbox.resolve(destRoot, args.dest_path, 'entry');
    checkDestination(dest, args.overwrite);
    if (dest.abs === source.abs) throw new ToolError(`${source.shown} and ${dest.shown} are the same path`);
    if (source.stats.isDirectory() && inside(source.abs, dest.abs))
      throw new ToolError(`cannot move folder ${source.shown} into itself (${dest.shown})`);
    // Replacing a folder that holds the source would delete the source before it moves.
    if (inside(dest.abs, source.abs)) throw new ToolError(`cannot replace ${dest.shown} with ${source.shown}, which is inside it`);
    try {
      await mkdir(dirname(dest.abs), { recursive: true });
    } catch (error) {
      throw fsError(error, dest.shown, 'create the folders above');
    }
    let crossDevice = false;
    try {
      if (dest.stats && args.overwrite) await rm(dest.abs, { recursive: true });
      await rename(source.abs, dest.abs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw fsError(error, dest.shown, `move ${source.shown} to`);
      crossDevice = true;
    }
    if (crossDevice) {
      // Roots on different filesystems: copy, then remove the source. Links move as links (as rename would).
      try {
        const staging = temporarySibling(dest.abs);
        try {
          await copyTree(source.abs, staging, {
            linkPolicy: async () => undefined,
            show: (abs) => shownRel(sandbox.relativeTo(source.root, abs)),
          });
          await rename(staging, dest.abs);
        } catch (error) {
          await rm(staging, { recursive: true, force: true });
          throw error;
        }
        await rm(source.abs, { recursive: true });
      } catch (error) {
        throw fsError(error, dest.shown, `move ${source.shown} to`);
      }
    }
    return {
      source: source.shown,
      destination: dest.shown,
      type: source.stats.isDirectory() ? 'directory' : source.stats.isSymbolicLink() ? 'symlink' : 'file',
      replaced: dest.stats !== undefined,
    };
  },
});
