import { createRequire } from 'node:module';
import type { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatMessage, ToolDefinition } from '../../../gen/ts/asg/llm/v1/llm.js';
import { turnOfEventLoop } from '../../common/event-loop.js';

export type TokenCounter = (text: string) => number;

/**
 * Counting runs on the event loop, so its cost must be linear and bounded whatever the text.
 * The BPE merge of gpt-tokenizer is quadratic in the length of one pre-token: a
 * message of one character repeated a million times would stall the service for minutes. So the
 * encoder never sees more than MAX_PIECE_CHARS at once, and past EXACT_COUNT_CHARS a text is
 * counted exactly over its start and estimated for the rest.
 */

/** Longest piece of text handed to the BPE encoder at once. */
export const MAX_PIECE_CHARS = 256;
/** Texts longer than this are counted exactly over their first EXACT_COUNT_CHARS characters only. */
export const EXACT_COUNT_CHARS = 64 * 1024;

/**
 * Pieces of `text` of at most `max` characters, cut before a space that starts a word where the
 * piece has one: OpenAI's encodings attach a word's leading space to the word, so such a cut is a
 * pre-token boundary and the pieces' counts add up to the text's. A run without spaces is cut
 * at the limit (never inside a surrogate pair), which can add a token at the cut.
 */
export function* piecesOf(text: string, max = MAX_PIECE_CHARS): Generator<string> {
  let start = 0;
  while (text.length - start > max) {
    let cut = start + max;
    while (cut > start + 1 && !(text[cut] === ' ' && text[cut + 1] !== undefined && !/\s/.test(text[cut + 1]!))) cut -= 1;
    if (cut === start + 1) {
      cut = start + max;
      if (isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
    }
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * `encode` applied piece by piece: exact (within a token per cut in long runs without spaces)
 * up to EXACT_COUNT_CHARS; past it, the first EXACT_COUNT_CHARS are counted and the rest is
 * estimated at their density, never below one token per 4 characters — an estimate that errs
 * high, so that compaction starts early rather than late.
 */
export function countInPieces(text: string, encode: TokenCounter): number {
  const steps = countSteps(text, encode);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Characters counted between two yields of countSteps: a slice costs a few milliseconds even
 * where the merge is at its slowest (runs without spaces), so that a caller that waits for the
 * event loop at each yield never holds it for long.
 */
export const SLICE_CHARS = 4096;

/** countInPieces as steps: it yields after every SLICE_CHARS counted and returns the count. */
function* countSteps(text: string, encode: TokenCounter): Generator<void, number> {
  if (text.length <= MAX_PIECE_CHARS) return encode(text);
  let tokens = 0;
  let counted = 0;
  let sliceEnd = SLICE_CHARS;
  for (const piece of piecesOf(text)) {
    tokens += encode(piece);
    counted += piece.length;
    if (counted >= EXACT_COUNT_CHARS) break;
    if (counted >= sliceEnd) {
      sliceEnd = counted + SLICE_CHARS;
      yield;
    }
  }
  if (counted === text.length) return tokens;
  return tokens + Math.ceil((text.length - counted) * Math.max(tokens / counted, 1 / 4));
}

/**
 * The counts of long texts, kept: a turn counts its whole history again at each model step,
 * and countAhead counts a long text before the synchronous count asks for it. Only texts of
 * more than one piece are kept (a short one costs less to count than to keep); at most
 * CACHED_CHARS characters of them, the oldest dropped first, so that the cache holds a few
 * large conversations' texts and never grows without bound.
 */
const CACHED_CHARS = 8 * 1024 * 1024;

export class CountCache {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  constructor(private readonly maxChars = CACHED_CHARS) {}

  get(text: string): number | undefined {
    const count = this.counts.get(text);
    if (count !== undefined) {
      // Most recently used last: the oldest are dropped first.
      this.counts.delete(text);
      this.counts.set(text, count);
    }
    return count;
  }

  set(text: string, count: number): void {
    if (text.length > this.maxChars || this.counts.has(text)) return;
    this.counts.set(text, count);
    this.chars += text.length;
    for (const [oldest] of this.counts) {
      if (this.chars <= this.maxChars) break;
      this.counts.delete(oldest);
      this.chars -= oldest.length;
    }
  }
}

/** A counter in pieces over `encode`, its long texts' counts kept in `cache`. */
function cachedCounter(encode: TokenCounter, cache: CountCache): { count: TokenCounter; countAhead: (text: string) => Promise<void> } {
  const count: TokenCounter = (text) => {
    if (text.length <= MAX_PIECE_CHARS) return encode(text);
    let tokens = cache.get(text);
    if (tokens === undefined) {
      tokens = countInPieces(text, encode);
      cache.set(text, tokens);
    }
    return tokens;
  };
  const countAhead = async (text: string): Promise<void> => {
    if (text.length <= MAX_PIECE_CHARS || cache.get(text) !== undefined) return;
    const steps = countSteps(text, encode);
    for (;;) {
      const step = steps.next();
      if (step.done) {
        cache.set(text, step.value);
        return;
      }
      await turnOfEventLoop();
    }
  };
  return { count, countAhead };
}

// Text such as "<|endoftext|>" in a message is text to count, not a special token (by default
// gpt-tokenizer throws on it).
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * An encoding's tables take a quarter of a second and some 70 MB to load, and only OpenAI's
 * models use them: each is loaded by its first count, synchronously (the CommonJS
 * build), so that counting stays a plain function.
 */
const encodings = new Map<string, typeof countTokens>();
type EncodingName = 'o200k_base' | 'cl100k_base';
function encodingCount(name: EncodingName): typeof countTokens {
  let count = encodings.get(name);
  if (!count) {
    count = (createRequire(import.meta.url)(`gpt-tokenizer/encoding/${name}`) as { countTokens: typeof countTokens }).countTokens;
    encodings.set(name, count);
  }
  return count;
}
const counters = new Map<string, ReturnType<typeof cachedCounter>>();
function encodingCounter(name: EncodingName): ReturnType<typeof cachedCounter> {
  let counter = counters.get(name);
  if (!counter) {
    counter = cachedCounter((piece) => encodingCount(name)(piece, AS_PLAIN_TEXT), new CountCache());
    counters.set(name, counter);
  }
  return counter;
}

/** Roles, separators and call framing each message costs in every provider's format. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Documented estimate for models without a public tokenizer here (Gemini, Claude, Mistral,
 * Llama…): one token per 4 characters of text, the usual ratio for English; code and
 * JSON run denser, which the 25 % margin of the compaction target absorbs.
 */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

/** The OpenAI encoding of `model` (`openai-…` / `openai:…`), none for the models of other providers. */
function encodingOf(model: string): EncodingName | undefined {
  const id = model.replace(/^openai[-:]/, '');
  if (id === model && !model.startsWith('openrouter-openai/')) return undefined;
  const name = id.replace(/^openrouter-openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d)/.test(name)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return 'cl100k_base';
  return 'o200k_base';
}

/** OpenAI's own encodings for its models, the estimate for the rest. */
export function tokenCounterFor(model: string): TokenCounter {
  const encoding = encodingOf(model);
  return encoding ? encodingCounter(encoding).count : estimateTokens;
}

/**
 * Counts `texts` as tokenCounterFor(model) does and keeps their counts, yielding to the event
 * loop between slices of SLICE_CHARS: the synchronous count that follows (a turn's compaction
 * plan) then finds them counted. Without it, the first count of a long text holds the event
 * loop, and every other request with it, for as long as it takes (some 100 ms for 64 K
 * characters without a space on a busy machine). The estimate of the other models costs nothing.
 */
export async function countAhead(model: string, texts: Iterable<string>): Promise<void> {
  const encoding = encodingOf(model);
  if (!encoding) return;
  const { countAhead: ahead } = encodingCounter(encoding);
  for (const text of texts) await ahead(text);
}

/**
 * Loads the tables `model` counts with, if it has any. A service calls it at start for its
 * configured models: loaded by a turn instead, the tables would hold the event loop, and every
 * other request with it, for that quarter of a second (more on a busy machine).
 */
export function loadTokenizerOf(model: string): void {
  const encoding = encodingOf(model);
  if (encoding) encodingCount(encoding);
}

/** The texts chatMessageTokens counts in `message`. */
export function* chatMessageTexts(message: ChatMessage): Generator<string> {
  if (message.text) yield message.text;
  for (const call of message.toolCalls) yield* [call.name, call.argumentsJson];
  for (const result of message.toolResults) yield* [result.name, result.output];
}

export function chatMessageTokens(message: ChatMessage, count: TokenCounter): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + (message.text ? count(message.text) : 0);
  for (const call of message.toolCalls) tokens += MESSAGE_OVERHEAD_TOKENS + count(call.name) + count(call.argumentsJson);
  for (const result of message.toolResults) tokens += MESSAGE_OVERHEAD_TOKENS + count(result.name) + count(result.output);
  return tokens;
}

/**
 * The counts of tool definitions already seen, per counter. The same few definitions (an
 * agent's tools, with their schemas) are counted at every turn, and counting is a pure function
 * of the text: remembered, a turn pays for the JSON alone, not for the BPE encoder, and every
 * replica would count the same. Bounded: past DEFINITION_COUNTS_KEPT texts a counter starts over.
 */
const definitionCounts = new WeakMap<TokenCounter, Map<string, number>>();
const DEFINITION_COUNTS_KEPT = 1024;

function rememberedCount(text: string, count: TokenCounter): number {
  let known = definitionCounts.get(count);
  if (!known) {
    known = new Map();
    definitionCounts.set(count, known);
  }
  let tokens = known.get(text);
  if (tokens === undefined) {
    if (known.size >= DEFINITION_COUNTS_KEPT) known.clear();
    tokens = count(text);
    known.set(text, tokens);
  }
  return tokens;
}

export function toolDefinitionTokens(tools: readonly ToolDefinition[], count: TokenCounter): number {
  return tools.reduce((total, tool) => total + MESSAGE_OVERHEAD_TOKENS + rememberedCount(JSON.stringify(tool), count), 0);
}
