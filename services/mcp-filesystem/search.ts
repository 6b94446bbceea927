import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { compileSafeRegex, PatternError, type SafeRegex } from '../common/safe-regex.js';
import { ToolError } from './errors.js';
import { entryType, isBinaryFile, type EntryType } from './files.js';

/**
 * grep and glob: a bounded walk of one folder, globs, and a line-by-line regex search with context.
 * The walk never follows symbolic links (a link to a folder is listed, not entered), so it cannot
 * leave the folder it starts in.
 */

/**
 * Longest regex or glob accepted. Matching runs on RE2 (linear in the text); the cap
 * keeps compiling cheap.
 */
const MAX_PATTERN_LENGTH = 1000;
/** A search stops (and says so) after visiting this many entries… */
const MAX_ENTRIES_VISITED = 200_000;
/** …or after this long, inside the 30 s an MCP call has by default. */
const SEARCH_TIME_BUDGET_MS = 20_000;
/** Matched lines and context lines are cut to this many characters in results. */
const MAX_LINE_CHARS = 1000;

/**
 * A glob as a regular expression over `/`-separated relative paths: `*` and `?` stay within one
 * name, `**` spans folders (`**\/` also matches no folder at all), `[abc]`/`[!abc]` are classes,
 * `{a,b}` alternatives. `*` matches names starting with a dot too. The expression runs on RE2:
 * `*a*a*a…b` is polynomial of high degree for a backtracking engine, linear here.
 */
