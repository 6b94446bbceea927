import { randomUUID } from 'node:crypto';
import {
  A2A_PROTOCOL_VERSION,
  A2A_VERSION_HEADER,
  GetTaskRequest,
  Role,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  taskStateToJSON,
  type Message,
  type Part,
} from '@a2a-js/sdk';
import { Dialect, TaskState } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { joinTexts, stateFromName, UnreadableAnswer, type TaskView } from '../remote-task.js';
import type { StreamEvent } from '../stream-events.js';
import { decisionData, messageText, probeTaskId, type DialectSpeaker, type OutgoingMessage } from './dialect.js';

/**
 * A2A v1.0 over JSON-RPC: `SendMessage` / `GetTask`, the `A2A-Version: 1.0` header (without
 * it a v1.0 server takes the request for v0.3), protobuf JSON (`ROLE_USER`, `TASK_STATE_*`,
 * parts `{"text"}` / `{"data"}`, the result wrapped as `{"task"}` or `{"message"}`). The
 * wire JSON is written and read by @a2a-js/sdk's own codecs, so it is the SDK's exactly.
 */

const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const dataPart = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' });

function texts(parts: Part[]): string {
  return joinTexts(parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])));
}

function data(parts: Part[]): unknown[] {
  return parts.flatMap((part) => (part.content?.$case === 'data' ? [part.content.value as unknown] : []));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function taskView(raw: unknown): TaskView {
  if (!isObject(raw) || typeof raw.id !== 'string' || !raw.id || !isObject(raw.status))
    throw new UnreadableAnswer('a v1.0 Task needs an "id" and a "status"');
  const task = Task.fromJSON(raw);
  const message = task.status?.message;
  return {
    id: task.id,
    contextId: task.contextId,
    state: stateFromName(taskStateToJSON(task.status?.state ?? 0)),
    statusText: message ? texts(message.parts) : '',
    statusData: message ? data(message.parts) : [],
    artifactText: joinTexts(task.artifacts.map((artifact) => texts(artifact.parts))),
  };
}

/** A peer that answers with a Message instead of a Task is done: its message is the answer. */
function messageView(message: Message): TaskView {
  return {
    id: message.taskId,
    contextId: message.contextId,
    state: TaskState.TASK_STATE_COMPLETED,
    statusText: texts(message.parts),
    statusData: data(message.parts),
    artifactText: texts(message.parts),
  };
}

function sendRequest(outgoing: OutgoingMessage): unknown {
  const parts = [textPart(messageText(outgoing))];
  const decision = decisionData(outgoing);
  if (decision) parts.push(dataPart(decision));
  const message: Message = {
    messageId: randomUUID(),
    contextId: outgoing.contextId ?? '',
    taskId: outgoing.taskId ?? '',
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return SendMessageRequest.toJSON({ tenant: '', message, configuration: undefined, metadata: undefined });
}

/** One StreamResponse: `{"task"}`, `{"message"}`, `{"statusUpdate"}` or `{"artifactUpdate"}`, read by the SDK's codec. */
function readEvent(result: unknown): StreamEvent {
  if (!isObject(result))
    throw new UnreadableAnswer('a v1.0 StreamResponse is an object {"task"}, {"message"}, {"statusUpdate"} or {"artifactUpdate"}');
  if (isObject(result.task)) return { kind: 'task', view: taskView(result.task) };
  const payload = StreamResponse.fromJSON(result).payload;
  switch (payload?.$case) {
    case 'message':
      return { kind: 'task', view: messageView(payload.value), answer: true };
    case 'statusUpdate': {
      const { taskId, contextId, status } = payload.value;
      const message = status?.message;
      return {
        kind: 'status',
        taskId,
        contextId,
        state: stateFromName(taskStateToJSON(status?.state ?? 0)),
        statusText: message ? texts(message.parts) : '',
        statusData: message ? data(message.parts) : [],
      };
    }
    case 'artifactUpdate': {
      const { taskId, contextId, artifact, append } = payload.value;
      return {
        kind: 'artifact',
        taskId,
        contextId,
        artifactId: artifact?.artifactId ?? '',
        text: artifact ? texts(artifact.parts) : '',
        append,
      };
    }
    default:
      throw new UnreadableAnswer('a v1.0 StreamResponse is an object {"task"}, {"message"}, {"statusUpdate"} or {"artifactUpdate"}');
  }
}

export const v1_0: DialectSpeaker = {
  dialect: Dialect.DIALECT_V1_0,
  label: 'A2A v1.0',
  headers: { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION },
  probe: { method: 'GetTask', params: GetTaskRequest.toJSON({ tenant: '', id: probeTaskId() }) },

  sendMessage(outgoing: OutgoingMessage) {
    return { method: 'SendMessage', params: sendRequest(outgoing) };
  },

  readSendResult(result) {
    if (!isObject(result)) throw new UnreadableAnswer('a v1.0 SendMessage result is an object {"task"} or {"message"}');
    if (isObject(result.task)) return taskView(result.task);
    const response = SendMessageResponse.fromJSON(result);
    if (response.payload?.$case === 'message') return messageView(response.payload.value);
    throw new UnreadableAnswer('a v1.0 SendMessage result is an object {"task"} or {"message"}');
  },

  getTask(taskId) {
    return { method: 'GetTask', params: GetTaskRequest.toJSON({ tenant: '', id: taskId }) };
  },

  readTask: taskView,

  streaming: {
    sendMessage: (outgoing) => ({ method: 'SendStreamingMessage', params: sendRequest(outgoing) }),
    resubscribe: (taskId) => ({ method: 'SubscribeToTask', params: SubscribeToTaskRequest.toJSON({ tenant: '', id: taskId }) }),
    readEvent,
  },
};
