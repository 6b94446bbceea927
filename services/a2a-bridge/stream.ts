import { AttemptsFailed, retry, type BackoffPolicy } from '../common/backoff.js';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import type { StreamingSpeaker } from './dialects/dialect.js';
import type { OutgoingMessage } from './dialects/index.js';
import { postJsonRpcStream, StreamCut, type JsonRpcOutcome, type JsonRpcRequest } from './http.js';
import type { OutboundCall } from './outbound.js';
import type { TaskView } from './remote-task.js';
import { TaskAssembler } from './stream-events.js';

/**
 * A message sent to a peer that streams: `message/stream` (v0.3) or `SendStreamingMessage`
 * (v1.0), its events folded into the task until it settles — it completes, fails, or waits for
 * its caller. A stream that breaks before then does not fail the turn: once the peer has named
 * its task, the bridge resubscribes (`tasks/resubscribe`, `SubscribeToTask`, with the last event
 * id it saw as `Last-Event-ID`, for a peer that replays from there) and takes the rest of the
 * task's events; a peer that will not resubscribe (the task settled meanwhile, or it has no
 * such method) is asked for the task (`tasks/get`, `GetTask`) instead. The message itself is
 * never sent again, so the peer acts on it once. Resubscribes are bounded (RESUBSCRIBE, with
 * jittered backoff), and all of it runs under the call's one deadline.
 */

/** Resubscribe attempts after the stream that carried the message broke. */
const RESUBSCRIBE_ATTEMPTS = 5;
/** The first attempt sends the message; each later one resubscribes, after 100 ms doubling up to 2 s. */
const RESUBSCRIBE: BackoffPolicy = { attempts: 1 + RESUBSCRIBE_ATTEMPTS, baseMs: 100, maxMs: 2_000, jitter: 'equal' };

export interface FollowOptions {
  call: OutboundCall;
  endpoint: string;
  headers: Record<string, string>;
  speaker: StreamingSpeaker;
  message: OutgoingMessage;
  /**
   * An answer that is no event of the stream (an error, a plain answer): what it means is the
   * bridge's to say (bridge.ts). Returns the task for a result, throws for anything else.
   */
  settle(request: JsonRpcRequest, outcome: JsonRpcOutcome, read: (result: unknown) => TaskView): TaskView;
  /** GetTask: the task as the peer has it now, read the same way as an answer to a plain send. */
  getTask(taskId: string): Promise<TaskView>;
  log: Logger;
}

/** Following the task stopped short of its end, for the reason given: the next attempt resubscribes. */
class StreamBroke extends Error {
  override name = 'StreamBroke';
}

/** The task's events as they come, over however many streams: what the next stream resumes from. */
interface Following {
  task: TaskAssembler;
  lastEventId?: string;
}

/** Reads one stream into the task until the task settles (returned) or the stream ends or breaks (undefined). */
async function readStream(
  options: FollowOptions,
  request: JsonRpcRequest,
  following: Following,
): Promise<{ settled?: TaskView; refused?: JsonRpcOutcome }> {
  const resume: Record<string, string> =
    following.lastEventId !== undefined && following.lastEventId !== '' ? { 'Last-Event-ID': following.lastEventId } : {};
  const opened = await postJsonRpcStream(options.call, options.endpoint, request, { ...options.headers, ...resume });
  if (opened.kind !== 'stream') return { refused: opened };
  try {
    for await (const outcome of opened.events) {
      following.lastEventId = opened.lastEventId() ?? following.lastEventId;
      if (outcome.kind !== 'result') return { refused: outcome };
      following.task.apply(options.speaker.readEvent(outcome.result));
      const settled = following.task.settled();
      if (settled) return { settled };
    }
    return {};
  } finally {
    following.lastEventId = opened.lastEventId() ?? following.lastEventId;
    await opened.events.return(undefined);
  }
}

export async function sendStreaming(options: FollowOptions): Promise<TaskView> {
  const { call, speaker, log } = options;
  const following: Following = { task: new TaskAssembler(options.message.taskId !== undefined) };
  const { task } = following;
  const first = speaker.sendMessage(options.message);

  /** Attempt 1 sends the message and reads its stream; each later one resubscribes to the task it named. */
  const follow = async (attempt: number): Promise<TaskView> => {
    if (attempt === 1) {
      const { settled, refused } = await readStream(options, first, following).catch(broken);
      if (settled) return settled;
      // Refused at once (an error, or a plain answer instead of a stream): read as a plain send's answer.
      if (refused) return options.settle(first, refused, (result) => readAsTask(speaker, result));
      throw new StreamBroke('the stream ended before the task settled');
    }
    const taskId = task.taskId!;
    try {
      const { settled, refused } = await readStream(options, speaker.resubscribe(taskId), following);
      if (settled) return settled;
      if (!refused) throw new StreamBroke('the resubscribed stream ended before the task settled');
      // The peer will not resubscribe (the task settled meanwhile, or no such method): ask for the task.
      task.apply({ kind: 'task', view: await options.getTask(taskId) });
      const current = task.settled();
      if (current) return current;
      throw new StreamBroke('the peer would not resubscribe and the task goes on');
    } catch (error) {
      // The peer may be restarting: a refused connection or a 5xx is worth the next attempt.
      if (isUnavailable(error)) throw new StreamBroke(error instanceof Error ? error.message : String(error));
      return broken(error);
    }
  };

  try {
    return await retry(follow, RESUBSCRIBE, {
      // Without a task id there is nothing to resubscribe to, and sending again could act twice.
      retry: (error) => error instanceof StreamBroke && task.taskId !== undefined,
      deadline: call.deadline,
      onRetry: ({ attempt, error }) =>
        log.info('a2a stream broke; resubscribing', { peer: call.peer.name, task: task.taskId, attempt, reason: (error as Error).message }),
    });
  } catch (error) {
    if (!(error instanceof AttemptsFailed)) throw error;
    const last = error.lastError;
    if (!(last instanceof StreamBroke)) throw last;
    if (error.reason === 'deadline') throw call.deadlineExceeded();
    if (!task.taskId)
      throw call.unavailable(`the stream broke before the peer named its task (${last.message}); the message was not sent again`);
    throw call.unavailable(
      `the stream of task ${task.taskId} broke and ${RESUBSCRIBE_ATTEMPTS} resubscribe attempts did not see it settle (last: ${last.message})`,
    );
  }
}

/** A stream cut (a reset connection, a body cut short) as a reason to resubscribe; anything else as it is. */
function broken(error: unknown): never {
  if (error instanceof StreamCut) throw new StreamBroke(error.message);
  throw error;
}

/** A streaming send answered plainly: the result is a Task or a Message, as for a plain send. */
function readAsTask(speaker: StreamingSpeaker, result: unknown): TaskView {
  const event = speaker.readEvent(result);
  if (event.kind === 'task') return event.view;
  const task = new TaskAssembler();
  task.apply(event);
  return task.current()!;
}

/** The peer could not be reached for this attempt (a 5xx, a refused connection): the next may reach it. */
function isUnavailable(error: unknown): boolean {
  return error instanceof ServiceError && error.code === GrpcStatus.UNAVAILABLE;
}
