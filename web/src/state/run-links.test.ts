import { describe, expect, it } from 'vitest';
import type { MessageJson } from '../api-types.js';
import { runHref, runsByMessage } from './run-links.js';

const message = (seq: number, role: MessageJson['role']): MessageJson => ({
  id: `m${seq}`,
  role,
  content: `message ${seq}`,
  created_at: '2025-01-15T10:00:00.000Z',
  seq,
});

describe('runsByMessage', () => {
  const messages = [message(1, 'system'), message(2, 'user'), message(3, 'assistant'), message(4, 'user'), message(5, 'assistant')];

  it('links each user message to the run its seq started, and nothing else', () => {
    const links = runsByMessage(messages, [
      { run_id: 'run-b', message_seq: 4 },
      { run_id: 'run-a', message_seq: 2 },
    ]);
    expect([...links]).toEqual([
      ['m2', 'run-a'],
      ['m4', 'run-b'],
    ]);
  });

  it('leaves a message without a link when its run is not listed or was recorded without its message (journal format 1)', () => {
    expect([
      ...runsByMessage(messages, [
        { run_id: 'old', message_seq: null },
        { run_id: 'run-b', message_seq: 4 },
      ]),
    ]).toEqual([['m4', 'run-b']]);
    // A seq that names an assistant message is no user message's run.
    expect(runsByMessage(messages, [{ run_id: 'odd', message_seq: 3 }]).size).toBe(0);
  });

  it("makes the run page's route", () => {
    expect(runHref('0b7e3f52-9c1d-4a68-b2f0-6d4e8a1c3f95')).toBe('#/runs/0b7e3f52-9c1d-4a68-b2f0-6d4e8a1c3f95');
  });
});
