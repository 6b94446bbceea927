import { describe, expect, it } from 'vitest';
import { redactSecrets, registerSecret } from '../../common/secrets.js';
import { StreamedReply, StreamedTextRedactor } from './streamed-reply.js';

function shownWhileStreaming(deltas: string[]): string[] {
  const redactor = new StreamedTextRedactor();
  return [...deltas.map((delta) => redactor.push(delta)), redactor.end()];
}

describe('StreamedTextRedactor', () => {
  it('releases whole words, so that a secret split over deltas is still redacted', () => {
    registerSecret('known-secret-value-42');
    const deltas = ['Use known-sec', 'ret-val', 'ue-42 and ', 'sk-abcdefgh', 'ijklmnopqrst now'];
    const shown = shownWhileStreaming(deltas);
    expect(shown).toEqual(['Use ', '', '[redacted] and ', '', '[redacted] ', 'now']);
    expect(shown.join('')).toBe(redactSecrets(deltas.join('')));
  });

  it('holds a trailing "Bearer " back until its token has come', () => {
    const deltas = ['send Bearer ', 'abc.def', '-ghi to it', ''];
    const shown = shownWhileStreaming(deltas);
    expect(shown).toEqual(['send ', '', 'Bearer [redacted] to ', '', 'it']);
    expect(shown.join('')).toBe(redactSecrets(deltas.join('')));
  });

  it('keeps line breaks and releases nothing twice', () => {
    const deltas = ['line one\n', 'line', ' two\n\nend'];
    expect(shownWhileStreaming(deltas).join('')).toBe(deltas.join(''));
  });
});

describe('StreamedReply', () => {
  it('is the reply Generate gives: text joined, calls in order with their metadata, finish reason and usage', () => {
    const reply = new StreamedReply();
    expect(reply.add({ textDelta: 'Hel' })).toBe('Hel');
    expect(
      reply.add({ toolCall: { id: 'a', name: 'x', argumentsJson: '{"n":1}', providerMetadataJson: '{"google":{}}' } }),
    ).toBeUndefined();
    reply.add({ textDelta: 'lo' });
    reply.add({ toolCall: { id: 'b', name: 'y', argumentsJson: 'not json' } });
    expect(reply.reply()).toBeUndefined();
    reply.add({ finish: { finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 6 } } });
    expect(reply.reply()).toEqual({
      text: 'Hello',
      toolCalls: [
        { id: 'a', name: 'x', argumentsJson: '{"n":1}', providerMetadataJson: '{"google":{}}' },
        { id: 'b', name: 'y', argumentsJson: 'not json' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 5, outputTokens: 6 },
    });
  });
});

describe('StreamedTextRedactor in linear time', () => {
  it('holds a long word streamed in many small deltas without scanning it again per delta', () => {
    const redactor = new StreamedTextRedactor();
    const shown: string[] = [];
    // 200,000 deltas of 5 characters: a scan of the held text per delta would be 10^11 steps.
    for (let i = 0; i < 200_000; i += 1) shown.push(redactor.push('aaaaa'));
    expect(shown.every((text) => text === '')).toBe(true);
    expect(redactor.push(' tail')).toHaveLength(1_000_001);
    expect(redactor.end()).toBe('tail');
  });

  it('still holds "Bearer " back when its token comes in many deltas', () => {
    const deltas = ['see Bearer ', ...Array.from({ length: 1000 }, () => 'tok'), ' ok'];
    const shown = shownWhileStreaming(deltas);
    expect(shown.join('')).toBe(redactSecrets(deltas.join('')));
    expect(shown.join('')).not.toContain('toktok');
  });
});
