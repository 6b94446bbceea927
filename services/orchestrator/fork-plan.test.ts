import { describe, expect, it } from 'vitest';
import { type Message, MessageRole, type RunRecord, type RunStep } from '../../gen/ts/asg/store/v1/store.js';
import { goesOn, planFork } from './fork-plan.js';

const run: RunRecord = { runId: 'r', conversationId: 'c', status: 'completed', startedAt: new Date(0), stepCount: 3, journalVersion: 2 };
const step = (kind: string, messageSeq?: number): RunStep => ({
  index: 0,
  kind,
  node: 'agent',
  startedAtMs: 0,
  durationMs: 0,
  bodyJson: '{}',
  ...(messageSeq !== undefined && { messageSeq }),
});
const steps = [step('model_call', 2), step('approval', 3), step('model_call', 4)];
const message = (role: MessageRole, toolCallId?: string): Message => ({
  id: '',
  role,
  content: 'x',
  seq: 0,
  createdAt: undefined,
  ...(toolCallId !== undefined && { toolCall: { id: toolCallId, name: 't' } }),
});

describe('planFork', () => {
  it("copies the messages before the step, or up to the next run's user message after the last step", () => {
    expect(planFork({ run, steps, step: 1, nextRunSeq: undefined, messageCount: 9 })).toEqual({ kind: 'copy', upToSeq: 3 });
    expect(planFork({ run, steps, step: 3, nextRunSeq: 7, messageCount: 9 })).toEqual({ kind: 'copy', upToSeq: 6 });
    expect(planFork({ run, steps, step: 3, nextRunSeq: undefined, messageCount: 9 })).toEqual({ kind: 'copy', upToSeq: 9 });
  });

  it('refuses a step outside the run, a run of format 1 and a run of an agent tree', () => {
    expect(planFork({ run, steps, step: 4, nextRunSeq: undefined, messageCount: 9 })).toMatchObject({
      kind: 'refuse',
      message: expect.stringContaining('step 4 is outside run r'),
    });
    expect(
      planFork({ run: { ...run, journalVersion: 1 }, steps: [step('model_call')], step: 0, nextRunSeq: undefined, messageCount: 2 }),
    ).toMatchObject({
      message: expect.stringContaining('journal format 1'),
    });
    expect(planFork({ run, steps: [step('node_started', 1)], step: 0, nextRunSeq: undefined, messageCount: 2 })).toMatchObject({
      message: expect.stringContaining('forking an agent-tree run is not supported yet'),
    });
  });
});

describe('goesOn', () => {
  const { MESSAGE_ROLE_USER: user, MESSAGE_ROLE_ASSISTANT: assistant, MESSAGE_ROLE_TOOL: tool, MESSAGE_ROLE_SYSTEM: system } = MessageRole;
  it('goes on from an unanswered user message, open calls or results the model has not read; not after an answer', () => {
    expect(goesOn([message(system), message(user)])).toBe(true);
    expect(goesOn([message(user), message(assistant, 'a')])).toBe(true);
    expect(goesOn([message(user), message(assistant, 'a'), message(tool, 'a')])).toBe(true);
    expect(goesOn([message(user), message(assistant, 'a'), message(tool, 'a'), message(assistant)])).toBe(false);
    expect(goesOn([message(system)])).toBe(false);
  });
});
