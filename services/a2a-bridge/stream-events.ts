import { TaskState } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { joinTexts, type TaskView } from './remote-task.js';

/**
 * What a peer's stream (`message/stream`, `tasks/resubscribe`, `SendStreamingMessage`,
 * `SubscribeToTask`) says, one event at a time, in any dialect: the task as it stands, a change
 * of its status, or an artifact (or a piece of one). Each dialect reads its own wire shape into
 * these; TaskAssembler folds them into the TaskView a plain send would have answered.
 */
export type StreamEvent =
  /** `answer`: the peer answered with a Message, which ends its part (read as a completed task). */
  | { kind: 'task'; view: TaskView; answer?: true }
  | { kind: 'status'; taskId: string; contextId: string; state: TaskState; statusText: string; statusData: unknown[] }
  | { kind: 'artifact'; taskId: string; contextId: string; artifactId: string; text: string; append: boolean };

/**
 * The states a turn of ours waits for: the task is over, or it waits for its caller (an
 * approval, credentials). Past one of them the stream has nothing more for this turn.
 */
const SETTLED: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

function isSettled(state: TaskState): boolean {
  return SETTLED.has(state);
}

/**
 * The task as the events so far describe it. Events may repeat after a resubscribe: applying
 * one twice changes nothing.
 *
 * A message that continues a task (an approval's answer) is answered with a stream that opens
 * with the task as it was — still waiting for that answer. Such a task has settled only once
 * the peer showed it moving on: a status or artifact event, or an answer.
 */
export class TaskAssembler {
  private view: TaskView | undefined;
  private moved: boolean;

  constructor(continuing = false) {
    this.moved = !continuing;
  }

  /** Artifact text from the last snapshot, then each streamed artifact by id (appended pieces joined). */
  private snapshotArtifacts = '';
  private readonly artifacts = new Map<string, string>();

  apply(event: StreamEvent): void {
    if (event.kind === 'task') {
      if (event.answer) this.moved = true;
      this.view = event.view;
      this.snapshotArtifacts = event.view.artifactText;
      this.artifacts.clear();
      return;
    }
    const base: TaskView = this.view ?? {
      id: event.taskId,
      contextId: event.contextId,
      state: TaskState.TASK_STATE_SUBMITTED,
      statusText: '',
      statusData: [],
      artifactText: '',
    };
    this.moved = true;
    if (event.kind === 'status') {
      this.view = {
        ...base,
        id: event.taskId || base.id,
        contextId: event.contextId || base.contextId,
        state: event.state,
        statusText: event.statusText,
        statusData: event.statusData,
      };
      return;
    }
    const earlier = this.artifacts.get(event.artifactId);
    this.artifacts.set(event.artifactId, event.append && earlier !== undefined ? earlier + event.text : event.text);
    this.view = { ...base, id: event.taskId || base.id, contextId: event.contextId || base.contextId };
  }

  /** The peer's task id, once an event named it. */
  get taskId(): string | undefined {
    return this.view?.id || undefined;
  }

  /** The task once it has settled (isSettled); undefined while it goes on. */
  settled(): TaskView | undefined {
    if (!this.view || !this.moved || !isSettled(this.view.state)) return undefined;
    return this.current();
  }

  current(): TaskView | undefined {
    if (!this.view) return undefined;
    return { ...this.view, artifactText: joinTexts([this.snapshotArtifacts, ...this.artifacts.values()]) };
  }
}
