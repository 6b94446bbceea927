/**
 * The run machine alone: every transition of `next` as a table row — a
 * starting state built by feeding events from `freshRun`/`storedRun`, one event, and the
 * effects and state facts expected. Every step of every row goes through `step`, which
 * deep-freezes what `next` is given and checks it is unchanged afterwards: the machine is pure.
 */
import { describe, expect, it } from 'vitest';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  type Message,
  MessageRole,
  type NewApproval,
  type NewMessage,
  type PendingApproval,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import { treeFingerprint, type AgentNode } from '../domain/tree.js';
import { freshRun, next, STOPPED_BY_DEADLINE, storedRun, stoppedText } from './machine.js';
import { EXIT_LOOP_RESULT } from './model-steps.js';
import { MAX_WRITE_ATTEMPTS } from './transition.js';
import { approvalOf } from './walk.js';
import { withChanges } from './writes.js';
import type { StoredRun } from './state.js';
import type { Effect, MachineEnv, Path, RunEvent, RunState, ToolOutcome } from './types.js';

// ---- fixtures -------------------------------------------------------------------------

const listTool: Tool = {
  name: 'resources_list',
  description: 'Lists resources',
  inputSchema: { type: 'object', properties: {} },
  destructive: false,
  server: 'resources',
};
const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const addTool: Tool = {
  name: 'resources_add',
  description: 'Adds a resource',
  inputSchema: nameSchema,
  destructive: true,
  server: 'resources',
};
const removeTool: Tool = {
  name: 'resources_remove',
  description: 'Removes a resource',
  inputSchema: nameSchema,
  destructive: true,
  server: 'resources',
};
const TOOLS = [listTool, addTool, removeTool];

const SYSTEM = 'You manage resources.';
const SIMPLE: MachineEnv = {
  root: undefined,
  simple: { model: 'gemini-simple', a2aTools: [] },
  defaultModel: 'gemini-default',
  maxModelCalls: 5,
  history: { systemPrompt: SYSTEM, maxTokens: 0, compactionStrategy: 'delete-old' },
};
const treeEnv = (root: AgentNode, maxModelCalls = 5): MachineEnv => ({ ...SIMPLE, root, maxModelCalls });

/** Analyzer → executor, data through output_key and {placeholders}. */
const sequentialTree: AgentNode = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', prompt: 'Analyze: {user_message}', output_key: 'analysis' },
    { name: 'executor', type: 'llm', prompt: 'Execute based on {analysis}', output_key: 'result', model: 'claude-executor', timeout: 5000 },
  ],
};

/** Two branches at once, then a summary of both. */
const parallelTree = (approvals?: 'auto' | 'required'): AgentNode => ({
  name: 'pipeline',
  type: 'sequential',
  agents: [
    {
      name: 'fanout',
      type: 'parallel',
      ...(approvals && { approvals }),
      agents: [
        { name: 'alpha', type: 'llm', prompt: 'Alpha part', output_key: 'a', a2a: [{ name: 'peer', url: 'http://peer.test/a2a' }] },
        { name: 'beta', type: 'llm', prompt: 'Beta part', output_key: 'b' },
      ],
    },
    { name: 'summary', type: 'llm', prompt: 'Summarize {a} and {b}' },
  ],
});

/** A loop around one node that may end it. */
const loopTree = (approvals?: 'auto' | 'required', maxIterations = 3): AgentNode => ({
  name: 'repeat',
  type: 'loop',
  max_iterations: maxIterations,
  ...(approvals && { approvals }),
  agents: [{ name: 'worker', type: 'llm', prompt: 'Work on {user_message}', can_exit_loop: true }],
});

/** An a2a node delegating the user's message to a peer. */
const a2aTree = (destructiveHint: boolean): AgentNode => ({
  name: 'pipeline',
  type: 'sequential',
  agents: [
    {
      name: 'remote',
      type: 'a2a',
      url: 'http://remote.test/a2a',
      prompt: 'Please do: {user_message}',
      destructiveHint,
      output_key: 'remote_out',
    },
    { name: 'after', type: 'llm', prompt: 'Report {remote_out}' },
  ],
});

const call = (id: string, name: string, args: Record<string, unknown> | string): ToolCallPart => ({
  id,
  name,
  argumentsJson: typeof args === 'string' ? args : JSON.stringify(args),
});
const userText = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const REJECTED_SUFFIX = 'The call was not executed. Do not retry it unless the user asks you to.';

const ev = {
  user: (text = 'add x', activation = 'activation-1', runId = 'run-1'): RunEvent => ({ kind: 'userMessage', runId, activation, text }),
  tools: (tools: Tool[] = TOOLS): RunEvent => ({ kind: 'toolsLoaded', tools }),
  history: (path: Path, history: NewMessage[]): RunEvent => ({ kind: 'historyLoaded', path, history }),
  /** Simple mode's conversation as the store returns it (seq from 1). */
  conversation: (path: Path, messages: NewMessage[]): RunEvent => ({
    kind: 'conversationLoaded',
    path,
    messages: storedMessages(messages),
  }),
  text: (path: Path, text: string): RunEvent => ({ kind: 'modelAnswered', path, reply: { text, toolCalls: [] } }),
  calls: (path: Path, toolCalls: ToolCallPart[], text = ''): RunEvent => ({ kind: 'modelAnswered', path, reply: { text, toolCalls } }),
  tool: (path: Path, callId: string, text: string, extra: Partial<ToolOutcome> = {}): RunEvent => ({
    kind: 'toolFinished',
    path,
    callId,
    outcome: { text, isError: false, ...extra },
  }),
  written: (revision: number): RunEvent => ({ kind: 'written', revision }),
  checkpointed: (revision: number): RunEvent => ({ kind: 'checkpointed', revision }),
  conflict: (latest: StoredRun | undefined, revision: number): RunEvent => ({ kind: 'writeConflict', latest, revision }),
  decide: (approval: PendingApproval, approved: boolean, reason?: string, activation = 'activation-2'): RunEvent => ({
    kind: 'approvalDecided',
    activation,
    uuid: approval.uuid,
    approved,
    ...(reason !== undefined && { reason }),
    approval,
  }),
  claimed: (won: boolean): RunEvent => ({ kind: 'claimed', won }),
  ran: (uuid: string, text: string, extra: Partial<ToolOutcome> = {}): RunEvent => ({
    kind: 'approvedCallFinished',
    uuid,
    outcome: { text, isError: false, ...extra },
  }),
};

/** Messages as the store returns them, numbered from 1. */
function storedMessages(messages: readonly NewMessage[]): Message[] {
  return messages.map((message, index) => ({ ...message, id: `m-${index + 1}`, seq: index + 1, createdAt: undefined }));
}

/** A stored approval as the store returns it for a NewApproval the machine asked for. */
function pendingOf(approval: NewApproval, status = ApprovalStatus.APPROVAL_STATUS_PENDING): PendingApproval {
  return {
    ...approval,
    conversationId: 'conversation-1',
    createdAt: undefined,
    updatedAt: undefined,
    status,
    argsHash: callHash(approval.toolName, JSON.parse(approval.toolArgsJson)),
    votes: [],
  };
}

// ---- the harness ----------------------------------------------------------------------

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

/** One transition, checked for purity: `next` may not change its state, its event or its env. */
function step(state: RunState, event: RunEvent, env: MachineEnv): { state: RunState; effects: Effect[] } {
  const before = structuredClone(state);
  const eventBefore = structuredClone(event);
  deepFreeze(state);
  deepFreeze(event);
  deepFreeze(env);
  const out = next(state, event, env);
  expect(state).toEqual(before);
  expect(event).toEqual(eventBefore);
  return out;
}

/**
 * The state after feeding `events` to `start`, and the effects of the last one. A node's
 * checkpoint asked by an event before the last is stored at once (the next revision), as the
 * store would; the last event's effects are left to the test.
 */
function feed(start: RunState, env: MachineEnv, ...events: RunEvent[]): { state: RunState; effects: Effect[] } {
  let out = { state: start, effects: [] as Effect[] };
  events.forEach((event, index) => {
    out = step(out.state, event, env);
    if (index < events.length - 1 && out.effects.some((effect) => effect.kind === 'checkpoint'))
      out = step(out.state, ev.checkpointed(out.state.revision + 1), env);
  });
  return out;
}

/** The checkpoint the last event asked for, stored (at the next revision): the held work starts. */
function stored(out: { state: RunState; effects: Effect[] }, env: MachineEnv): { state: RunState; effects: Effect[] } {
  if (!out.effects.some((effect) => effect.kind === 'checkpoint')) return out;
  return step(out.state, ev.checkpointed(out.state.revision + 1), env);
}

/** The effects that do work, without the journal their writes carry (asserted in journal.test.ts). */
const work = (effects: Effect[]) => effects.filter((effect) => effect.kind !== 'log').map(withoutJournal);
const withoutJournal = (effect: Effect): Effect => {
  if (!('journal' in effect)) return effect;
  const { journal: _journal, ...rest } = effect;
  return rest as Effect;
};
const only = <K extends Effect['kind']>(effects: Effect[], kind: K): Extract<Effect, { kind: K }> => {
  const found = effects.filter((effect): effect is Extract<Effect, { kind: K }> => effect.kind === kind);
  expect(found, `exactly one ${kind} effect`).toHaveLength(1);
  return found[0]!;
};
const logs = (effects: Effect[]) =>
  effects.filter((effect) => effect.kind === 'log').map((effect) => (effect as Extract<Effect, { kind: 'log' }>).message);

/** A transition as a table row: the state it starts from, the event, what it asks for, what it leaves. */
interface Row {
  name: string;
  env: MachineEnv;
  given: () => RunState;
  /** The event, or how to make it when it depends on a state built by the machine. */
  when: RunEvent | (() => RunEvent);
  /** The non-log effects, in order, as partial objects. */
  effects: Record<string, unknown>[];
  then?: (state: RunState, effects: Effect[]) => void;
}

function rows(title: string, table: Row[]): void {
  describe(title, () => {
    for (const row of table) {
      it(row.name, () => {
        const { state, effects } = step(row.given(), typeof row.when === 'function' ? row.when() : row.when, row.env);
        expect(work(effects)).toMatchObject(row.effects);
        row.then?.(state, effects);
      });
    }
  });
}

// ---- starting states ------------------------------------------------------------------

const simpleStarted = () => feed(freshRun('simple', 3), SIMPLE, ev.user('add x')).state;
const simpleAtModel = (history: NewMessage[] = [userText('add x')]) =>
  feed(freshRun('simple', 3), SIMPLE, ev.user('add x'), ev.tools(), ev.conversation([], history)).state;
const treeAtModel = (root: AgentNode, text = 'list all') => feed(freshRun('tree', 3), treeEnv(root), ev.user(text), ev.tools()).state;

/** Simple mode paused on resources_add {"name":"x"}, written at revision 4. */
function simplePaused() {
  const paused = feed(simpleAtModel(), SIMPLE, ev.calls([], [call('c1', 'resources_add', { name: 'x' })]));
  const write = only(paused.effects, 'write');
  const written = feed(paused.state, SIMPLE, ev.written(4));
  return { run: write.run!, approval: pendingOf(write.approvals[0]!), state: written.state };
}

/** The parallel tree with `approvals: required`, both branches paused (alpha first), written at revision 5. */
function parallelPaused() {
  const env = treeEnv(parallelTree('required'));
  const out = feed(
    treeAtModel(parallelTree('required')),
    env,
    ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]),
    ev.calls([0, 1], [call('b1', 'resources_add', { name: 'b' })]),
  );
  const write = only(out.effects, 'write');
  return { env, run: write.run!, alpha: pendingOf(write.approvals[0]!), beta: pendingOf(write.approvals[1]!) };
}

/** Alpha's pause approved and its call run; the resumed activation waits for its tools. */
function alphaResumed() {
  const { env, run, alpha, beta } = parallelPaused();
  const state = feed(storedRun(run, 5), env, ev.decide(alpha, true), ev.claimed(true), ev.ran(alpha.uuid, 'added a')).state;
  return { env, run, alpha, beta, state };
}

// ---- the tables -----------------------------------------------------------------------

rows('a user message starts a run', [
  {
    name: 'userMessage → loadTools, with the run id, activation and message taken',
    env: SIMPLE,
    given: () => freshRun('simple', 3),
    when: ev.user('list all'),
    effects: [{ kind: 'loadTools' }],
    then: (state) => {
      expect(state).toMatchObject({
        runId: 'run-1',
        activation: 'activation-1',
        userMessage: 'list all',
        phase: 'loading_tools',
        inFlight: 1,
        revision: 3,
      });
    },
  },
  {
    name: 'simple mode: toolsLoaded → loadHistory of the whole conversation (no node, no count)',
    env: SIMPLE,
    given: simpleStarted,
    when: ev.tools(),
    effects: [{ kind: 'loadHistory', path: [], nodeMessages: null }],
    then: (state, effects) => {
      expect(only(effects, 'loadHistory')).not.toHaveProperty('node');
      expect(Object.keys(state.tools ?? {})).toEqual(['resources_list', 'resources_add', 'resources_remove']);
    },
  },
  {
    name: 'simple mode: historyLoaded → callModel with the stored history, its system prompt and every tool',
    env: SIMPLE,
    given: () => feed(freshRun('simple', 3), SIMPLE, ev.user('add x'), ev.tools()).state,
    when: ev.conversation([], [userText('hello'), { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'hi' }, userText('add x')]),
    effects: [
      {
        kind: 'callModel',
        path: [],
        model: 'gemini-simple',
        systemPrompt: SYSTEM,
        history: [userText('hello'), { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'hi' }, userText('add x')],
        tools: [{ name: 'resources_list' }, { name: 'resources_add', inputSchema: nameSchema }, { name: 'resources_remove' }],
      },
    ],
    then: (state, effects) => {
      expect(only(effects, 'callModel')).not.toHaveProperty('node');
      expect(state.inFlight).toBe(1);
    },
  },
  {
    name: 'an agent tree: toolsLoaded → callModel of the first llm node with [user message] and its prompt resolved',
    env: treeEnv(sequentialTree),
    given: () => feed(freshRun('tree', 3), treeEnv(sequentialTree), ev.user('list all')).state,
    when: ev.tools(),
    effects: [
      {
        kind: 'callModel',
        path: [0],
        node: 'analyzer',
        model: 'gemini-default',
        systemPrompt: 'Analyze: list all',
        history: [userText('list all')],
      },
    ],
    then: (state) => {
      expect(state.frames['0']).toMatchObject({ kind: 'llm', node: 'analyzer', awaiting: 'model' });
      expect(state.frames['']).toMatchObject({ kind: 'sequential', index: 0 });
    },
  },
  {
    name: 'an agent tree: a placeholder without a value is left as written and logged',
    env: treeEnv({ name: 'solo', type: 'sequential', agents: [{ name: 'x', type: 'llm', prompt: 'Use {missing} for {user_message}' }] }),
    given: () =>
      feed(
        freshRun('tree', 3),
        treeEnv({ name: 'solo', type: 'sequential', agents: [{ name: 'x', type: 'llm', prompt: 'Use {missing} for {user_message}' }] }),
        ev.user('go'),
      ).state,
    when: ev.tools(),
    effects: [{ kind: 'callModel', systemPrompt: 'Use {missing} for go' }],
    then: (_state, effects) => {
      expect(effects).toContainEqual(
        expect.objectContaining({
          kind: 'log',
          level: 'warn',
          message: 'placeholders without a value left as written',
          fields: { node: 'x', placeholders: 'missing' },
        }),
      );
    },
  },
  {
    name: 'toolsFailed → a finish write that tells the user the tools are unavailable',
    env: SIMPLE,
    given: simpleStarted,
    when: { kind: 'toolsFailed', error: 'the tool broker is unreachable' },
    effects: [
      {
        kind: 'write',
        messages: [
          { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'The tools are unavailable right now: the tool broker is unreachable' },
        ],
        approvals: [],
        run: undefined,
        expectedRevision: 3,
      },
    ],
    then: (state) =>
      expect(state.write).toMatchObject({
        purpose: 'finish',
        response: 'The tools are unavailable right now: the tool broker is unreachable',
      }),
  },
  {
    name: 'the finish write stored → done answered with its response',
    env: SIMPLE,
    given: () => feed(simpleStarted(), SIMPLE, { kind: 'toolsFailed', error: 'down' }).state,
    when: ev.written(4),
    effects: [{ kind: 'done', answer: { kind: 'answered', response: 'The tools are unavailable right now: down' } }],
    then: (state) => expect(state).toMatchObject({ phase: 'finished', revision: 4, base: undefined, write: undefined, inFlight: 0 }),
  },
]);

