import {
  Role,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { TaskEvent, TaskSnapshot, TaskState as SnapshotState } from '../task.js';
import { approvalData, RESPONSE_ARTIFACT, statusMessageId, type DialectWire } from './wire.js';

/**
 * A2A v1.0 (JSON-RPC binding): ProtoJSON of `lf.a2a.v1` — `TASK_STATE_*` and `ROLE_*`
 * enums, parts without a tag (`{"text"}`, `{"data"}`), `SendMessage` answered as
 * `{"task": …}`, stream events `{"task"}`, `{"statusUpdate"}`, `{"artifactUpdate"}` (v1.0
 * has no `final`: the stream ends after the last one). The tasks are built as the SDK's
 * own types and written by its own codecs, so they are exactly what its server sends and
 * its client reads.
 */

const STATES: Record<SnapshotState, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  canceled: TaskState.TASK_STATE_CANCELED,
  failed: TaskState.TASK_STATE_FAILED,
  rejected: TaskState.TASK_STATE_REJECTED,
  'auth-required': TaskState.TASK_STATE_AUTH_REQUIRED,
};

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function dataPart(data: Record<string, unknown>): Part {
  return { content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: '' };
}

function message(task: TaskSnapshot, messageId: string, role: Role, parts: Part[]): Message {
  return { messageId, contextId: task.contextId, taskId: task.id, role, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function status(task: TaskSnapshot): TaskStatus {
  const data = approvalData(task);
  const parts: Part[] = [];
  if (task.statusText !== undefined) parts.push(textPart(task.statusText));
  if (data) parts.push(dataPart(data));
  return {
    state: STATES[task.state],
    message: parts.length > 0 ? message(task, statusMessageId(), Role.ROLE_AGENT, parts) : undefined,
    timestamp: task.timestamp,
  };
}

function artifact(task: TaskSnapshot): Artifact | undefined {
  if (task.artifactText === undefined) return undefined;
  return { ...RESPONSE_ARTIFACT, description: '', parts: [textPart(task.artifactText)], metadata: undefined, extensions: [] };
}

function coreTask(task: TaskSnapshot): Task {
  const answer = artifact(task);
  return {
    id: task.id,
    contextId: task.contextId,
    status: status(task),
    artifacts: answer ? [answer] : [],
    history: task.history.map((entry) =>
      message(task, entry.id, entry.role === 'user' ? Role.ROLE_USER : Role.ROLE_AGENT, [textPart(entry.text)]),
    ),
    metadata: undefined,
  };
}

export function v10Task(task: TaskSnapshot): unknown {
  return Task.toJSON(coreTask(task));
}

export function v10SendResult(task: TaskSnapshot): unknown {
  return SendMessageResponse.toJSON({ payload: { $case: 'task', value: coreTask(task) } });
}

export function v10Event(event: TaskEvent): unknown {
  const { task } = event;
  switch (event.kind) {
    case 'task':
      return StreamResponse.toJSON({ payload: { $case: 'task', value: coreTask(task) } });
    case 'status':
      return StreamResponse.toJSON({
        payload: {
          $case: 'statusUpdate',
          value: { taskId: task.id, contextId: task.contextId, status: status(task), metadata: undefined },
        },
      });
    case 'artifact':
      return StreamResponse.toJSON({
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId: task.id,
            contextId: task.contextId,
            artifact: artifact(task),
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      });
  }
}

export const v10Wire: DialectWire = {
  task: v10Task,
  sendResult: v10SendResult,
  event: v10Event,
};
