/**
 * What a replica does with a run it took over, from what is stored alone.
 * The rule that never bends: a destructive call whose outcome is unknown is
 * never run again by itself; anything else goes on without doing a recorded step twice.
 */
import { describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type Message,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import type { StoredRun } from './run/state.js';
import { MODE_CHANGED, NOT_RESUMABLE, planTakeover, TOO_MANY_TAKEOVERS, TREE_CHANGED, type TakeoverInput } from './takeover-plan.js';

let seq = 0;
const message = (role: MessageRole, content: string, toolCall?: Message['toolCall']): Message => ({
  id: `m${++seq}`,
  role,
  content,
  seq,
  createdAt: undefined,
  ...(toolCall && { toolCall }),
});
const user = (content: string) => message(MessageRole.MESSAGE_ROLE_USER, content);
const assistant = (content: string) => message(MessageRole.MESSAGE_ROLE_ASSISTANT, content);
const result = (name: string, rejected = false) =>
  message(MessageRole.MESSAGE_ROLE_TOOL, 'done', {
    id: 'call-1',
    name,
    argumentsJson: '{}',
    result: 'done',
    ...(rejected && { rejected: true }),
  });

function approval(uuid: string, status: ApprovalStatus): PendingApproval {
  return {
    uuid,
    conversationId: 'c1',
    toolName: 'resources_add',
    toolArgsJson: JSON.stringify({ name: 'x' }),
    description: 'add x',
    createdAt: undefined,
    status,
    argsHash: 'h',
    toolCallId: 'call-1',
    updatedAt: undefined,
    votes: [],
    agentChain: [],
  };
}

function conversation(messages: Message[], pendingApprovals: PendingApproval[] = []): Conversation {
  return {
    id: 'c1',
    sessionId: 'abcd1234',
    status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
    messages,
    pendingApprovals,
    messageCount: messages.length,
    watched: false,
    runRevision: 4,
    createdAt: undefined,
    updatedAt: undefined,
    usage: undefined,
  };
}

function run(mode: 'simple' | 'tree', uuids: string[]): StoredRun {
  return {
    runId: 'run-1',
    mode,
    userMessage: 'add x',
    session: {},
    pending: uuids.map((uuid) => ({
      approvalUuid: uuid,
      path: mode === 'tree' ? [0] : [],
      outputKey: '',
      fingerprint: 'f',
      loopIterations: {},
      nodeMessages: 1,
      toolName: 'resources_add',
      argsHash: 'h',
    })),
    branchOutputs: {},
    modelCalls: 1,
  };
}

const input = (over: Partial<TakeoverInput>): TakeoverInput => ({
  conversation: conversation([user('add x')]),
  unfinished: [],
  run: undefined,
  mode: 'simple',
  treeRunsUnapproved: false,
  policyApproves: false,
  takeovers: 1,
  maxTakeovers: 3,
  ...over,
});

describe('the plan for a run taken over', () => {
  it('an approved call that started without a recorded outcome is asked again, never run — even past max_takeovers', () => {
    const executing = approval('a1', ApprovalStatus.APPROVAL_STATUS_EXECUTING);
    for (const takeovers of [1, 10]) {
      expect(planTakeover(input({ unfinished: [executing], run: run('simple', ['a1']), takeovers }))).toEqual({
        kind: 'outcomeUnknown',
        executing: [executing],
      });
    }
  });

  it("a simple-mode message's turn runs again from its stored history, whatever it recorded", () => {
    expect(planTakeover(input({}))).toEqual({ kind: 'drive', event: { userMessage: 'add x' } });
    expect(planTakeover(input({ conversation: conversation([user('add x'), assistant('compacted')]) }))).toEqual({
      kind: 'drive',
      event: { userMessage: 'add x' },
    });
  });

  it('a claimed approval whose call never started runs now (the one run the human approved)', () => {
    const approved = approval('a1', ApprovalStatus.APPROVAL_STATUS_APPROVED);
    expect(planTakeover(input({ unfinished: [approved], run: run('simple', ['a1']) }))).toEqual({
      kind: 'drive',
      event: { userMessage: 'add x', approved },
    });
  });

  it("a decided approval's continuation goes on after it; a recorded rejection is passed on", () => {
    const done = conversation([user('add x'), result('resources_add')]);
    expect(planTakeover(input({ conversation: done, run: run('simple', ['a1']) }))).toEqual({
      kind: 'drive',
      event: { userMessage: 'add x', resumed: { uuid: 'a1', rejected: false } },
    });
    const no = conversation([user('add x'), result('resources_add', true)]);
    expect(planTakeover(input({ conversation: no, run: run('simple', ['a1']) }))).toEqual({
      kind: 'drive',
      event: { userMessage: 'add x', resumed: { uuid: 'a1', rejected: true } },
    });
  });

  it('an agent tree goes on only where nothing it recorded would be done again', () => {
    const tree = { mode: 'tree' as const };
    expect(planTakeover(input({ ...tree }))).toEqual({ kind: 'drive', event: { userMessage: 'add x' } });
    // A node finished and recorded its messages: running the tree again would repeat them.
    expect(planTakeover(input({ ...tree, conversation: conversation([user('add x'), assistant('analysis')]) }))).toEqual({
      kind: 'end',
      note: NOT_RESUMABLE,
    });
    // Resumed after the approved call's result: fine; after more was recorded: not.
    expect(
      planTakeover(input({ ...tree, conversation: conversation([user('add x'), result('resources_add')]), run: run('tree', ['a1']) })).kind,
    ).toBe('drive');
    expect(
      planTakeover(
        input({
          ...tree,
          conversation: conversation([user('add x'), result('resources_add'), assistant('next node')]),
          run: run('tree', ['a1']),
        }),
      ),
    ).toEqual({ kind: 'end', note: NOT_RESUMABLE });
    // A tree that runs destructive calls unapproved somewhere may have one in flight with no record.
    expect(planTakeover(input({ ...tree, treeRunsUnapproved: true }))).toEqual({ kind: 'end', note: NOT_RESUMABLE });
  });

  it('an agent tree part-way through goes on from its checkpoint: at its first unfinished node', () => {
    const tree = { mode: 'tree' as const, treeFingerprint: 'tree-1' };
    const checkpointed: StoredRun = {
      ...run('tree', []),
      session: { analysis: 'three servers' },
      checkpoint: { tree: 'tree-1', walk: { '': { kind: 'sequential', index: 1, output: 'three servers' } } },
    };
    const recorded = conversation([user('add x'), assistant('three servers')]);
    expect(planTakeover(input({ ...tree, conversation: recorded, run: checkpointed }))).toEqual({
      kind: 'drive',
      event: { userMessage: 'add x', fromCheckpoint: true },
    });
    // The same run stored by a release before checkpoints (no checkpoint): it cannot tell what finished.
    const { checkpoint: _older, ...older } = checkpointed;
    expect(planTakeover(input({ ...tree, conversation: recorded, run: older }))).toEqual({ kind: 'end', note: NOT_RESUMABLE });
    // Positions in another tree than the one configured now are never walked.
    expect(planTakeover(input({ ...tree, treeFingerprint: 'tree-2', conversation: recorded, run: checkpointed }))).toEqual({
      kind: 'end',
      note: TREE_CHANGED,
    });
    // Destructive calls without approval (or by a policy) leave no record until their step ends: not resumed either.
    expect(planTakeover(input({ ...tree, treeRunsUnapproved: true, conversation: recorded, run: checkpointed }))).toEqual({
      kind: 'end',
      note: NOT_RESUMABLE,
    });
    expect(planTakeover(input({ ...tree, policyApproves: true, conversation: recorded, run: checkpointed }))).toEqual({
      kind: 'end',
      note: NOT_RESUMABLE,
    });
    // An outcome-unknown call and max_takeovers come first, as for any run.
    const executing = approval('a1', ApprovalStatus.APPROVAL_STATUS_EXECUTING);
    expect(planTakeover(input({ ...tree, unfinished: [executing], conversation: recorded, run: checkpointed })).kind).toBe(
      'outcomeUnknown',
    );
    expect(planTakeover(input({ ...tree, takeovers: 4, conversation: recorded, run: checkpointed }))).toEqual({
      kind: 'end',
      note: TOO_MANY_TAKEOVERS(3),
    });
  });

  it('where a policy may approve calls, a turn or a continuation is not run again: such a call may have run with no record yet', () => {
    const policies = { policyApproves: true };
    expect(planTakeover(input({ ...policies }))).toEqual({ kind: 'end', note: NOT_RESUMABLE });
    const done = conversation([user('add x'), result('resources_add')]);
    expect(planTakeover(input({ ...policies, conversation: done, run: run('simple', ['a1']) }))).toEqual({
      kind: 'end',
      note: NOT_RESUMABLE,
    });
    // An approval claimed and never started still runs: that is the one run a human approved.
    const approved = approval('a1', ApprovalStatus.APPROVAL_STATUS_APPROVED);
    expect(planTakeover(input({ ...policies, unfinished: [approved], run: run('simple', ['a1']) })).kind).toBe('drive');
  });

  it('a waiting sibling approval is not taken for the decided one', () => {
    const waiting = approval('a2', ApprovalStatus.APPROVAL_STATUS_PENDING);
    const stored = run('tree', ['a1', 'a2']);
    const plan = planTakeover(
      input({ mode: 'tree', conversation: conversation([user('add x'), result('resources_add')], [waiting]), run: stored }),
    );
    expect(plan).toEqual({ kind: 'drive', event: { userMessage: 'add x', resumed: { uuid: 'a1', rejected: false } } });
  });

  it('a turn taken over more than max_takeovers times ends with a note; so does one whose mode changed', () => {
    expect(planTakeover(input({ takeovers: 4 }))).toEqual({ kind: 'end', note: TOO_MANY_TAKEOVERS(3) });
    expect(planTakeover(input({ run: run('tree', []), mode: 'simple' }))).toEqual({ kind: 'end', note: MODE_CHANGED });
  });
});
