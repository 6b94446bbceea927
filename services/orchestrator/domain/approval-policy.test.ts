import { describe, expect, it } from 'vitest';
import type { ApprovalPolicyRule } from '../../common/config/schema.js';
import {
  ApprovalPolicies,
  compileCondition,
  evaluateCondition,
  POLICY_BOUNDS,
  PolicyConfigError,
  policyProblems,
  type PolicyCall,
  type PolicyContext,
} from './approval-policy.js';

const CONTEXT: PolicyContext = {
  conversation: { id: 'conversation-1', owner: 'token:alice' },
  requester: { name: 'token:alice', roles: ['chat', 'approve'] },
  now: Date.parse('2026-11-29T10:30:00Z'),
};
const call = (tool: string, args: Record<string, unknown> = {}, extra: Partial<PolicyCall> = {}): PolicyCall => ({
  tool,
  server: 'resources',
  args,
  node: '',
  ...extra,
});

const rule = (fields: Partial<ApprovalPolicyRule> & Pick<ApprovalPolicyRule, 'name'>): ApprovalPolicyRule => ({
  tools: ['*'],
  decide: 'approve',
  ...fields,
});

/** The value of one condition for a call, or its error. */
function conditionValue(expression: string, given: PolicyCall = call('resources_add'), context = CONTEXT) {
  const compiled = compileCondition(expression);
  if ('problem' in compiled) throw new Error(`does not compile: ${compiled.problem}`);
  return evaluateCondition(compiled.condition, given, context);
}

describe('rules: the first that matches decides', () => {
  const policies = ApprovalPolicies.compile([
    rule({ name: 'tiny-adds', tools: ['resources_add'], when: 'args.value < 10' }),
    rule({
      name: 'prod-deletes',
      tools: ['resources_remove', 'delete_*'],
      when: "args.name.startsWith('prod-')",
      decide: 'reject',
      reason: 'never',
    }),
    rule({
      name: 'big-adds',
      tools: ['resources_add'],
      when: 'args.value >= 1000',
      decide: undefined,
      require: { approvals: 1, not_requester: false },
    }),
    rule({ name: 'any-add', tools: ['resources_ad?'], decide: 'reject' }),
  ]);

  it('approve, reject and require, each by its rule', () => {
    expect(policies.decide(call('resources_add', { value: 5 }), CONTEXT)).toEqual({ kind: 'approve', rule: 'tiny-adds' });
    expect(policies.decide(call('resources_remove', { name: 'prod-db' }), CONTEXT)).toEqual({
      kind: 'reject',
      rule: 'prod-deletes',
      reason: 'never',
    });
    expect(policies.decide(call('resources_add', { value: 5000 }), CONTEXT)).toEqual({
      kind: 'require',
      rule: 'big-adds',
      require: { approvals: 1, notRequester: false },
    });
  });

  it('a rule whose condition is false lets the next one decide; a rule without condition always matches', () => {
    expect(policies.decide(call('resources_add', { value: 50 }), CONTEXT)).toMatchObject({ kind: 'reject', rule: 'any-add' });
  });

  it('tool patterns: * is any run of characters, ? exactly one, the whole name must match', () => {
    expect(policies.decide(call('delete_everything', { name: 'prod-x' }), CONTEXT)).toMatchObject({ rule: 'prod-deletes' });
    expect(policies.decide(call('xdelete_everything', { name: 'prod-x' }), CONTEXT)).toEqual({ kind: 'none' });
    expect(policies.decide(call('resources_adds', { value: 50 }), CONTEXT)).toEqual({ kind: 'none' });
  });

  it('no rule matching: none (the annotations decide)', () => {
    expect(policies.decide(call('resources_list'), CONTEXT)).toEqual({ kind: 'none' });
    expect(policies.decide(call('resources_remove', { name: 'dev-db' }), CONTEXT)).toEqual({ kind: 'none' });
  });

  it('a condition that fails is a stop for a human with the error, never an approval nor the next rule', () => {
    const failing = ApprovalPolicies.compile([
      rule({ name: 'needs-value', when: 'args.value < 10' }),
      rule({ name: 'fallback', decide: 'approve' }),
    ]);
    const verdict = failing.decide(call('resources_add', { name: 'x' }), CONTEXT);
    expect(verdict).toMatchObject({ kind: 'require', rule: 'needs-value' });
    expect(verdict.kind === 'require' && verdict.error).toContain('value');
  });

  it('approvesCalls: whether some rule approves (a taken-over turn is then not run again)', () => {
    expect(policies.approvesCalls).toBe(true);
    expect(ApprovalPolicies.compile([rule({ name: 'no', decide: 'reject' })]).approvesCalls).toBe(false);
  });

  it('a configuration that did not pass the check is refused whole', () => {
    expect(() => ApprovalPolicies.compile([rule({ name: 'bad', when: 'args.value <' })])).toThrow(PolicyConfigError);
  });
});

