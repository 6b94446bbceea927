import { describe, expect, it } from 'vitest';
import { MessageRole, type Compaction, type Message, type NewMessage } from '../../../gen/ts/asg/store/v1/store.js';
import {
  COMPACTION_TARGET,
  historyTexts,
  planCompaction,
  transcriptOf,
  turnsOf,
  visibleHistory,
  withSummary,
  type CompactionStrategy,
} from './compaction.js';
import { contextWindowOf, DEFAULT_CONTEXT_WINDOW } from './context-window.js';
import { assistantCall, assistantText, toolResult, userMessage } from './messages.js';
import { estimateTokens, tokenCounterFor } from './tokens.js';

/** Stored messages from builders: seq 1.. in order. */
function stored(messages: NewMessage[]): Message[] {
  return messages.map((message, index) => ({ ...message, id: `m${index + 1}`, seq: index + 1, createdAt: undefined }));
}

const system: NewMessage = { role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'You manage resources.' };
const padding = 'x'.repeat(400); // about 100 estimated tokens

/** A turn: the user asks, the model lists, the tool answers, the model replies. */
function turn(n: number): NewMessage[] {
  const call = { id: `call-${n}`, name: 'resources_list' };
  return [
    userMessage(`question ${n} ${padding}`),
    assistantCall(call, {}),
    toolResult(call, {}, `result ${n} ${padding}`, false),
    assistantText(`answer ${n}`),
  ];
}

function conversationOf(turns: number, extra: NewMessage[] = []): Message[] {
  return stored([system, ...Array.from({ length: turns }, (_, i) => turn(i + 1)).flat(), ...extra]);
}

const plan = (messages: Message[], strategy: CompactionStrategy, budget: number) =>
  planCompaction({ messages, strategy, budget, fixedTokens: 50, count: estimateTokens });

describe('turnsOf', () => {
  it('cuts only before user messages, so calls stay with their results', () => {
    const turns = turnsOf(visibleHistory(conversationOf(3)).messages);
    expect(turns).toHaveLength(3);
    for (const group of turns) {
      expect(group[0]!.role).toBe(MessageRole.MESSAGE_ROLE_USER);
      const calls = group.filter((m) => m.role === MessageRole.MESSAGE_ROLE_ASSISTANT && m.toolCall).map((m) => m.toolCall!.id);
      const results = group.filter((m) => m.role === MessageRole.MESSAGE_ROLE_TOOL).map((m) => m.toolCall!.id);
      expect(results).toEqual(calls);
    }
  });
});

describe('historyTexts', () => {
  it('is every text planCompaction counts, and nothing it does not', () => {
    const messages = conversationOf(3);
    const texts = [...historyTexts(messages)];
    const counted: string[] = [];
    planCompaction({
      messages,
      strategy: 'delete-old',
      budget: 100_000,
      fixedTokens: 0,
      count: (text) => {
        counted.push(text);
        return 1;
      },
    });
    expect(texts).toEqual(counted);
    expect(texts).not.toContain('You manage resources.');
  });
});