rows('the model answers with text', [
  {
    name: 'simple mode: the answer and its usage are the messages of the finish write',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: {
      kind: 'modelAnswered',
      path: [],
      reply: { text: 'There are 3 resources.', toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } },
    },
    effects: [
      {
        kind: 'write',
        messages: [
          { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'There are 3 resources.', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
        approvals: [],
        run: undefined,
        expectedRevision: 3,
      },
    ],
    then: (state) => expect(state).toMatchObject({ modelCalls: 1, frames: {} }),
  },
  {
    name: 'simple mode: an empty answer is recorded as such',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: ev.text([], ''),
    effects: [{ kind: 'write', messages: [{ content: '(the model returned an empty answer)' }] }],
  },
  {
    name: "an agent tree: the last node's answer (tagged with its node) goes with the run's finish write",
    env: treeEnv(sequentialTree),
    given: () =>
      stored(feed(treeAtModel(sequentialTree), treeEnv(sequentialTree), ev.text([0], 'three servers')), treeEnv(sequentialTree)).state,
    when: ev.text([1], 'done: listed'),
    effects: [
      {
        kind: 'write',
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'done: listed', node: 'executor' }],
        approvals: [],
        run: undefined,
        expectedRevision: 4,
      },
    ],
    then: (state) => expect(state.write).toMatchObject({ purpose: 'finish', response: 'done: listed' }),
  },
]);

rows('safe calls run at once, in the model order', [
  {
    name: 'modelAnswered with calls → callTool of the first runnable one only',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: ev.calls([], [call('c1', 'resources_list', {}), call('c2', 'nope', {}), call('c3', 'resources_list', '{"broken"')], 'Looking.'),
    effects: [{ kind: 'callTool', path: [], call: { id: 'c1', name: 'resources_list' }, args: {}, unapprovedReason: '' }],
    then: (state) => {
      expect(state.frames['']).toMatchObject({ kind: 'llm', awaiting: 'tools', step: { index: 0 } });
      expect(state.modelCalls).toBe(1);
    },
  },
  {
    name: 'toolFinished → the rejected call is answered in place and the next runnable call starts',
    env: SIMPLE,
    given: () =>
      feed(
        simpleAtModel(),
        SIMPLE,
        ev.calls([], [call('c1', 'resources_list', {}), call('c2', 'nope', {}), call('c3', 'resources_list', {})]),
      ).state,
    when: ev.tool([], 'c1', '["alpha"]'),
    effects: [{ kind: 'callTool', call: { id: 'c3' } }],
    then: (state) => {
      const recorded = (state.frames[''] as { step: { recorded: NewMessage[] } }).step.recorded;
      expect(recorded.map((message) => [message.role, message.toolCall?.id, message.toolCall?.result])).toEqual([
        [MessageRole.MESSAGE_ROLE_ASSISTANT, 'c1', undefined],
        [MessageRole.MESSAGE_ROLE_ASSISTANT, 'c2', undefined],
        [MessageRole.MESSAGE_ROLE_ASSISTANT, 'c3', undefined],
        [MessageRole.MESSAGE_ROLE_TOOL, 'c1', '["alpha"]'],
        [
          MessageRole.MESSAGE_ROLE_TOOL,
          'c2',
          'unknown tool "nope" (available tools: resources_add, resources_list, resources_remove); nothing was executed',
        ],
      ]);
    },
  },
  {
    name: "a model answer while the step's calls still run is refused as out of phase",
    env: SIMPLE,
    given: () =>
      feed(
        simpleAtModel(),
        SIMPLE,
        ev.calls([], [call('c1', 'resources_list', {}), call('c2', 'nope', {}), call('c3', 'resources_list', {})]),
        ev.tool([], 'c1', '["alpha"]'),
      ).state,
    when: ev.text([], 'unused'),
    effects: [{ kind: 'outOfPhase', phase: 'walking_tree', event: 'modelAnswered', detail: 'no node at the root waits for the model' }],
  },
  {
    name: 'a call with arguments that are not JSON is answered with the parse error, without running',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: ev.calls([], [call('c1', 'resources_list', '{"broken"')]),
    effects: [{ kind: 'callModel' }],
    then: (state, effects) => {
      const last = only(effects, 'callModel').history.at(-1)!;
      expect(last.toolCall).toMatchObject({ id: 'c1', isError: true });
      expect(last.content).toMatch(/^invalid call to resources_list: the arguments must be valid JSON/);
      expect(state.modelCalls).toBe(1);
    },
  },
]);

describe('safe calls: the whole step', () => {
  it('results come back in the model order, with rejections in place, and the model sees them all', () => {
    const out = feed(
      simpleAtModel(),
      SIMPLE,
      ev.calls([], [call('c1', 'resources_list', {}), call('c2', 'nope', {}), call('c3', 'resources_list', {})], 'Looking.'),
      ev.tool([], 'c1', '["alpha"]'),
      ev.tool([], 'c3', '["beta"]', { isError: true }),
    );
    const model = only(out.effects, 'callModel');
    expect(model.history.slice(1).map((message) => [message.role, message.content])).toEqual([
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Looking.'],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Calling resources_list with {}'],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Calling nope with {}'],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Calling resources_list with {}'],
      [MessageRole.MESSAGE_ROLE_TOOL, '["alpha"]'],
      [
        MessageRole.MESSAGE_ROLE_TOOL,
        'unknown tool "nope" (available tools: resources_add, resources_list, resources_remove); nothing was executed',
      ],
      [MessageRole.MESSAGE_ROLE_TOOL, '["beta"]'],
    ]);
    expect(model.history.at(-1)!.toolCall).toMatchObject({ id: 'c3', isError: true });
    // The step is written with the run's last write (simple mode), not before.
    const done = feed(out.state, SIMPLE, ev.text([], 'alpha and beta'));
    expect(only(done.effects, 'write').messages.map((message) => message.content)).toEqual([
      ...model.history.slice(1).map((message) => message.content),
      'alpha and beta',
    ]);
  });

  it('a toolFinished for another call id or another path is refused as out of phase', () => {
    const at = feed(simpleAtModel(), SIMPLE, ev.calls([], [call('c1', 'resources_list', {})])).state;
    expect(step(at, ev.tool([], 'other', 'x'), SIMPLE).effects).toEqual([
      {
        kind: 'outOfPhase',
        phase: 'walking_tree',
        event: 'toolFinished',
        detail: 'the node at the root waits for another call than other',
      },
    ]);
    expect(step(at, ev.tool([3], 'c1', 'x'), SIMPLE).effects).toEqual([
      { kind: 'outOfPhase', phase: 'walking_tree', event: 'toolFinished', detail: 'no node at path 3 waits for a tool call' },
    ]);
    expect(step(at, ev.tool([3], 'c1', 'x'), SIMPLE).state.frames).toEqual(at.frames);
  });
});

describe('a destructive call stops the run for approval', () => {
  const paused = () => feed(simpleAtModel(), SIMPLE, ev.calls([], [call('c1', 'resources_add', { name: 'x' })], 'Adding x.'));

  it('the pause is one write: the step, the approval and the run with its pending call', () => {
    const { effects, state } = paused();
    expect(work(effects).map((effect) => effect.kind)).toEqual(['write']);
    const write = only(effects, 'write');
    const uuid = write.approvals[0]!.uuid;
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(write).toMatchObject({
      expectedRevision: 3,
      messages: [
        { content: 'Adding x.' },
        { role: MessageRole.MESSAGE_ROLE_ASSISTANT, toolCall: { id: 'c1', name: 'resources_add', argumentsJson: '{"name":"x"}' } },
      ],
      approvals: [
        {
          uuid,
          toolCallId: 'c1',
          toolName: 'resources_add',
          toolArgsJson: '{"name":"x"}',
          description: 'resources_add on resources with arguments {"name":"x"}',
          agentChain: [],
        },
      ],
    });
    expect(write.run).toEqual({
      runId: 'run-1',
      mode: 'simple',
      userMessage: 'add x',
      session: {},
      pending: [
        {
          approvalUuid: uuid,
          path: [],
          outputKey: '',
          fingerprint: '',
          loopIterations: {},
          nodeMessages: 2,
          toolName: 'resources_add',
          argsHash: callHash('resources_add', { name: 'x' }),
        },
      ],
      branchOutputs: {},
      modelCalls: 1,
    });
    expect(state.write).toMatchObject({ purpose: 'pause', attempts: 0 });
    expect(state.gates).toHaveLength(1);
  });

  it('the approval uuid derives from the activation: the same inputs give the same uuid, another activation another', () => {
    const again = paused();
    expect(only(again.effects, 'write').approvals[0]!.uuid).toBe(only(paused().effects, 'write').approvals[0]!.uuid);
    const other = feed(
      freshRun('simple', 3),
      SIMPLE,
      ev.user('add x', 'activation-other'),
      ev.tools(),
      ev.conversation([], [userText('add x')]),
      ev.calls([], [call('c1', 'resources_add', { name: 'x' })]),
    );
    expect(only(other.effects, 'write').approvals[0]!.uuid).not.toBe(only(again.effects, 'write').approvals[0]!.uuid);
  });

  it('written → done paused with the new approval; the stored run becomes the base', () => {
    const { effects, state } = paused();
    const write = only(effects, 'write');
    const out = step(state, ev.written(4), SIMPLE);
    expect(work(out.effects)).toEqual([{ kind: 'done', answer: { kind: 'paused', approvals: [write.approvals[0]!.uuid] } }]);
    expect(out.state).toMatchObject({ phase: 'finished', base: write.run, revision: 4, gates: [], modelCalls: 0 });
  });

  it("a second destructive call of the step is deferred; the step's earlier safe steps are written with the pause", () => {
    const out = feed(
      simpleAtModel(),
      SIMPLE,
      ev.calls([], [call('c0', 'resources_list', {})]),
      ev.tool([], 'c0', '[]'),
      ev.calls(
        [],
        [call('c1', 'resources_add', { name: 'x' }), call('c2', 'resources_remove', { name: 'y' }), call('c3', 'resources_list', {})],
      ),
    );
    // The safe call after the gate still runs before the run pauses.
    expect(work(out.effects)).toMatchObject([{ kind: 'callTool', call: { id: 'c3' } }]);
    const finished = step(out.state, ev.tool([], 'c3', '["x"]'), SIMPLE);
    const write = only(finished.effects, 'write');
    expect(write.approvals.map((approval) => approval.toolCallId)).toEqual(['c1']);
    expect(
      write.messages.map((message) => [message.toolCall?.id, message.role === MessageRole.MESSAGE_ROLE_TOOL ? message.content : 'call']),
    ).toEqual([
      ['c0', 'call'],
      ['c0', '[]'],
      ['c1', 'call'],
      ['c2', 'call'],
      ['c3', 'call'],
      [
        'c2',
        'resources_remove was not executed: it needs approval and another call of the same step is already waiting for one. Request it again once that approval is resolved.',
      ],
      ['c3', '["x"]'],
    ]);
    expect(write.run!.pending[0]).toMatchObject({ toolName: 'resources_add', nodeMessages: 7 });
  });

  it('a call identical to one a human rejected in this run gets the same "no" without a new approval', () => {
    const rejected: NewMessage = {
      role: MessageRole.MESSAGE_ROLE_TOOL,
      content: `Rejected by a human: not now. ${REJECTED_SUFFIX}`,
      toolCall: {
        id: 'c1',
        name: 'resources_add',
        argumentsJson: JSON.stringify({ name: 'x' }),
        result: `Rejected by a human: not now. ${REJECTED_SUFFIX}`,
        isError: true,
        rejected: true,
        reason: 'not now',
      },
    };
    const history = [
      userText('add x'),
      {
        role: MessageRole.MESSAGE_ROLE_ASSISTANT,
        content: 'Calling resources_add with {"name":"x"}',
        toolCall: { id: 'c1', name: 'resources_add', argumentsJson: '{"name":"x"}' },
      },
      rejected,
    ];
    const out = feed(simpleAtModel(history), SIMPLE, ev.calls([], [call('c9', 'resources_add', { name: 'x' })]));
    expect(work(out.effects).map((effect) => effect.kind)).toEqual(['callModel']);
    expect(logs(out.effects)).toContain('call repeats one rejected in this run; answered without asking again');
    expect(only(out.effects, 'callModel').history.at(-1)).toMatchObject({
      content: rejected.content,
      toolCall: { id: 'c9', rejected: true, reason: 'not now', isError: true },
    });
    expect(out.state.gates).toEqual([]);
    // The same call with other arguments is a new question for a human.
    const other = feed(simpleAtModel(history), SIMPLE, ev.calls([], [call('c9', 'resources_add', { name: 'y' })]));
    expect(only(other.effects, 'write').approvals).toHaveLength(1);
    // A later user message opens a new run: the user may ask for the call again.
    const asked = feed(
      simpleAtModel([...history, userText('please add x after all')]),
      SIMPLE,
      ev.calls([], [call('c9', 'resources_add', { name: 'x' })]),
    );
    expect(only(asked.effects, 'write').approvals).toHaveLength(1);
  });
});

rows('the model fails, or runs out of steps', [
  {
    name: 'modelFailed → the failure, with its category, is the answer',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: { kind: 'modelFailed', path: [], category: 'timeout', error: 'deadline exceeded after 60s' },
    effects: [
      {
        kind: 'write',
        messages: [
          { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'The model could not answer (timeout error): deadline exceeded after 60s' },
        ],
        run: undefined,
      },
    ],
  },
  {
    name: 'modelFailed in a tree ends the node with the failure as its output; the next node goes on',
    env: treeEnv(sequentialTree),
    given: () => treeAtModel(sequentialTree),
    when: { kind: 'modelFailed', path: [0], category: 'rate limit', error: 'quota' },
    effects: [{ kind: 'checkpoint', messages: [{ content: 'The model could not answer (rate limit error): quota', node: 'analyzer' }] }],
    then: (state) =>
      expect(state.checkpoint?.held).toMatchObject([
        {
          kind: 'callModel',
          path: [1],
          node: 'executor',
          systemPrompt: 'Execute based on The model could not answer (rate limit error): quota',
        },
      ]),
  },
  {
    name: 'modelFailed for a path with no model call is refused as out of phase',
    env: SIMPLE,
    given: () => simpleAtModel(),
    when: { kind: 'modelFailed', path: [2], category: 'internal', error: 'x' },
    effects: [{ kind: 'outOfPhase', phase: 'walking_tree', event: 'modelFailed', detail: 'no node at path 2 waits for the model' }],
  },
  {
    name: 'the step budget (chat.max_llm_iterations) spent → "Stopped after N model calls…"',
    env: { ...SIMPLE, maxModelCalls: 2 },
    given: () =>
      feed(
        freshRun('simple', 3),
        { ...SIMPLE, maxModelCalls: 2 },
        ev.user('go'),
        ev.tools(),
        ev.conversation([], [userText('go')]),
        ev.calls([], [call('c1', 'resources_list', {})]),
        ev.tool([], 'c1', '[]'),
        ev.calls([], [call('c2', 'resources_list', {})]),
      ).state,
    when: ev.tool([], 'c2', '[]'),
    effects: [
      {
        kind: 'write',
        messages: [
          { toolCall: { id: 'c1' } },
          { toolCall: { id: 'c1' } },
          { toolCall: { id: 'c2' } },
          { toolCall: { id: 'c2' } },
          { content: 'Stopped after 2 model calls in one turn (chat.max_llm_iterations) without a final answer.' },
        ],
      },
    ],
    then: (state) => expect(state.modelCalls).toBe(2),
  },
]);

