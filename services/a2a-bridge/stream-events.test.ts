import { describe, expect, it } from 'vitest';
import { TaskState } from '../../gen/ts/asg/a2a/v1/a2a.js';
import type { TaskView } from './remote-task.js';
import { TaskAssembler } from './stream-events.js';

const view = (state: TaskState, extra: Partial<TaskView> = {}): TaskView => ({
  id: 't-1',
  contextId: 'c-1',
  state,
  statusText: '',
  statusData: [],
  artifactText: '',
  ...extra,
});

describe('TaskAssembler', () => {
  it('folds status and artifact events into the task, appended pieces joined, until it settles', () => {
    const task = new TaskAssembler();
    task.apply({ kind: 'task', view: view(TaskState.TASK_STATE_SUBMITTED) });
    task.apply({
      kind: 'status',
      taskId: 't-1',
      contextId: 'c-1',
      state: TaskState.TASK_STATE_WORKING,
      statusText: 'working',
      statusData: [],
    });
    expect(task.settled()).toBeUndefined();
    task.apply({ kind: 'artifact', taskId: 't-1', contextId: 'c-1', artifactId: 'a', text: 'done: ', append: false });
    task.apply({ kind: 'artifact', taskId: 't-1', contextId: 'c-1', artifactId: 'a', text: 'all', append: true });
    task.apply({
      kind: 'status',
      taskId: 't-1',
      contextId: 'c-1',
      state: TaskState.TASK_STATE_COMPLETED,
      statusText: 'ok',
      statusData: [],
    });
    expect(task.settled()).toMatchObject({ id: 't-1', state: TaskState.TASK_STATE_COMPLETED, statusText: 'ok', artifactText: 'done: all' });
  });

  it('a continued task settles only once the peer showed it moving on, not on the snapshot it opens with', () => {
    const task = new TaskAssembler(true);
    task.apply({ kind: 'task', view: view(TaskState.TASK_STATE_INPUT_REQUIRED, { statusText: 'Approval required (id: x): y' }) });
    expect(task.taskId).toBe('t-1');
    expect(task.settled()).toBeUndefined();
    task.apply({
      kind: 'status',
      taskId: 't-1',
      contextId: 'c-1',
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      statusText: 'answer "approved" or "rejected"',
      statusData: [],
    });
    expect(task.settled()).toMatchObject({ state: TaskState.TASK_STATE_INPUT_REQUIRED, statusText: 'answer "approved" or "rejected"' });
  });

  it('a Message answer settles a continued task at once', () => {
    const task = new TaskAssembler(true);
    task.apply({ kind: 'task', view: view(TaskState.TASK_STATE_COMPLETED, { artifactText: 'hi' }), answer: true });
    expect(task.settled()).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, artifactText: 'hi' });
  });
});
