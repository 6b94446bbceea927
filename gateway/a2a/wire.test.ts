import { SendMessageResponse, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import type { TaskSnapshot } from './task.js';
import { typePartsTask } from './wire/type-parts.js';
import { v03Event, v03Task } from './wire/v0_3.js';
import { v10Event, v10SendResult, v10Task } from './wire/v1_0.js';

const completed: TaskSnapshot = {
  id: 't1',
  contextId: 'ctx',
  state: 'completed',
  approvals: [],
  artifactText: 'Done.',
  timestamp: '2026-01-02T03:04:05.000Z',
  history: [
    { id: 'm1', role: 'user', text: 'list' },
    { id: 'm2', role: 'agent', text: 'Done.' },
  ],
};

const approval = { uuid: 'u1', toolName: 'resources_add', toolArgs: { name: 'x', value: 1 }, description: 'add x', chain: ['agent-b'] };
const waiting: TaskSnapshot = {
  id: 't1',
  contextId: 'ctx',
  state: 'input-required',
  statusText: 'Approval required (id: u1): add x',
  approvals: [approval],
  timestamp: '2026-01-02T03:04:05.000Z',
  history: [],
};
const approvalJson = {
  uuid: 'u1',
  tool_name: 'resources_add',
  tool_args: { name: 'x', value: 1 },
  description: 'add x',
  chain: ['agent-b'],
};

describe('type-parts', () => {
  it('writes one artifact with type parts and a plain-string status message', () => {
    expect(typePartsTask(completed)).toEqual({
      id: 't1',
      status: { state: 'completed' },
      artifact: { parts: [{ type: 'text', text: 'Done.' }] },
    });
    expect(typePartsTask(waiting)).toEqual({ id: 't1', status: { state: 'input-required', message: 'Approval required (id: u1): add x' } });
    expect(typePartsTask({ ...completed, state: 'canceled', artifactText: undefined, statusText: 'Operation cancelled by user.' })).toEqual(
      {
        id: 't1',
        status: { state: 'canceled', message: 'Operation cancelled by user.' },
      },
    );
  });
});

describe('v0.3', () => {
  it('writes kind-tagged tasks with artifacts[] and history', () => {
    expect(v03Task(completed)).toEqual({
      kind: 'task',
      id: 't1',
      contextId: 'ctx',
      status: { state: 'completed', timestamp: '2026-01-02T03:04:05.000Z' },
      artifacts: [{ artifactId: 'response', name: 'response', parts: [{ kind: 'text', text: 'Done.' }] }],
      history: [
        { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'list' }], taskId: 't1', contextId: 'ctx' },
        { kind: 'message', messageId: 'm2', role: 'agent', parts: [{ kind: 'text', text: 'Done.' }], taskId: 't1', contextId: 'ctx' },
      ],
    });
  });

  it('puts the approval text and data part in the status message of an input-required task', () => {
    const task = v03Task(waiting);
    expect(task.artifacts).toBeUndefined();
    expect(task.status.message).toEqual({
      kind: 'message',
      messageId: expect.any(String),
      role: 'agent',
      taskId: 't1',
      contextId: 'ctx',
      parts: [
        { kind: 'text', text: 'Approval required (id: u1): add x' },
        { kind: 'data', data: { approval: approvalJson } },
      ],
    });
  });

  it('lists every approval when several wait', () => {
    const second = { ...approval, uuid: 'u2', chain: [] };
    const task = v03Task({ ...waiting, approvals: [approval, second] });
    expect(task.status.message?.parts[1]).toEqual({
      kind: 'data',
      data: { approval: approvalJson, approvals: [approvalJson, { ...approvalJson, uuid: 'u2', chain: [] }] },
    });
  });

  it('writes stream events: status-update with final, artifact-update as the last chunk', () => {
    expect(v03Event({ kind: 'status', task: waiting, final: true })).toMatchObject({
      kind: 'status-update',
      taskId: 't1',
      contextId: 'ctx',
      status: { state: 'input-required' },
      final: true,
    });
    expect(v03Event({ kind: 'artifact', task: completed })).toEqual({
      kind: 'artifact-update',
      taskId: 't1',
      contextId: 'ctx',
      artifact: { artifactId: 'response', name: 'response', parts: [{ kind: 'text', text: 'Done.' }] },
      append: false,
      lastChunk: true,
    });
    expect(v03Event({ kind: 'task', task: { ...completed, state: 'submitted', artifactText: undefined, history: [] } })).toEqual({
      kind: 'task',
      id: 't1',
      contextId: 'ctx',
      status: { state: 'submitted', timestamp: '2026-01-02T03:04:05.000Z' },
    });
  });
});

describe('v1.0', () => {
  it('writes ProtoJSON: TASK_STATE_*, ROLE_*, untagged parts', () => {
    expect(v10Task(waiting)).toEqual({
      id: 't1',
      contextId: 'ctx',
      status: {
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: {
          messageId: expect.any(String),
          contextId: 'ctx',
          taskId: 't1',
          role: 'ROLE_AGENT',
          parts: [{ text: 'Approval required (id: u1): add x' }, { data: { approval: approvalJson } }],
        },
        timestamp: '2026-01-02T03:04:05.000Z',
      },
    });
    expect(v10Task(completed)).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ artifactId: 'response', name: 'response', parts: [{ text: 'Done.' }] }],
      history: [{ role: 'ROLE_USER', parts: [{ text: 'list' }] }, { role: 'ROLE_AGENT' }],
    });
  });

  it('reads back through the SDK codecs into the same task', () => {
    const task = Task.fromJSON(v10Task(completed));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'Done.' });
    const sent = SendMessageResponse.fromJSON(v10SendResult(waiting));
    expect(sent.payload?.$case).toBe('task');
    expect(v10SendResult(waiting)).toEqual({
      task: { id: 't1', contextId: 'ctx', status: expect.objectContaining({ state: 'TASK_STATE_INPUT_REQUIRED' }) },
    });
  });

  it('writes stream events as task, statusUpdate and artifactUpdate', () => {
    const status = StreamResponse.fromJSON(v10Event({ kind: 'status', task: completed, final: true }));
    expect(status.payload).toMatchObject({
      $case: 'statusUpdate',
      value: { taskId: 't1', contextId: 'ctx', status: { state: TaskState.TASK_STATE_COMPLETED } },
    });
    expect(v10Event({ kind: 'artifact', task: completed })).toEqual({
      artifactUpdate: {
        taskId: 't1',
        contextId: 'ctx',
        artifact: { artifactId: 'response', name: 'response', parts: [{ text: 'Done.' }] },
        lastChunk: true,
      },
    });
    expect(Object.keys(v10Event({ kind: 'task', task: completed }) as object)).toEqual(['task']);
  });
});
