import { ToolError } from './errors.js';

/**
 * Unified diffs for patch_file: parsing and applying, in memory. The tool writes the result with
 * one atomic rename, so a patch applies whole or not at all.
 *
 * Lenient where models commonly slip, strict where a slip could corrupt a file:
 * - `diff --git`/`index`/mode lines are skipped, and the `---`/`+++` headers are optional;
 * - a hunk's body runs to the next `@@` (the counts in its header are not trusted: models
 *   miscount them), and an empty body line is an empty context line;
 * - a hunk whose old lines are not at the stated line is looked for nearby (like `patch`'s offset,
 *   without its fuzz: every context and removed line must match exactly, `\r` aside);
 * - one file per patch; a patch that deletes the file is refused (remove_file does that).
 */

interface HunkLine {
  op: ' ' | '-' | '+';
  text: string;
}

interface Hunk {
  /** The header as written, for messages. */
  header: string;
  oldStart: number;
  lines: HunkLine[];
  /** `\ No newline at end of file` followed the last old-side / new-side line. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
}

export interface ParsedPatch {
  /** `--- /dev/null`: the patch creates the file. */
  creates: boolean;
  hunks: Hunk[];
}

export interface PatchOutcome {
  content: string;
  hunksApplied: number;
  linesAdded: number;
  linesRemoved: number;
  /** Per hunk, how many lines away from its stated position it applied (0 = where it said). */
  offsets: number[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function parseUnifiedDiff(patch: string): ParsedPatch {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const hunks: Hunk[] = [];
  let creates = false;
  let fileHeaders = 0;
  let current: Hunk | undefined;
  let lastSide: 'old' | 'new' | 'both' | undefined;

  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.startsWith('--- ') && lines[index + 1]?.startsWith('+++ ')) {
      fileHeaders += 1;
      if (fileHeaders > 1) throw new ToolError('the patch changes more than one file; patch_file applies a diff to one file at a time');
      const oldName = line.slice(4).split('\t')[0]!.trim();
      const newName = lines[index + 1]!.slice(4).split('\t')[0]!.trim();
      if (newName === '/dev/null') throw new ToolError('the patch deletes the file; use remove_file to delete files');
      creates = oldName === '/dev/null';
      current = undefined;
      index += 1;
      continue;
    }
    const header = HUNK_HEADER.exec(line);
    if (header) {
      current = { header: header[0], oldStart: Number(header[1]), lines: [], oldNoNewline: false, newNoNewline: false };
      hunks.push(current);
      lastSide = undefined;
      continue;
    }
    // Before the first hunk: `diff --git`, `index`, mode lines, or a description — not part of the change.
    if (!current) continue;
    if (line.startsWith('\\')) {
      // "\ No newline at end of file" qualifies the line just before it.
      if (lastSide === 'old' || lastSide === 'both') current.oldNoNewline = true;
      if (lastSide === 'new' || lastSide === 'both') current.newNoNewline = true;
      continue;
    }
    const op = line === '' ? ' ' : line[0];
    if (op !== ' ' && op !== '-' && op !== '+') {
      throw new ToolError(
        `line ${index + 1} of the patch is not part of a unified diff hunk (a hunk line starts with " ", "-" or "+"): ${JSON.stringify(line.slice(0, 80))}`,
      );
    }
    current.lines.push({ op, text: line.slice(1) });
    lastSide = op === ' ' ? 'both' : op === '-' ? 'old' : 'new';
  }
  if (hunks.length === 0) throw new ToolError('the patch has no hunks; expected a unified diff with "@@ -a,b +c,d @@" hunk headers');
  for (const hunk of hunks) {
    if (hunk.lines.length === 0) throw new ToolError(`hunk ${hunk.header} has no lines`);
  }
  return { creates, hunks };
}

const withoutCR = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

