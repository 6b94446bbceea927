import { randomUUID } from 'node:crypto';
import type { Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { currentContext, withContextPatch } from '../../services/common/context.js';
import { GrpcStatus, isCode } from '../../services/common/grpc/errors.js';
import { newSessionId } from '../../services/common/session-id.js';
import type { Decision } from '../app/decision.js';
import { planContinuation, type Continuation } from './answer.js';
import type { TaskBackend } from './backend.js';
import { originDialect, type Dialect } from './dialect.js';
import { invalidParams, JsonRpcCode, JsonRpcError, taskNotFound } from './jsonrpc.js';
import type { InboundMessage, TaskQuery } from './params.js';
import {
  canceledTask,
  finalEvents,
  isWaiting,
  pendingApprovals,
  taskAfterTurn,
  taskInProgress,
  taskOfConversation,
  unclearAnswerTask,
  withHistory,
  type TaskEvent,
  type TaskSnapshot,
} from './task.js';

/**
 * The A2A operations on tasks, over the mesh and in no dialect: send (a new task or the
 * next message of one), stream, get and cancel. Tasks live in the conversation store —
 * a task is a conversation — so any replica answers any task, also after a restart.
 */

/** A task as an operation left it, with what the adapter needs around it. */
export interface TaskAnswer {
  task: TaskSnapshot;
  /** The dialect the task was created in. */
  origin: Dialect;
  /** The effective session id of the request (DESIGN rule 6), for the X-Session-ID header. */
  sessionId: string;
}

export interface TaskStream {
  sessionId: string;
  /** The events to send, in order; the last is the final status. Failures after the first event are thrown from here. */
  events: AsyncGenerator<TaskEvent>;
}

const NOTHING_RUN = 'The call was not run.';

function callerSessionId(): string | undefined {
  return currentContext()?.sessionId || undefined;
}

function needsText(message: InboundMessage): void {
  if (message.text.trim() === '') throw invalidParams('message.parts: a new task needs a text part with some text');
}

/** The context id a task is answered with: the one it was created with, else the caller's, else the task's own id. */
function contextIdOf(conversation: Conversation, requested?: string): string {
  return conversation.a2aOrigin?.contextId || requested || conversation.id;
}

interface Outcome {
  task: TaskSnapshot;
  conversation: Conversation;
}

export class TaskService {
  constructor(private readonly backend: TaskBackend) {}

  async send(message: InboundMessage, dialect: Dialect): Promise<TaskAnswer> {
    if (message.taskId) {
      const conversation = await this.load(message.taskId);
      const contextId = contextIdOf(conversation, message.contextId);
      const outcome = await this.carryOut(conversation, planContinuation(conversation, message), contextId);
      return this.answer(outcome, message.historyLength, conversation);
    }
    needsText(message);
    const sessionId = callerSessionId() ?? newSessionId();
    const contextId = message.contextId ?? randomUUID();
    const { conversation, result } = await withContextPatch({ sessionId }, () => this.backend.createConversation(message.text, { dialect, contextId }));
    const task = result ? taskAfterTurn(conversation, result, contextId) : taskOfConversation(conversation, contextId);
    return { task: withHistory(task, conversation, message.historyLength), origin: dialect, sessionId };
  }

  /**
   * Everything that can be refused is checked before this returns (unknown task, bad
   * answer), so that a refusal is a plain JSON-RPC error rather than a broken stream.
   */
  async openStream(message: InboundMessage, dialect: Dialect): Promise<TaskStream> {
    const service = this;
    if (message.taskId) {
      const conversation = await this.load(message.taskId);
      const contextId = contextIdOf(conversation, message.contextId);
      const plan = planContinuation(conversation, message);
      async function* continuation(): AsyncGenerator<TaskEvent> {
        const working = taskInProgress(conversation, contextId, 'working');
        yield { kind: 'task', task: working };
        yield { kind: 'status', task: working, final: false };
        const outcome = await service.carryOut(conversation, plan, contextId);
        yield* finalEvents(withHistory(outcome.task, outcome.conversation, message.historyLength));
      }
      return { sessionId: callerSessionId() ?? conversation.sessionId, events: continuation() };
    }
    needsText(message);
    const sessionId = callerSessionId() ?? newSessionId();
    const contextId = message.contextId ?? randomUUID();
    const inSession = <T>(call: () => Promise<T>) => withContextPatch({ sessionId }, call);
    // Created first and run after, so that the first event already carries the task id; a
    // failure to create is still a plain JSON-RPC error.
    const { conversation } = await inSession(() => this.backend.createConversation(undefined, { dialect, contextId }));
    async function* newTask(): AsyncGenerator<TaskEvent> {
      yield { kind: 'task', task: taskInProgress(conversation, contextId, 'submitted') };
      yield { kind: 'status', task: taskInProgress(conversation, contextId, 'working'), final: false };
      const turn = await inSession(() => service.backend.sendMessage(conversation.id, message.text));
      yield* finalEvents(withHistory(taskAfterTurn(turn.conversation, turn.result, contextId), turn.conversation, message.historyLength));
    }
    return { sessionId, events: newTask() };
  }

  async get(query: TaskQuery): Promise<TaskAnswer> {
    const conversation = await this.load(query.id);
    return this.answer({ task: taskOfConversation(conversation, contextIdOf(conversation)), conversation }, query.historyLength, conversation);
  }

  /** Rejects what a waiting task waits for; any other task cannot be canceled (-32002). */
  async cancel(query: TaskQuery): Promise<TaskAnswer> {
    const conversation = await this.load(query.id);
    const contextId = contextIdOf(conversation);
    const pending = pendingApprovals(conversation);
    if (pending.length === 0) {
      const state = taskOfConversation(conversation, contextId).state;
      throw new JsonRpcError(JsonRpcCode.TASK_NOT_CANCELABLE, `task ${query.id} is not cancelable: it is ${state} and waits for no approval`);
    }
    let outcome: Outcome | undefined;
    // Rejecting one approval of an agent tree cancels the whole pipeline, the others with it;
    // the loop only reaches them if they are still pending.
    for (const approval of pending) {
      const decided = await this.backend.resolveApproval(approval.uuid, 'rejected');
      if (!decided.decided) {
        if (decided.decision === 'approved') {
          throw new JsonRpcError(JsonRpcCode.TASK_NOT_CANCELABLE, `task ${query.id} is not cancelable: approval ${approval.uuid} was already approved and its call has run or is running`);
        }
        continue;
      }
      outcome = { task: canceledTask(decided.conversation, contextId, decided.result.response || NOTHING_RUN), conversation: decided.conversation };
      if (!isWaiting(decided.conversation)) break;
    }
    if (!outcome) {
      // Every approval had been rejected by someone else in the meantime: canceled all the same.
      const after = await this.load(query.id);
      outcome = { task: canceledTask(after, contextId, `The approvals of task ${query.id} had already been rejected. ${NOTHING_RUN}`), conversation: after };
    }
    return this.answer(outcome, query.historyLength, conversation);
  }

  private answer(outcome: Outcome, historyLength: number | undefined, before: Conversation): TaskAnswer {
    return {
      task: withHistory(outcome.task, outcome.conversation, historyLength),
      origin: originDialect(before.a2aOrigin),
      sessionId: callerSessionId() ?? before.sessionId,
    };
  }

  /** The conversation behind a task id; -32001 when there is none. */
  private async load(taskId: string): Promise<Conversation> {
    try {
      return await this.backend.getConversation(taskId);
    } catch (error) {
      // The store refuses an id that cannot be a conversation's; to the caller it is just unknown.
      if (isCode(error, GrpcStatus.NOT_FOUND) || isCode(error, GrpcStatus.INVALID_ARGUMENT)) throw taskNotFound(taskId);
      throw error;
    }
  }

  private async carryOut(conversation: Conversation, plan: Continuation, contextId: string): Promise<Outcome> {
    switch (plan.kind) {
      case 'unclear':
        // Nothing is sent to the orchestrator: the task waits as it did.
        return { task: unclearAnswerTask(conversation, contextId, plan.text), conversation };
      case 'message': {
        const turn = await this.backend.sendMessage(conversation.id, plan.text);
        return { task: taskAfterTurn(turn.conversation, turn.result, contextId), conversation: turn.conversation };
      }
      case 'decision':
        return this.decide(plan.uuid, plan.decision, contextId, plan.reason);
    }
  }

  private async decide(uuid: string, decision: Decision, contextId: string, reason?: string): Promise<Outcome> {
    const outcome = await this.backend.resolveApproval(uuid, decision, reason);
    if (outcome.decided) {
      // After a rejection the model may go on and stop again for another call: then it waits.
      if (decision === 'rejected' && !outcome.result.waitingApproval) return { task: canceledTask(outcome.conversation, contextId, outcome.result.response || NOTHING_RUN), conversation: outcome.conversation };
      return { task: taskAfterTurn(outcome.conversation, outcome.result, contextId), conversation: outcome.conversation };
    }
    // Someone decided first (exactly-once approvals, DESIGN rule 3): say so, run nothing.
    const conversation = await this.load(outcome.approval.conversationId);
    const task = taskOfConversation(conversation, contextId);
    const when = outcome.decidedAt ? ` at ${outcome.decidedAt.toISOString()}` : '';
    const note = `Approval ${uuid} had already been ${outcome.decision}${when}; nothing was run this time.`;
    return { task: { ...task, statusText: task.statusText ? `${task.statusText}\n${note}` : note }, conversation };
  }
}