describe('sequential nodes: order, output_key and session state', () => {
  const env = treeEnv(sequentialTree);

  it('a node done → a checkpoint with its messages, its output and where the walk stands; the next node called with it once stored', () => {
    const done = feed(treeAtModel(sequentialTree), env, ev.text([0], 'three servers'));
    expect(work(done.effects)).toMatchObject([
      {
        kind: 'checkpoint',
        messages: [{ content: 'three servers', node: 'analyzer' }],
        expectedRevision: 3,
        run: {
          runId: 'run-1',
          session: { analysis: 'three servers' },
          pending: [],
          modelCalls: 1,
          checkpoint: { walk: { '': { kind: 'sequential', index: 1, output: 'three servers' } } },
        },
      },
    ]);
    // Nothing of the next node starts before the checkpoint is stored.
    expect(done.effects.some((effect) => effect.kind === 'callModel')).toBe(false);
    expect(done.state.phase).toBe('walking_tree');
    const out = step(done.state, ev.checkpointed(4), env);
    expect(out.state.revision).toBe(4);
    expect(out.state.base?.checkpoint?.walk['']).toEqual({ kind: 'sequential', index: 1, output: 'three servers' });
    expect(out.state.modelCalls).toBe(0);
    expect(work(out.effects)).toMatchObject([
      {
        kind: 'callModel',
        path: [1],
        node: 'executor',
        model: 'claude-executor',
        timeoutMs: 5000,
        systemPrompt: 'Execute based on three servers',
        history: [userText('list all')],
      },
    ]);
    expect(out.state.changes.session).toEqual({ analysis: 'three servers' });
    expect(out.state.frames['']).toMatchObject({ kind: 'sequential', index: 1, output: 'three servers' });
    expect(out.state.frames['0']).toBeUndefined();
  });

  it("a node's safe steps stay unwritten until it ends, then go in one checkpoint with its answer", () => {
    const out = feed(treeAtModel(sequentialTree), env, ev.calls([0], [call('c1', 'resources_list', {})]), ev.tool([0], 'c1', '[]'));
    expect(work(out.effects)).toMatchObject([{ kind: 'callModel', path: [0] }]);
    const done = step(out.state, ev.text([0], 'none'), env);
    expect(only(done.effects, 'checkpoint').messages.map((message) => [message.node, message.toolCall?.id ?? message.content])).toEqual([
      ['analyzer', 'c1'],
      ['analyzer', 'c1'],
      ['analyzer', 'none'],
    ]);
  });

  it('a pause in the second node stores the session so far, the node path, its output key and fingerprint', () => {
    const out = feed(
      treeAtModel(sequentialTree),
      env,
      ev.text([0], 'three servers'),
      ev.calls([1], [call('c1', 'resources_add', { name: 'x' })]),
    );
    const write = only(out.effects, 'write');
    expect(write.messages).toMatchObject([{ node: 'executor', toolCall: { id: 'c1' } }]);
    expect(write.run).toMatchObject({
      mode: 'tree',
      userMessage: 'list all',
      session: { analysis: 'three servers' },
      pending: [{ path: [1], outputKey: 'result', fingerprint: treeFingerprint(sequentialTree, [1]), nodeMessages: 1, loopIterations: {} }],
    });
    expect(logs(out.effects)).toContain('pipeline paused');
  });

  it('an empty sequential node completes at once', () => {
    const root: AgentNode = {
      name: 'outer',
      type: 'sequential',
      agents: [
        { name: 'empty', type: 'sequential', agents: [] },
        { name: 'x', type: 'llm' },
      ],
    };
    const out = feed(freshRun('tree', 0), treeEnv(root), ev.user('go'), ev.tools());
    expect(work(out.effects)).toMatchObject([{ kind: 'callModel', path: [1], node: 'x' }]);
  });
});

describe('loop nodes: iterations, exit_loop and max_iterations', () => {
  const env = treeEnv(loopTree());

  it('the looping node gets the exit_loop tool; an answer without it starts the next iteration', () => {
    const start = treeAtModel(loopTree(), 'ensure 3');
    expect(start.frames['']).toMatchObject({ kind: 'loop', iteration: 1 });
    const out = step(start, ev.text([0], 'added one'), env);
    expect(work(out.effects)).toMatchObject([
      { kind: 'checkpoint', run: { checkpoint: { walk: { '': { kind: 'loop', iteration: 2, index: 0 } } } } },
    ]);
    const next = stored(out, env);
    expect(work(next.effects)).toMatchObject([{ kind: 'callModel', path: [0], node: 'worker', systemPrompt: 'Work on ensure 3' }]);
    expect(only(next.effects, 'callModel').tools.map((tool) => tool.name)).toEqual([
      'resources_list',
      'resources_add',
      'resources_remove',
      'exit_loop',
    ]);
    expect(out.state.frames['']).toMatchObject({ kind: 'loop', iteration: 2, index: 0, output: 'added one' });
  });

  it('exit_loop ends the loop after its step; the loop ends the run with its output', () => {
    const out = feed(treeAtModel(loopTree()), env, ev.text([0], 'first'), ev.calls([0], [call('x1', 'exit_loop', {})], 'enough now'));
    expect(work(out.effects)).toMatchObject([
      {
        kind: 'write',
        run: undefined,
        messages: [
          { content: 'enough now' },
          { toolCall: { id: 'x1', name: 'exit_loop' } },
          { content: EXIT_LOOP_RESULT, toolCall: { id: 'x1', isError: false } },
        ],
      },
    ]);
    expect(out.state.write).toMatchObject({ purpose: 'finish', response: 'enough now' });
    expect(logs(out.effects)).toContain('loop finished');
    expect(out.effects).toContainEqual(
      expect.objectContaining({ kind: 'log', message: 'loop finished', fields: { node: 'repeat', iterations: 2, exited: true } }),
    );
  });

  it('max_iterations stops the loop; its output is the last non-empty one', () => {
    const out = feed(treeAtModel(loopTree(undefined, 2)), treeEnv(loopTree(undefined, 2)), ev.text([0], 'one'), ev.text([0], 'two'));
    expect(only(out.effects, 'write').run).toBeUndefined();
    expect(out.state.write).toMatchObject({ purpose: 'finish', response: 'two' });
    expect(out.effects).toContainEqual(
      expect.objectContaining({ kind: 'log', message: 'loop finished', fields: { node: 'repeat', iterations: 2, exited: false } }),
    );
  });

  it('exit_loop in a sequence inside the loop skips the rest of the sequence', () => {
    const root: AgentNode = {
      name: 'repeat',
      type: 'loop',
      agents: [
        {
          name: 'round',
          type: 'sequential',
          agents: [
            { name: 'check', type: 'llm', can_exit_loop: true },
            { name: 'act', type: 'llm' },
          ],
        },
      ],
    };
    const out = feed(
      freshRun('tree', 0),
      treeEnv(root),
      ev.user('go'),
      ev.tools(),
      ev.calls([0, 0], [call('x1', 'exit_loop', {})], 'all good'),
    );
    expect(work(out.effects).map((effect) => effect.kind)).toEqual(['write']);
    expect(out.state.write).toMatchObject({ purpose: 'finish', response: 'all good' });
  });

  it('a loop without max_iterations stops after 10 rounds (the default)', () => {
    const root: AgentNode = { name: 'repeat', type: 'loop', agents: [{ name: 'worker', type: 'llm' }] };
    let out = feed(freshRun('tree', 0), treeEnv(root), ev.user('go'), ev.tools());
    for (let round = 1; round <= 10; round++) {
      expect(out.state.frames['']).toMatchObject({ iteration: round });
      out = step(out.state, ev.text([0], `round ${round}`), treeEnv(root));
    }
    expect(out.state.write).toMatchObject({ purpose: 'finish', response: 'round 10' });
  });
});

describe('parallel nodes in a fresh run', () => {
  it("toolsLoaded → every branch's model call at once", () => {
    const state = feed(freshRun('tree', 3), treeEnv(parallelTree()), ev.user('overview')).state;
    const out = step(state, ev.tools(), treeEnv(parallelTree()));
    expect(work(out.effects)).toMatchObject([
      { kind: 'callModel', path: [0, 0], node: 'alpha', systemPrompt: 'Alpha part' },
      { kind: 'callModel', path: [0, 1], node: 'beta', systemPrompt: 'Beta part' },
    ]);
    expect(out.state.inFlight).toBe(2);
    expect(out.state.frames['0']).toEqual({ kind: 'parallel', resumed: false, outcomes: [null, null] });
  });

  it('both branches done → outputs joined in declaration order, the session has both, the next node sees them', () => {
    const env = treeEnv(parallelTree());
    const first = feed(treeAtModel(parallelTree()), env, ev.text([0, 1], 'B out'));
    expect(work(first.effects)).toMatchObject([
      {
        kind: 'checkpoint',
        messages: [{ node: 'beta', content: 'B out' }],
        run: { checkpoint: { walk: { '0': { kind: 'parallel', done: { '1': { output: 'B out', exitLoop: false } } } } } },
      },
    ]);
    // The other branch's answer may come while the checkpoint is on its way: its finish goes next.
    const second = step(first.state, ev.text([0, 0], 'A out'), env);
    expect(work(second.effects)).toEqual([]);
    const next = step(second.state, ev.checkpointed(4), env);
    expect(work(next.effects)).toMatchObject([{ kind: 'checkpoint', messages: [{ node: 'alpha' }], expectedRevision: 4 }]);
    const out = step(next.state, ev.checkpointed(5), env);
    expect(work(out.effects)).toMatchObject([{ kind: 'callModel', path: [1], node: 'summary', systemPrompt: 'Summarize A out and B out' }]);
    expect(out.state.frames['']).toMatchObject({ kind: 'sequential', index: 1, output: 'A out\n\nB out' });
  });

  it('one branch pausing (approvals: required) → no write until every branch settles; finished outputs are kept in branchOutputs', () => {
    const env = treeEnv(parallelTree('required'));
    const first = feed(treeAtModel(parallelTree('required')), env, ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]));
    expect(work(first.effects)).toEqual([]);
    expect(first.state.changes.pauses).toMatchObject([{ path: [0, 0], outputKey: 'a' }]);
    const out = step(first.state, ev.text([0, 1], 'B out'), env);
    expect(work(out.effects).map((effect) => effect.kind)).toEqual(['write']);
    const write = only(out.effects, 'write');
    expect(write.messages[0]).toMatchObject({ node: 'beta', content: 'B out' });
    expect(write.run).toMatchObject({
      session: { b: 'B out' },
      branchOutputs: { '0.1': { output: 'B out', exitLoop: false } },
      pending: [{ path: [0, 0], fingerprint: treeFingerprint(parallelTree('required'), [0, 0]) }],
    });
    expect(write.approvals).toHaveLength(1);
  });

  it('both branches pausing → one write with both approvals, in the order they paused', () => {
    const { run, alpha, beta } = parallelPaused();
    expect(run.pending.map((pause) => [pause.approvalUuid, pause.path])).toEqual([
      [alpha.uuid, [0, 0]],
      [beta.uuid, [0, 1]],
    ]);
    expect(alpha.uuid).not.toBe(beta.uuid);
    expect(run.branchOutputs).toEqual({});
  });
});

describe('parallel nodes resumed: one branch per decision', () => {
  it("the resumed branch's history is its steps and the approved call's result (nodeMessages)", () => {
    const { state, env } = alphaResumed();
    const out = step(state, ev.tools(), env);
    expect(work(out.effects)).toEqual([{ kind: 'loadHistory', path: [0, 0], node: 'alpha', nodeMessages: 1 }]);
    expect(out.state.frames['0']).toEqual({ kind: 'parallel', resumed: true, branch: 0, children: 2 });
  });

  it('a resumed branch finishing while a sibling waits → settle write of its output, then answer `waiting`', () => {
    const { state, env, beta, run } = alphaResumed();
    const atModel = feed(
      state,
      env,
      ev.tools(),
      ev.history(
        [0, 0],
        [
          {
            role: MessageRole.MESSAGE_ROLE_ASSISTANT,
            content: 'call',
            toolCall: { id: 'a1', name: 'resources_add', argumentsJson: JSON.stringify({ name: 'a' }) },
          },
          {
            role: MessageRole.MESSAGE_ROLE_TOOL,
            content: 'added a',
            toolCall: { id: 'a1', name: 'resources_add', argumentsJson: JSON.stringify({ name: 'a' }), result: 'added a' },
          },
        ],
      ),
    );
    expect(only(atModel.effects, 'callModel').history).toHaveLength(3);
    const out = step(atModel.state, ev.text([0, 0], 'A out'), env);
    expect(work(out.effects)).toMatchObject([
      {
        kind: 'write',
        messages: [{ node: 'alpha', content: 'A out' }],
        approvals: [],
        expectedRevision: 5,
        run: { pending: [run.pending[1]], branchOutputs: { '0.0': { output: 'A out', exitLoop: false } }, session: { a: 'A out' } },
      },
    ]);
    expect(only(out.effects, 'write').run!.pending.map((pause) => pause.approvalUuid)).toEqual([beta.uuid]);
    const done = step(out.state, ev.written(6), env);
    expect(work(done.effects)).toEqual([{ kind: 'done', answer: { kind: 'waiting' } }]);
    expect(logs(done.effects)).toContain('branch finished; other branches still wait');
  });

  it('the last sibling finishing → the settle write joins the branches and the run goes on after the parallel node', () => {
    const { env, run, beta } = parallelPaused();
    const settled: StoredRun = {
      ...run,
      pending: [run.pending[1]!],
      branchOutputs: { '0.0': { output: 'A out', exitLoop: false } },
      session: { a: 'A out' },
    };
    const out = feed(
      storedRun(settled, 6),
      env,
      ev.decide(beta, true),
      ev.claimed(true),
      ev.ran(beta.uuid, 'added b'),
      ev.tools(),
      ev.history([0, 1], []),
      ev.text([0, 1], 'B out'),
    );
    const write = only(out.effects, 'write');
    expect(write.run).toMatchObject({
      pending: [],
      branchOutputs: {},
      session: { a: 'A out', b: 'B out' },
      modelCalls: run.modelCalls + 1,
    });
    expect(out.state.write).toMatchObject({ purpose: 'settle', joined: [{ output: 'A out' }, { output: 'B out' }] });
    const joined = step(out.state, ev.written(7), env);
    expect(work(joined.effects)).toMatchObject([
      { kind: 'callModel', path: [1], node: 'summary', systemPrompt: 'Summarize A out and B out' },
    ]);
    expect(joined.state.frames['']).toMatchObject({ kind: 'sequential', output: 'A out\n\nB out' });
    const finished = step(joined.state, ev.text([1], 'both added'), env);
    expect(only(finished.effects, 'write').run).toBeUndefined();
  });

  it('a resumed branch pausing again → the parent parallel node is left, the run pauses', () => {
    const { state, env, beta } = alphaResumed();
    const out = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.calls([0, 0], [call('a2', 'resources_add', { name: 'a2' })]));
    const write = only(out.effects, 'write');
    expect(write.run!.pending.map((pause) => [pause.path, pause.toolName])).toEqual([
      [[0, 1], 'resources_add'],
      [[0, 0], 'resources_add'],
    ]);
    expect(write.run!.pending[0]!.approvalUuid).toBe(beta.uuid);
  });
});

describe('destructive calls inside parallel and loop nodes (the `approvals` mode)', () => {
  it('approvals: auto (default) inside a parallel node: the call runs unapproved, is marked and appended at once', () => {
    const env = treeEnv(parallelTree());
    const out = feed(treeAtModel(parallelTree()), env, ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]));
    expect(work(out.effects)).toMatchObject([
      {
        kind: 'callTool',
        path: [0, 0],
        node: 'alpha',
        call: { id: 'a1' },
        unapprovedReason: 'approvals: auto inside a parallel or loop node (node "alpha")',
      },
    ]);
    expect(out.effects).toContainEqual(
      expect.objectContaining({
        kind: 'log',
        level: 'warn',
        message: 'destructive call ran without approval',
        fields: { node: 'alpha', tool: 'resources_add' },
      }),
    );
    const ran = step(out.state, ev.tool([0, 0], 'a1', 'added a'), env);
    expect(work(ran.effects)).toMatchObject([
      {
        kind: 'append',
        messages: [
          {
            content: 'Calling resources_add with {"name":"a"} (destructive; ran without approval inside a parallel or loop node)',
            node: 'alpha',
          },
          { content: 'added a', node: 'alpha' },
        ],
      },
      { kind: 'callModel', path: [0, 0] },
    ]);
  });

  it('approvals: auto inside a loop: the same', () => {
    const out = feed(treeAtModel(loopTree()), treeEnv(loopTree()), ev.calls([0], [call('w1', 'resources_add', { name: 'w' })]));
    expect(work(out.effects)).toMatchObject([
      { kind: 'callTool', unapprovedReason: 'approvals: auto inside a parallel or loop node (node "worker")' },
    ]);
  });

  it('approvals: required inside a loop gates; the pause records the iteration', () => {
    const env = treeEnv(loopTree('required'));
    const out = feed(
      treeAtModel(loopTree('required')),
      env,
      ev.text([0], 'round one'),
      ev.calls([0], [call('w1', 'resources_add', { name: 'w' })]),
    );
    const write = only(out.effects, 'write');
    expect(write.run!.pending).toMatchObject([{ path: [0], loopIterations: { '': 2 } }]);
  });

  it('a resume inside a loop goes on in the iteration it paused in', () => {
    const env = treeEnv(loopTree('required'));
    const paused = feed(
      treeAtModel(loopTree('required')),
      env,
      ev.text([0], 'round one'),
      ev.calls([0], [call('w1', 'resources_add', { name: 'w' })]),
    );
    const write = only(paused.effects, 'write');
    const approval = pendingOf(write.approvals[0]!);
    const out = feed(
      storedRun(write.run!, 4),
      env,
      ev.decide(approval, true),
      ev.claimed(true),
      ev.ran(approval.uuid, 'added w'),
      ev.tools(),
    );
    expect(out.state.frames['']).toMatchObject({ kind: 'loop', iteration: 2, index: 0 });
    const answered = feed(out.state, env, ev.history([0], []), ev.text([0], 'round two'));
    expect(answered.state.frames['']).toMatchObject({ kind: 'loop', iteration: 3 });
    // The resumed pause is gone with the node's finish: the checkpoint stores the run waiting for nothing.
    expect(work(answered.effects)).toMatchObject([
      { kind: 'checkpoint', run: { pending: [], checkpoint: { walk: { '': { kind: 'loop', iteration: 3, index: 0 } } } } },
    ]);
    expect(work(stored(answered, env).effects)).toMatchObject([{ kind: 'callModel', path: [0] }]);
  });

  it('an unapproved step written early is counted in a later pause of the node (nodeMessages)', () => {
    // alpha (auto) adds without approval, then delegates to a peer that asks for its own approval.
    const env = treeEnv(parallelTree());
    const out = feed(
      treeAtModel(parallelTree()),
      env,
      ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]),
      ev.tool([0, 0], 'a1', 'added a'),
      ev.calls([0, 0], [call('p1', 'a2a_peer', { message: 'check a' })]),
      ev.tool([0, 0], 'p1', 'Approval required', {
        remote: { agent: 'peer', taskId: 'task-1', approval: undefined, text: 'Approval required (id: r1): add z' },
      }),
      ev.text([0, 1], 'B out'),
    );
    const write = only(out.effects, 'write');
    // The appended add step (its call and result) and the delegation's call: the resumed node must see all three.
    expect(write.run!.pending).toMatchObject([{ path: [0, 0], nodeMessages: 3 }]);
    expect(write.approvals).toMatchObject([
      { toolName: 'a2a_peer', remoteTaskId: 'task-1', remoteAgentName: 'peer', agentChain: ['peer'] },
    ]);
  });
});

