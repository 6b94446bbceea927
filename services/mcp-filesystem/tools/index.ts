import { hashFile, listFolder, listRoots, permissionsFile, readFile, statFile } from './read.js';
import type { FilesystemTool } from './registry.js';
import { glob, grep } from './search.js';
import { copy, move } from './transfer.js';
import { createFolder, patchFile, removeFile, removeFolder, writeFile } from './write.js';

export { annotationsOf, callTool, runTool, type FilesystemTool } from './registry.js';

/** The 15 tools, in their documented order. */
export const FILESYSTEM_TOOLS: readonly FilesystemTool[] = [
  listRoots,
  listFolder,
  readFile,
  writeFile,
  removeFile,
  patchFile,
  createFolder,
  removeFolder,
  statFile,
  hashFile,
  permissionsFile,
  copy,
  move,
  grep,
  glob,
] as FilesystemTool[];

export function toolNamed(name: string): FilesystemTool | undefined {
  return FILESYSTEM_TOOLS.find((tool) => tool.name === name);
}
