/**
 * The run machine with approval policies: a planned call that a rule approves runs without a
 * stop (its callTool names the rule, for the audit), one a rule rejects does not run and the
 * model reads the rule's reason as it reads a human's, one a rule requires — or whose condition
 * fails — stops for a human with the why in the approval's description, and a call no rule
 * matches is planned as without policies. Each transition is checked for purity as in
 * machine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  MessageRole,
  type Message,
  type NewApproval,
  type NewMessage,
  type PendingApproval,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import type { ApprovalPolicyRule } from '../../common/config/schema.js';
import { ApprovalPolicies } from '../domain/approval-policy.js';
import type { AgentNode } from '../domain/tree.js';
import { callHash } from '../../common/call-hash.js';
import { freshRun, next, storedRun } from './machine.js';
import type { CallFacts, Effect, MachineEnv, Path, RunEvent, RunState } from './types.js';

const schema = { type: 'object', properties: { name: { type: 'string' }, value: { type: 'number' } } };
const tool = (name: string, destructive: boolean): Tool => ({
  name,
  description: name,
  inputSchema: schema,
  destructive,
  server: 'resources',
});
const TOOLS = [tool('resources_list', false), tool('resources_add', true), tool('resources_remove', true)];

const rule = (fields: Partial<ApprovalPolicyRule> & Pick<ApprovalPolicyRule, 'name' | 'tools'>): ApprovalPolicyRule => ({ ...fields });

const RULES: ApprovalPolicyRule[] = [
  rule({ name: 'tiny-adds', tools: ['resources_add'], when: 'args.value < 10', decide: 'approve' }),
  rule({
    name: 'prod-deletes',
    tools: ['resources_remove', 'delete_*'],
    when: "args.name.startsWith('prod-')",
    decide: 'reject',
    reason: 'production resources are never removed by the agent',
  }),
  rule({ name: 'big-adds', tools: ['resources_add'], when: 'args.value >= 1000', require: { approvals: 1, not_requester: false } }),
  rule({ name: 'broken', tools: ['resources_add'], when: 'args.missing > 1 && args.value == 77', decide: 'approve' }),
  rule({ name: 'no-lists-for-bob', tools: ['resources_list'], when: "requester.name == 'token:bob'", decide: 'reject' }),
  rule({
    name: 'owner-approves',
    tools: ['resources_*'],
    when: "requester.name == conversation.owner && 'approve' in requester.roles && now > timestamp('2020-01-01T00:00:00Z') && has(args.value) && args.value == 42",
    decide: 'approve',
  }),
];

const env = (rules: ApprovalPolicyRule[] = RULES, root?: AgentNode): MachineEnv => ({
  root,
  simple: { model: 'gemini-simple', a2aTools: [] },
  defaultModel: 'gemini-default',
  maxModelCalls: 5,
  history: { systemPrompt: 'You manage resources.', maxTokens: 0, compactionStrategy: 'delete-old' },
  policies: ApprovalPolicies.compile(rules),
});

const FACTS: CallFacts = { now: Date.parse('2026-11-29T10:00:00Z'), conversation: { id: 'conversation-1', owner: 'token:alice' } };
const ALICE = { name: 'token:alice', roles: ['chat', 'approve'] };

const call = (id: string, name: string, args: Record<string, unknown>): ToolCallPart => ({ id, name, argumentsJson: JSON.stringify(args) });
const userText = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const stored = (messages: NewMessage[]): Message[] =>
  messages.map((message, index) => ({ ...message, id: `m-${index + 1}`, seq: index + 1, createdAt: undefined }));

const ev = {
  user: (requester = ALICE): RunEvent => ({ kind: 'userMessage', runId: 'run-1', activation: 'activation-1', text: 'go', requester }),
  tools: (): RunEvent => ({ kind: 'toolsLoaded', tools: TOOLS, facts: FACTS }),
  conversation: (): RunEvent => ({ kind: 'conversationLoaded', path: [], messages: stored([userText('go')]) }),
  calls: (path: Path, toolCalls: ToolCallPart[]): RunEvent => ({
    kind: 'modelAnswered',
    path,
    reply: { text: '', toolCalls },
    facts: FACTS,
  }),
  tool: (path: Path, callId: string, text: string): RunEvent => ({ kind: 'toolFinished', path, callId, outcome: { text, isError: false } }),
};

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

function feed(start: RunState, machineEnv: MachineEnv, ...events: RunEvent[]): { state: RunState; effects: Effect[] } {
  let out = { state: start, effects: [] as Effect[] };
  for (const event of events) {
    const before = structuredClone(out.state);
    deepFreeze(out.state);
    deepFreeze(event);
    const stepped = next(out.state, event, machineEnv);
    expect(out.state).toEqual(before);
    out = stepped;
  }
  return out;
}

const of = <K extends Effect['kind']>(effects: Effect[], kind: K) =>
  effects.filter((effect): effect is Extract<Effect, { kind: K }> => effect.kind === kind);

/** Simple mode, the model's step with `calls` answered. */
function simpleStep(calls: ToolCallPart[], requester = ALICE, machineEnv = env()) {
  return feed(freshRun('simple', 3), machineEnv, ev.user(requester), ev.tools(), ev.conversation(), ev.calls([], calls));
}

