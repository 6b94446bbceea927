import { z } from 'zod';
import type { SafeRegex } from '../../common/safe-regex.js';
import { ToolError } from '../errors.js';
import { compileGlob, compileRegex, globSearch, grepSearch, matchOrToolError, type PathMatcher } from '../search.js';
import type { ResolvedPath } from '../sandbox.js';
import { existing } from './read.js';
import { defineTool, maxDepthArg, pathArg, rootArg } from './registry.js';

/** grep and glob. Every path they return is relative to the root, ready for read_file. */

function underFolder(folder: ResolvedPath, rel: string): string {
  return folder.rel === '' ? rel : `${folder.rel}/${rel}`;
}

export const grep = defineTool({
  name: 'grep',
  title: 'Search file contents',
  description:
    'Search file contents with a regular expression (RE2 syntax: like JavaScript, without lookaround or backreferences; matching takes linear time), line by line, in a folder (recursively) or one file. ' +
    'Each match has the file path (relative to the root), line_number, the line, and context_lines lines before and after. ' +
    'Binary files are skipped; symbolic links are not followed. glob_filter limits the files searched (e.g. "*.ts", "src/**/*.go").',
  input: z.strictObject({
    root: rootArg,
    pattern: z.string().min(1).describe('Regular expression to look for (RE2 syntax)'),
    path: pathArg('Folder or file to search').default('.'),
    glob_filter: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Only search files matching this glob ("*.go" matches names at any depth; a glob with "/" matches the path below the searched folder)',
      ),
    case_insensitive: z.boolean().default(false).describe('Ignore case'),
    context_lines: z.number().int().min(0).max(50).default(0).describe('Lines of context before and after each match (default 0)'),
    max_results: z.number().int().min(1).max(10_000).default(100).describe('Most matches to return (default 100)'),
    max_depth: maxDepthArg,
  }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, args) {
    const regex = compileRegex(args.pattern, { ignoreCase: args.case_insensitive }, 'pattern');
    let include: PathMatcher | undefined;
    try {
      include = args.glob_filter === undefined ? undefined : compileGlob(args.glob_filter);
      const base = await existing(sandbox, args.root, args.path, 'grep');
      if (!base.stats.isDirectory() && !base.stats.isFile()) throw new ToolError(`${base.shown} is not a folder or a regular file`);
      const baseIsFile = base.stats.isFile();
      const outcome = await grepSearch(base.abs, baseIsFile, {
        regex,
        include: include?.matches,
        contextLines: args.context_lines,
        maxResults: args.max_results,
        maxDepth: args.max_depth,
      });
      return grepAnswer(base, baseIsFile, outcome);
    } finally {
      regex.dispose();
      include?.dispose();
    }
  },
});

function grepAnswer(base: ResolvedPath, baseIsFile: boolean, outcome: Awaited<ReturnType<typeof grepSearch>>) {
  const matches = outcome.matches.map((match) => ({
    path: baseIsFile ? (base.rel === '' ? '.' : base.rel) : underFolder(base, match.rel),
    line_number: match.line_number,
    line: match.line,
    context_before: match.context_before,
    context_after: match.context_after,
  }));
  return {
    matches,
    total_matches: matches.length,
    files_searched: outcome.filesSearched,
    binary_files_skipped: outcome.binaryFilesSkipped,
    truncated: outcome.truncated,
    ...(outcome.state.stoppedBy
      ? { stopped: outcome.state.stoppedBy === 'time' ? 'the search ran out of time' : 'the search visited too many entries' }
      : {}),
  };
}

function regexMatcher(regex: SafeRegex): PathMatcher {
  return { matches: (rel) => matchOrToolError(regex, rel), dispose: () => regex.dispose() };
}

export const glob = defineTool({
  name: 'glob',
  title: 'Find files by name',
  description:
    'Find files and folders by name, with exactly one of: pattern, a glob ("*.go" matches names at any depth; "src/**/*.go" matches paths below the searched folder; ' +
    '* and ? stay within one name, ** spans folders, [abc] and {a,b} work), or regex, a regular expression (RE2 syntax: like JavaScript, without lookaround or backreferences) searched in the path below the searched folder. ' +
    'Paths in the result are relative to the root. Symbolic links are listed, not followed.',
  input: z.strictObject({
    root: rootArg,
    pattern: z.string().min(1).optional().describe('Glob to match'),
    regex: z.string().min(1).optional().describe('Regular expression to match (instead of pattern), RE2 syntax'),
    path: pathArg('Folder to search').default('.'),
    type_filter: z.enum(['file', 'directory', 'any']).default('any').describe('Only files, only directories, or any (default)'),
    max_results: z.number().int().min(1).max(10_000).default(1000).describe('Most matches to return (default 1000)'),
    max_depth: maxDepthArg,
  }),
  readOnly: true,
  idempotent: true,
  async run(sandbox, args) {
    if ((args.pattern === undefined) === (args.regex === undefined))
      throw new ToolError('glob needs exactly one of pattern (a glob) or regex (a regular expression)');
    const matcher: PathMatcher =
      args.pattern !== undefined ? compileGlob(args.pattern) : regexMatcher(compileRegex(args.regex!, {}, 'regex'));
    try {
      const base = await existing(sandbox, args.root, args.path, 'glob');
      if (!base.stats.isDirectory()) throw new ToolError(`${base.shown} is not a directory; glob searches folders`);
      const outcome = await globSearch(base.abs, {
        matches: matcher.matches,
        type: args.type_filter,
        maxDepth: args.max_depth,
        maxResults: args.max_results,
      });
      return globAnswer(base, outcome);
    } finally {
      matcher.dispose();
    }
  },
});

function globAnswer(base: ResolvedPath, outcome: Awaited<ReturnType<typeof globSearch>>) {
  const found = outcome.matches.map((match) => ({
    path: underFolder(base, match.rel),
    type: match.type,
    size: match.size,
    modified_at: match.modified_at,
  }));
  return {
    matches: found,
    total_matches: found.length,
    truncated: outcome.truncated,
    ...(outcome.state.stoppedBy
      ? { stopped: outcome.state.stoppedBy === 'time' ? 'the search ran out of time' : 'the search visited too many entries' }
      : {}),
  };
}
