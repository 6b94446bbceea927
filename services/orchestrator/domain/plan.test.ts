import { describe, expect, it } from 'vitest';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { describeCall, planToolCalls } from './plan.js';

const schema = { type: 'object', properties: { name: { type: 'string' }, value: { type: 'integer' } }, required: ['name', 'value'] };
const tool = (name: string, destructive: boolean, inputSchema: Record<string, unknown> = { type: 'object' }): Tool => ({
  name,
  description: '',
  inputSchema,
  destructive,
  server: 'resources',
});
const tools = new Map([
  ['resources_list', tool('resources_list', false)],
  ['resources_add', tool('resources_add', true, schema)],
  ['resources_remove', tool('resources_remove', true)],
]);
const call = (name: string, args: unknown, id = name) => ({
  id,
  name,
  argumentsJson: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('planToolCalls', () => {
  it('runs safe calls, gates the first destructive one and defers the others', () => {
    const plan = planToolCalls(
      [call('resources_list', {}), call('resources_add', { name: 'a', value: 1 }), call('resources_remove', { id: 'x' })],
      tools,
    );
    expect(plan.map((p) => p.kind)).toEqual(['run', 'gate', 'defer']);
    expect(plan[1]!.args).toEqual({ name: 'a', value: 1 });
  });

  it('runs destructive calls unapproved where they do not gate (parallel and loop nodes)', () => {
    const plan = planToolCalls([call('resources_add', { name: 'a', value: 1 }), call('resources_remove', { id: 'x' })], tools, {
      gateDestructive: false,
    });
    expect(plan.map((p) => [p.kind, p.kind === 'run' && p.unapproved])).toEqual([
      ['run', true],
      ['run', true],
    ]);
    expect(planToolCalls([call('resources_list', {})], tools, { gateDestructive: false })[0]).not.toHaveProperty('unapproved');
  });

  it('answers exit_loop itself only when the node may exit its loop', () => {
    expect(planToolCalls([call('exit_loop', {})], tools, { gateDestructive: false, exitTool: 'exit_loop' })[0]!.kind).toBe('exit');
    expect(planToolCalls([call('exit_loop', {})], tools, { gateDestructive: false })[0]!.kind).toBe('reject');
  });

  it('rejects unknown tools, naming the available ones', () => {
    const [planned] = planToolCalls([call('drop_everything', {})], tools);
    expect(planned!.kind).toBe('reject');
    expect(planned!.kind === 'reject' && planned!.reason).toMatch(
      /unknown tool "drop_everything".*resources_add, resources_list, resources_remove/,
    );
  });

  it('rejects arguments that are not JSON objects', () => {
    expect(planToolCalls([call('resources_list', '{"a": ')], tools)[0]!.kind).toBe('reject');
    expect(planToolCalls([call('resources_list', '[1, 2]')], tools)[0]!.kind).toBe('reject');
    expect(planToolCalls([call('resources_list', '')], tools)[0]!.kind).toBe('run');
  });

  it('rejects arguments that fail the tool schema before any approval exists', () => {
    const [planned] = planToolCalls([call('resources_add', { name: 'a', value: 'ten' })], tools);
    expect(planned!.kind).toBe('reject');
    expect(planned!.kind === 'reject' && planned!.reason).toMatch(/value must be integer/);
  });

  it('validates against JSON Schema 2020-12 and draft-07 dialects', () => {
    for (const dialect of ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema#']) {
      const typed = new Map([['t', tool('t', false, { $schema: dialect, ...schema })]]);
      expect(planToolCalls([call('t', { name: 'a', value: 1.5 })], typed)[0]!.kind).toBe('reject');
      expect(planToolCalls([call('t', { name: 'a', value: 2 })], typed)[0]!.kind).toBe('run');
    }
  });
});

describe('describeCall', () => {
  it('names the tool, its server and the exact arguments', () => {
    expect(describeCall('resources_add', 'resources', { name: 'web-1', value: 5 })).toBe(
      'resources_add on resources with arguments {"name":"web-1","value":5}',
    );
  });
});