describe('a2a nodes', () => {
  it('a destructiveHint a2a node gates where the tree gates: the delegation waits for approval', () => {
    const env = treeEnv(a2aTree(true));
    const out = feed(freshRun('tree', 2), env, ev.user('add z'), ev.tools());
    const write = only(out.effects, 'write');
    expect(write.approvals).toMatchObject([
      {
        toolName: 'a2a_remote',
        toolArgsJson: '{"message":"Please do: add z"}',
        description: 'a2a_remote on a2a with arguments {"message":"Please do: add z"}',
      },
    ]);
    expect(write.messages).toMatchObject([
      { node: 'remote', toolCall: { name: 'a2a_remote', argumentsJson: '{"message":"Please do: add z"}' } },
    ]);
    expect(write.run!.pending).toMatchObject([
      {
        path: [0],
        outputKey: 'remote_out',
        nodeMessages: 1,
        toolName: 'a2a_remote',
        argsHash: callHash('a2a_remote', { message: 'Please do: add z' }),
      },
    ]);
  });

  it('a safe a2a node delegates at once; its answer is its checkpoint and becomes its output', () => {
    const env = treeEnv(a2aTree(false));
    const out = feed(freshRun('tree', 2), env, ev.user('list'), ev.tools());
    const delegated = only(out.effects, 'callTool');
    expect(delegated).toMatchObject({
      path: [0],
      node: 'remote',
      call: { name: 'a2a_remote' },
      args: { message: 'Please do: list' },
      unapprovedReason: '',
    });
    const done = step(out.state, ev.tool([0], delegated.call.id, 'three items'), env);
    expect(work(done.effects)).toMatchObject([
      {
        kind: 'checkpoint',
        messages: [
          { node: 'remote', toolCall: { name: 'a2a_remote' } },
          { node: 'remote', content: 'three items' },
        ],
      },
    ]);
    expect(work(stored(done, env).effects)).toMatchObject([{ kind: 'callModel', path: [1], systemPrompt: 'Report three items' }]);
  });

  it('the peer answering input-required → a proxy approval that names the peer and its chain', () => {
    const env = treeEnv(a2aTree(false));
    const out = feed(freshRun('tree', 2), env, ev.user('add z'), ev.tools());
    const delegated = only(out.effects, 'callTool');
    const remote = {
      agent: 'remote',
      taskId: 'task-9',
      approval: {
        uuid: 'r-1',
        toolName: 'resources_add',
        toolArgsJson: '{"name":"z"}',
        description: 'resources_add with {"name":"z"}',
        chain: ['deeper'],
      },
      text: 'Approval required (id: r-1): …',
    };
    const paused = step(out.state, ev.tool([0], delegated.call.id, remote.text, { remote }), env);
    const write = only(paused.effects, 'write');
    expect(write.approvals).toEqual([
      {
        uuid: write.approvals[0]!.uuid,
        toolCallId: delegated.call.id,
        toolName: 'a2a_remote',
        toolArgsJson: '{"message":"Please do: add z"}',
        description: 'remote asks for approval: resources_add with {"name":"z"}',
        remoteTaskId: 'task-9',
        remoteAgentName: 'remote',
        agentChain: ['remote', 'deeper'],
      },
    ]);
  });

  it('a resumed a2a node takes the approved delegation result as its output and the run goes on', () => {
    const env = treeEnv(a2aTree(true));
    const paused = feed(freshRun('tree', 2), env, ev.user('add z'), ev.tools());
    const write = only(paused.effects, 'write');
    const approval = pendingOf(write.approvals[0]!);
    const out = feed(
      storedRun(write.run!, 3),
      env,
      ev.decide(approval, true),
      ev.claimed(true),
      ev.ran(approval.uuid, 'z added'),
      ev.tools(),
    );
    expect(work(out.effects)).toEqual([{ kind: 'loadHistory', path: [0], node: 'remote', nodeMessages: 1 }]);
    const resumed = step(out.state, ev.history([0], [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'z added', node: 'remote' }]), env);
    // Its result is recorded already: the checkpoint stores its output and that the run waits no more.
    expect(work(resumed.effects)).toMatchObject([
      { kind: 'checkpoint', messages: [], run: { pending: [], session: { remote_out: 'z added' } } },
    ]);
    expect(work(stored(resumed, env).effects)).toMatchObject([{ kind: 'callModel', path: [1], systemPrompt: 'Report z added' }]);
    expect(resumed.state.changes.session).toEqual({ remote_out: 'z added' });
  });

  it('approvalOf: a plain gate describes its call; a proxy names the peer and where the call waits', () => {
    const gate = { kind: 'gate' as const, call: call('c1', 'resources_add', { name: 'x' }), args: { name: 'x' }, tool: addTool };
    expect(approvalOf(gate, 'u-1')).toEqual({
      uuid: 'u-1',
      toolCallId: 'c1',
      toolName: 'resources_add',
      toolArgsJson: '{"name":"x"}',
      description: 'resources_add on resources with arguments {"name":"x"}',
      agentChain: [],
    });
    expect(approvalOf({ ...gate, proxy: { agent: 'peer', taskId: 't', approval: undefined, text: 'held' } }, 'u-2')).toMatchObject({
      description: 'peer asks for approval: held',
      remoteTaskId: 't',
      agentChain: ['peer'],
    });
  });
});

describe('approve: claim, run the stored call once, go on', () => {
  it('simple mode, transition by transition', () => {
    const { run, approval } = simplePaused();
    const start = storedRun(run, 4);
    expect(start).toMatchObject({ mode: 'simple', runId: 'run-1', base: run, revision: 4 });

    const decided = step(start, ev.decide(approval, true), SIMPLE);
    expect(work(decided.effects)).toEqual([
      { kind: 'claim', uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [], continuesTurn: true },
    ]);
    expect(decided.state.decision).toMatchObject({ uuid: approval.uuid, approved: true, claimed: false, pause: run.pending[0] });
    expect(decided.state.activation).toBe('activation-2');

    const won = step(decided.state, ev.claimed(true), SIMPLE);
    expect(work(won.effects)).toEqual([{ kind: 'runApproved', uuid: approval.uuid, approval }]);
    expect(won.state.decision!.claimed).toBe(true);

    const ran = step(won.state, ev.ran(approval.uuid, 'added x'), SIMPLE);
    expect(work(ran.effects)).toEqual([{ kind: 'loadTools' }]);
    expect(ran.state.changes.resumed).toBe(approval.uuid);

    const tools = step(ran.state, ev.tools(), SIMPLE);
    expect(work(tools.effects)).toEqual([{ kind: 'loadHistory', path: [], nodeMessages: null }]);

    const history = step(tools.state, ev.conversation([], [userText('add x')]), SIMPLE);
    expect(work(history.effects)).toMatchObject([{ kind: 'callModel', path: [], systemPrompt: SYSTEM }]);

    const answered = step(history.state, ev.text([], 'x is added'), SIMPLE);
    expect(work(answered.effects)).toMatchObject([
      { kind: 'write', run: undefined, expectedRevision: 4, messages: [{ content: 'x is added' }] },
    ]);
    const done = step(answered.state, ev.written(5), SIMPLE);
    expect(work(done.effects)).toEqual([{ kind: 'done', answer: { kind: 'answered', response: 'x is added' } }]);
  });

  it('an agent tree: runApproved names the node; loadHistory takes the pause’s nodeMessages', () => {
    const env = treeEnv(sequentialTree);
    const paused = feed(
      treeAtModel(sequentialTree),
      env,
      ev.text([0], 'three'),
      ev.calls([1], [call('c0', 'resources_list', {})]),
      ev.tool([1], 'c0', '[]'),
      ev.calls([1], [call('c1', 'resources_add', { name: 'x' })]),
    );
    const write = only(paused.effects, 'write');
    expect(write.run!.pending[0]!.nodeMessages).toBe(3);
    const approval = pendingOf(write.approvals[0]!);
    const won = feed(storedRun(write.run!, 4), env, ev.decide(approval, true), ev.claimed(true));
    expect(work(won.effects)).toEqual([{ kind: 'runApproved', uuid: approval.uuid, approval, node: 'executor' }]);
    const out = feed(won.state, env, ev.ran(approval.uuid, 'added x'), ev.tools());
    expect(work(out.effects)).toEqual([{ kind: 'loadHistory', path: [1], node: 'executor', nodeMessages: 3 }]);
    // The rest of the sequence runs after the resumed node; the session kept from the pause resolves its prompt.
    const resumed = step(out.state, ev.history([1], []), env);
    expect(work(resumed.effects)).toMatchObject([
      { kind: 'callModel', path: [1], systemPrompt: 'Execute based on three', history: [userText('list all')] },
    ]);
    expect(resumed.state.frames['']).toMatchObject({ kind: 'sequential', index: 1 });
  });

  it('a delegation approved that the peer holds again → the same call waits again under a new approval', () => {
    const env = treeEnv(a2aTree(true));
    const paused = feed(freshRun('tree', 2), env, ev.user('add z'), ev.tools());
    const write = only(paused.effects, 'write');
    const approval = pendingOf(write.approvals[0]!);
    const out = feed(
      storedRun(write.run!, 3),
      env,
      ev.decide(approval, true),
      ev.claimed(true),
      ev.ran(approval.uuid, 'held', { remote: { agent: 'remote', taskId: 'task-2', approval: undefined, text: 'needs approval' } }),
    );
    const again = only(out.effects, 'write');
    expect(again.approvals).toMatchObject([
      { toolName: 'a2a_remote', remoteTaskId: 'task-2', description: 'remote asks for approval: needs approval' },
    ]);
    expect(again.run!.pending).toHaveLength(1);
    expect(again.run!.pending[0]).toMatchObject({ ...write.run!.pending[0], approvalUuid: again.approvals[0]!.uuid });
    expect(again.approvals[0]!.uuid).not.toBe(approval.uuid);
  });
});

rows('a decision that cannot be carried out', [
  {
    name: 'approve a run of a tree when the configuration has none any more → refuse failedPrecondition',
    env: SIMPLE,
    given: () => storedRun(parallelPaused().run, 5),
    when: () => ev.decide(parallelPaused().alpha, true),
    effects: [{ kind: 'refuse', code: 'failedPrecondition' }],
    then: (state, effects) => {
      expect(only(effects, 'refuse').message).toMatch(
        /^approval [0-9a-f-]+ cannot resume its pipeline: the configuration has no agent tree any more\. Nothing was run/,
      );
      expect(state.phase).toBe('finished');
    },
  },
  {
    name: 'approve an approval the stored run does not wait for → refuse failedPrecondition',
    env: treeEnv(parallelTree('required')),
    given: () => storedRun(parallelPaused().run, 5),
    when: () => ev.decide({ ...parallelPaused().alpha, uuid: 'not-a-pause' }, true),
    effects: [
      { kind: 'refuse', code: 'failedPrecondition', message: "approval not-a-pause is not one its conversation's pipeline waits for" },
    ],
  },
  {
    name: 'a decision on an approval decided already → a claim that cannot win (no turn goes on)',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => ev.decide({ ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_APPROVED }, false, 'late'),
    effects: [{ kind: 'claim', approved: false, reason: 'late', messages: [], clearRun: false, alsoReject: [], continuesTurn: false }],
  },
  {
    name: 'claimed lost → done notDecided, nothing runs',
    env: SIMPLE,
    given: () => feed(storedRun(simplePaused().run, 4), SIMPLE, ev.decide(simplePaused().approval, true)).state,
    when: ev.claimed(false),
    effects: [{ kind: 'done', answer: { kind: 'notDecided' } }],
    then: (state) => expect(state.phase).toBe('finished'),
  },
]);

describe('a decision refused for a changed tree leaves nothing to do', () => {
  it('the fingerprint mismatch names where it paused, and later events are refused as out of phase', () => {
    const out = feed(
      treeAtModel(sequentialTree),
      treeEnv(sequentialTree),
      ev.text([0], 'three'),
      ev.calls([1], [call('c1', 'resources_add', { name: 'x' })]),
    );
    const write = only(out.effects, 'write');
    const approval = pendingOf(write.approvals[0]!);
    const changed = treeEnv({
      ...sequentialTree,
      agents: [sequentialTree.agents![0]!, { ...sequentialTree.agents![1]!, prompt: 'Delete everything' }],
    });
    const refused = step(storedRun(write.run!, 4), ev.decide(approval, true), changed);
    expect(work(refused.effects)).toEqual([
      {
        kind: 'refuse',
        code: 'failedPrecondition',
        message: `approval ${approval.uuid} cannot resume its pipeline: the agent tree changed since it paused at agent.agents[1], so that path no longer leads to the same node. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`,
      },
    ]);
    expect(refused.state.phase).toBe('finished');
    expect(step(refused.state, ev.claimed(true), changed)).toEqual({
      state: refused.state,
      effects: [{ kind: 'outOfPhase', phase: 'finished', event: 'claimed', detail: 'the activation has already answered' }],
    });
    // A rejection needs no tree to lead anywhere: it is carried out.
    const rejected = step(storedRun(write.run!, 4), ev.decide(approval, false, 'no'), changed);
    expect(work(rejected.effects)).toMatchObject([{ kind: 'claim', approved: false, clearRun: true }]);
  });
});