describe('approval policies in the run machine', () => {
  it('approve: the call runs at once without a stop, and its callTool names the rule for the audit', () => {
    const { state, effects } = simpleStep([call('c1', 'resources_add', { name: 'x', value: 5 })]);
    const [run] = of(effects, 'callTool');
    expect(run).toMatchObject({ call: { name: 'resources_add' }, policy: 'tiny-adds', unapprovedReason: 'approved by policy "tiny-adds"' });
    expect(of(effects, 'write')).toHaveLength(0);
    const after = feed(state, env(), ev.tool([], 'c1', 'added x'));
    expect(of(after.effects, 'callModel')).toHaveLength(1);
  });

  it('reject: the call does not run, the rejection is audited, and the model reads the rule and its reason', () => {
    const { effects } = simpleStep([call('c1', 'resources_remove', { name: 'prod-db' })]);
    expect(of(effects, 'callTool')).toHaveLength(0);
    expect(of(effects, 'auditPolicy')).toMatchObject([
      { rule: 'prod-deletes', call: { name: 'resources_remove' }, reason: 'production resources are never removed by the agent' },
    ]);
    const [model] = of(effects, 'callModel');
    const result = model!.history.at(-1)!;
    expect(result.toolCall).toMatchObject({ rejected: true, reason: 'production resources are never removed by the agent', isError: true });
    expect(result.content).toBe(
      'Rejected by policy "prod-deletes": production resources are never removed by the agent. The call was not executed. Do not retry it unless the user asks you to.',
    );
  });

  it('require: the call stops for a human as a destructive call does, and the approval says which rule asks', () => {
    const { effects } = simpleStep([call('c1', 'resources_add', { name: 'x', value: 5000 })]);
    const [write] = of(effects, 'write');
    expect(write!.approvals).toHaveLength(1);
    expect(write!.approvals[0]!.description).toBe(
      'resources_add on resources with arguments {"name":"x","value":5000} (policy "big-adds" asks a human)',
    );
    // The requester is kept with the run, for the calls after a decision.
    expect(write!.run!.requester).toEqual(ALICE);
  });

  it('a condition that fails at run time stops for a human, with the error in the approval', () => {
    const { effects } = simpleStep([call('c1', 'resources_add', { name: 'x', value: 77 })]);
    expect(of(effects, 'callTool')).toHaveLength(0);
    const description = of(effects, 'write')[0]!.approvals[0]!.description;
    expect(description).toContain('policy "broken" could not be evaluated, so a human decides');
    expect(description).toContain('missing');
  });

  it('no rule matching: a destructive call stops as it does without policies, with the plain description', () => {
    const { effects } = simpleStep([call('c1', 'resources_add', { name: 'x', value: 50 })]);
    expect(of(effects, 'write')[0]!.approvals[0]!.description).toBe('resources_add on resources with arguments {"name":"x","value":50}');
  });

  it('no rule matching: a read-only call runs as it does without policies', () => {
    const { effects } = simpleStep([call('c1', 'resources_list', {})]);
    expect(of(effects, 'callTool')).toMatchObject([{ call: { name: 'resources_list' }, unapprovedReason: '' }]);
    expect(of(effects, 'callTool')[0]!.policy).toBeUndefined();
  });

  it('a rule applies to a read-only tool too: the requester decides whether it runs', () => {
    const bob = simpleStep([call('c1', 'resources_list', {})], { name: 'token:bob', roles: ['chat'] });
    expect(of(bob.effects, 'callTool')).toHaveLength(0);
    expect(of(bob.effects, 'auditPolicy')).toMatchObject([{ rule: 'no-lists-for-bob' }]);
  });

  it('requester, conversation and now come from the run and the events', () => {
    const alice = simpleStep([call('c1', 'resources_remove', { name: 'x', value: 42 })]);
    expect(of(alice.effects, 'callTool')).toMatchObject([{ policy: 'owner-approves' }]);
    // Without the approve role the rule does not match: the destructive call stops as without policies.
    const chatOnly = simpleStep([call('c1', 'resources_remove', { name: 'x', value: 42 })], { name: 'token:alice', roles: ['chat'] });
    expect(of(chatOnly.effects, 'callTool')).toHaveLength(0);
    expect(of(chatOnly.effects, 'write')[0]!.approvals[0]!.description).not.toContain('policy');
  });

  it('one stop per step: a second call a rule requires is deferred like a second destructive call', () => {
    const { effects } = simpleStep([
      call('c1', 'resources_add', { name: 'x', value: 5000 }),
      call('c2', 'resources_add', { name: 'y', value: 6000 }),
    ]);
    const [write] = of(effects, 'write');
    expect(write!.approvals).toHaveLength(1);
    expect(write!.messages.some((message) => message.toolCall?.id === 'c2' && message.content.includes('was not executed'))).toBe(true);
  });

  it('in an agent tree, `node` is the path of names, and a require rule stops even where approvals are auto', () => {
    const root: AgentNode = {
      name: 'pipeline',
      type: 'parallel',
      agents: [{ name: 'worker', type: 'llm', prompt: 'work' }],
    };
    const machineEnv = env(
      [
        rule({
          name: 'worker-asks',
          tools: ['resources_list'],
          when: "node == 'pipeline/worker'",
          require: { approvals: 1, not_requester: false },
        }),
      ],
      root,
    );
    const { effects } = feed(freshRun('tree', 0), machineEnv, ev.user(), ev.tools(), ev.calls([0], [call('c1', 'resources_list', {})]));
    expect(of(effects, 'callTool')).toHaveLength(0);
    expect(of(effects, 'write')[0]!.approvals[0]!.description).toContain('policy "worker-asks" asks a human');
  });

  it("an a2a node is judged by its delegation tool name: a reject rule ends the node with the rule's reason", () => {
    const root: AgentNode = {
      name: 'pipeline',
      type: 'sequential',
      agents: [{ name: 'remote', type: 'a2a', url: 'http://remote.test/a2a', output_key: 'out' }],
    };
    const machineEnv = env([rule({ name: 'no-remote', tools: ['a2a_remote'], decide: 'reject', reason: 'not today' })], root);
    const { effects } = feed(freshRun('tree', 0), machineEnv, ev.user(), ev.tools());
    expect(of(effects, 'callTool')).toHaveLength(0);
    expect(of(effects, 'auditPolicy')).toMatchObject([{ rule: 'no-remote', reason: 'not today' }]);
    // The node's finish goes with the run's finish write (it is the tree's last node).
    const [write] = of(effects, 'write');
    expect(write!.messages.at(-1)).toMatchObject({ node: 'remote', toolCall: { rejected: true, reason: 'not today' } });
    expect(write!.messages.at(-1)!.content).toContain('Rejected by policy "no-remote": not today.');
  });
});