describe('planCompaction', () => {
  it('does nothing within the budget, or with strategy none', () => {
    expect(plan(conversationOf(3), 'delete-old', 100_000)).toBeUndefined();
    expect(plan(conversationOf(30), 'none', 500)).toBeUndefined();
  });

  it('delete-old hides the oldest turns down to the target and keeps the current turn', () => {
    const messages = conversationOf(10);
    const result = plan(messages, 'delete-old', 1000)!;
    expect(result.strategy).toBe('delete-old');
    expect(result.fromSeq).toBe(2); // the first message after the system prompt
    expect(result.tokensBefore).toBeGreaterThan(1000);
    expect(result.tokensAfter).toBeLessThanOrEqual(1000 * COMPACTION_TARGET);
    // The range ends at a turn boundary: the next message is a user message.
    expect(messages[result.toSeq]!.role).toBe(MessageRole.MESSAGE_ROLE_USER);
    // The system prompt (seq 1) is never in the range, the last turn never.
    expect(result.toSeq).toBeLessThan(messages.length - 3);
  });

  it('delete-middle keeps the first turn and hides the ones after it', () => {
    const messages = conversationOf(10);
    const result = plan(messages, 'delete-middle', 1000)!;
    expect(result.fromSeq).toBe(6); // turn 1 is seq 2..5
    expect(messages[result.toSeq]!.role).toBe(MessageRole.MESSAGE_ROLE_USER);
    expect(result.newlyHidden[0]!.content).toContain('question 2');
  });

  it('a later compaction extends the range in force instead of resurfacing what it hid', () => {
    const first = plan(conversationOf(10), 'delete-old', 1000)!;
    const compaction: Compaction = {
      strategy: 'delete-old',
      fromSeq: first.fromSeq,
      toSeq: first.toSeq,
      summary: '',
      tokensBefore: 0,
      tokensAfter: 0,
    };
    const later = conversationOf(10, [
      { role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'History compacted', compaction },
      ...turn(11),
      ...turn(12),
      ...turn(13),
      ...turn(14),
    ]);
    const second = plan(later, 'delete-old', 1000)!;
    expect(second.fromSeq).toBe(first.fromSeq);
    expect(second.toSeq).toBeGreaterThan(first.toSeq);
    expect(second.newlyHidden.every((m) => m.seq > first.toSeq)).toBe(true);
  });

  it('never compacts the current turn alone, however large', () => {
    expect(plan(stored([system, userMessage('y'.repeat(100_000))]), 'delete-old', 100)).toBeUndefined();
  });

  it('partial-summary chooses like delete-old and names what the summary must cover', () => {
    const result = plan(conversationOf(10), 'partial-summary', 1000)!;
    expect(result.strategy).toBe('partial-summary');
    expect(result.newlyHidden.length).toBeGreaterThan(0);
    const transcript = transcriptOf(result.newlyHidden, 'they began by listing');
    expect(transcript).toMatch(/^Summary of the conversation before these messages:\nthey began by listing/);
    expect(transcript).toContain('User: question 1');
    expect(transcript).toContain('Assistant called resources_list with {}');
    expect(transcript).toContain('Result of resources_list: result 1');
  });
});

describe('visibleHistory and withSummary', () => {
  it('hides the range of the latest compaction and every system message', () => {
    const compaction: Compaction = { strategy: 'partial-summary', fromSeq: 2, toSeq: 5, summary: 'S', tokensBefore: 0, tokensAfter: 0 };
    const messages = conversationOf(2, [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'compacted', compaction }]);
    const { messages: visible, latest } = visibleHistory(messages);
    expect(latest?.summary).toBe('S');
    expect(visible.map((m) => m.seq)).toEqual([6, 7, 8, 9]);
    expect(withSummary('prompt', 'S')).toContain('prompt\n\nSummary of the earlier conversation');
    expect(withSummary('prompt', '')).toBe('prompt');
  });
});

describe('token counting and context windows', () => {
  it("uses OpenAI's tokenizer for OpenAI models and the 4-characters estimate elsewhere", () => {
    expect(tokenCounterFor('openai-gpt-4o')('Hello world')).toBe(2);
    expect(tokenCounterFor('openai:gpt-4')('Hello world')).toBe(2);
    expect(tokenCounterFor('gemini-2.5-flash')('Hello world')).toBe(3);
    expect(tokenCounterFor('claude-sonnet-4-5')('x'.repeat(40))).toBe(10);
  });

  it('knows the context windows of common models', () => {
    expect(contextWindowOf('gemini-2.5-flash')).toBe(1_048_576);
    expect(contextWindowOf('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(contextWindowOf('openai-gpt-4o-mini')).toBe(128_000);
    expect(contextWindowOf('some-unknown-model')).toBe(DEFAULT_CONTEXT_WINDOW);
  });
});
