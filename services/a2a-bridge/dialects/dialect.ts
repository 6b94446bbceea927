import type { Dialect } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import type { JsonRpcRequest } from '../http.js';
import type { TaskView } from '../remote-task.js';
import type { StreamEvent } from '../stream-events.js';

/** How a dialect streams: the streaming send, the resubscribe, and one event read. */
export interface StreamingSpeaker {
  sendMessage(message: OutgoingMessage): JsonRpcRequest;
  resubscribe(taskId: string): JsonRpcRequest;
  /** One `result` of the stream; throws UnreadableAnswer on a shape the dialect does not know. */
  readEvent(result: unknown): StreamEvent;
}

/** One message to a peer: a new task, or an answer within task `taskId`. */
export interface OutgoingMessage {
  text: string;
  taskId?: string;
  contextId?: string;
  /** An answer to the peer's approval; its text is then "approved" or "rejected". */
  approved?: boolean;
  /** With approved=false: the human's reason, sent in the v0.3/v1.0 data part. */
  reason?: string;
}

/**
 * One A2A dialect: how to ask, and how to read the answer into a TaskView. Pure data in,
 * data out; the bridge does the I/O. Readers throw UnreadableAnswer on a shape they do not know.
 */
export interface DialectSpeaker {
  readonly dialect: Dialect;
  /** For messages and logs, e.g. "A2A v1.0". */
  readonly label: string;
  /** Headers every request in this dialect carries (v1.0: A2A-Version). */
  readonly headers: Record<string, string>;
  /**
   * A request without side effects that a peer speaking this dialect answers with anything
   * but "method not found": how a peer without a card is recognised.
   */
  readonly probe: JsonRpcRequest;
  sendMessage(message: OutgoingMessage): JsonRpcRequest;
  readSendResult(result: unknown): TaskView;
  getTask(taskId: string): JsonRpcRequest;
  readTask(result: unknown): TaskView;
  /** Absent for a dialect without streaming (type-parts). */
  readonly streaming?: StreamingSpeaker;
}

/** The text a message carries: an approval answer is the word itself, as type-parts peers expect. */
export function messageText(message: OutgoingMessage): string {
  if (message.approved === undefined) return message.text;
  return message.approved ? 'approved' : 'rejected';
}

/** The data part of an approval answer: {"approved": bool} and, for a rejection with one, its "reason". */
export function decisionData(message: OutgoingMessage): Record<string, unknown> | undefined {
  if (message.approved === undefined) return undefined;
  return { approved: message.approved, ...(!message.approved && message.reason && { reason: message.reason }) };
}

/** A task id no peer has, for probes. */
export function probeTaskId(): string {
  return `asg-dialect-probe-${Math.random().toString(16).slice(2, 10)}`;
}