describe('reject', () => {
  it('simple mode: the claim records the "no"; the model hears it; the answer starts with "Operation cancelled by user."', () => {
    const { run, approval } = simplePaused();
    const decided = step(storedRun(run, 4), ev.decide(approval, false, 'too risky'), SIMPLE);
    const claim = withoutJournal(only(decided.effects, 'claim')) as Extract<Effect, { kind: 'claim' }>;
    const text = `Rejected by a human: too risky. ${REJECTED_SUFFIX}`;
    expect(claim).toEqual({
      kind: 'claim',
      uuid: approval.uuid,
      approved: false,
      reason: 'too risky',
      messages: [
        {
          role: MessageRole.MESSAGE_ROLE_TOOL,
          content: text,
          toolCall: {
            id: 'c1',
            name: 'resources_add',
            argumentsJson: '{"name":"x"}',
            result: text,
            isError: true,
            rejected: true,
            reason: 'too risky',
          },
        },
      ],
      clearRun: false,
      alsoReject: [],
      continuesTurn: true,
    });
    const won = step(decided.state, ev.claimed(true), SIMPLE);
    expect(work(won.effects)).toEqual([{ kind: 'loadTools' }]);
    expect(won.state).toMatchObject({ afterRejection: true, changes: { resumed: approval.uuid } });
    const atModel = feed(won.state, SIMPLE, ev.tools(), ev.conversation([], [userText('add x'), ...claim.messages]));
    expect(work(atModel.effects)).toMatchObject([{ kind: 'callModel' }]);
    const answered = step(atModel.state, ev.text([], 'Understood, I did not add x.'), SIMPLE);
    // The pause is gone with the rejection: the run is cleared.
    expect(only(answered.effects, 'write')).toMatchObject({ run: undefined, messages: [{ content: 'Understood, I did not add x.' }] });
    const done = step(answered.state, ev.written(5), SIMPLE);
    expect(work(done.effects)).toEqual([
      { kind: 'done', answer: { kind: 'answered', response: 'Operation cancelled by user.\n\nUnderstood, I did not add x.' } },
    ]);
  });

  it('a rejection without a reason says so plainly', () => {
    const { run, approval } = simplePaused();
    const claim = only(step(storedRun(run, 4), ev.decide(approval, false), SIMPLE).effects, 'claim');
    expect(claim.messages[0]!.content).toBe(`Rejected by a human. ${REJECTED_SUFFIX}`);
    expect(claim).not.toHaveProperty('reason');
  });

  it('a tree with one pause: the claim clears the run and the turn does not go on → cancelled', () => {
    const env = treeEnv(sequentialTree);
    const out = feed(treeAtModel(sequentialTree), env, ev.text([0], 'three'), ev.calls([1], [call('c1', 'resources_add', { name: 'x' })]));
    const approval = pendingOf(only(out.effects, 'write').approvals[0]!);
    const decided = step(storedRun(only(out.effects, 'write').run!, 4), ev.decide(approval, false, 'no'), env);
    expect(work(decided.effects)).toMatchObject([
      {
        kind: 'claim',
        approved: false,
        clearRun: true,
        continuesTurn: false,
        alsoReject: [],
        messages: [{ node: 'executor', toolCall: { rejected: true } }],
      },
    ]);
    expect(work(step(decided.state, ev.claimed(true), env).effects)).toEqual([{ kind: 'done', answer: { kind: 'cancelled' } }]);
  });

  it('a tree with several pauses: loadApprovals, then one claim that rejects them all, forwarding to peers that hold proxied ones', () => {
    const { env, run, alpha, beta } = parallelPaused();
    const decided = step(storedRun(run, 5), ev.decide(alpha, false, 'stop it'), env);
    expect(work(decided.effects)).toEqual([{ kind: 'loadApprovals' }]);
    const proxiedBeta: PendingApproval = { ...beta, remoteTaskId: 'task-b', remoteAgentName: 'peer' };
    const loaded = step(decided.state, { kind: 'approvalsLoaded', approvals: [alpha, proxiedBeta] }, env);
    const claim = only(loaded.effects, 'claim');
    expect(claim).toMatchObject({
      uuid: alpha.uuid,
      approved: false,
      reason: 'stop it',
      clearRun: true,
      continuesTurn: false,
      messages: [{ node: 'alpha', toolCall: { id: 'a1', rejected: true } }],
    });
    expect(claim.alsoReject).toEqual([
      {
        uuid: beta.uuid,
        messages: [
          {
            role: MessageRole.MESSAGE_ROLE_TOOL,
            node: 'beta',
            content: `Cancelled: the pipeline was cancelled when approval ${alpha.uuid} (resources_add) was rejected by a human: stop it; resources_add was not run. ${REJECTED_SUFFIX}`,
            toolCall: expect.objectContaining({ id: 'b1', rejected: true, reason: 'stop it' }),
          },
        ],
      },
    ]);
    const won = step(loaded.state, ev.claimed(true), env);
    expect(work(won.effects)).toEqual([
      { kind: 'forwardRejection', approval: proxiedBeta, reason: 'stop it' },
      { kind: 'done', answer: { kind: 'cancelled' } },
    ]);
  });

  it('a cancelling claim names the run it read; refused because a sibling paused again, it decides once more on the newer run', () => {
    const { env, run, alpha, beta } = parallelPaused();
    const decided = step(storedRun(run, 5), ev.decide(alpha, false, 'stop it'), env);
    const loaded = step(decided.state, { kind: 'approvalsLoaded', approvals: [alpha, beta] }, env);
    expect(only(loaded.effects, 'claim')).toMatchObject({ clearRun: true, expectedRunRevision: 5 });
    // Meanwhile beta was approved and its branch paused again for a new approval (gamma).
    const gamma = { ...beta, uuid: '0b5e3c1a-7d2f-4e8a-9c61-2f4b8d7e1a93', toolCallId: 'b2' };
    const newer = {
      ...run,
      pending: [
        ...run.pending.filter((pause) => pause.approvalUuid !== beta.uuid),
        { ...run.pending.find((pause) => pause.approvalUuid === beta.uuid)!, approvalUuid: gamma.uuid },
      ],
    };
    const conflicted = step(loaded.state, { kind: 'claimConflict', latest: newer, revision: 7 }, env);
    expect(work(conflicted.effects)).toEqual([{ kind: 'loadApprovals' }]);
    const again = step(conflicted.state, { kind: 'approvalsLoaded', approvals: [alpha, gamma] }, env);
    const claim = only(again.effects, 'claim');
    expect(claim).toMatchObject({ uuid: alpha.uuid, clearRun: true, expectedRunRevision: 7 });
    expect(claim.alsoReject.map((other) => other.uuid)).toEqual([gamma.uuid]);
  });

  it(`a cancelling claim refused ${MAX_WRITE_ATTEMPTS} times in a row gives up with ABORTED`, () => {
    const { env, run, alpha, beta } = parallelPaused();
    let state = step(
      step(storedRun(run, 5), ev.decide(alpha, false), env).state,
      { kind: 'approvalsLoaded', approvals: [alpha, beta] },
      env,
    ).state;
    let effects: ReturnType<typeof step>['effects'] = [];
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      ({ state, effects } = step(state, { kind: 'claimConflict', latest: run, revision: 5 + attempt }, env));
      if (attempt < MAX_WRITE_ATTEMPTS) ({ state, effects } = step(state, { kind: 'approvalsLoaded', approvals: [alpha, beta] }, env));
    }
    expect(effects).toEqual([{ kind: 'refuse', code: 'aborted', message: expect.stringContaining('kept changing under this decision') }]);
  });

  it('approvalsLoaded while the tree walks is refused as out of phase', () => {
    const state = treeAtModel(sequentialTree);
    expect(step(state, { kind: 'approvalsLoaded', approvals: [] }, treeEnv(sequentialTree)).effects).toEqual([
      {
        kind: 'outOfPhase',
        phase: 'walking_tree',
        event: 'approvalsLoaded',
        detail: 'the run waits for its nodes (history, model, tools)',
      },
    ]);
  });
});

describe('write conflicts: the write is redone on the newer state (concurrent resumes)', () => {
  it('a pause write that lost to a sibling’s pause → rewritten with both pauses, at the newer revision', () => {
    const { state, env, run, alpha, beta } = alphaResumed();
    const paused = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.calls([0, 0], [call('a2', 'resources_add', { name: 'a2' })]));
    const mine = only(paused.effects, 'write');
    // Meanwhile beta's activation paused again under a new approval.
    const beta2 = { ...run.pending[1]!, approvalUuid: 'beta-2' };
    const latest: StoredRun = { ...run, pending: [run.pending[0]!, beta2], modelCalls: 3 };
    const redone = step(paused.state, ev.conflict(latest, 6), env);
    const write = only(redone.effects, 'write');
    expect(write.expectedRevision).toBe(6);
    expect(write.run!.pending.map((pause) => pause.approvalUuid)).toEqual(['beta-2', mine.approvals[0]!.uuid]);
    expect(write.run!.pending.map((pause) => pause.approvalUuid)).not.toContain(alpha.uuid);
    expect(write.run!.pending.map((pause) => pause.approvalUuid)).not.toContain(beta.uuid);
    expect(write.run!.modelCalls).toBe(4);
    expect(write.approvals).toEqual(mine.approvals);
    expect(write.messages).toEqual(mine.messages);
    expect(redone.state.write).toMatchObject({ purpose: 'pause', attempts: 1 });
    expect(work(step(redone.state, ev.written(7), env).effects)).toEqual([
      { kind: 'done', answer: { kind: 'paused', approvals: [mine.approvals[0]!.uuid] } },
    ]);
  });

  it('a settle write that lost to the sibling’s settle → the loser joins', () => {
    const { state, env, run } = alphaResumed();
    const settling = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.text([0, 0], 'A out'));
    expect(only(settling.effects, 'write').run!.branchOutputs).toEqual({ '0.0': { output: 'A out', exitLoop: false } });
    const latest: StoredRun = {
      ...run,
      pending: [run.pending[0]!],
      branchOutputs: { '0.1': { output: 'B out', exitLoop: false } },
      session: { b: 'B out' },
    };
    const redone = step(settling.state, ev.conflict(latest, 6), env);
    expect(only(redone.effects, 'write')).toMatchObject({
      expectedRevision: 6,
      run: { pending: [], branchOutputs: {}, session: { a: 'A out', b: 'B out' } },
    });
    const joined = step(redone.state, ev.written(7), env);
    expect(work(joined.effects)).toMatchObject([{ kind: 'callModel', path: [1], systemPrompt: 'Summarize A out and B out' }]);
  });

  it('a conflict with another run stored → superseded; the turn is not ended by this activation', () => {
    const { state, env, run } = alphaResumed();
    const settling = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.text([0, 0], 'A out'));
    const out = step(settling.state, ev.conflict({ ...run, runId: 'run-2' }, 9), env);
    expect(work(out.effects)).toEqual([
      { kind: 'done', answer: { kind: 'superseded', reason: 'a newer message started another run', endTurn: false } },
    ]);
    expect(out.state.phase).toBe('finished');
  });

  it('a conflict with no run stored (cancelled under it) → superseded, and the driver ends the turn', () => {
    const { state, env } = alphaResumed();
    const settling = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.text([0, 0], 'A out'));
    const out = step(settling.state, ev.conflict(undefined, 9), env);
    expect(work(out.effects)).toEqual([
      { kind: 'done', answer: { kind: 'superseded', reason: 'the run was cancelled or finished while this branch ran', endTurn: true } },
    ]);
  });

  it(`${MAX_WRITE_ATTEMPTS} lost races in a row → refuse aborted`, () => {
    const { state, env, run } = alphaResumed();
    let out = feed(state, env, ev.tools(), ev.history([0, 0], []), ev.text([0, 0], 'A out'));
    for (let attempt = 1; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      out = step(out.state, ev.conflict(run, 5 + attempt), env);
      expect(only(out.effects, 'write').expectedRevision).toBe(5 + attempt);
    }
    out = step(out.state, ev.conflict(run, 100), env);
    expect(work(out.effects)).toEqual([
      {
        kind: 'refuse',
        code: 'aborted',
        message: `the run of this conversation kept changing under this request (${MAX_WRITE_ATTEMPTS} writes lost a race); try again`,
      },
    ]);
    expect(out.state).toMatchObject({ phase: 'finished', write: undefined });
  });

  it('written or writeConflict with no write pending are refused as out of phase', () => {
    const state = simpleAtModel();
    expect(step(state, ev.written(9), SIMPLE).effects).toMatchObject([{ kind: 'outOfPhase', phase: 'walking_tree', event: 'written' }]);
    expect(step(state, ev.conflict(undefined, 9), SIMPLE).effects).toMatchObject([
      { kind: 'outOfPhase', phase: 'walking_tree', event: 'writeConflict' },
    ]);
    expect(step(state, ev.written(9), SIMPLE).state.revision).toBe(3);
  });
});

describe('timerFired and cancel: no new work, in-flight results come back', () => {
  it('the deadline while the model answers → its answer is not acted on; the run ends with the note', () => {
    const stopped = step(simpleAtModel(), { kind: 'timerFired' }, SIMPLE);
    expect(stopped.effects).toEqual([]);
    expect(stopped.state).toMatchObject({ stop: STOPPED_BY_DEADLINE, inFlight: 1, phase: 'walking_tree' });
    const answered = step(stopped.state, ev.calls([], [call('c1', 'resources_list', {})]), SIMPLE);
    expect(work(answered.effects)).toEqual([
      {
        kind: 'write',
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: STOPPED_BY_DEADLINE }],
        approvals: [],
        run: undefined,
        expectedRevision: 3,
      },
    ]);
    expect(work(step(answered.state, ev.written(4), SIMPLE).effects)).toEqual([
      { kind: 'done', answer: { kind: 'answered', response: STOPPED_BY_DEADLINE } },
    ]);
  });

  it('a gate reached after the stop is never asked', () => {
    const stopped = step(simpleAtModel(), { kind: 'cancel', reason: 'user pressed stop' }, SIMPLE);
    const answered = step(stopped.state, ev.calls([], [call('c1', 'resources_add', { name: 'x' })]), SIMPLE);
    const write = only(answered.effects, 'write');
    expect(write).toMatchObject({ approvals: [], run: undefined, messages: [{ content: stoppedText('user pressed stop') }] });
  });

  it('a branch reaching a gate after the stop, with its sibling in flight: no approval, one finish write', () => {
    const env = treeEnv(parallelTree('required'));
    const stopped = step(treeAtModel(parallelTree('required')), { kind: 'timerFired' }, env);
    const gated = step(stopped.state, ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]), env);
    expect(work(gated.effects)).toEqual([]);
    const out = step(gated.state, ev.text([0, 1], 'B out'), env);
    expect(work(out.effects)).toMatchObject([
      { kind: 'write', approvals: [], run: undefined, messages: [{ node: 'beta', content: 'B out' }, { content: STOPPED_BY_DEADLINE }] },
    ]);
    expect(out.state).toMatchObject({ gates: [], changes: { pauses: [] } });
  });

  it('a pause write already in flight when the stop comes is waited for: the run pauses as written', () => {
    const paused = feed(simpleAtModel(), SIMPLE, ev.calls([], [call('c1', 'resources_add', { name: 'x' })]));
    const uuid = only(paused.effects, 'write').approvals[0]!.uuid;
    const stopped = step(paused.state, { kind: 'timerFired' }, SIMPLE);
    expect(stopped.effects).toEqual([]);
    expect(work(step(stopped.state, ev.written(4), SIMPLE).effects)).toEqual([
      { kind: 'done', answer: { kind: 'paused', approvals: [uuid] } },
    ]);
  });

  it('parallel branches in flight: each result still comes back, and all go with one finish write', () => {
    const env = treeEnv(parallelTree());
    const stopped = step(treeAtModel(parallelTree()), { kind: 'timerFired' }, env);
    expect(stopped.effects).toEqual([]);
    const first = step(stopped.state, ev.text([0, 0], 'A out'), env);
    expect(work(first.effects)).toEqual([]);
    const second = step(first.state, ev.text([0, 1], 'B out'), env);
    expect(work(second.effects)).toMatchObject([
      { kind: 'write', run: undefined, messages: [{ node: 'alpha' }, { node: 'beta' }, { content: STOPPED_BY_DEADLINE }] },
    ]);
    expect(second.effects.some((effect) => effect.kind === 'callModel')).toBe(false);
  });

  it('a stop in a resumed branch keeps the run’s other waiting pauses stored', () => {
    const { state, env, run, beta } = alphaResumed();
    const atModel = feed(state, env, ev.tools(), ev.history([0, 0], []));
    const stopped = step(atModel.state, { kind: 'cancel', reason: 'user pressed stop' }, env);
    const answered = step(stopped.state, ev.calls([0, 0], [call('a2', 'resources_list', {})]), env);
    const write = only(answered.effects, 'write');
    expect(write.messages).toMatchObject([{ content: stoppedText('user pressed stop') }]);
    expect(write.run!.pending.map((pause) => pause.approvalUuid)).toEqual([beta.uuid]);
    expect(write.run!.pending).toEqual([run.pending[1]]);
    expect(answered.state.write).toMatchObject({ purpose: 'finish', keepWaiting: true });
    const done = step(answered.state, ev.written(6), env);
    expect(work(done.effects)).toEqual([{ kind: 'done', answer: { kind: 'answered', response: stoppedText('user pressed stop') } }]);
    expect(done.state.base!.pending).toEqual([run.pending[1]]);
  });

  it('a stop before the claim came back: a won claim still runs its call (it was decided), nothing after it starts', () => {
    const { run, approval } = simplePaused();
    const claiming = step(storedRun(run, 4), ev.decide(approval, true), SIMPLE);
    const stopped = step(claiming.state, { kind: 'timerFired' }, SIMPLE);
    expect(stopped.effects).toEqual([]);
    const won = step(stopped.state, ev.claimed(true), SIMPLE);
    expect(work(won.effects)).toEqual([{ kind: 'runApproved', uuid: approval.uuid, approval }]);
    const ran = step(won.state, ev.ran(approval.uuid, 'added x'), SIMPLE);
    expect(work(ran.effects)).toEqual([
      {
        kind: 'write',
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: STOPPED_BY_DEADLINE }],
        approvals: [],
        run: undefined,
        expectedRevision: 4,
      },
    ]);
  });

  it('a stop before a tree rejection was claimed: nothing was decided, the activation just answers', () => {
    const { env, run, alpha, beta } = parallelPaused();
    const loading = step(storedRun(run, 5), ev.decide(alpha, false), env);
    const stopped = step(loading.state, { kind: 'cancel', reason: 'shutdown' }, env);
    const out = step(stopped.state, { kind: 'approvalsLoaded', approvals: [alpha, beta] }, env);
    expect(work(out.effects)).toEqual([{ kind: 'done', answer: { kind: 'answered', response: stoppedText('shutdown') } }]);
  });

  it('a second stop keeps the first note', () => {
    const first = step(simpleAtModel(), { kind: 'timerFired' }, SIMPLE);
    expect(step(first.state, { kind: 'cancel', reason: 'later' }, SIMPLE).state.stop).toBe(STOPPED_BY_DEADLINE);
  });
});

