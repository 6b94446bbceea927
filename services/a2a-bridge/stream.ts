import { setTimeout as sleep } from 'node:timers/promises';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import type { StreamingSpeaker } from './dialects/dialect.js';
import type { OutgoingMessage } from './dialects/index.js';
import { postJsonRpcStream, StreamCut, type JsonRpcOutcome, type JsonRpcRequest } from './http.js';
import type { OutboundCall } from './outbound.js';
import type { TaskView } from './remote-task.js';
import { TaskAssembler } from './stream-events.js';

/**
 * A message sent to a peer that streams (issue 18 item 2): `message/stream` (v0.3) or
 * `SendStreamingMessage` (v1.0), its events folded into the task until it settles — it
 * completes, fails, or waits for its caller. A stream that breaks before then does not fail
 * the turn: once the peer has named its task, the bridge resubscribes (`tasks/resubscribe`,
 * `SubscribeToTask`) and takes the rest of the task's events; a peer that will not resubscribe
 * (the task settled meanwhile, or it has no such method) is asked for the task (`tasks/get`,
 * `GetTask`) instead. The message itself is never sent again, so the peer acts on it once.
 * Attempts are bounded (RESUBSCRIBE_ATTEMPTS, with backoff), and all of it runs under the
 * call's one deadline.
 */

/** Resubscribe attempts after the stream that carried the message broke. */
export const RESUBSCRIBE_ATTEMPTS = 5;
/** The wait before attempt n (1-based) is this times 2^(n-1), at most RESUBSCRIBE_MAX_BACKOFF_MS. */
export const RESUBSCRIBE_BACKOFF_MS = 100;
export const RESUBSCRIBE_MAX_BACKOFF_MS = 2_000;

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

function backoffMs(attempt: number): number {
  return Math.min(RESUBSCRIBE_MAX_BACKOFF_MS, RESUBSCRIBE_BACKOFF_MS * 2 ** (attempt - 1));
}

/** Reads one stream into `task` until the task settles (returned) or the stream ends or breaks (undefined). */
async function readStream(options: FollowOptions, request: JsonRpcRequest, task: TaskAssembler): Promise<{ settled?: TaskView; refused?: JsonRpcOutcome }> {
  const opened = await postJsonRpcStream(options.call, options.endpoint, request, options.headers);
  if (opened.kind !== 'stream') return { refused: opened };
  try {
    for await (const outcome of opened.events) {
      if (outcome.kind !== 'result') return { refused: outcome };
      task.apply(options.speaker.readEvent(outcome.result));
      const settled = task.settled();
      if (settled) return { settled };
    }
    return {};
  } finally {
    await opened.events.return(undefined);
  }
}

export async function sendStreaming(options: FollowOptions): Promise<TaskView> {
  const { call, speaker, log } = options;
  const task = new TaskAssembler(options.message.taskId !== undefined);
  const first = speaker.sendMessage(options.message);
  let broke: string;
  try {
    const { settled, refused } = await readStream(options, first, task);
    if (settled) return settled;
    // Refused at once (an error, or a plain answer instead of a stream): read as a plain send's answer.
    if (refused) return options.settle(first, refused, (result) => readAsTask(speaker, result));
    broke = 'the stream ended before the task settled';
  } catch (error) {
    if (!(error instanceof StreamCut)) throw error;
    broke = error.message;
  }

  const taskId = task.taskId;
  // Without a task id there is nothing to resubscribe to, and sending again could act twice.
  if (!taskId) throw call.unavailable(`the stream broke before the peer named its task (${broke}); the message was not sent again`);
  for (let attempt = 1; attempt <= RESUBSCRIBE_ATTEMPTS; attempt += 1) {
    const wait = backoffMs(attempt);
    if (Date.now() + wait >= call.deadline) throw call.deadlineExceeded();
    log.info('a2a stream broke; resubscribing', { peer: call.peer.name, task: taskId, attempt, reason: broke });
    await sleep(wait);
    try {
      const { settled, refused } = await readStream(options, speaker.resubscribe(taskId), task);
      if (settled) return settled;
      if (refused) {
        // The peer will not resubscribe (the task settled meanwhile, or no such method): ask for the task.
        const current = await options.getTask(taskId);
        task.apply({ kind: 'task', view: current });
        const settled = task.settled();
        if (settled) return settled;
        broke = 'the peer would not resubscribe and the task goes on';
        continue;
      }
      broke = 'the resubscribed stream ended before the task settled';
    } catch (error) {
      if (error instanceof StreamCut) broke = error.message;
      else if (isUnavailable(error)) broke = error instanceof Error ? error.message : String(error);
      else throw error;
    }
  }
  throw call.unavailable(`the stream of task ${taskId} broke and ${RESUBSCRIBE_ATTEMPTS} resubscribe attempts did not see it settle (last: ${broke})`);
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
