import { describe, expect, it } from 'vitest';
import { isDestructive } from './policy.js';

describe('isDestructive (DESIGN rule 9)', () => {
  it.each([
    ['no annotations at all', undefined, true],
    ['empty annotations', {}, true],
    ['readOnlyHint: true alone (server-filesystem read tools)', { readOnlyHint: true }, false],
    ['readOnlyHint: true wins over destructiveHint: true', { readOnlyHint: true, destructiveHint: true }, false],
    ['destructiveHint: false', { destructiveHint: false }, false],
    ['readOnlyHint: false, destructiveHint: false', { readOnlyHint: false, destructiveHint: false }, false],
    ['destructiveHint: true', { destructiveHint: true }, true],
    ['readOnlyHint: false alone (destructiveHint defaults to true)', { readOnlyHint: false }, true],
  ])('%s → %s', (_label, hints, expected) => {
    expect(isDestructive(hints)).toBe(expected);
  });
});