describe("a lost lease: the run is no longer this activation's, but a turn that answered has answered", () => {
  const lost: RunEvent = { kind: 'leaseLost', reason: 'another replica took the run over' };
  const lostAnswer = { kind: 'done', answer: { kind: 'lost', reason: 'another replica took the run over' } };

  it("the turn's last write on its way when the lease goes (a renewal that reached the store after it): once written, the answer stands", () => {
    const finishing = step(simpleAtModel(), ev.text([], 'all done'), SIMPLE);
    expect(only(finishing.effects, 'write').run).toBeUndefined();
    const losing = step(finishing.state, lost, SIMPLE);
    expect(losing.effects).toEqual([]);
    expect(losing.state).toMatchObject({ phase: 'writing', lost: 'another replica took the run over' });
    expect(work(step(losing.state, ev.written(4), SIMPLE).effects)).toEqual([
      { kind: 'done', answer: { kind: 'answered', response: 'all done' } },
    ]);
  });

  it('a pause write on its way: once written, the run paused for its approval', () => {
    const pausing = step(simpleAtModel(), ev.calls([], [call('c1', 'resources_add', { name: 'x' })]), SIMPLE);
    const uuid = only(pausing.effects, 'write').approvals[0]!.uuid;
    const losing = step(pausing.state, lost, SIMPLE);
    expect(work(step(losing.state, ev.written(4), SIMPLE).effects)).toEqual([
      { kind: 'done', answer: { kind: 'paused', approvals: [uuid] } },
    ]);
  });

  it('nothing on its way: the activation ends at once, lost, and what comes back later starts nothing', () => {
    const losing = step(simpleAtModel(), lost, SIMPLE);
    expect(work(losing.effects)).toEqual([lostAnswer]);
    expect(step(losing.state, ev.text([], 'too late'), SIMPLE).effects).toMatchObject([
      { kind: 'outOfPhase', phase: 'finished', event: 'modelAnswered' },
    ]);
  });

  it('a write refused after the loss (the fence, or a newer run) is not written again: lost', () => {
    const finishing = step(simpleAtModel(), ev.text([], 'all done'), SIMPLE);
    const losing = step(finishing.state, lost, SIMPLE);
    const { run } = simplePaused();
    expect(work(step(losing.state, ev.conflict({ ...run, runId: 'run-1' }, 9), SIMPLE).effects)).toEqual([lostAnswer]);
  });

  it('a settle write that joins, stored after the loss: what it stored stands, but the run does not go on after the parallel node', () => {
    const { env, run, beta } = parallelPaused();
    const settled: StoredRun = {
      ...run,
      pending: [run.pending[1]!],
      branchOutputs: { '0.0': { output: 'A out', exitLoop: false } },
      session: { a: 'A out' },
    };
    const joining = feed(
      storedRun(settled, 6),
      env,
      ev.decide(beta, true),
      ev.claimed(true),
      ev.ran(beta.uuid, 'added b'),
      ev.tools(),
      ev.history([0, 1], []),
      ev.text([0, 1], 'B out'),
    );
    expect(joining.state.write).toMatchObject({ purpose: 'settle', joined: [{ output: 'A out' }, { output: 'B out' }] });
    const losing = step(joining.state, lost, env);
    expect(losing.effects).toEqual([]);
    expect(work(step(losing.state, ev.written(7), env).effects)).toEqual([lostAnswer]);
  });

  it('a claim on its way: won, the decision stands and its call is left to what is stored (not run here); lost, nothing was decided', () => {
    const { run, approval } = simplePaused();
    const claiming = step(storedRun(run, 4), ev.decide(approval, true), SIMPLE);
    expect(only(claiming.effects, 'claim').approved).toBe(true);
    const losing = step(claiming.state, lost, SIMPLE);
    expect(losing.effects).toEqual([]);
    expect(work(step(losing.state, ev.claimed(true), SIMPLE).effects)).toEqual([lostAnswer]);
    expect(work(step(losing.state, ev.claimed(false), SIMPLE).effects)).toEqual([{ kind: 'done', answer: { kind: 'notDecided' } }]);
  });

  it('a second loss keeps the first reason, and a loss after the end changes nothing', () => {
    const finishing = step(simpleAtModel(), ev.text([], 'all done'), SIMPLE);
    const first = step(finishing.state, lost, SIMPLE);
    expect(step(first.state, { kind: 'leaseLost', reason: 'later' }, SIMPLE).state.lost).toBe('another replica took the run over');
    const done = step(first.state, ev.written(4), SIMPLE);
    expect(step(done.state, { kind: 'leaseLost', reason: 'after the end' }, SIMPLE).effects).toEqual([]);
  });
});

describe('events that do not belong are refused as out of phase, never dropped silently; the machine is pure and deterministic', () => {
  it('events of another phase, or for a path with no node waiting, are refused with an outOfPhase effect and change nothing, the in-flight count included', () => {
    const state = simpleAtModel();
    expect(state.phase).toBe('walking_tree');
    for (const [event, detail] of [
      [ev.text([4], 'x'), 'no node at path 4 waits for the model'],
      [ev.history([], []), 'no node at the root waits for its history'],
      [ev.tool([], 'c1', 'x'), 'no node at the root waits for a tool call'],
      [
        { kind: 'approvedCallFinished', uuid: 'u', outcome: { text: 'x', isError: false } } as RunEvent,
        'the run waits for its nodes (history, model, tools)',
      ],
      [ev.tools(), 'the run waits for its nodes (history, model, tools)'],
      [ev.claimed(true), 'the run waits for its nodes (history, model, tools)'],
      [ev.user('again'), 'the run waits for its nodes (history, model, tools)'],
    ] as const) {
      const out = step(state, event, SIMPLE);
      expect(out.effects).toEqual([{ kind: 'outOfPhase', phase: 'walking_tree', event: event.kind, detail }]);
      // A refused answer settles no ask: the model call still out is still counted.
      expect(out.state).toEqual(state);
    }
  });

  it('each phase is named after what the run waits for', () => {
    expect(freshRun('simple', 3).phase).toBe('starting');
    expect(simpleStarted().phase).toBe('loading_tools');
    const paused = simplePaused();
    const pausing = step(simpleAtModel(), ev.calls([], [call('c1', 'resources_add', { name: 'x' })]), SIMPLE);
    expect(pausing.state.phase).toBe('writing');
    expect(paused.state.phase).toBe('finished');
    const deciding = step(storedRun(paused.run, 4), ev.decide(paused.approval, true), SIMPLE);
    expect(deciding.state.phase).toBe('deciding');
    const executing = step(deciding.state, ev.claimed(true), SIMPLE);
    expect(executing.state.phase).toBe('executing_approved');
    expect(step(executing.state, ev.ran(paused.approval.uuid, 'added x'), SIMPLE).state.phase).toBe('loading_tools');
  });

  it('after the run ended, a stop is quietly ignored and any other event is refused as out of phase', () => {
    const ended = feed(simpleAtModel(), SIMPLE, ev.text([], 'done'), ev.written(4)).state;
    expect(ended.phase).toBe('finished');
    for (const event of [{ kind: 'timerFired' } as RunEvent, { kind: 'cancel', reason: 'x' } as RunEvent]) {
      expect(step(ended, event, SIMPLE)).toEqual({ state: ended, effects: [] });
    }
    for (const event of [ev.text([], 'again'), ev.tools(), ev.claimed(true), ev.written(5)]) {
      expect(step(ended, event, SIMPLE)).toEqual({
        state: ended,
        effects: [{ kind: 'outOfPhase', phase: 'finished', event: event.kind, detail: 'the activation has already answered' }],
      });
    }
  });

  it('the same state and event give the same result (fresh ids included)', () => {
    const { env } = parallelPaused();
    const a = feed(
      treeAtModel(parallelTree('required')),
      env,
      ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]),
      ev.calls([0, 1], [call('b1', 'resources_add', { name: 'b' })]),
    );
    const b = feed(
      treeAtModel(parallelTree('required')),
      env,
      ev.calls([0, 0], [call('a1', 'resources_add', { name: 'a' })]),
      ev.calls([0, 1], [call('b1', 'resources_add', { name: 'b' })]),
    );
    expect(a).toEqual(b);
  });

  it('withChanges lays the activation’s changes over the stored run', () => {
    const { run, alpha } = parallelPaused();
    const state: RunState = {
      ...storedRun(run, 5),
      modelCalls: 2,
      changes: { resumed: alpha.uuid, pauses: [], outputs: { '0.0': { output: 'A', exitLoop: false } }, session: { a: 'A' } },
    };
    expect(withChanges(state)).toEqual({
      ...run,
      pending: [run.pending[1]],
      branchOutputs: { '0.0': { output: 'A', exitLoop: false } },
      session: { a: 'A' },
      modelCalls: run.modelCalls + 2,
    });
  });
});

// ---- a run taken over from a replica that stopped -------------------------------------

/** What the store holds of a run taken over; by default a message's turn that recorded nothing but the message. */
const takenOver = (extra: Partial<Extract<RunEvent, { kind: 'takenOver' }>> = {}): RunEvent => ({
  kind: 'takenOver',
  runId: 'run-taken',
  activation: 'activation-taken',
  conversation: { messages: storedMessages([userText('add x')]), pendingApprovals: [] },
  unfinished: [],
  takeovers: 1,
  maxTakeovers: 3,
  ...extra,
});
/** The stored result of the approved (or rejected) resources_add, the last thing a cut-off decision recorded. */
const resultOfAdd = (rejected: boolean): NewMessage => ({
  role: MessageRole.MESSAGE_ROLE_TOOL,
  content: rejected ? 'Rejected by a human.' : 'added x',
  toolCall: { id: 'c1', name: 'resources_add', argumentsJson: '{"name":"x"}', ...(rejected && { rejected: true }) },
});
const afterDecision = (rejected: boolean, pendingApprovals: PendingApproval[] = []) => ({
  conversation: { messages: storedMessages([userText('add x'), resultOfAdd(rejected)]), pendingApprovals },
});

rows('a run taken over goes on from what is stored', [
  {
    name: "a message's turn (nothing stored but the message): takenOver → loadTools, as a fresh run of that message",
    env: SIMPLE,
    given: () => freshRun('simple', 3),
    when: takenOver(),
    effects: [{ kind: 'loadTools' }],
    then: (state) =>
      expect(state).toMatchObject({
        runId: 'run-taken',
        activation: 'activation-taken',
        userMessage: 'add x',
        inFlight: 1,
        afterRejection: false,
        changes: { pauses: [] },
      }),
  },
  {
    name: 'simple mode after an approved call whose result is recorded: its pause goes with the next write, the model reads the whole history',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 5),
    when: () => takenOver(afterDecision(false)),
    effects: [{ kind: 'loadTools' }],
    then: (state) => {
      expect(state.changes.resumed).toBe(simplePaused().approval.uuid);
      expect(state.runId).toBe(simplePaused().run.runId);
      const atHistory = step(state, ev.tools(), SIMPLE);
      expect(work(atHistory.effects)).toMatchObject([{ kind: 'loadHistory', path: [], nodeMessages: null }]);
      const answered = feed(atHistory.state, SIMPLE, ev.conversation([], [userText('add x')]), ev.text([], 'added x'));
      expect(only(answered.effects, 'write')).toMatchObject({ run: undefined, expectedRevision: 5, messages: [{ content: 'added x' }] });
    },
  },
  {
    name: 'simple mode after a rejection whose "no" is recorded: the answer still begins with the cancellation',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 5),
    when: () => takenOver(afterDecision(true)),
    effects: [{ kind: 'loadTools' }],
    then: (state) => {
      const done = feed(
        state,
        SIMPLE,
        ev.tools(),
        ev.conversation([], [userText('add x')]),
        ev.text([], 'Fine, not adding it.'),
        ev.written(6),
      );
      expect(only(done.effects, 'done').answer).toEqual({
        kind: 'answered',
        response: 'Operation cancelled by user.\n\nFine, not adding it.',
      });
    },
  },
  {
    name: 'a claimed approval whose call never started: takenOver → runApproved, the claim standing (the call runs at most once: StartApprovalExecution)',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 5),
    when: () => takenOver({ unfinished: [{ ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_APPROVED }] }),
    effects: [{ kind: 'runApproved' }],
    then: (state, effects) => {
      expect(only(effects, 'runApproved').uuid).toBe(simplePaused().approval.uuid);
      expect(state.decision).toMatchObject({ claimed: true, approved: true });
      const after = step(state, ev.ran(simplePaused().approval.uuid, 'added x'), SIMPLE);
      expect(work(after.effects)).toMatchObject([{ kind: 'loadTools' }]);
      expect(after.state.changes.resumed).toBe(simplePaused().approval.uuid);
    },
  },
  {
    name: 'an agent tree after an approved branch call: the resumed node reloads its steps and the result (nodeMessages), exactly where it paused',
    env: treeEnv(parallelTree('required')),
    given: () => storedRun(parallelPaused().run, 6),
    when: () => takenOver(afterDecision(false, [parallelPaused().beta])),
    effects: [{ kind: 'loadTools' }],
    then: (state) => {
      const { env, run, alpha } = parallelPaused();
      const atHistory = step(state, ev.tools(), env);
      expect(work(atHistory.effects)).toMatchObject([
        { kind: 'loadHistory', path: [0, 0], node: 'alpha', nodeMessages: run.pending[0]!.nodeMessages },
      ]);
      expect(atHistory.state.frames['0']).toMatchObject({ kind: 'parallel', resumed: true, branch: 0 });
      expect(atHistory.state.changes.resumed).toBe(alpha.uuid);
    },
  },
  {
    name: "an agent tree's message turn that recorded nothing: it starts again at the first node",
    env: treeEnv(sequentialTree),
    given: () => freshRun('tree', 3),
    when: takenOver({ conversation: { messages: storedMessages([userText('list all')]), pendingApprovals: [] } }),
    effects: [{ kind: 'loadTools' }],
    then: (state) => {
      const started = step(state, ev.tools(), treeEnv(sequentialTree));
      expect(work(started.effects)).toMatchObject([{ kind: 'callModel', path: [0], node: 'analyzer', systemPrompt: 'Analyze: list all' }]);
    },
  },
  {
    name: 'an approved call that started and has no recorded outcome → asked again as a new approval (outcome unknown), the pause moved to it; nothing runs',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 5),
    when: () => takenOver({ unfinished: [{ ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_EXECUTING }] }),
    effects: [
      { kind: 'askAgain', expectedRevision: 5 },
      { kind: 'done', answer: { kind: 'paused' } },
    ],
    then: (state, effects) => {
      const { approval, run } = simplePaused();
      const [write] = only(effects, 'askAgain').writes;
      expect(write).toMatchObject({
        interrupted: approval.uuid,
        approval: { toolName: 'resources_add', toolArgsJson: approval.toolArgsJson, outcomeUnknown: true, replacesUuid: approval.uuid },
      });
      expect(write!.approval.description).toMatch(/^Outcome unknown: resources_add was approved and had started/);
      expect(write!.run!.pending.map((pause) => pause.approvalUuid)).toEqual([write!.approval.uuid]);
      expect(write!.run!.pending[0]).toEqual({ ...run.pending[0], approvalUuid: write!.approval.uuid });
      expect(only(effects, 'done').answer).toEqual({ kind: 'paused', approvals: [write!.approval.uuid] });
      expect(logs(effects)).toEqual(['approved call with unknown outcome asked again']);
      expect(state.phase).toBe('finished');
    },
  },
  {
    name: 'taken over more often than runs.max_takeovers → the turn ends with a note, nothing runs',
    env: SIMPLE,
    given: () => freshRun('simple', 3),
    when: takenOver({ takeovers: 4, maxTakeovers: 3 }),
    effects: [
      { kind: 'endTurnWithNote', note: expect.stringContaining('it was taken over 3 times') },
      { kind: 'done', answer: { kind: 'interrupted' } },
    ],
  },
  {
    name: 'a stored run this release cannot read → the turn ends with a note naming why',
    env: SIMPLE,
    given: () => freshRun('simple', 3),
    when: takenOver({ unreadableRun: 'schema version 9' }),
    effects: [
      { kind: 'endTurnWithNote', note: expect.stringContaining('its stored run cannot be read (schema version 9)') },
      { kind: 'done' },
    ],
  },
  {
    name: 'a simple-mode run when the configuration now runs an agent tree → the turn ends with a note',
    env: treeEnv(sequentialTree),
    given: () => storedRun(simplePaused().run, 5),
    when: () => takenOver(afterDecision(false)),
    effects: [{ kind: 'endTurnWithNote', note: expect.stringContaining('the configuration now runs turns differently') }, { kind: 'done' }],
  },
  {
    name: "an agent tree's turn whose nodes recorded steps → the turn ends with a note rather than repeat them",
    env: treeEnv(sequentialTree),
    given: () => freshRun('tree', 3),
    when: takenOver({
      conversation: {
        messages: storedMessages([userText('list all'), { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'three', node: 'analyzer' }]),
        pendingApprovals: [],
      },
    }),
    effects: [{ kind: 'endTurnWithNote', note: expect.stringContaining('running it again would repeat them') }, { kind: 'done' }],
  },
]);