function matchesAt(fileLines: string[], expected: string[], at: number): boolean {
  if (at < 0 || at + expected.length > fileLines.length) return false;
  for (let i = 0; i < expected.length; i += 1) {
    if (withoutCR(fileLines[at + i]!) !== withoutCR(expected[i]!)) return false;
  }
  return true;
}

/** Where `expected` occurs nearest to `wanted`, at or after `floor`; -1 when nowhere. */
function locate(fileLines: string[], expected: string[], wanted: number, floor: number): number {
  const last = fileLines.length - expected.length;
  for (let distance = 0; ; distance += 1) {
    const below = wanted + distance;
    const above = wanted - distance;
    if (below > last && above < floor) return -1;
    if (below >= floor && below <= last && matchesAt(fileLines, expected, below)) return below;
    if (distance > 0 && above >= floor && above <= last && matchesAt(fileLines, expected, above)) return above;
  }
}

/** Applies `patch` to `original` (undefined when the file does not exist). */
export function applyUnifiedDiff(original: string | undefined, patch: ParsedPatch, shown: string): PatchOutcome {
  if (patch.creates && original !== undefined)
    throw new ToolError(`the patch creates ${shown} (it starts from /dev/null), but ${shown} already exists`);
  if (!patch.creates && original === undefined)
    throw new ToolError(`${shown} not found; a patch that creates a file starts with "--- /dev/null"`);
  const text = original ?? '';
  const crlf = text.includes('\r\n');
  let lines = text.split('\n');
  let endsWithNewline = text.endsWith('\n');
  if (endsWithNewline || text === '') lines.pop();

  let delta = 0;
  let floor = 0;
  let added = 0;
  let removed = 0;
  const offsets: number[] = [];
  patch.hunks.forEach((hunk, index) => {
    const oldLines = hunk.lines.filter((l) => l.op !== '+').map((l) => l.text);
    const newLines = hunk.lines.filter((l) => l.op !== '-').map((l) => (crlf ? `${l.text}\r` : l.text));
    // A hunk with no old lines inserts *after* line oldStart; otherwise its first old line is line oldStart.
    const stated = (oldLines.length === 0 ? hunk.oldStart : Math.max(hunk.oldStart - 1, 0)) + delta;
    const at = oldLines.length === 0 ? Math.min(Math.max(stated, floor), lines.length) : locate(lines, oldLines, stated, floor);
    if (at < 0) {
      const near = Math.min(Math.max(stated, 0), lines.length);
      const found = lines[near];
      throw new ToolError(
        `hunk ${index + 1} (${hunk.header}) does not match ${shown}: its lines ${JSON.stringify(oldLines[0]?.slice(0, 80) ?? '')}… were not found ` +
          `(line ${near + 1} is ${found === undefined ? 'past the end of the file' : JSON.stringify(withoutCR(found).slice(0, 80))}); nothing was changed — read the file and make the patch again`,
      );
    }
    // Context lines keep the file's own text (its line endings included).
    const replacement: string[] = [];
    let oldCursor = at;
    for (const line of hunk.lines) {
      if (line.op === ' ') replacement.push(lines[oldCursor++]!);
      else if (line.op === '-') oldCursor += 1;
      else replacement.push(crlf ? `${line.text}\r` : line.text);
    }
    const reachesEnd = at + oldLines.length === lines.length;
    lines = [...lines.slice(0, at), ...replacement, ...lines.slice(at + oldLines.length)];
    if (reachesEnd) endsWithNewline = !hunk.newNoNewline;
    offsets.push(at - stated);
    delta += newLines.length - oldLines.length;
    floor = at + replacement.length;
    added += hunk.lines.filter((l) => l.op === '+').length;
    removed += hunk.lines.filter((l) => l.op === '-').length;
  });
  const content = lines.length === 0 ? '' : lines.join('\n') + (endsWithNewline ? '\n' : '');
  return { content, hunksApplied: patch.hunks.length, linesAdded: added, linesRemoved: removed, offsets };
}
