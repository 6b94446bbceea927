/**
 * What the run machine records in its journal, and with which write: the steps ride on the
 * writes the run makes anyway (a tree node's messages, the write that pauses or ends the run,
 * a decision's claim), never on a store call of their own.
 */
import { describe, expect, it } from 'vitest';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  type Message,
  MessageRole,
  type PendingApproval,
  type RunJournalEntry,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import type { AgentNode } from '../domain/tree.js';
import { freshRun, next, storedRun } from './machine.js';
import { withChanges } from './writes.js';
import type { Effect, MachineEnv, RunEvent, RunState } from './types.js';

const listTool: Tool = { name: 'resources_list', description: '', inputSchema: {}, destructive: false, server: 'resources' };
const addTool: Tool = { name: 'resources_add', description: '', inputSchema: {}, destructive: true, server: 'resources' };

const SIMPLE: MachineEnv = {
  root: undefined,
  simple: { model: 'openai-gpt-4o', a2aTools: [], node: 'assistant' },
  defaultModel: 'gemini-2.5-flash',
  maxModelCalls: 5,
  history: { systemPrompt: 'You help.', maxTokens: 0, compactionStrategy: 'delete-old' },
};

const TREE: MachineEnv = {
  ...SIMPLE,
  root: {
    name: 'pipeline',
    type: 'sequential',
    agents: [
      { name: 'analyzer', type: 'llm', prompt: 'Analyze {user_message}', output_key: 'analysis' },
      { name: 'reporter', type: 'llm', prompt: 'Report {analysis}' },
    ],
  } satisfies AgentNode,
};

const RUN_1 = '7d3f0c2a-1b4e-4f6a-9c8d-2e5b7a1f3c90';
const RUN_2 = '7d3f0c2a-1b4e-4f6a-9c8d-2e5b7a1f3c91';
const RUN_3 = '7d3f0c2a-1b4e-4f6a-9c8d-2e5b7a1f3c92';
const RUN_4 = '7d3f0c2a-1b4e-4f6a-9c8d-2e5b7a1f3c93';

const call = (id: string, name: string, args: Record<string, unknown>): ToolCallPart => ({ id, name, argumentsJson: JSON.stringify(args) });
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
const conversation = (text: string): Message[] => [
  { id: 'm-1', seq: 1, role: MessageRole.MESSAGE_ROLE_USER, content: text, createdAt: undefined },
];

/** Feeds events at the given times; every effect asked for, in order. */
function drive(start: RunState, env: MachineEnv, events: [number, RunEvent][]): { state: RunState; effects: Effect[] } {
  let state = start;
  const effects: Effect[] = [];
  for (const [at, event] of events) {
    const out = next(state, event, env, at);
    state = out.state;
    effects.push(...out.effects);
  }
  return { state, effects };
}

/** The journal entries of the effects, with the kind of effect that carries each. */
const journals = (effects: Effect[]): { carrier: Effect['kind']; journal: RunJournalEntry }[] =>
  effects.flatMap((effect) => ('journal' in effect && effect.journal ? [{ carrier: effect.kind, journal: effect.journal }] : []));

const bodies = (journal: RunJournalEntry) => journal.steps.map((step) => ({ ...step, body: JSON.parse(step.bodyJson) }));

