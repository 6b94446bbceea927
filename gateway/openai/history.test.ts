import { describe, expect, it } from 'vitest';
import { hasHistory, historyDigest } from './history.js';

describe('historyDigest', () => {
  const history = [
    { role: 'user' as const, text: 'hello' },
    { role: 'assistant' as const, text: 'Hi.\nHow can I help?' },
  ];

  it('is the same for the same messages with other white space or an empty message between', () => {
    expect(
      historyDigest([
        { role: 'user', text: '  hello ' },
        { role: 'assistant', text: '' },
        { role: 'assistant', text: 'Hi.  How can I help?\r\n' },
      ]),
    ).toBe(historyDigest(history));
    expect(historyDigest(history)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when a text, a role or the order differs', () => {
    const digest = historyDigest(history);
    expect(historyDigest([history[0]!, { role: 'assistant', text: 'Hi. How can I help!' }])).not.toBe(digest);
    expect(historyDigest([history[0]!, { role: 'user', text: history[1]!.text }])).not.toBe(digest);
    expect(historyDigest([history[1]!, history[0]!])).not.toBe(digest);
    expect(historyDigest([history[0]!])).not.toBe(digest);
  });

  it('counts no history when every message is empty', () => {
    expect(hasHistory([])).toBe(false);
    expect(hasHistory([{ role: 'assistant', text: ' \n ' }])).toBe(false);
    expect(hasHistory(history)).toBe(true);
  });
});
