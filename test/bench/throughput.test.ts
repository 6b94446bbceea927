import { describe, expect, it } from 'vitest';
import { roundRobin, ThroughputTally, turnsPerSecond } from './throughput.js';

describe('roundRobin', () => {
  it('hands out every target in turn, then starts over', () => {
    const next = roundRobin(3);
    expect(Array.from({ length: 7 }, next)).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('keeps one target for a single replica and refuses none', () => {
    const next = roundRobin(1);
    expect([next(), next()]).toEqual([0, 0]);
    expect(() => roundRobin(0)).toThrow('at least one target, got 0');
  });
});

describe('turnsPerSecond', () => {
  it('divides the turns by the elapsed seconds', () => {
    expect(turnsPerSecond(250, 10_000)).toBe(25);
    expect(turnsPerSecond(1, 3_000)).toBe(0.33);
  });

  it('refuses an elapsed time that is not positive', () => {
    expect(() => turnsPerSecond(5, 0)).toThrow('positive elapsed time, got 0 ms');
  });
});

describe('ThroughputTally', () => {
  it('counts successful turns per target and keeps failures out of the throughput and latency', () => {
    const tally = new ThroughputTally(4, 2);
    tally.turn(0, 10);
    tally.turn(1, 20);
    tally.turn(0, 30);
    tally.failure('POST /conversations/c1/messages answered 500');
    const result = tally.result(2_000);
    expect(result).toMatchObject({
      clients: 4,
      targets: 2,
      turns: 3,
      failures: 1,
      turnsPerSecond: 1.5,
      turnsPerTarget: [2, 1],
      elapsedMs: 2000,
    });
    expect(result.latency).toMatchObject({ n: 3, p50: 20, p99: 30 });
    expect(result.failureSamples).toEqual(['POST /conversations/c1/messages answered 500']);
  });

  it('keeps only the first five failure messages but counts them all', () => {
    const tally = new ThroughputTally(1, 1);
    for (let i = 0; i < 8; i++) tally.failure(`failure ${i}`);
    const result = tally.result(1_000);
    expect(result.failures).toBe(8);
    expect(result.failureSamples).toEqual(['failure 0', 'failure 1', 'failure 2', 'failure 3', 'failure 4']);
    expect(result.turns).toBe(0);
    expect(result.turnsPerSecond).toBe(0);
  });
});
