import type { TaskSnapshot } from '../task.js';
import type { DialectWire } from './wire.js';

/**
 * The seed's dialect (seed 000/003): parts `{"type": "text", "text"}`, one `artifact`, and a
 * status message that is a plain string — `Approval required (id: <uuid>): <description>`
 * while the task waits. It has no streaming and no context ids.
 */

export interface SeedTask {
  id: string;
  status: { state: string; message?: string };
  artifact?: { parts: { type: 'text'; text: string }[] };
}

export function seedTask(task: TaskSnapshot): SeedTask {
  return {
    id: task.id,
    status: { state: task.state, ...(task.statusText !== undefined && { message: task.statusText }) },
    ...(task.artifactText !== undefined && { artifact: { parts: [{ type: 'text' as const, text: task.artifactText }] } }),
  };
}

export const seedWire: DialectWire = {
  task: seedTask,
  sendResult: seedTask,
};
