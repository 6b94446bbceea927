import { describe, expect, it } from 'vitest';
import { configSchema } from '../common/config/schema.js';
import { wildcardPattern } from '../common/wildcard.js';
import { isDestructive, toolPolicy } from './policy.js';

describe('isDestructive (readOnlyHint safe, else destructive unless destructiveHint is false)', () => {
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

describe('wildcardPattern', () => {
  it.each([
    ['write_*', 'write_file', true],
    ['write_*', 'write_', true],
    ['write_*', 'rewrite_file', false],
    ['?et', 'get', true],
    ['?et', 'gets', false],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['*', 'anything-at-all', true],
    ['get-(x)', 'get-(x)', true],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(wildcardPattern(pattern).test(name)).toBe(expected);
  });
});

describe('toolPolicy (effective destructive)', () => {
  const readOnly = { readOnlyHint: true };
  const unannotated = undefined;
  const safe = { destructiveHint: false };

  it('follows the annotations when the server is trusted and no rule matches', () => {
    const policy = toolPolicy({ trust_annotations: true, approval: {} });
    expect(policy('read', readOnly)).toEqual({ destructive: false, source: 'annotations' });
    expect(policy('write', unannotated)).toEqual({ destructive: true, source: 'annotations' });
    expect(policy('mkdir', safe)).toEqual({ destructive: false, source: 'annotations' });
  });

  it('always → destructive and never → safe, whatever the annotations say', () => {
    const policy = toolPolicy({ trust_annotations: true, approval: { peek: 'always', 'delete_*': 'never' } });
    expect(policy('peek', readOnly)).toEqual({ destructive: true, source: 'rule "peek": always' });
    expect(policy('delete_all', { destructiveHint: true })).toEqual({ destructive: false, source: 'rule "delete_*": never' });
  });

  it('trust_annotations: false → destructive unless a rule says never; auto means "as the annotations allow"', () => {
    const policy = toolPolicy({ trust_annotations: false, approval: { 'read_*': 'never', 'list_?': 'auto' } });
    expect(policy('read_file', unannotated).destructive).toBe(false);
    expect(policy('list_x', readOnly)).toEqual({ destructive: true, source: 'trust_annotations: false' });
    expect(policy('stat', readOnly)).toEqual({ destructive: true, source: 'trust_annotations: false' });
  });

  it('auto with trusted annotations is the annotations', () => {
    const policy = toolPolicy({ trust_annotations: true, approval: { '*': 'auto' } });
    expect(policy('read', readOnly).destructive).toBe(false);
    expect(policy('write', unannotated).destructive).toBe(true);
  });

  it('the first matching pattern in config order wins', () => {
    expect(
      toolPolicy({ trust_annotations: true, approval: { 'write_*': 'never', write_file: 'always' } })('write_file', unannotated)
        .destructive,
    ).toBe(false);
    expect(
      toolPolicy({ trust_annotations: true, approval: { write_file: 'always', 'write_*': 'never' } })('write_file', unannotated)
        .destructive,
    ).toBe(true);
    expect(
      toolPolicy({ trust_annotations: true, approval: { 'write_*': 'never', write_file: 'always' } })('write_dir', unannotated).source,
    ).toBe('rule "write_*": never');
  });

  it('reads the config as the schema parses it (defaults: trusted, no rules; order kept from YAML)', () => {
    const [server] = configSchema.parse({
      mcp_servers: [{ name: 's', command: 'x', approval: { 'b*': 'never', 'a*': 'always', '*': 'always' } }],
    }).mcp_servers;
    expect(server!.trust_annotations).toBe(true);
    const policy = toolPolicy(server!);
    expect(policy('ab', readOnly).destructive).toBe(true);
    expect(policy('ba', unannotated).destructive).toBe(false);
    expect(policy('c', readOnly).source).toBe('rule "*": always');
  });
});