describe('quorums in the run machine', () => {
  const QUORUM_RULES = [
    rule({ name: 'four-eyes', tools: ['resources_add'], require: { approvals: 2, not_requester: true } }),
    rule({ name: 'admins-remove', tools: ['resources_remove'], require: { approvals: 1, role: 'admin', not_requester: false } }),
  ];
  const quorumEnv = env(QUORUM_RULES);

  /** The approval stored for the paused call, as the store returns it, and the run it paused. */
  function paused(name: string, args: Record<string, unknown>) {
    const { state, effects } = simpleStep([call('c1', name, args)], ALICE, quorumEnv);
    const [write] = of(effects, 'write');
    const approval = write!.approvals[0]!;
    const written = feed(state, quorumEnv, { kind: 'written', revision: 4 });
    return { approval, run: write!.run!, state: written.state };
  }

  const pendingOf = (approval: NewApproval, extra: Partial<PendingApproval> = {}): PendingApproval => ({
    ...approval,
    conversationId: 'conversation-1',
    createdAt: undefined,
    updatedAt: undefined,
    status: ApprovalStatus.APPROVAL_STATUS_PENDING,
    argsHash: callHash(approval.toolName, JSON.parse(approval.toolArgsJson)),
    votes: [],
    ...extra,
  });

  const decide = (approval: PendingApproval, decidedBy: string, roles: string[]): RunEvent => ({
    kind: 'approvalDecided',
    activation: 'activation-2',
    uuid: approval.uuid,
    approved: true,
    approval,
    decidedBy,
    via: 'rest',
    deciderRoles: roles,
  });

  it("a rule's require becomes the approval's quorum, with the run's requester; a plain require stores none", () => {
    const { approval } = paused('resources_add', { name: 'x', value: 5 });
    expect(approval.quorum).toEqual({ required: 2, role: 'approve', notRequester: true, requester: 'token:alice' });
    const plain = simpleStep([call('c1', 'resources_add', { name: 'x', value: 5000 })]);
    expect(of(plain.effects, 'write')[0]!.approvals[0]!.quorum).toBeUndefined();
    // A role alone is a quorum of one: stored, so that the role is checked.
    expect(paused('resources_remove', { name: 'x' }).approval.quorum).toEqual({
      required: 1,
      role: 'admin',
      notRequester: false,
      requester: 'token:alice',
    });
  });

  it("a vote from a principal without the quorum's role is refused before anything is claimed", () => {
    const { approval, run } = paused('resources_add', { name: 'x', value: 5 });
    const { effects } = feed(storedRun(run, 4), quorumEnv, decide(pendingOf(approval), 'token:carol', ['chat', 'admin']));
    expect(of(effects, 'claim')).toHaveLength(0);
    expect(of(effects, 'refuse')).toEqual([
      {
        kind: 'refuse',
        code: 'permissionDenied',
        message: expect.stringContaining('decided by principals with the role approve; token:carol has chat, admin'),
      },
    ]);
  });

  it('a vote that does not complete the quorum ends the activation as voteRecorded; nothing runs', () => {
    const { approval, run } = paused('resources_add', { name: 'x', value: 5 });
    const pending = pendingOf(approval);
    const voted = feed(storedRun(run, 4), quorumEnv, decide(pending, 'token:bob', ['approve']));
    expect(of(voted.effects, 'claim')).toMatchObject([{ approved: true, decidedBy: 'token:bob' }]);
    const after = feed(voted.state, quorumEnv, { kind: 'claimed', won: false, voteRecorded: true, approval: pending });
    expect(of(after.effects, 'runApproved')).toHaveLength(0);
    expect(of(after.effects, 'done')).toEqual([{ kind: 'done', answer: { kind: 'voteRecorded' } }]);
  });

  it('the completing vote runs the arguments an earlier voter edited, told as their edit', () => {
    const { approval, run } = paused('resources_add', { name: 'x', value: 5 });
    const edited = { name: 'x', value: 7 };
    const completed = pendingOf(approval, {
      status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
      editedArgsJson: JSON.stringify(edited),
      votes: [
        { by: 'token:bob', at: undefined, argsHash: 'h' },
        { by: 'token:dave', at: undefined, argsHash: 'h' },
      ],
    });
    const voted = feed(storedRun(run, 4), quorumEnv, decide(pendingOf(approval), 'token:dave', ['approve']));
    const after = feed(voted.state, quorumEnv, { kind: 'claimed', won: true, approval: completed });
    expect(of(after.effects, 'runApproved')).toMatchObject([{ edited: { args: edited, by: 'token:bob' } }]);
  });

  it('an escalating rule stores its escalation; once escalated, the votes of its role count too', () => {
    const machineEnv = env([
      rule({
        name: 'escalating',
        tools: ['resources_add'],
        require: { approvals: 2, not_requester: false },
        escalate: { after: 1_800_000, to_role: 'admin' },
      }),
    ]);
    const { effects } = simpleStep([call('c1', 'resources_add', { name: 'x', value: 5 })], ALICE, machineEnv);
    const [write] = of(effects, 'write');
    const approval = write!.approvals[0]!;
    expect(approval.escalation).toEqual({ afterMs: 1_800_000, toRole: 'admin' });
    const before = feed(
      storedRun(write!.run!, 4),
      machineEnv,
      decide(pendingOf(approval, { escalationRole: 'admin' }), 'token:carol', ['admin']),
    );
    expect(of(before.effects, 'refuse')).toMatchObject([{ code: 'permissionDenied' }]);
    const after = feed(
      storedRun(write!.run!, 4),
      machineEnv,
      decide(pendingOf(approval, { escalationRole: 'admin', escalatedAt: new Date(FACTS.now) }), 'token:carol', ['admin']),
    );
    expect(of(after.effects, 'refuse')).toEqual([]);
    expect(of(after.effects, 'claim')).toMatchObject([{ decidedBy: 'token:carol' }]);
  });
});
