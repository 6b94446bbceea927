import { createRequire } from 'node:module';
import type { RE2 } from 're2-wasm';

/**
 * Regular expressions that come from outside (the built-in MCP servers take patterns from the
 * model, which takes them from users) run on RE2: matching is linear in the text, whatever the
 * pattern, so `(a+)+$` cannot hold the event loop. RE2 syntax is JavaScript's
 * without backreferences and lookaround; those are refused with a message that names them.
 *
 * re2-wasm runs RE2 in a WebAssembly heap of a fixed 16 MiB that the garbage collector does not
 * see: a compiled pattern must be freed (`dispose`, or `withSafeRegex`), and a text is searched
 * only in its first MAX_SUBJECT_CHARS characters, so that one long line cannot exhaust the heap.
 */

/** A pattern that cannot be used, said so that the caller (a model) can fix it. */
export class PatternError extends Error {
  override name = 'PatternError';
}

/** Texts are searched in their first this many characters (a UTF-8 copy of them goes into the heap). */
export const MAX_SUBJECT_CHARS = 1 << 20;

export interface SafeRegexOptions {
  ignoreCase?: boolean;
  /** What the pattern is called in error messages ("pattern", "regex", "glob"…). */
  what?: string;
  /** The text shown as the pattern in error messages, when it differs from the source (a glob). */
  shown?: string;
}

export interface SafeRegex {
  readonly source: string;
  /** Whether the pattern matches somewhere in the first MAX_SUBJECT_CHARS characters of `text`. */
  test(text: string): boolean;
  /** Frees the compiled pattern; later `test` calls throw. Safe to call twice. */
  dispose(): void;
}

interface WasmHandle {
  delete(): void;
}

/**
 * re2-wasm reserves its heap when it is loaded (some 13 MB of resident memory), so it is loaded
 * by the first pattern: a built-in MCP server that is never asked to search does not carry it.
 * It is a CommonJS module, so loading it stays synchronous.
 */
let engine: typeof RE2 | undefined;
function re2(): typeof RE2 {
  engine ??= (createRequire(import.meta.url)('re2-wasm') as typeof import('re2-wasm')).RE2;
  return engine;
}

// A pattern that was never disposed is still freed once it is garbage, so a forgotten dispose
// costs memory for a while instead of exhausting the heap for good.
const backstop = new FinalizationRegistry<WasmHandle>((handle) => {
  try {
    handle.delete();
  } catch {
    // A throw here would be an uncaught exception: losing one free is the lesser harm.
  }
});

/** Lookaround and backreferences, the JavaScript features RE2 leaves out by design (escapes and classes skipped). */
function unsupportedFeature(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) return 'backreferences (\\1, \\k<name>) are';
      i += 1;
    } else if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(' && pattern[i + 1] === '?') {
      const kind = pattern.slice(i + 2, i + 4);
      if (kind === '<=' || kind === '<!') return 'lookbehind ((?<=…), (?<!…)) is';
      if (kind[0] === '=' || kind[0] === '!') return 'lookahead ((?=…), (?!…)) is';
      if (kind[0] === '>') return 'an atomic group ((?>…)) is';
    }
  }
  return undefined;
}

// Lone surrogates become U+FFFD: RE2 reads UTF-8, and one unpaired half makes the whole text unmatchable.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function compileSafeRegex(pattern: string, options: SafeRegexOptions = {}): SafeRegex {
  const what = options.what ?? 'pattern';
  const shown = JSON.stringify(options.shown ?? pattern);
  const missing = unsupportedFeature(pattern);
  if (missing)
    throw new PatternError(
      `invalid ${what} ${shown}: ${missing} not supported (patterns are RE2 syntax: no lookaround, no backreferences)`,
    );
  let regex: RE2;
  try {
    regex = new (re2())(pattern, options.ignoreCase ? 'iu' : 'u');
  } catch (error) {
    const detail = (error as Error).message.replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, '');
    throw new PatternError(`invalid ${what} ${shown}: ${detail} (patterns are RE2 syntax)`);
  }
  const handle = (regex as unknown as { wrapper: WasmHandle }).wrapper;
  const token = {};
  backstop.register(regex, handle, token);
  let disposed = false;
  return {
    source: pattern,
    test(text) {
      if (disposed) throw new Error(`the ${what} ${shown} was already disposed`);
      const subject = (text.length > MAX_SUBJECT_CHARS ? text.slice(0, MAX_SUBJECT_CHARS) : text).replace(LONE_SURROGATE, '\ufffd');
      try {
        return regex.test(subject);
      } catch (error) {
        // The fixed heap ran out (emscripten aborts the call; the next calls work again).
        if (error instanceof Error && error.name === 'RuntimeError')
          throw new PatternError(`the ${what} ${shown} needs more memory than the regular expression engine has; use a simpler one`);
        throw error;
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      backstop.unregister(token);
      handle.delete();
    },
  };
}

/** Compiles `pattern`, hands it to `use`, and frees it when `use` is done (also when it throws). */
export async function withSafeRegex<T>(pattern: string, options: SafeRegexOptions, use: (regex: SafeRegex) => Promise<T> | T): Promise<T> {
  const regex = compileSafeRegex(pattern, options);
  try {
    return await use(regex);
  } finally {
    regex.dispose();
  }
}
