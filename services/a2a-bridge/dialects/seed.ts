import { z } from 'zod';
import { Dialect } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { joinTexts, stateFromWord, UnreadableAnswer, type TaskView } from '../remote-task.js';
import { messageText, probeTaskId, type DialectSpeaker, type OutgoingMessage } from './dialect.js';

/**
 * The seed's early dialect (seed 000, DESIGN §4): `message/send` with parts `{"type":"text"}`
 * and the task to continue as `params.taskId`; a task is
 * `{"id","status":{"state","message": string},"artifact":{"parts":[...]}}`. No context ids,
 * no data parts: an approval travels only as the text "Approval required (id: …): …".
 */

const part = z.looseObject({ type: z.string().optional(), text: z.unknown().optional() });
const task = z.looseObject({
  id: z.string().min(1),
  status: z.looseObject({ state: z.string(), message: z.string().optional().nullable() }),
  artifact: z.looseObject({ parts: z.array(part) }).optional().nullable(),
});

const texts = (parts: z.infer<typeof part>[]) => joinTexts(parts.flatMap((p) => ((p.type === 'text' || p.type === undefined) && typeof p.text === 'string' ? [p.text] : [])));

function taskView(raw: unknown): TaskView {
  const parsed = task.safeParse(raw);
  if (!parsed.success) throw new UnreadableAnswer(`a seed-dialect task needs an "id" and a "status" with a "state" (${parsed.error.issues[0]?.path.join('.') || 'result'}: ${parsed.error.issues[0]?.message})`);
  const { id, status, artifact } = parsed.data;
  return { id, contextId: '', state: stateFromWord(status.state), statusText: status.message ?? '', statusData: [], artifactText: artifact ? texts(artifact.parts) : '' };
}

export const seed: DialectSpeaker = {
  dialect: Dialect.DIALECT_SEED,
  label: 'the seed dialect',
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
