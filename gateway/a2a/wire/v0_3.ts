import type { HistoryEntry, TaskEvent, TaskSnapshot } from '../task.js';
import { approvalData, RESPONSE_ARTIFACT, statusMessageId, type DialectWire } from './wire.js';

/**
 * A2A v0.3 (JSON-RPC binding): `kind`-tagged objects, lowercase states, `artifacts[]`, and
 * stream events `status-update` with `final` and `artifact-update`. The shapes are the ones
 * @a2a-js/sdk's v0.3 compatibility layer writes and its LegacyJsonRpcTransport reads
 * (src/compat/v0_3/translate: toCompatTask, toCompatTaskStatusUpdateEvent); that layer does
 * not export its v0.3 types, so they are spelt out here.
 */

type V03Part = { kind: 'text'; text: string } | { kind: 'data'; data: Record<string, unknown> };

interface V03Message {
  kind: 'message';
  messageId: string;
  role: 'user' | 'agent';
  parts: V03Part[];
  taskId: string;
  contextId: string;
}

interface V03TaskStatus {
  state: string;
  message?: V03Message;
  timestamp: string;
}

interface V03Artifact {
  artifactId: string;
  name: string;
  parts: V03Part[];
}

export interface V03Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: V03TaskStatus;
  artifacts?: V03Artifact[];
  history?: V03Message[];
}

export interface V03StatusUpdate {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: V03TaskStatus;
  /** True on the last event of the stream: the task finished or waits for input. */
  final: boolean;
}

export interface V03ArtifactUpdate {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: V03Artifact;
  append: boolean;
  lastChunk: boolean;
}

function status(task: TaskSnapshot): V03TaskStatus {
  const data = approvalData(task);
  const parts: V03Part[] = [];
  if (task.statusText !== undefined) parts.push({ kind: 'text', text: task.statusText });
  if (data) parts.push({ kind: 'data', data });
  const message: V03Message | undefined =
    parts.length > 0
      ? { kind: 'message', messageId: statusMessageId(), role: 'agent', parts, taskId: task.id, contextId: task.contextId }
      : undefined;
  return { state: task.state, ...(message && { message }), timestamp: task.timestamp };
}

function artifact(task: TaskSnapshot): V03Artifact | undefined {
  return task.artifactText === undefined ? undefined : { ...RESPONSE_ARTIFACT, parts: [{ kind: 'text', text: task.artifactText }] };
}

function historyMessage(task: TaskSnapshot, entry: HistoryEntry): V03Message {
  return {
    kind: 'message',
    messageId: entry.id,
    role: entry.role,
    parts: [{ kind: 'text', text: entry.text }],
    taskId: task.id,
    contextId: task.contextId,
  };
}

export function v03Task(task: TaskSnapshot): V03Task {
  const answer = artifact(task);
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    status: status(task),
    ...(answer && { artifacts: [answer] }),
    ...(task.history.length > 0 && { history: task.history.map((entry) => historyMessage(task, entry)) }),
  };
}

export function v03Event(event: TaskEvent): V03Task | V03StatusUpdate | V03ArtifactUpdate {
  const { task } = event;
  switch (event.kind) {
    case 'task':
      return v03Task(task);
    case 'status':
      return { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: status(task), final: event.final };
    case 'artifact':
      return {
        kind: 'artifact-update',
        taskId: task.id,
        contextId: task.contextId,
        artifact: artifact(task) ?? { ...RESPONSE_ARTIFACT, parts: [] },
        append: false,
        lastChunk: true,
      };
  }
}

export const v03Wire: DialectWire = {
  task: v03Task,
  sendResult: v03Task,
  event: v03Event,
};
