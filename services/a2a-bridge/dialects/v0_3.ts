import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Dialect, TaskState } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { joinTexts, stateFromWord, UnreadableAnswer, type TaskView } from '../remote-task.js';
import type { StreamEvent } from '../stream-events.js';
import { decisionData, messageText, type DialectSpeaker, type OutgoingMessage } from './dialect.js';

/**
 * A2A v0.3 over JSON-RPC: `message/send` / `tasks/get`, parts tagged with `kind`, states in
 * lowercase (`input-required`), `contextId`, `artifacts[]`, results tagged `kind: "task"` or
 * `kind: "message"`. @a2a-js/sdk 1.x keeps its v0.3 types private, so the shapes are read
 * here with zod, leniently: unknown fields and part kinds are ignored.
 */

const part = z.looseObject({ kind: z.string().optional(), text: z.unknown().optional(), data: z.unknown().optional() });
const message = z.looseObject({
  kind: z.literal('message').optional(),
  parts: z.array(part),
  taskId: z.string().optional(),
  contextId: z.string().optional(),
});
const task = z.looseObject({
  kind: z.literal('task').optional(),
  id: z.string().min(1),
  contextId: z.string().optional(),
  status: z.looseObject({ state: z.string(), message: message.optional() }),
  artifacts: z.array(z.looseObject({ parts: z.array(part) })).optional(),
});

type Parts = z.infer<typeof part>[];

const texts = (parts: Parts) =>
  joinTexts(parts.flatMap((p) => ((p.kind === 'text' || p.kind === undefined) && typeof p.text === 'string' ? [p.text] : [])));
const data = (parts: Parts) => parts.flatMap((p) => (p.kind === 'data' && p.data !== undefined ? [p.data] : []));

function taskView(raw: unknown): TaskView {
  const parsed = task.safeParse(raw);
  if (!parsed.success)
    throw new UnreadableAnswer(
      `a v0.3 Task needs an "id" and a "status" with a "state" (${parsed.error.issues[0]?.path.join('.') || 'result'}: ${parsed.error.issues[0]?.message})`,
    );
  const { id, contextId, status, artifacts } = parsed.data;
  const statusParts = status.message?.parts ?? [];
  return {
    id,
    contextId: contextId ?? '',
    state: stateFromWord(status.state),
    statusText: texts(statusParts),
    statusData: data(statusParts),
    artifactText: joinTexts((artifacts ?? []).map((artifact) => texts(artifact.parts))),
  };
}

const statusUpdate = z.looseObject({
  kind: z.literal('status-update'),
  taskId: z.string(),
  contextId: z.string().optional(),
  status: z.looseObject({ state: z.string(), message: message.optional() }),
});
const artifactUpdate = z.looseObject({
  kind: z.literal('artifact-update'),
  taskId: z.string(),
  contextId: z.string().optional(),
  artifact: z.looseObject({ artifactId: z.string().optional(), parts: z.array(part) }),
  append: z.boolean().optional(),
});

function sendParams(outgoing: OutgoingMessage) {
  const parts: Array<Record<string, unknown>> = [{ kind: 'text', text: messageText(outgoing) }];
  const decision = decisionData(outgoing);
  if (decision) parts.push({ kind: 'data', data: decision });
  return {
    message: {
      kind: 'message',
      messageId: randomUUID(),
      role: 'user',
      parts,
      ...(outgoing.taskId ? { taskId: outgoing.taskId } : {}),
      ...(outgoing.contextId ? { contextId: outgoing.contextId } : {}),
    },
  };
}

/** One event of a v0.3 stream: a Task, a Message (the answer), a status-update or an artifact-update, tagged by `kind`. */
function readEvent(result: unknown): StreamEvent {
  const kind = (result as { kind?: unknown } | null)?.kind;
  if (kind === 'status-update') {
    const parsed = statusUpdate.safeParse(result);
    if (!parsed.success) throw new UnreadableAnswer('a v0.3 status-update needs a "taskId" and a "status" with a "state"');
    const parts = parsed.data.status.message?.parts ?? [];
    return {
      kind: 'status',
      taskId: parsed.data.taskId,
      contextId: parsed.data.contextId ?? '',
      state: stateFromWord(parsed.data.status.state),
      statusText: texts(parts),
      statusData: data(parts),
    };
  }
  if (kind === 'artifact-update') {
    const parsed = artifactUpdate.safeParse(result);
    if (!parsed.success) throw new UnreadableAnswer('a v0.3 artifact-update needs a "taskId" and an "artifact" with "parts"');
    const { taskId, contextId, artifact, append } = parsed.data;
    return {
      kind: 'artifact',
      taskId,
      contextId: contextId ?? '',
      artifactId: artifact.artifactId ?? '',
      text: texts(artifact.parts),
      append: append === true,
    };
  }
  const view = v0_3.readSendResult(result);
  return kind === 'task' || (result as { status?: unknown } | null)?.status !== undefined
    ? { kind: 'task', view }
    : { kind: 'task', view, answer: true };
}

export const v0_3: DialectSpeaker = {
  dialect: Dialect.DIALECT_V0_3,
  label: 'A2A v0.3',
  headers: {},
  // A v0.3-only method without side effects: v0.3 servers answer it (with the card or an
  // "unsupported" error), type-parts servers with "method not found". tasks/get would not
  // tell the two apart.
  probe: { method: 'agent/getAuthenticatedExtendedCard' },

  sendMessage(outgoing: OutgoingMessage) {
    return { method: 'message/send', params: sendParams(outgoing) };
  },

  readSendResult(result) {
    const kind = (result as { kind?: unknown } | null)?.kind;
    if (kind === 'message' || (kind === undefined && (result as { status?: unknown } | null)?.status === undefined)) {
      // A peer that answers with a Message instead of a Task is done: its message is the answer.
      const parsed = message.safeParse(result);
      if (!parsed.success) throw new UnreadableAnswer('a v0.3 message/send result is a Task or a Message with "parts"');
      const text = texts(parsed.data.parts);
      return {
        id: parsed.data.taskId ?? '',
        contextId: parsed.data.contextId ?? '',
        state: TaskState.TASK_STATE_COMPLETED,
        statusText: text,
        statusData: data(parsed.data.parts),
        artifactText: text,
      };
    }
    return taskView(result);
  },

  getTask(taskId) {
    return { method: 'tasks/get', params: { id: taskId } };
  },

  readTask: taskView,

  streaming: {
    sendMessage: (outgoing) => ({ method: 'message/stream', params: sendParams(outgoing) }),
    resubscribe: (taskId) => ({ method: 'tasks/resubscribe', params: { id: taskId } }),
    readEvent,
  },
};
