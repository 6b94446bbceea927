import type { TaskSnapshot } from '../task.js';
import type { DialectWire } from './wire.js';

/**
 * The early type-parts dialect: parts `{"type": "text", "text"}`, one `artifact`, and a
 * status message that is a plain string — `Approval required (id: <uuid>): <description>`
 * while the task waits. It has no streaming and no context ids.
 */

export interface TypePartsTask {
  id: string;
  status: { state: string; message?: string };
  artifact?: { parts: { type: 'text'; text: string }[] };
}

export function typePartsTask(task: TaskSnapshot): TypePartsTask {
  return {
    id: task.id,
    status: { state: task.state, ...(task.statusText !== undefined && { message: task.statusText }) },
    ...(task.artifactText !== undefined && { artifact: { parts: [{ type: 'text' as const, text: task.artifactText }] } }),
  };
}

export const typePartsWire: DialectWire = {
  task: typePartsTask,
  sendResult: typePartsTask,
};