export function globToRegExp(glob: string): SafeRegex {
  let source = '';
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i]!;
    if (char === '*') {
      if (glob[i + 1] === '*') {
        const atSegmentStart = i === 0 || glob[i - 1] === '/';
        i += 1;
        if (glob[i + 1] === '/' && atSegmentStart) {
          source += '(?:.*/)?';
          i += 1;
        } else {
          source += '.*';
        }
      } else {
        source += '[^/]*';
      }
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) {
        source += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/]/g, '\\]')}]`;
      i = close;
    } else if (char === '{') {
      braceDepth += 1;
      source += '(?:';
    } else if (char === '}' && braceDepth > 0) {
      braceDepth -= 1;
      source += ')';
    } else if (char === ',' && braceDepth > 0) {
      source += '|';
    } else {
      source += char.replace(/[.+^${}()|\\\]]/g, '\\$&');
    }
  }
  if (braceDepth > 0) throw new ToolError(`invalid glob ${JSON.stringify(glob)}: a "{" is not closed`);
  try {
    return compileSafeRegex(`^${source}$`, { what: 'glob', shown: glob });
  } catch (error) {
    throw new ToolError(error instanceof PatternError ? error.message : `invalid glob ${JSON.stringify(glob)}`);
  }
}

/**
 * A matcher for paths relative to the search folder. A glob without `/` matches an entry's name at
 * any depth (`*.go` finds every Go file, like .gitignore); a glob with `/` matches the whole relative path.
 */
export interface PathMatcher {
  matches(relPath: string): boolean;
  /** Frees the compiled expression (RE2's heap is not garbage-collected; see common/safe-regex). */
  dispose(): void;
}

export function compileGlob(glob: string): PathMatcher {
  if (glob.length > MAX_PATTERN_LENGTH)
    throw new ToolError(`glob is ${glob.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  const cleaned = glob.replace(/^\.\//, '').replace(/^\/+/, '');
  const regex = globToRegExp(cleaned);
  const dispose = () => regex.dispose();
  if (!cleaned.includes('/'))
    return { matches: (relPath) => matchOrToolError(regex, relPath.slice(relPath.lastIndexOf('/') + 1)), dispose };
  return { matches: (relPath) => matchOrToolError(regex, relPath), dispose };
}

/** A user's regular expression in RE2 syntax; lookaround and backreferences are refused by name. */
export function compileRegex(pattern: string, options: { ignoreCase?: boolean }, what: 'pattern' | 'regex'): SafeRegex {
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new ToolError(`${what} is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  try {
    return compileSafeRegex(pattern, { ignoreCase: options.ignoreCase, what });
  } catch (error) {
    if (error instanceof PatternError) throw new ToolError(error.message);
    throw error;
  }
}

/** `regex.test`, with the engine's refusal (out of memory) as the tool's error. */
export function matchOrToolError(regex: SafeRegex, text: string): boolean {
  try {
    return regex.test(text);
  } catch (error) {
    if (error instanceof PatternError) throw new ToolError(error.message);
    throw error;
  }
}

interface WalkEntry {
  abs: string;
  /** Relative to the folder the walk started in, `/`-separated. */
  rel: string;
  stats: Stats;
}

interface WalkLimits {
  /** 0: only the folder's own entries; 1: also those of its subfolders; undefined: no limit. */
  maxDepth?: number;
  deadline: number;
}

export interface WalkState {
  visited: number;
  /** Why the walk stopped early, if it did. */
  stoppedBy?: 'time' | 'entries';
}

/** Entries below `base` in name order, depth first; symbolic links are yielded, never entered. */
async function* walk(base: string, limits: WalkLimits, state: WalkState, prefix = '', depth = 0): AsyncGenerator<WalkEntry> {
  let names: string[];
  try {
    names = (await readdir(base)).sort();
  } catch {
    return; // unreadable or vanished folder: nothing to find in it
  }
  for (const name of names) {
    if (state.stoppedBy) return;
    if (Date.now() > limits.deadline) {
      state.stoppedBy = 'time';
      return;
    }
    if (++state.visited > MAX_ENTRIES_VISITED) {
      state.stoppedBy = 'entries';
      return;
    }
    const abs = join(base, name);
    let stats: Stats;
    try {
      stats = await lstat(abs);
    } catch {
      continue;
    }
    const rel = prefix ? `${prefix}/${name}` : name;
    yield { abs, rel, stats };
    if (stats.isDirectory() && (limits.maxDepth === undefined || depth < limits.maxDepth)) {
      yield* walk(abs, limits, state, rel, depth + 1);
    }
  }
}

export interface GlobMatch {
  /** Relative to the search folder. */
  rel: string;
  type: EntryType;
  size: number;
  modified_at: string;
}

export interface GlobOptions {
  matches: (relPath: string) => boolean;
  type: 'file' | 'directory' | 'any';
  maxDepth?: number;
  maxResults: number;
}

export async function globSearch(
  base: string,
  options: GlobOptions,
): Promise<{ matches: GlobMatch[]; truncated: boolean; state: WalkState }> {
  const state: WalkState = { visited: 0 };
  const matches: GlobMatch[] = [];
  let truncated = false;
  for await (const entry of walk(base, { maxDepth: options.maxDepth, deadline: Date.now() + SEARCH_TIME_BUDGET_MS }, state)) {
    const type = entryType(entry.stats);
    if (options.type !== 'any' && type !== options.type) continue;
    if (!options.matches(entry.rel)) continue;
    if (matches.length === options.maxResults) {
      truncated = true;
      break;
    }
    matches.push({ rel: entry.rel, type, size: type === 'file' ? entry.stats.size : 0, modified_at: entry.stats.mtime.toISOString() });
  }
  return { matches, truncated: truncated || state.stoppedBy !== undefined, state };
}

interface GrepMatch {
  /** Relative to the search folder (the file's name when a single file was searched). */
  rel: string;
  line_number: number;
  line: string;
  context_before: string[];
  context_after: string[];
}

export interface GrepOptions {
  regex: SafeRegex;
  /** Which files to search, by their path relative to the search folder. */
  include?: (relPath: string) => boolean;
  contextLines: number;
  maxResults: number;
  maxDepth?: number;
}

export interface GrepOutcome {
  matches: GrepMatch[];
  truncated: boolean;
  filesSearched: number;
  binaryFilesSkipped: number;
  state: WalkState;
}

const cut = (line: string) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);

/**
 * Searches one file line by line. Returns false once `maxResults` matches are held and one more
 * was seen (the search is then truncated).
 */
async function grepFile(
  abs: string,
  rel: string,
  options: GrepOptions,
  matches: GrepMatch[],
  deadline: number,
  state: WalkState,
): Promise<boolean> {
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  const stream = handle.createReadStream({ encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const before: string[] = [];
  const waitingForContext: GrepMatch[] = [];
  let lineNumber = 0;
  let more = true;
  try {
    for await (const line of lines) {
      lineNumber += 1;
      // Every line: one long line costs as much as many short ones.
      if (Date.now() > deadline) {
        state.stoppedBy = 'time';
        break;
      }
      for (const match of waitingForContext) match.context_after.push(cut(line));
      while (waitingForContext.length > 0 && waitingForContext[0]!.context_after.length >= options.contextLines) waitingForContext.shift();
      if (matchOrToolError(options.regex, line)) {
        // Already holding maxResults: this one only proves the results are truncated.
        if (matches.length >= options.maxResults) {
          more = false;
          break;
        }
        const match: GrepMatch = { rel, line_number: lineNumber, line: cut(line), context_before: [...before], context_after: [] };
        matches.push(match);
        if (options.contextLines > 0) waitingForContext.push(match);
      }
      if (options.contextLines > 0) {
        before.push(cut(line));
        if (before.length > options.contextLines) before.shift();
      }
    }
  } finally {
    lines.close();
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
  return more;
}

export async function grepSearch(base: string, baseIsFile: boolean, options: GrepOptions): Promise<GrepOutcome> {
  const state: WalkState = { visited: 0 };
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS;
  const matches: GrepMatch[] = [];
  let filesSearched = 0;
  let binaryFilesSkipped = 0;
  let truncated = false;

  const searchFile = async (abs: string, rel: string): Promise<boolean> => {
    try {
      if (await isBinaryFile(abs)) {
        binaryFilesSkipped += 1;
        return true;
      }
      filesSearched += 1;
      return await grepFile(abs, rel, options, matches, deadline, state);
    } catch (error) {
      if (error instanceof ToolError) throw error; // the pattern's fault, not the file's
      return true; // unreadable (permissions, vanished): skipped like grep -s
    }
  };

  if (baseIsFile) {
    const name = base.slice(base.lastIndexOf('/') + 1);
    truncated = !(await searchFile(base, name));
  } else {
    for await (const entry of walk(base, { maxDepth: options.maxDepth, deadline }, state)) {
      if (!entry.stats.isFile()) continue;
      if (options.include && !options.include(entry.rel)) continue;
      if (!(await searchFile(entry.abs, entry.rel))) {
        truncated = true;
        break;
      }
      if (state.stoppedBy) break;
    }
  }
  return { matches, truncated: truncated || state.stoppedBy !== undefined, filesSearched, binaryFilesSkipped, state };
}
