import { z } from 'zod';
import { Dialect } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { joinTexts, stateFromWord, UnreadableAnswer, type TaskView } from '../remote-task.js';
import { messageText, probeTaskId, type DialectSpeaker, type OutgoingMessage } from './dialect.js';

/**
 * The early type-parts dialect, from before A2A v0.3: `message/send` with parts `{"type":"text"}`
 * and the task to continue as `params.taskId`; a task is
 * `{"id","status":{"state","message": string},"artifact":{"parts":[...]}}`. No context ids,
 * no data parts: an approval travels only as the text "Approval required (id: …): …".
 */

const part = z.looseObject({ type: z.string().optional(), text: z.unknown().optional() });
const task = z.looseObject({
  id: z.string().min(1),
  status: z.looseObject({ state: z.string(), message: z.string().optional().nullable() }),
  artifact: z
    .looseObject({ parts: z.array(part) })
    .optional()
    .nullable(),
});

const texts = (parts: z.infer<typeof part>[]) =>
  joinTexts(parts.flatMap((p) => ((p.type === 'text' || p.type === undefined) && typeof p.text === 'string' ? [p.text] : [])));

function taskView(raw: unknown): TaskView {
  const parsed = task.safeParse(raw);
  if (!parsed.success)
    throw new UnreadableAnswer(
      `a type-parts task needs an "id" and a "status" with a "state" (${parsed.error.issues[0]?.path.join('.') || 'result'}: ${parsed.error.issues[0]?.message})`,
    );
  const { id, status, artifact } = parsed.data;
  return {
    id,
    contextId: '',
    state: stateFromWord(status.state),
    statusText: status.message ?? '',
    statusData: [],
    artifactText: artifact ? texts(artifact.parts) : '',
  };
}

export const typeParts: DialectSpeaker = {
  dialect: Dialect.DIALECT_TYPE_PARTS,
  label: 'the type-parts dialect',
  headers: {},
  probe: { method: 'tasks/get', params: { id: probeTaskId() } },

  sendMessage(outgoing: OutgoingMessage) {
    return {
      method: 'message/send',
      params: {
        ...(outgoing.taskId ? { taskId: outgoing.taskId } : {}),
        message: { role: 'user', parts: [{ type: 'text', text: messageText(outgoing) }] },
      },
    };
  },

  readSendResult: taskView,

  getTask(taskId) {
    return { method: 'tasks/get', params: { id: taskId } };
  },

  readTask: taskView,
};