describe('the variables of a condition', () => {
  it('tool, server, node', () => {
    const given = call('resources_add', {}, { server: 'stock', node: 'pipeline/executor' });
    expect(conditionValue("tool == 'resources_add' && server == 'stock' && node.endsWith('/executor')", given)).toEqual({ value: true });
  });

  it('args: whole numbers are ints, other numbers doubles, objects maps, lists lists', () => {
    const given = call('resources_add', { value: 5, ratio: 0.5, tags: ['a', 'b'], owner: { team: 'ops' } });
    expect(conditionValue("args.value == 5 && args.ratio < 1.0 && 'b' in args.tags && args.owner.team == 'ops'", given)).toEqual({
      value: true,
    });
    expect(conditionValue('has(args.missing)', given)).toEqual({ value: false });
  });

  it('conversation and requester', () => {
    expect(conditionValue("conversation.id == 'conversation-1' && conversation.owner == requester.name")).toEqual({ value: true });
    expect(conditionValue("requester.roles.exists(role, role == 'approve') && !('admin' in requester.roles)")).toEqual({ value: true });
  });

  it('now, a timestamp', () => {
    expect(conditionValue("now > timestamp('2026-01-01T00:00:00Z') && now.getHours() == 10")).toEqual({ value: true });
  });
});

describe('evaluation errors and bounds', () => {
  it('a missing field is a run-time error', () => {
    expect(conditionValue('args.value < 10')).toEqual({ error: 'field not found: value' });
  });

  it('a result that is not a bool is an error', () => {
    expect(conditionValue('args.value', call('resources_add', { value: 5 }))).toEqual({
      error: 'the condition gave the int 5, not a bool',
    });
  });

  it('an evaluation past its steps is stopped, even where the logic would absorb the error', () => {
    const items = Array.from({ length: 200 }, (_, index) => index);
    const given = call('resources_add', { items });
    const stopped = { error: `the evaluation was stopped after ${POLICY_BOUNDS.steps} comprehension steps` };
    expect(conditionValue('args.items.all(x, args.items.all(y, x + y >= 0))', given)).toEqual(stopped);
    expect(conditionValue('args.items.all(x, args.items.all(y, x + y >= 0)) || true', given)).toEqual(stopped);
    // Within the bound the same expression answers.
    expect(
      conditionValue('args.items.all(x, args.items.all(y, x + y >= 0))', call('resources_add', { items: items.slice(0, 30) })),
    ).toEqual({
      value: true,
    });
  });

  it('arguments larger than the bound are not evaluated', () => {
    const given = call('resources_add', { blob: 'x'.repeat(POLICY_BOUNDS.argumentBytes) });
    expect(conditionValue('true', given)).toMatchObject({ error: expect.stringContaining('bytes of JSON') });
  });
});

describe('compiling: syntax and types, with where in the expression', () => {
  const problem = (expression: string) => {
    const compiled = compileCondition(expression);
    return 'problem' in compiled ? { problem: compiled.problem, offset: compiled.offset } : undefined;
  };

  it('a syntax error', () => {
    expect(problem('args.value < 10 +')).toEqual({ problem: 'syntax error: found + but expecting end of input', offset: 16 });
  });

  it('type errors: an unknown variable, an unknown field, a wrong overload, a result that is not a bool', () => {
    expect(problem('valu < 10')).toMatchObject({ problem: expect.stringContaining("undeclared reference to 'valu'"), offset: 0 });
    expect(problem("requester.nam == 'x'")).toMatchObject({ problem: expect.stringContaining("requester has no field 'nam'") });
    expect(problem('tool < 10')).toEqual({ problem: "found no matching overload for '_<_' applied to '(string, int)'", offset: 5 });
    expect(problem('tool == 10')).toMatchObject({ problem: "found no matching overload for '_==_' applied to '(string, int)'" });
    expect(problem('tool.frobnicate()')).toMatchObject({ problem: "undeclared reference to function 'frobnicate'" });
    expect(problem('requester.roles')).toMatchObject({ problem: 'a condition must be a bool; this expression is a list(string)' });
  });

  it('bounds: length, size and nesting of comprehensions', () => {
    expect(problem(`tool == '${'x'.repeat(POLICY_BOUNDS.expressionLength)}'`)).toMatchObject({
      problem: expect.stringContaining('characters long'),
    });
    expect(problem(Array.from({ length: 300 }, () => 'true').join('&&'))).toMatchObject({ problem: expect.stringContaining('nodes') });
    expect(problem('args.a.all(x, args.a.all(y, args.a.all(z, true)))')).toMatchObject({
      problem: expect.stringContaining('nested 3 deep'),
    });
  });
});

describe('what the configuration check says of the policies', () => {
  const config = (rules: ApprovalPolicyRule[], auth?: object) =>
    ({ approvals: { timeout: 0, on_timeout: 'reject', tools: {}, policies: rules }, ...(auth && { auth }) }) as Parameters<
      typeof policyProblems
    >[0];

  it('each condition compiled, at its path and offset', () => {
    expect(policyProblems(config([rule({ name: 'a', when: 'args.value <' })])).errors).toEqual([
      { path: ['approvals', 'policies', 0, 'when'], message: expect.stringContaining('syntax error'), offset: 11 },
    ]);
  });

  it('a quorum without auth is an error; with auth, quorum, role, not_requester and escalation are enforced: no warning', () => {
    const quorum = rule({
      name: 'big',
      decide: undefined,
      require: { approvals: 2, role: 'approve', not_requester: true },
      escalate: { after: 1_800_000, to_role: 'admin' },
    });
    const without = policyProblems(config([quorum]));
    expect(without.errors).toEqual([
      { path: ['approvals', 'policies', 0, 'require', 'approvals'], message: expect.stringContaining('need `auth`') },
    ]);
    const withAuth = policyProblems(config([quorum], { tokens: [] }));
    expect(withAuth.errors).toEqual([]);
    expect(withAuth.warnings).toEqual([]);
  });
});
