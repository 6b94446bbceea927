import { countTokens as exactO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as exactCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import {
  countAhead,
  CountCache,
  countInPieces,
  EXACT_COUNT_CHARS,
  MAX_PIECE_CHARS,
  piecesOf,
  SLICE_CHARS,
  tokenCounterFor,
  toolDefinitionTokens,
} from './tokens.js';

const PROSE = [
  'The quick brown fox jumps over the lazy dog, then asks for approval before deleting /tmp/report.txt.',
  '  Indented line with   several   spaces,\ttabs\tand a trailing newline.\n\n',
  'Numbers: 1234567 3.14159 2026-11-25T18:00:00Z; emails: someone@example.com; URL https://example.com/a/b?c=d&e=f.',
  'Grüße aus Köln — naïve café, 東京は晴れです。Привет, мир! 🚀🎉 emoji too.',
  'function add(a: number, b: number): number {\n  return a + b; // sum\n}\n',
  '{"name":"resources_add","arguments":{"name":"alpha","value":42},"nested":[1,2,3,{"deep":true}]}',
].join(' ');

function spyEncoder(): { encode: (piece: string) => number; calls: number; longest: number; chars: number } {
  const spy = {
    calls: 0,
    longest: 0,
    chars: 0,
    encode: (piece: string) => {
      spy.calls += 1;
      spy.longest = Math.max(spy.longest, piece.length);
      spy.chars += piece.length;
      return exactO200k(piece);
    },
  };
  return spy;
}

describe('token counting in bounded time', () => {
  it('counts ordinary text as the exact tokenizer does, within 1 %', () => {
    for (const repeat of [1, 5, 40]) {
      const text = Array.from({ length: repeat }, (_, i) => `${i}. ${PROSE}`).join('\n');
      const o200k = tokenCounterFor('openai-gpt-4o')(text);
      const cl100k = tokenCounterFor('openai-gpt-4')(text);
      expect(Math.abs(o200k - exactO200k(text)) / exactO200k(text), `o200k, ${text.length} chars`).toBeLessThanOrEqual(0.01);
      expect(Math.abs(cl100k - exactCl100k(text)) / exactCl100k(text), `cl100k, ${text.length} chars`).toBeLessThanOrEqual(0.01);
    }
  });

  it('is exact on text short enough for one piece', () => {
    expect(tokenCounterFor('openai-gpt-4o')('Hello world')).toBe(2);
    expect(tokenCounterFor('openai-gpt-4o')(PROSE.slice(0, MAX_PIECE_CHARS))).toBe(exactO200k(PROSE.slice(0, MAX_PIECE_CHARS)));
  });

  it('cuts text into pieces of at most MAX_PIECE_CHARS that join back into the text, never inside a surrogate pair', () => {
    for (const text of [PROSE.repeat(20), 'x'.repeat(10_000), '🚀'.repeat(3000), `a${'🚀'.repeat(3000)}`, ' '.repeat(1000)]) {
      const pieces = [...piecesOf(text)];
      expect(pieces.join('')).toBe(text);
      for (const piece of pieces) {
        expect(piece.length).toBeLessThanOrEqual(MAX_PIECE_CHARS);
        expect(piece.length).toBeGreaterThan(0);
        expect(/[\ud800-\udbff]$/.test(piece)).toBe(false);
      }
    }
  });

  it('hands the encoder a bounded amount of work for a 1,000,000-character one-token message', () => {
    const spy = spyEncoder();
    const tokens = countInPieces('a'.repeat(1_000_000), spy.encode);
    // The quadratic merge only ever sees pieces of MAX_PIECE_CHARS, and only the first 64 KiB of text.
    expect(spy.longest).toBeLessThanOrEqual(MAX_PIECE_CHARS);
    expect(spy.chars).toBeLessThanOrEqual(EXACT_COUNT_CHARS + MAX_PIECE_CHARS);
    expect(spy.calls).toBeLessThanOrEqual(Math.ceil(EXACT_COUNT_CHARS / MAX_PIECE_CHARS) + 1);
    // Conservative: never below the exact count (125,000: 8 a's per token) — and below one token per character.
    expect(tokens).toBeGreaterThanOrEqual(125_000);
    expect(tokens).toBeLessThanOrEqual(1_000_000 / 3);
  });

  it('bounds the work the same way for a one-token message of other shapes (emoji, digits, punctuation, no spaces)', () => {
    for (const text of [
      '🚀'.repeat(500_000),
      '7'.repeat(1_000_000),
      '!'.repeat(1_000_000),
      'ab'.repeat(500_000),
      `${'x'.repeat(999_999)} `,
    ]) {
      const spy = spyEncoder();
      countInPieces(text, spy.encode);
      expect(spy.longest).toBeLessThanOrEqual(MAX_PIECE_CHARS);
      expect(spy.chars).toBeLessThanOrEqual(EXACT_COUNT_CHARS + MAX_PIECE_CHARS);
    }
  });

  it('estimates long ordinary text on the high side, close to the exact count', () => {
    const text = Array.from({ length: 400 }, (_, i) => `${i}. ${PROSE}`).join('\n');
    expect(text.length).toBeGreaterThan(2 * EXACT_COUNT_CHARS);
    const estimate = tokenCounterFor('openai-gpt-4o')(text);
    const exact = exactO200k(text);
    expect(estimate).toBeGreaterThanOrEqual(exact);
    expect(estimate / exact).toBeLessThanOrEqual(1.3);
  });

  it('counts text that looks like a special token as text instead of failing', () => {
    expect(tokenCounterFor('openai-gpt-4o')('please print <|endoftext|> and <|im_start|>')).toBeGreaterThan(5);
    expect(tokenCounterFor('openai-gpt-3.5-turbo')('<|endoftext|>')).toBeGreaterThan(1);
  });
});

describe('counting ahead, in slices that let the event loop go', () => {
  it('counts a long text as the synchronous count does, and the synchronous count then finds it counted', async () => {
    const text = `${'b'.repeat(EXACT_COUNT_CHARS)} ${PROSE.repeat(50)}`;
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    await countAhead('openai-gpt-4o', [text, 'short']);
    counting = false;
    // The event loop went round between slices: a 64 K run is counted in some 16 of them.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(EXACT_COUNT_CHARS / SLICE_CHARS) - 1);
    const expected = countInPieces(text, (piece) => exactO200k(piece));
    const started = performance.now();
    expect(tokenCounterFor('openai-gpt-4o')(text)).toBe(expected);
    expect(performance.now() - started).toBeLessThan(20);
  });

  it('has nothing to count for a model whose count is the estimate', async () => {
    let turns = 0;
    setImmediate(() => (turns += 1));
    await countAhead('gemini-2.5-flash', ['c'.repeat(1_000_000)]);
    expect(turns).toBe(0);
  });
});

describe('CountCache', () => {
  it('keeps counts up to its characters, dropping the least recently used first', () => {
    const cache = new CountCache(10);
    cache.set('aaaa', 1);
    cache.set('bbbb', 2);
    expect(cache.get('aaaa')).toBe(1); // now the most recently used
    cache.set('cccc', 3); // 12 characters: 'bbbb' goes
    expect([cache.get('aaaa'), cache.get('bbbb'), cache.get('cccc')]).toEqual([1, undefined, 3]);
    cache.set('d'.repeat(11), 4); // longer than the whole cache: not kept, nothing dropped
    expect([cache.get('d'.repeat(11)), cache.get('aaaa'), cache.get('cccc')]).toEqual([undefined, 1, 3]);
  });
});

describe('tool definitions', () => {
  const tools = [
    { name: 'resources_list', description: 'List resources', inputSchema: { type: 'object', properties: {} } },
    { name: 'resources_add', description: 'Add a resource', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } },
  ];

  it('counts each definition once per counter, and gives the same total every turn', () => {
    const counted: string[] = [];
    const count = (text: string) => {
      counted.push(text);
      return text.length;
    };
    const first = toolDefinitionTokens(tools, count);
    const again = toolDefinitionTokens(structuredClone(tools), count);
    expect(again).toBe(first);
    expect(first).toBe(tools.reduce((sum, tool) => sum + 4 + JSON.stringify(tool).length, 0));
    expect(counted).toEqual(tools.map((tool) => JSON.stringify(tool)));
    // Another counter (another model's encoding) counts for itself.
    const other = (text: string) => Math.ceil(text.length / 2);
    expect(toolDefinitionTokens(tools, other)).toBe(tools.reduce((sum, tool) => sum + 4 + Math.ceil(JSON.stringify(tool).length / 2), 0));
  });

  it('counts a changed definition anew', () => {
    const counted: string[] = [];
    const count = (text: string) => {
      counted.push(text);
      return text.length;
    };
    toolDefinitionTokens(tools, count);
    const changed = [{ ...tools[0]!, description: 'List every resource' }];
    expect(toolDefinitionTokens(changed, count)).toBe(4 + JSON.stringify(changed[0]).length);
    expect(counted.at(-1)).toBe(JSON.stringify(changed[0]));
  });
});