describe('a tree taken over after a checkpoint goes on at its first unfinished node', () => {
  /** The run a checkpoint stored, as a takeover finds it (the conversation holds the messages it carried). */
  function checkpointOf(effects: Effect[]): { run: StoredRun; messages: NewMessage[] } {
    const checkpoint = only(effects, 'checkpoint');
    return { run: checkpoint.run, messages: checkpoint.messages };
  }
  const resume = (env: MachineEnv, run: StoredRun, messages: NewMessage[], user = 'list all') =>
    feed(
      storedRun(run, 9),
      env,
      takenOver({ conversation: { messages: storedMessages([userText(user), ...messages]), pendingApprovals: [] } }),
      ev.tools(),
    );

  it('sequential: the finished node is not called again; the next one runs with its output', () => {
    const env = treeEnv(sequentialTree);
    const done = feed(treeAtModel(sequentialTree), env, ev.text([0], 'three servers'));
    const { run, messages } = checkpointOf(done.effects);
    const out = resume(env, run, messages);
    expect(work(out.effects)).toEqual([
      expect.objectContaining({ kind: 'callModel', path: [1], systemPrompt: 'Execute based on three servers' }),
    ]);
    expect(out.state.frames['']).toMatchObject({ kind: 'sequential', index: 1, output: 'three servers' });
    // The run goes on under its own id, and ends with the write that clears it.
    expect(out.state.runId).toBe('run-1');
    const end = step(out.state, ev.text([1], 'done'), env);
    expect(work(end.effects)).toMatchObject([
      { kind: 'write', run: undefined, messages: [{ content: 'done', node: 'executor' }], expectedRevision: 9 },
    ]);
  });

  it('a node cut mid-way runs again from its start (its unwritten steps are gone)', () => {
    const env = treeEnv(sequentialTree);
    const done = feed(treeAtModel(sequentialTree), env, ev.text([0], 'three servers'));
    const { run, messages } = checkpointOf(done.effects);
    const cut = feed(stored(done, env).state, env, ev.calls([1], [call('c1', 'resources_list', {})]), ev.tool([1], 'c1', '[]'));
    expect(work(cut.effects)).toMatchObject([{ kind: 'callModel', path: [1] }]);
    // The process dies here: the stored run is still the checkpoint's.
    const out = resume(env, run, messages);
    expect(only(out.effects, 'callModel').history).toEqual([userText('list all')]);
  });

  it('parallel: a finished branch keeps its output, only the cut branch runs again; the join has both', () => {
    const env = treeEnv(parallelTree('required'));
    const first = feed(treeAtModel(parallelTree('required')), env, ev.text([0, 1], 'B out'));
    const { run, messages } = checkpointOf(first.effects);
    expect(run.checkpoint?.walk['0']).toEqual({ kind: 'parallel', done: { '1': { output: 'B out', exitLoop: false } } });
    const out = resume(env, run, messages);
    expect(work(out.effects)).toEqual([expect.objectContaining({ kind: 'callModel', path: [0, 0], node: 'alpha' })]);
    expect(out.state.frames['0']).toEqual({
      kind: 'parallel',
      resumed: false,
      outcomes: [null, { kind: 'done', output: 'B out', exitLoop: false }],
    });
    const joined = stored(step(out.state, ev.text([0, 0], 'A out'), env), env);
    expect(work(joined.effects)).toMatchObject([{ kind: 'callModel', path: [1], systemPrompt: 'Summarize A out and B out' }]);
  });

  it('loop: it goes on in the iteration it stood in, with its output so far', () => {
    // approvals: required — below an auto loop a destructive call could run with no record yet, and no takeover resumes it.
    const env = treeEnv(loopTree('required'));
    const done = feed(treeAtModel(loopTree('required'), 'ensure 3'), env, ev.text([0], 'added one'));
    const { run, messages } = checkpointOf(done.effects);
    const out = resume(env, run, messages, 'ensure 3');
    expect(out.state.frames['']).toEqual({ kind: 'loop', iteration: 2, index: 0, output: 'added one' });
    expect(work(out.effects)).toMatchObject([{ kind: 'callModel', path: [0], node: 'worker' }]);
  });

  it('a checkpoint that loses a race is computed again on the run stored now, with the same messages', () => {
    const env = treeEnv(sequentialTree);
    const done = feed(treeAtModel(sequentialTree), env, ev.text([0], 'three servers'));
    const first = only(done.effects, 'checkpoint');
    const latest: StoredRun = { ...first.run, modelCalls: 7, session: {} };
    const again = step(done.state, { kind: 'checkpointConflict', latest, revision: 8 }, env);
    const redone = only(again.effects, 'checkpoint');
    expect(redone).toMatchObject({
      expectedRevision: 8,
      messages: first.messages,
      run: { modelCalls: 8, session: { analysis: 'three servers' } },
    });
    expect(again.effects.some((effect) => effect.kind === 'callModel')).toBe(false);
    const gone = step(done.state, { kind: 'checkpointConflict', latest: undefined, revision: 8 }, env);
    expect(work(gone.effects)).toMatchObject([{ kind: 'done', answer: { kind: 'superseded', endTurn: true } }]);
  });

  it('while another approval of the run waits, a resumed branch appends its node finishes (the run goes on with that approval)', () => {
    const root: AgentNode = {
      name: 'pipeline',
      type: 'sequential',
      agents: [
        {
          name: 'fanout',
          type: 'parallel',
          approvals: 'required',
          agents: [
            {
              name: 'chain',
              type: 'sequential',
              agents: [
                { name: 'a1', type: 'llm', output_key: 'x' },
                { name: 'a2', type: 'llm' },
              ],
            },
            { name: 'b', type: 'llm' },
          ],
        },
      ],
    };
    const env = treeEnv(root);
    const paused = feed(
      freshRun('tree', 0),
      env,
      ev.user('go'),
      ev.tools(),
      ev.calls([0, 0, 0], [call('c1', 'resources_add', { name: 'a' })]),
      ev.calls([0, 1], [call('c2', 'resources_add', { name: 'b' })]),
    );
    const write = only(paused.effects, 'write');
    const first = pendingOf(write.approvals[0]!);
    const resumed = feed(
      storedRun(write.run!, 1),
      env,
      ev.decide(first, true),
      ev.claimed(true),
      ev.ran(first.uuid, 'added a'),
      ev.tools(),
      ev.history([0, 0, 0], []),
      ev.text([0, 0, 0], 'A1 out'),
    );
    // No checkpoint (its write would end the turn while b waits) and nothing held: the next node starts at once.
    expect(only(resumed.effects, 'append').messages).toMatchObject([{ node: 'a1', content: 'A1 out' }]);
    expect(only(resumed.effects, 'callModel')).toMatchObject({ path: [0, 0, 1], node: 'a2' });
    expect(resumed.effects.some((effect) => effect.kind === 'checkpoint')).toBe(false);
  });

  it('simple mode writes no checkpoint: a read turn still touches the store once', () => {
    const out = feed(
      simpleAtModel(),
      SIMPLE,
      ev.calls([], [call('c1', 'resources_list', {})]),
      ev.tool([], 'c1', '[]'),
      ev.text([], 'none'),
    );
    expect(out.effects.map((effect) => effect.kind).filter((kind) => kind !== 'log')).toEqual(['write']);
    expect(out.state.checkpoint).toBeUndefined();
    expect(only(out.effects, 'write').run).toBeUndefined();
  });
});

// ---- who decided, arguments edited before approving, expiries ----------------------------

const decideWith = (
  approval: PendingApproval,
  approved: boolean,
  facts: Partial<Extract<RunEvent, { kind: 'approvalDecided' }>>,
  reason?: string,
): RunEvent => ({
  ...(ev.decide(approval, approved, reason) as Extract<RunEvent, { kind: 'approvalDecided' }>),
  ...facts,
});
const EXPIRED_REASON = 'no decision within 2s; the approval expired';

rows('a decision records who made it and how; edits run; expiries reject', [
  {
    name: 'approve by alice through the web → the claim carries decidedBy and via',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, true, { decidedBy: 'alice', via: 'web' }),
    effects: [{ kind: 'claim', approved: true, decidedBy: 'alice', via: 'web', messages: [], continuesTurn: true }],
    then: (state, effects) => {
      expect(only(effects, 'claim')).not.toHaveProperty('editedArgs');
      expect(only(effects, 'claim')).not.toHaveProperty('expired');
      expect(state.decision).toMatchObject({ decidedBy: 'alice', via: 'web' });
    },
  },
  {
    name: 'reject by bob through the cli with a reason → the claim carries who, how and why; the model reads the reason',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, false, { decidedBy: 'bob', via: 'cli' }, 'not today'),
    effects: [
      {
        kind: 'claim',
        approved: false,
        reason: 'not today',
        decidedBy: 'bob',
        via: 'cli',
        messages: [{ content: `Rejected by a human: not today. ${REJECTED_SUFFIX}` }],
      },
    ],
  },
  {
    name: 'approve with edited arguments → the tools are read first, to check the edit against the tool’s input schema',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, true, { decidedBy: 'alice', via: 'rest', editedArgs: { name: 'y' } }),
    effects: [{ kind: 'loadTools' }],
    then: (state) => expect(state.phase).toBe('loading_tools'),
  },
  {
    name: 'edited arguments that fit the input schema → the claim stores them; the won claim runs them, naming who edited',
    env: SIMPLE,
    given: () =>
      feed(
        storedRun(simplePaused().run, 4),
        SIMPLE,
        decideWith(simplePaused().approval, true, { decidedBy: 'alice', via: 'rest', editedArgs: { name: 'y' } }),
      ).state,
    when: ev.tools(),
    effects: [{ kind: 'claim', approved: true, decidedBy: 'alice', via: 'rest', editedArgs: { name: 'y' } }],
    then: (state) => {
      const won = step(state, ev.claimed(true), SIMPLE);
      const { approval } = simplePaused();
      expect(work(won.effects)).toEqual([
        { kind: 'runApproved', uuid: approval.uuid, approval, edited: { args: { name: 'y' }, by: 'alice' } },
      ]);
      // The pause (and its hash) stays the model's call: the integrity check is on the stored arguments.
      expect(won.state.resume!.argsHash).toBe(callHash('resources_add', { name: 'x' }));
    },
  },
  {
    name: 'an edit without a name for who made it → runApproved says anonymous',
    env: SIMPLE,
    given: () =>
      feed(storedRun(simplePaused().run, 4), SIMPLE, decideWith(simplePaused().approval, true, { editedArgs: { name: 'z' } }), ev.tools())
        .state,
    when: ev.claimed(true),
    effects: [{ kind: 'runApproved', edited: { args: { name: 'z' }, by: 'anonymous' } }],
  },
  {
    name: 'edited arguments with a rejection → refuse invalidArgument, nothing read, nothing claimed',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, false, { editedArgs: { name: 'y' } }),
    effects: [{ kind: 'refuse', code: 'invalidArgument', message: 'arguments can only be given with an approval ("approved": true)' }],
    then: (state) => expect(state.phase).toBe('finished'),
  },
  {
    name: 'edited arguments with a rejection of an approval decided already → refused all the same (the rule comes before the claim)',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () =>
      decideWith({ ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_APPROVED }, false, { editedArgs: { name: 'y' } }),
    effects: [{ kind: 'refuse', code: 'invalidArgument', message: 'arguments can only be given with an approval ("approved": true)' }],
  },
  {
    name: 'edited arguments of a proxied call (the peer holds its own) → refuse failedPrecondition, nothing claimed',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () =>
      decideWith({ ...simplePaused().approval, remoteTaskId: 'task-1', remoteAgentName: 'peer' }, true, { editedArgs: { name: 'y' } }),
    effects: [{ kind: 'refuse', code: 'failedPrecondition', message: expect.stringContaining('held by the sub-agent peer') }],
  },
  {
    name: 'edited arguments that do not fit the input schema → refuse invalidArgument naming the first problem, nothing claimed',
    env: SIMPLE,
    given: () =>
      feed(storedRun(simplePaused().run, 4), SIMPLE, decideWith(simplePaused().approval, true, { editedArgs: { name: 3 } })).state,
    when: ev.tools(),
    effects: [
      {
        kind: 'refuse',
        code: 'invalidArgument',
        message: 'the edited arguments do not fit the input schema of resources_add: arguments/name must be string. Nothing was decided.',
      },
    ],
    then: (state) => expect(state.phase).toBe('finished'),
  },
  {
    name: 'edited arguments of a tool no longer in the catalogue → refuse failedPrecondition, nothing claimed',
    env: SIMPLE,
    given: () =>
      feed(storedRun(simplePaused().run, 4), SIMPLE, decideWith(simplePaused().approval, true, { editedArgs: { name: 'y' } })).state,
    when: ev.tools([listTool]),
    effects: [
      {
        kind: 'refuse',
        code: 'failedPrecondition',
        message:
          'the tool resources_add is not available now, so edited arguments cannot be checked against its input schema. Nothing was decided.',
      },
    ],
  },
  {
    name: 'edited arguments of a tool the configuration brings (an A2A agent, an a2a node) → checked against its schema, then claimed',
    env: { ...SIMPLE, configuredTools: [addTool] },
    given: () =>
      feed(
        storedRun(simplePaused().run, 4),
        { ...SIMPLE, configuredTools: [addTool] },
        decideWith(simplePaused().approval, true, { editedArgs: { name: 'y' } }),
      ).state,
    when: ev.tools([listTool]),
    effects: [{ kind: 'claim', approved: true, editedArgs: { name: 'y' } }],
  },
  {
    name: 'edited arguments while the tools cannot be read → refuse unavailable, nothing claimed',
    env: SIMPLE,
    given: () =>
      feed(storedRun(simplePaused().run, 4), SIMPLE, decideWith(simplePaused().approval, true, { editedArgs: { name: 'y' } })).state,
    when: { kind: 'toolsFailed', error: 'the broker is down' },
    effects: [
      { kind: 'refuse', code: 'unavailable', message: expect.stringContaining('the tools could not be read (the broker is down)') },
    ],
  },
  {
    name: 'a won claim whose stored call no longer matches its hash → runApproved records it not run, with an error logged',
    env: SIMPLE,
    given: () => {
      const { run, approval } = simplePaused();
      return feed(storedRun(run, 4), SIMPLE, ev.decide({ ...approval, toolArgsJson: JSON.stringify({ name: 'changed' }) }, true)).state;
    },
    when: ev.claimed(true),
    effects: [
      {
        kind: 'runApproved',
        notRun: 'resources_add was not executed: the stored call no longer matches the one that was approved.',
      },
    ],
    then: (state, effects) => {
      expect(logs(effects)).toEqual(['approved call does not match its hash']);
      expect(effects.find((effect) => effect.kind === 'log')).toMatchObject({ level: 'error' });
      expect(state.phase).toBe('executing_approved');
    },
  },
  {
    name: "a won claim whose approval's call and hash both changed from what the run's pause kept → runApproved records it not run",
    env: SIMPLE,
    given: () => {
      const { run, approval } = simplePaused();
      const args = { name: 'changed' };
      const rewritten = { ...approval, toolArgsJson: JSON.stringify(args), argsHash: callHash(approval.toolName, args) };
      return feed(storedRun(run, 4), SIMPLE, ev.decide(rewritten, true)).state;
    },
    when: ev.claimed(true),
    effects: [{ kind: 'runApproved', notRun: expect.stringContaining('no longer matches the one that was approved') }],
    then: (_state, effects) => expect(logs(effects)).toEqual(['approved call does not match its hash']),
  },
  {
    name: 'the hash is checked on the approval as the claim stored it, not as the decision read it before',
    env: SIMPLE,
    given: () => feed(storedRun(simplePaused().run, 4), SIMPLE, ev.decide(simplePaused().approval, true)).state,
    when: () => ({
      kind: 'claimed',
      won: true,
      approval: { ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_APPROVED, toolArgsJson: '{"name":"changed"}' },
    }),
    effects: [{ kind: 'runApproved', notRun: expect.stringContaining('no longer matches the one that was approved') }],
  },
  {
    name: 'a taken-over claim of a proxied call with edited arguments → runApproved without them (the peer runs its own stored call)',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () =>
      takenOver({
        unfinished: [
          {
            ...simplePaused().approval,
            status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
            remoteTaskId: 'task-1',
            remoteAgentName: 'peer',
            editedArgsJson: JSON.stringify({ name: 'y' }),
          },
        ],
      }),
    effects: [{ kind: 'runApproved' }],
    then: (_state, effects) => expect(only(effects, 'runApproved').edited).toBeUndefined(),
  },
  {
    name: 'an expiry that rejects (simple mode) → an expired claim; the model reads that nobody decided in time; the run goes on',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, false, { decidedBy: 'timeout', via: 'timeout', expired: true }, EXPIRED_REASON),
    effects: [
      {
        kind: 'claim',
        approved: false,
        expired: true,
        decidedBy: 'timeout',
        via: 'timeout',
        reason: EXPIRED_REASON,
        continuesTurn: true,
        messages: [
          {
            content: `Not approved: ${EXPIRED_REASON}. ${REJECTED_SUFFIX}`,
            toolCall: { rejected: true, reason: EXPIRED_REASON, isError: true },
          },
        ],
      },
    ],
    then: (state) => {
      const won = step(state, ev.claimed(true), SIMPLE);
      expect(work(won.effects)).toEqual([{ kind: 'loadTools' }]);
      expect(won.state).toMatchObject({ afterRejection: true, changes: { resumed: simplePaused().approval.uuid } });
    },
  },
  {
    name: 'expired on an approval → ignored (an approving expiry is an approval by "timeout")',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () => decideWith(simplePaused().approval, true, { decidedBy: 'timeout', via: 'timeout', expired: true }),
    effects: [{ kind: 'claim', approved: true, decidedBy: 'timeout', via: 'timeout' }],
    then: (_state, effects) => expect(only(effects, 'claim')).not.toHaveProperty('expired'),
  },
  {
    name: 'a decision on an approval decided already carries who tried (the losing claim is audited by the store as such)',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 4),
    when: () =>
      decideWith({ ...simplePaused().approval, status: ApprovalStatus.APPROVAL_STATUS_EXPIRED }, true, {
        decidedBy: 'alice',
        via: 'web',
        editedArgs: { name: 'y' },
      }),
    effects: [{ kind: 'claim', approved: true, decidedBy: 'alice', via: 'web', editedArgs: { name: 'y' }, continuesTurn: false }],
  },
  {
    name: 'an agent tree: an expiry that rejects cancels the run; the other waiting calls say the approval expired',
    env: treeEnv(parallelTree('required')),
    given: () =>
      feed(
        storedRun(parallelPaused().run, 5),
        treeEnv(parallelTree('required')),
        decideWith(parallelPaused().alpha, false, { decidedBy: 'timeout', via: 'timeout', expired: true }, EXPIRED_REASON),
      ).state,
    when: () => ({ kind: 'approvalsLoaded', approvals: [parallelPaused().alpha, parallelPaused().beta] }),
    effects: [{ kind: 'claim', approved: false, expired: true, clearRun: true, continuesTurn: false }],
    then: (_state, effects) => {
      const { alpha } = parallelPaused();
      const claim = only(effects, 'claim');
      expect(claim.messages[0]!.content).toBe(`Not approved: ${EXPIRED_REASON}. ${REJECTED_SUFFIX}`);
      expect(claim.alsoReject[0]!.messages[0]!.content).toBe(
        `Cancelled: the pipeline was cancelled when approval ${alpha.uuid} (resources_add) expired without a decision: ${EXPIRED_REASON}; resources_add was not run. ${REJECTED_SUFFIX}`,
      );
    },
  },
  {
    name: 'a run taken over after a claim with edited arguments whose call never started → it runs the edited arguments',
    env: SIMPLE,
    given: () => storedRun(simplePaused().run, 5),
    when: () =>
      takenOver({
        unfinished: [
          {
            ...simplePaused().approval,
            status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
            decidedBy: 'alice',
            via: 'web',
            editedArgsJson: JSON.stringify({ name: 'y' }),
          },
        ],
      }),
    effects: [{ kind: 'runApproved', edited: { args: { name: 'y' }, by: 'alice' } }],
  },
]);

