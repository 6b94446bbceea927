import { describe, expect, it } from 'vitest';
import { randomHex } from './random-hex.js';

describe('randomHex', () => {
  it('gives lowercase hex of the asked length, never the same id twice across refills of its pool', () => {
    const ids = Array.from({ length: 2_000 }, () => randomHex(16));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    // 2,000 ids of 16 bytes use the 4,096-byte pool about eight times over.
    expect(new Set(ids).size).toBe(ids.length);
    expect(randomHex(4)).toMatch(/^[0-9a-f]{8}$/);
  });
});
