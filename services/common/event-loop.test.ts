import { stat } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { turnOfEventLoop } from './event-loop.js';

describe('turnOfEventLoop', () => {
  it('resolves in a later turn of the event loop (past its poll for I/O), even when called from an I/O callback', async () => {
    const order: string[] = [];
    await new Promise<void>((done) => {
      stat('.', () => {
        // In the poll phase: an immediate made now runs in this turn's check phase, and one made
        // from there only in the next turn, after its poll.
        setImmediate(() => {
          order.push('this turn');
          setImmediate(() => order.push('next turn'));
        });
        void turnOfEventLoop().then(() => {
          order.push('resumed');
          done();
        });
      });
    });
    expect(order).toEqual(['this turn', 'next turn', 'resumed']);
  });
});