// ---- a server's question for a human --------------------------------------------------

const roomsTool: Tool = {
  name: 'book_room',
  description: 'Books a room',
  inputSchema: { type: 'object', properties: { room: { type: 'string' } } },
  destructive: false,
  server: 'rooms',
};
const ROOM_REQUESTS = {
  guest: {
    method: 'elicitation/create',
    params: {
      message: 'Who is the room for?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  },
};
const asking = (state = 'room=A') => ({ server: 'rooms', requestState: state, requests: ROOM_REQUESTS });

/** Simple mode where book_room {"room":"A"} answered input_required: paused, written at revision 4. */
function inputPaused() {
  const atModel = feed(
    freshRun('simple', 3),
    SIMPLE,
    ev.user('book A'),
    ev.tools([...TOOLS, roomsTool]),
    ev.conversation([], [userText('book A')]),
  ).state;
  const calling = feed(atModel, SIMPLE, ev.calls([], [call('c1', 'book_room', { room: 'A' })]));
  const paused = step(calling.state, ev.tool([], 'c1', 'asks', { input: asking() }), SIMPLE);
  const write = only(paused.effects, 'write');
  const written = feed(paused.state, SIMPLE, ev.written(4));
  return { calling, paused, write, run: write.run!, approval: pendingOf(write.approvals[0]!), state: written.state };
}

describe("an MCP server's question stops the turn as a pending approval", () => {
  it('toolFinished with input → the step stops like a gate: an approval naming the question and its fields, the question kept in the stored pause', () => {
    const { calling, write, state } = inputPaused();
    expect(only(calling.effects, 'callTool')).toMatchObject({ call: { name: 'book_room' }, args: { room: 'A' } });
    expect(write.approvals).toEqual([
      expect.objectContaining({
        toolName: 'book_room',
        toolArgsJson: '{"room":"A"}',
        description:
          'MCP server rooms asks for input to finish book_room: "Who is the room for?" — answer with: name (string, required). Approve with "input" to answer, or reject to decline.',
      }),
    ]);
    expect(write.approvals[0]).not.toHaveProperty('remoteTaskId');
    expect(write.messages).toMatchObject([{ toolCall: { name: 'book_room', argumentsJson: '{"room":"A"}' } }]);
    expect(write.run!.pending).toMatchObject([{ toolName: 'book_room', argsHash: callHash('book_room', { room: 'A' }), input: asking() }]);
    expect(state.phase).toBe('finished');
  });

  it('approved with an answer → claim, then runApproved once with the request state and the accepted content (not as edited arguments)', () => {
    const { run, approval } = inputPaused();
    const decided: RunEvent = { ...ev.decide(approval, true), input: { name: 'Ada' }, decidedBy: 'alice', via: 'rest' } as RunEvent;
    const claiming = step(storedRun(run, 4), decided, SIMPLE);
    expect(work(claiming.effects)).toMatchObject([
      { kind: 'claim', uuid: approval.uuid, approved: true, editedArgs: { name: 'Ada' }, continuesTurn: true },
    ]);
    const running = step(claiming.state, ev.claimed(true), SIMPLE);
    const runs = only(running.effects, 'runApproved');
    expect(runs).toEqual({
      kind: 'runApproved',
      uuid: approval.uuid,
      approval,
      input: { request: asking(), responses: { guest: { action: 'accept', content: { name: 'Ada' } } } },
    });
    const after = step(running.state, ev.ran(approval.uuid, 'room A booked for Ada'), SIMPLE);
    expect(work(after.effects)).toEqual([{ kind: 'loadTools' }]);
    expect(after.state.changes.resumed).toBe(approval.uuid);
  });

  it('a server that asks again after the answer → the same call waits on a new approval with the new question', () => {
    const { run, approval } = inputPaused();
    const state = feed(
      storedRun(run, 4),
      SIMPLE,
      { ...ev.decide(approval, true), input: { name: 'Ada' } } as RunEvent,
      ev.claimed(true),
    ).state;
    const again = step(state, ev.ran(approval.uuid, 'asks', { input: asking('room=A;step=2') }), SIMPLE);
    const write = only(again.effects, 'write');
    expect(write.approvals).toMatchObject([
      { toolName: 'book_room', toolArgsJson: '{"room":"A"}', description: expect.stringContaining('MCP server rooms asks for input') },
    ]);
    expect(write.approvals[0]!.uuid).not.toBe(approval.uuid);
    expect(write.run!.pending).toMatchObject([{ approvalUuid: write.approvals[0]!.uuid, input: asking('room=A;step=2') }]);
  });

  it("rejected → the model reads that a human declined the server's question, and after the claim the server is told (declineInput), once", () => {
    const { run, approval } = inputPaused();
    const claiming = step(storedRun(run, 4), ev.decide(approval, false, 'not now'), SIMPLE);
    const claim = only(claiming.effects, 'claim');
    expect(claim).toMatchObject({ approved: false, continuesTurn: true, clearRun: false });
    expect(claim.messages[0]!.content).toBe(
      'book_room did not finish: a human declined to answer the question of MCP server rooms: not now. The server is told so, and the call ends there; do not retry it unless the user asks you to.',
    );
    const won = step(claiming.state, ev.claimed(true), SIMPLE);
    expect(work(won.effects)).toEqual([{ kind: 'declineInput', approval, request: asking() }, { kind: 'loadTools' }]);
    const lost = step(claiming.state, ev.claimed(false), SIMPLE);
    expect(work(lost.effects).map((effect) => effect.kind)).toEqual(['done']);
  });

  const answering = (approved: boolean, facts: Partial<Extract<RunEvent, { kind: 'approvalDecided' }>>, reason?: string) => {
    const { run, approval } = inputPaused();
    return { approval, out: step(storedRun(run, 4), decideWith(approval, approved, facts, reason), SIMPLE) };
  };

  it.each([
    ['approved with "arguments"', true, { editedArgs: { name: 'Ada' } }, 'answer with "input", not "arguments"'],
    ['approved without an answer', true, {}, 'approve with "input" (the answer), or reject to decline. Nothing was decided.'],
    [
      'approved with an answer that does not fit',
      true,
      { input: { name: 7 } },
      'the input does not fit what MCP server rooms asked for: input/name must be string. Nothing was decided.',
    ],
    [
      'rejected with an answer',
      false,
      { input: { name: 'Ada' } },
      'input can only be given with an approval ("approved": true); a rejection declines',
    ],
  ] as const)('%s → refuse invalidArgument, nothing claimed', (_name, approved, facts, message) => {
    const { out } = answering(approved, facts);
    expect(work(out.effects)).toEqual([{ kind: 'refuse', code: 'invalidArgument', message: expect.stringContaining(message) }]);
    expect(out.state.phase).toBe('finished');
  });

  it('an expiry that would approve has no answer to give → the question is declined as expired, with the reason the model reads', () => {
    const { approval, out } = answering(true, { decidedBy: 'timeout', via: 'timeout' });
    expect(only(out.effects, 'claim')).toMatchObject({
      uuid: approval.uuid,
      approved: false,
      expired: true,
      reason: 'nobody answered the question in time; the approval expired',
      decidedBy: 'timeout',
      via: 'timeout',
    });
  });

  it('an answer to an approval that asks no question → refuse invalidArgument, nothing claimed', () => {
    const out = step(storedRun(simplePaused().run, 4), decideWith(simplePaused().approval, true, { input: { name: 'Ada' } }), SIMPLE);
    expect(work(out.effects)).toEqual([
      {
        kind: 'refuse',
        code: 'invalidArgument',
        message: `approval ${simplePaused().approval.uuid} does not ask for input: decide it without "input"`,
      },
    ]);
  });

  it('an answer to an approval decided already is not checked: the claim loses and says how', () => {
    const { run, approval } = inputPaused();
    const decided = { ...approval, status: ApprovalStatus.APPROVAL_STATUS_REJECTED };
    const out = step(storedRun(run, 4), decideWith(decided, true, { editedArgs: { name: 'Ada' } }), SIMPLE);
    expect(only(out.effects, 'claim')).toMatchObject({ uuid: approval.uuid, approved: true });
  });

  it('a claimed answer taken over by another replica runs with the answer the claim recorded', () => {
    const { run, approval } = inputPaused();
    const claimedApproval: PendingApproval = {
      ...approval,
      status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
      editedArgsJson: JSON.stringify({ name: 'Ada' }),
    };
    const out = step(storedRun(run, 4), takenOver({ runId: 'run-1', activation: 'activation-9', unfinished: [claimedApproval] }), SIMPLE);
    expect(only(out.effects, 'runApproved').input).toEqual({
      request: asking(),
      responses: { guest: { action: 'accept', content: { name: 'Ada' } } },
    });
  });
});

describe('simple mode fits the conversation to the token budget: compaction is the machine’s, its summary and its notice effects', () => {
  const compacting = (strategy: MachineEnv['history']['compactionStrategy']): MachineEnv => ({
    ...SIMPLE,
    history: { systemPrompt: SYSTEM, maxTokens: 2000, compactionStrategy: strategy },
  });
  /** Three long turns before the user's new message: over the budget of 2000 tokens (less room for the answer). */
  const longConversation = [userText('a'.repeat(2000)), userText('b'.repeat(2000)), userText('c'.repeat(2000)), userText('add x')];
  const loaded = (env: MachineEnv) => feed(freshRun('simple', 3), env, ev.user('add x'), ev.tools(), ev.conversation([], longConversation));

  it('a conversation within the budget → callModel at once, nothing recorded', () => {
    const out = feed(
      freshRun('simple', 3),
      compacting('delete-old'),
      ev.user('add x'),
      ev.tools(),
      ev.conversation([], [userText('add x')]),
    );
    expect(work(out.effects)).toMatchObject([{ kind: 'callModel', systemPrompt: SYSTEM }]);
  });

  it('delete-old over the budget → the notice is recorded first (phase compacting); once recorded, the model sees what is left', () => {
    const env = compacting('delete-old');
    const out = loaded(env);
    expect(work(out.effects).map((effect) => effect.kind)).toEqual(['recordCompaction']);
    expect(out.state.phase).toBe('compacting');
    const notice = only(out.effects, 'recordCompaction').notice;
    expect(notice).toMatchObject({
      role: MessageRole.MESSAGE_ROLE_SYSTEM,
      compaction: { strategy: 'delete-old', fromSeq: 1, summary: '' },
    });
    const recorded = step(out.state, { kind: 'compactionRecorded' }, env);
    expect(logs(recorded.effects)).toEqual(['history compacted']);
    const model = only(recorded.effects, 'callModel');
    expect(model.systemPrompt).toBe(SYSTEM);
    expect(model.history.map((message) => message.content)).toEqual(
      longConversation.slice(notice.compaction!.toSeq).map((message) => message.content),
    );
    expect(model.history.at(-1)!.content).toBe('add x');
    expect(recorded.state.phase).toBe('walking_tree');
  });

  it('partial-summary → the model is asked for a summary of what is hidden; its summary goes into the notice and the prompt', () => {
    const env = compacting('partial-summary');
    const out = loaded(env);
    const summarize = only(out.effects, 'summarize');
    expect(summarize).toMatchObject({ model: 'gemini-simple' });
    expect(summarize.transcript).toContain('a'.repeat(100));
    expect(out.state.phase).toBe('compacting');
    const summarized = step(
      out.state,
      { kind: 'summaryAnswered', text: ' The user sent three long notes. ', usage: { inputTokens: 9, outputTokens: 3 } },
      env,
    );
    const notice = only(summarized.effects, 'recordCompaction').notice;
    expect(notice).toMatchObject({
      compaction: { strategy: 'partial-summary', summary: 'The user sent three long notes.' },
      usage: { inputTokens: 9, outputTokens: 3 },
    });
    const model = only(step(summarized.state, { kind: 'compactionRecorded' }, env).effects, 'callModel');
    expect(model.systemPrompt).toContain(SYSTEM);
    expect(model.systemPrompt).toContain('The user sent three long notes.');
  });

  it('a summary that fails → a warning, and the compaction is recorded without one', () => {
    const env = compacting('partial-summary');
    const failed = step(loaded(env).state, { kind: 'summaryFailed', error: 'the model is down' }, env);
    expect(logs(failed.effects)).toEqual(['summary for compaction failed; compacting without one']);
    expect(only(failed.effects, 'recordCompaction').notice.compaction).toMatchObject({ strategy: 'partial-summary', summary: '' });
  });

  it('a stop while the summary is asked for → nothing recorded, the run ends with the note once the summary is back', () => {
    const env = compacting('partial-summary');
    const stopped = step(loaded(env).state, { kind: 'cancel', reason: 'user pressed stop' }, env);
    expect(work(stopped.effects)).toEqual([]);
    const back = step(stopped.state, { kind: 'summaryAnswered', text: 'summary' }, env);
    expect(work(back.effects)).toMatchObject([{ kind: 'write', messages: [{ content: stoppedText('user pressed stop') }] }]);
  });

  it('a compaction event while no compaction is under way is refused as out of phase', () => {
    expect(step(simpleAtModel(), { kind: 'compactionRecorded' }, SIMPLE).effects).toEqual([
      {
        kind: 'outOfPhase',
        phase: 'walking_tree',
        event: 'compactionRecorded',
        detail: 'the run waits for its nodes (history, model, tools)',
      },
    ]);
  });
});