describe('the run journal (machine)', () => {
  it('simple mode: a read turn records two model calls and the tool call between them, all with the one write that ends the turn', () => {
    const { effects } = drive(freshRun('simple', 0), SIMPLE, [
      [1000, { kind: 'userMessage', runId: RUN_1, activation: 'a-1', text: 'list' }],
      [1001, { kind: 'toolsLoaded', tools: [listTool] }],
      [1002, { kind: 'conversationLoaded', path: [], messages: conversation('list') }],
      [1300, { kind: 'modelAnswered', path: [], reply: { text: '', toolCalls: [call('c1', 'resources_list', {})], usage: usage(120, 9) } }],
      [1340, { kind: 'toolFinished', path: [], callId: 'c1', outcome: { text: '["x"]', isError: false } }],
      [1500, { kind: 'modelAnswered', path: [], reply: { text: 'x', toolCalls: [], usage: usage(150, 4), finishReason: 'stop' } }],
    ]);
    const written = journals(effects);
    expect(written.map((entry) => entry.carrier)).toEqual(['write']);
    const journal = written[0]!.journal;
    expect(journal).toMatchObject({ runId: RUN_1, startedAtMs: 1000, status: 'completed' });
    expect(bodies(journal)).toEqual([
      {
        index: 0,
        kind: 'model_call',
        node: 'assistant',
        startedAtMs: 1002,
        durationMs: 298,
        bodyJson: expect.any(String),
        // Its place in the conversation: after the user's message (seq 1).
        messageSeq: 1,
        body: {
          model: 'openai-gpt-4o',
          provider: 'openai',
          input_tokens: 120,
          output_tokens: 9,
          finish_reason: 'tool-calls',
          tool_calls: ['resources_list'],
        },
      },
      expect.objectContaining({
        kind: 'tool_call',
        startedAtMs: 1300,
        durationMs: 40,
        // After the model's call of it (seq 2), before its result.
        messageSeq: 2,
        body: {
          tool: 'resources_list',
          server: 'resources',
          arguments: {},
          args_hash: callHash('resources_list', {}),
          outcome: 'ok',
          summary: '["x"]',
        },
      }),
      expect.objectContaining({
        kind: 'model_call',
        startedAtMs: 1340,
        durationMs: 160,
        messageSeq: 3,
        body: expect.objectContaining({ input_tokens: 150, output_tokens: 4, finish_reason: 'stop' }),
      }),
    ]);
  });

  it("a fork's run goes on from its copied history: the read-only call without a result runs, the destructive one stops for a new approval, no model call first", () => {
    const stored = (seq: number, role: MessageRole, toolCall?: ToolCallPart): Message => ({
      id: `m-${seq}`,
      seq,
      role,
      content: '',
      createdAt: undefined,
      ...(toolCall && { toolCall: { id: toolCall.id, name: toolCall.name, argumentsJson: toolCall.argumentsJson } }),
    });
    const list = call('c1', 'resources_list', {});
    const add = call('c2', 'resources_add', { name: 'alpha', value: 1 });
    const copied = [
      stored(1, MessageRole.MESSAGE_ROLE_USER),
      stored(2, MessageRole.MESSAGE_ROLE_ASSISTANT, list),
      stored(3, MessageRole.MESSAGE_ROLE_ASSISTANT, add),
    ];
    const { effects } = drive(freshRun('simple', 0), SIMPLE, [
      [0, { kind: 'userMessage', runId: RUN_4, activation: 'a-4', text: '', fromHistory: true }],
      [1, { kind: 'toolsLoaded', tools: [listTool, addTool] }],
      [2, { kind: 'conversationLoaded', path: [], messages: copied }],
      [5, { kind: 'toolFinished', path: [], callId: 'c1', outcome: { text: '[]', isError: false } }],
    ]);
    expect(effects.some((effect) => effect.kind === 'callModel')).toBe(false);
    expect(effects.filter((effect) => effect.kind === 'callTool').map((effect) => effect.kind === 'callTool' && effect.call.name)).toEqual([
      'resources_list',
    ]);
    const pause = effects.find((effect) => effect.kind === 'write');
    expect(pause?.kind === 'write' && pause.approvals.map((approval) => approval.toolName)).toEqual(['resources_add']);
    // The calls are in the copy already: the pause writes the read-only call's result only.
    expect(pause?.kind === 'write' && pause.messages.map((message) => message.toolCall?.name)).toEqual(['resources_list']);
    expect(bodies(pause?.kind === 'write' ? pause.journal! : { runId: '', startedAtMs: 0, status: '', steps: [] })).toEqual([
      expect.objectContaining({ kind: 'tool_call', messageSeq: 3 }),
      expect.objectContaining({ kind: 'approval', messageSeq: 4 }),
    ]);
  });

  it('a tree: each node started and finished in order, its steps written with its messages before the next node runs', () => {
    const { effects } = drive(freshRun('tree', 0), TREE, [
      [0, { kind: 'userMessage', runId: RUN_2, activation: 'a-2', text: 'go' }],
      [1, { kind: 'toolsLoaded', tools: [listTool] }],
      [10, { kind: 'modelAnswered', path: [0], reply: { text: 'analysis', toolCalls: [], usage: usage(10, 2) } }],
      [11, { kind: 'checkpointed', revision: 1 }],
      [20, { kind: 'modelAnswered', path: [1], reply: { text: 'report', toolCalls: [], usage: usage(20, 3) } }],
    ]);
    // The first node's finish is its checkpoint; the last one's goes with the run's finish write.
    const written = journals(effects);
    expect(written.map((entry) => [entry.carrier, entry.journal.status])).toEqual([
      ['checkpoint', 'running'],
      ['write', 'completed'],
    ]);
    const steps = written.flatMap((entry) => entry.journal.steps.map((step) => `${step.kind} ${step.node}`));
    expect(steps).toEqual([
      'node_started pipeline',
      'node_started pipeline/analyzer',
      'model_call pipeline/analyzer',
      'node_finished pipeline/analyzer',
      'node_started pipeline/reporter',
      'model_call pipeline/reporter',
      'node_finished pipeline/reporter',
      'node_finished pipeline',
    ]);
    const analyzerFinished = bodies(written[0]!.journal).find((step) => step.kind === 'node_finished')!;
    expect(analyzerFinished).toMatchObject({ startedAtMs: 1, durationMs: 9, body: { outcome: 'done', output_key: 'analysis' } });
  });

  it('redacts secrets in the arguments of a call and of its approval; a redone write carries its steps again', () => {
    const secretArgs = { name: 'x', api_key: 'k-123456789', note: 'use Bearer abc.def.ghi' };
    const paused = drive(freshRun('simple', 3), SIMPLE, [
      [0, { kind: 'userMessage', runId: RUN_3, activation: 'a-3', text: 'add' }],
      [1, { kind: 'toolsLoaded', tools: [addTool] }],
      [2, { kind: 'conversationLoaded', path: [], messages: conversation('add') }],
      [3, { kind: 'modelAnswered', path: [], reply: { text: '', toolCalls: [call('c1', 'resources_add', secretArgs)] } }],
    ]);
    const [pause] = journals(paused.effects);
    expect(pause).toMatchObject({ carrier: 'write', journal: { status: 'waiting_approval' } });
    const approval = bodies(pause!.journal).find((step) => step.kind === 'approval')!;
    expect(approval.body.arguments).toEqual({ name: 'x', api_key: '[redacted]', note: 'use Bearer [redacted]' });
    expect(approval.body.args_hash).toBe(callHash('resources_add', secretArgs));
    expect(pause!.journal.steps.map((step) => step.bodyJson).join()).not.toContain('k-123456789');

    // Another request wrote first: the write is redone at the newer revision, with the same steps.
    const redone = next(paused.state, { kind: 'writeConflict', latest: withChanges(paused.state), revision: 4 }, SIMPLE, 5);
    const [again] = journals(redone.effects);
    expect(again!.journal.steps).toEqual(pause!.journal.steps.map((step) => ({ ...step })));
  });

  it('records a decision with its claim: who, how, why and the arguments they edited, secrets redacted', () => {
    const paused = drive(freshRun('simple', 3), SIMPLE, [
      [0, { kind: 'userMessage', runId: RUN_4, activation: 'a-4', text: 'add' }],
      [1, { kind: 'toolsLoaded', tools: [addTool] }],
      [2, { kind: 'conversationLoaded', path: [], messages: conversation('add') }],
      [3, { kind: 'modelAnswered', path: [], reply: { text: '', toolCalls: [call('c1', 'resources_add', { name: 'x' })] } }],
    ]);
    const write = paused.effects.find((effect): effect is Extract<Effect, { kind: 'write' }> => effect.kind === 'write')!;
    const newApproval = write.approvals[0]!;
    const approval: PendingApproval = {
      ...newApproval,
      conversationId: 'c',
      createdAt: undefined,
      updatedAt: undefined,
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: callHash('resources_add', { name: 'x' }),
      votes: [],
    };
    const decided = next(
      storedRun(write.run!, 4),
      {
        kind: 'approvalDecided',
        activation: 'a-5',
        uuid: approval.uuid,
        approved: false,
        reason: 'not now',
        approval,
        decidedBy: 'token:carol',
        via: 'rest',
      },
      SIMPLE,
      50,
    );
    const [claim] = journals(decided.effects);
    expect(claim).toMatchObject({ carrier: 'claim', journal: { runId: RUN_4, status: 'running' } });
    expect(bodies(claim!.journal)).toEqual([
      expect.objectContaining({
        kind: 'decision',
        node: 'assistant',
        startedAtMs: 50,
        body: { approval_uuid: approval.uuid, approved: false, decided_by: 'token:carol', via: 'rest', reason: 'not now' },
      }),
    ]);
  });

  it('keeps no journal for a run stored before run ids were UUIDs: its writes go on without one', () => {
    const { effects } = drive(freshRun('simple', 0), SIMPLE, [
      [0, { kind: 'userMessage', runId: 'legacy-run', activation: 'a-6', text: 'hi' }],
      [1, { kind: 'toolsLoaded', tools: [] }],
      [2, { kind: 'conversationLoaded', path: [], messages: conversation('hi') }],
      [3, { kind: 'modelAnswered', path: [], reply: { text: 'hello', toolCalls: [] } }],
    ]);
    expect(effects.some((effect) => effect.kind === 'write')).toBe(true);
    expect(journals(effects)).toEqual([]);
  });
});
