import { randomUUID } from 'node:crypto';
import type { Conversation, ConversationEvent, ConversationSummary, PushConfig } from '../../gen/ts/asg/store/v1/store.js';
import type { Logger } from '../../services/common/log.js';
import { abortable, startReading, watchLifetime } from '../app/abortable.js';
import { ConversationBusy } from '../app/busy.js';
import { currentContext, withContextPatch } from '../../services/common/context.js';
import { GrpcStatus, isCode } from '../../services/common/grpc/errors.js';
import { newSessionId } from '../../services/common/session-id.js';
import { voteRecordedText, type Decision } from '../app/decision.js';
import { planContinuation, type Continuation } from './answer.js';
import type { TaskBackend } from './backend.js';
import { originDialect, storedOrigin, type Dialect } from './dialect.js';
import { invalidParams, JsonRpcCode, JsonRpcError, taskNotFound } from './jsonrpc.js';
import type { InboundMessage, PushConfigInput, PushConfigQuery, TaskListQuery, TaskQuery } from './params.js';
import { checkedPushConfig, pushConfigNotFound, type PushSettings } from './push.js';
import {
  canceledTask,
  finalEvents,
  isWaiting,
  pendingApprovals,
  taskAfterTurn,
  taskInProgress,
  taskOfConversation,
  TERMINAL_STATES,
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
  /** The effective session id of the request, for the X-Session-ID header. */
  sessionId: string;
}

export interface TaskStream {
  sessionId: string;
  /** The events to send, in order; the last is the final status. Failures after the first event are thrown from here. */
  events: AsyncGenerator<TaskEvent>;
}

const NOTHING_RUN = 'The call was not run.';

/** The agent card says pushNotifications: false. */
export const pushNotSupported = (what: string) =>
  new JsonRpcError(
    JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
    `push notifications are not supported here (${what}): the agent card says pushNotifications: false; use message/stream or SendStreamingMessage, resubscribe (tasks/resubscribe, SubscribeToTask), or poll the task`,
  );

/**
 * How many tasks the caller may list, before paging: the store's count of the caller's
 * conversations. The filters (context, state, time) are applied page by page, so they are not
 * counted in it.
 */
function totalOf(summary: ConversationSummary | undefined): number {
  return summary ? Number(summary.total) : 0;
}

function callerSessionId(): string | undefined {
  return currentContext()?.sessionId || undefined;
}

function needsText(message: InboundMessage): void {
  if (message.text.trim() === '') throw invalidParams('message.parts: a new task needs a text part with some text');
}

/** The context id a task is answered with: the one it was created with, else the task's own id. */
function contextIdOf(conversation: Conversation): string {
  return conversation.a2aOrigin?.contextId || conversation.id;
}

/**
 * A message's contextId, when it gives one, must be its task's (A2A: a task belongs to one
 * context). The type-parts dialect has no contexts: its contextId is taken as it was before.
 */
function checkedContextId(conversation: Conversation, requested: string | undefined, dialect: Dialect): string {
  if (dialect === 'type-parts') return conversation.a2aOrigin?.contextId || requested || conversation.id;
  const contextId = contextIdOf(conversation);
  if (requested !== undefined && requested !== contextId) {
    throw invalidParams(
      `message.contextId: ${JSON.stringify(requested)} is not the context of task ${conversation.id}; its contextId is ${JSON.stringify(contextId)} (send it, or leave contextId out)`,
    );
  }
  return contextId;
}

/**
 * A2A tasks in a terminal state are immutable: a message to one is refused (-32004) and runs
 * nothing. The type-parts dialect predates that rule and continues the conversation, as it did.
 */
function checkOpen(conversation: Conversation, contextId: string, dialect: Dialect): void {
  if (dialect === 'type-parts') return;
  const { state } = taskOfConversation(conversation, contextId);
  if (!TERMINAL_STATES.has(state)) return;
  throw new JsonRpcError(
    JsonRpcCode.UNSUPPORTED_OPERATION,
    `task ${conversation.id} is ${state}: a task in a terminal state takes no more messages. Send the message without taskId to start a new task (with contextId ${JSON.stringify(contextId)} to keep it in the same context).`,
  );
}

/** A page of ListTasks: the tasks, the token of the next page (empty on the last) and the count before paging. */
export interface TaskListAnswer {
  tasks: TaskSnapshot[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

interface Outcome {
  task: TaskSnapshot;
  conversation: Conversation;
}

export class TaskService {
  constructor(
    private readonly backend: TaskBackend,
    private readonly log: Logger,
    /** Push-notification configs; without them (a gateway with no store client for them) the push methods answer -32003. */
    private readonly push?: PushSettings,
  ) {}

  /** Whether push notifications are offered (the card's `capabilities.pushNotifications`). */
  get pushNotifications(): boolean {
    return this.push !== undefined;
  }

  async send(message: InboundMessage, dialect: Dialect): Promise<TaskAnswer> {
    await this.checkPush(message.pushConfig, dialect);
    if (message.taskId) {
      const conversation = await this.load(message.taskId);
      const contextId = checkedContextId(conversation, message.contextId, dialect);
      checkOpen(conversation, contextId, dialect);
      const plan = await this.planOf(conversation, message);
      await this.registerPush(conversation.id, message.pushConfig, dialect);
      if (message.returnImmediately && plan.kind !== 'unclear') {
        // Refused now rather than failing unseen after the answer (one turn at a time).
        if (conversation.turnRunning) throw new ConversationBusy(conversation.id);
        // The turn runs on after the answer; the client polls (tasks/get) or subscribes.
        this.detach(conversation.id, () => this.carryOut(conversation, plan, contextId));
        return this.answer({ task: taskInProgress(conversation, contextId, 'working'), conversation }, message.historyLength, conversation);
      }
      const outcome = await this.carryOut(conversation, plan, contextId);
      return this.answer(outcome, message.historyLength, conversation);
    }
    needsText(message);
    const sessionId = callerSessionId() ?? newSessionId();
    const contextId = message.contextId ?? randomUUID();
    const inSession = <T>(call: () => Promise<T>) => withContextPatch({ sessionId }, call);
    if (message.returnImmediately || message.pushConfig) {
      // Created first, so that the answer (and the push config) has the task's id before the turn runs.
      const { conversation } = await inSession(() => this.backend.createConversation(undefined, storedOrigin(dialect, contextId)));
      await this.registerPush(conversation.id, message.pushConfig, dialect);
      const turn = () => inSession(() => this.backend.sendMessage(conversation.id, message.text));
      if (!message.returnImmediately) {
        const done = await turn();
        return {
          task: withHistory(taskAfterTurn(done.conversation, done.result, contextId), done.conversation, message.historyLength),
          origin: dialect,
          sessionId,
        };
      }
      this.detach(conversation.id, () => inSession(() => this.backend.sendMessage(conversation.id, message.text)));
      return { task: taskInProgress(conversation, contextId, 'submitted'), origin: dialect, sessionId };
    }
    const { conversation, result } = await inSession(() => this.backend.createConversation(message.text, storedOrigin(dialect, contextId)));
    const task = result ? taskAfterTurn(conversation, result, contextId) : taskOfConversation(conversation, contextId);
    return { task: withHistory(task, conversation, message.historyLength), origin: dialect, sessionId };
  }

  /** Runs a turn nobody waits for: it is stored as any other, and a failure is logged (and shows in the task). */
  private detach(taskId: string, turn: () => Promise<unknown>): void {
    void turn().catch((error: unknown) => {
      this.log.warn('a2a turn that was sent without waiting failed', {
        task: taskId,
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }

  /** A push-notification config sent with a message: checked before anything is created or run. */
  private async checkPush(config: PushConfigInput | undefined, dialect: Dialect): Promise<void> {
    if (!config) return;
    if (!this.push) throw pushNotSupported("the message's configuration carries a push-notification config");
    // The task id is not known yet for a new task: the url and the rest are checked with a stand-in.
    await checkedPushConfig('pending', config, dialect, this.push.allowPrivateNetworks);
  }

  private async registerPush(taskId: string, config: PushConfigInput | undefined, dialect: Dialect): Promise<void> {
    if (!config || !this.push) return;
    await this.push.store.setPushConfig({ config: await checkedPushConfig(taskId, config, dialect, this.push.allowPrivateNetworks) });
  }

  private pushSettings(method: string): PushSettings {
    if (!this.push) throw pushNotSupported(method);
    return this.push;
  }

  /** `tasks/pushNotificationConfig/set`, CreateTaskPushNotificationConfig: the task must be one the caller may read. */
  async setPushConfig(taskId: string, input: PushConfigInput, dialect: Dialect): Promise<PushConfig> {
    const push = this.pushSettings('tasks/pushNotificationConfig/set');
    const conversation = await this.load(taskId);
    const { config } = await push.store.setPushConfig({
      config: await checkedPushConfig(conversation.id, input, dialect, push.allowPrivateNetworks),
    });
    if (!config) throw new JsonRpcError(JsonRpcCode.INTERNAL_ERROR, 'the store answered without the config');
    return config;
  }

  /** One config; without a config id (v0.3 allows it) the task's first. */
  async getPushConfig(query: PushConfigQuery): Promise<PushConfig> {
    const push = this.pushSettings('tasks/pushNotificationConfig/get');
    await this.load(query.taskId);
    if (query.configId === undefined) {
      const [first] = (await push.store.listPushConfigs({ conversationId: query.taskId })).configs;
      if (!first) throw pushConfigNotFound(query.taskId, '(any)');
      return first;
    }
    try {
      const { config } = await push.store.getPushConfig({ conversationId: query.taskId, id: query.configId });
      if (!config) throw pushConfigNotFound(query.taskId, query.configId);
      return config;
    } catch (error) {
      if (isCode(error, GrpcStatus.NOT_FOUND)) throw pushConfigNotFound(query.taskId, query.configId);
      throw error;
    }
  }

  async listPushConfigs(taskId: string): Promise<PushConfig[]> {
    const push = this.pushSettings('tasks/pushNotificationConfig/list');
    await this.load(taskId);
    return (await push.store.listPushConfigs({ conversationId: taskId })).configs;
  }

  async deletePushConfig(query: PushConfigQuery): Promise<void> {
    const push = this.pushSettings('tasks/pushNotificationConfig/delete');
    await this.load(query.taskId);
    const { deleted } = await push.store.deletePushConfig({ conversationId: query.taskId, id: query.configId ?? '' });
    if (!deleted) throw pushConfigNotFound(query.taskId, query.configId ?? '');
  }

  /**
   * Everything that can be refused is checked before this returns (unknown task, bad
   * answer), so that a refusal is a plain JSON-RPC error rather than a broken stream.
   */
  async openStream(message: InboundMessage, dialect: Dialect): Promise<TaskStream> {
    const service = this;
    await this.checkPush(message.pushConfig, dialect);
    if (message.taskId) {
      const conversation = await this.load(message.taskId);
      const contextId = checkedContextId(conversation, message.contextId, dialect);
      checkOpen(conversation, contextId, dialect);
      const plan = await this.planOf(conversation, message);
      await this.registerPush(conversation.id, message.pushConfig, dialect);
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
    const { conversation } = await inSession(() => this.backend.createConversation(undefined, storedOrigin(dialect, contextId)));
    await this.registerPush(conversation.id, message.pushConfig, dialect);
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
    return this.answer(
      { task: taskOfConversation(conversation, contextIdOf(conversation)), conversation },
      query.historyLength,
      conversation,
    );
  }

  /**
   * `tasks/resubscribe` / SubscribeToTask: the task as it is, then its events as the
   * conversation's event stream brings them — a turn starting, and when it ends the task as
   * it left it — until it is terminal or waits for input again. A client whose stream dropped
   * subscribes again and gets the rest. The stream is opened before the task is read, so that
   * nothing that happens in between is missed. A terminal task has no more events: -32004.
   */
  async subscribe(taskId: string, signal?: AbortSignal): Promise<TaskStream> {
    const watching = watchLifetime(signal);
    const events = startReading(this.backend.watch(taskId, watching.signal));
    let conversation: Conversation;
    try {
      conversation = await this.load(taskId);
    } catch (error) {
      watching.end();
      throw error;
    }
    const contextId = contextIdOf(conversation);
    const now = taskOfConversation(conversation, contextId);
    if (TERMINAL_STATES.has(now.state)) {
      watching.end();
      throw new JsonRpcError(
        JsonRpcCode.UNSUPPORTED_OPERATION,
        `task ${taskId} is ${now.state}: a task in a terminal state sends no more events; read it with tasks/get (GetTask)`,
      );
    }
    const service = this;
    async function* updates(): AsyncGenerator<TaskEvent> {
      try {
        yield { kind: 'task', task: now };
        for await (const event of abortable(events, watching.signal)) {
          const next = await service.eventOf(taskId, contextId, event);
          if (!next) continue;
          yield* next;
          if (next.at(-1)?.kind === 'status' && (next.at(-1) as { final: boolean }).final) return;
        }
      } finally {
        watching.end();
      }
    }
    return { sessionId: callerSessionId() ?? conversation.sessionId, events: updates() };
  }

  /** What one stored event of the conversation means to a subscriber; undefined for nothing. */
  private async eventOf(taskId: string, contextId: string, event: ConversationEvent): Promise<TaskEvent[] | undefined> {
    if (event.turnStarted) {
      const conversation = await this.load(taskId);
      return [{ kind: 'status', task: taskInProgress(conversation, contextId, 'working'), final: false }];
    }
    if (!event.turnEnded) return undefined;
    const conversation = await this.load(taskId);
    // Another turn already began (an approval decided at once): its own end closes the stream.
    if (conversation.turnRunning) return undefined;
    const outcome = event.turnEnded.outcome;
    if (outcome === 'failed' || outcome === 'interrupted') {
      const failed = {
        ...taskOfConversation(conversation, contextId),
        state: 'failed' as const,
        statusText: `The turn ${outcome === 'failed' ? 'failed' : 'was interrupted'}; send a new message to try again.`,
      };
      return [{ kind: 'status', task: { ...failed, artifactText: undefined }, final: true }];
    }
    return finalEvents(taskOfConversation(conversation, contextId));
  }

  /**
   * ListTasks: one page of the caller's tasks (the ownership guard decides which), newest
   * first, then filtered by context, state and time. A page is one page of the store's
   * listing, so with filters it may hold fewer than pageSize tasks (A2A allows it); the
   * token goes on from there. Artifacts and history cost a read of each task: only when asked.
   */
  async list(query: TaskListQuery): Promise<TaskListAnswer> {
    const page = await this.backend.listConversations({ limit: query.pageSize, ...(query.pageToken && { cursor: query.pageToken }) });
    const wanted = page.conversations.filter((conversation) => {
      if (query.contextId !== undefined && contextIdOf(conversation) !== query.contextId) return false;
      if (query.statusTimestampAfter && (conversation.updatedAt ?? conversation.createdAt ?? new Date(0)) < query.statusTimestampAfter)
        return false;
      return query.state === undefined || taskOfConversation(conversation, contextIdOf(conversation)).state === query.state;
    });
    const full = query.includeArtifacts || query.historyLength !== undefined;
    const tasks = await Promise.all(
      wanted.map(async (summary) => {
        const conversation = full ? await this.backend.getConversation(summary.id) : summary;
        const task = withHistory(taskOfConversation(conversation, contextIdOf(conversation)), conversation, query.historyLength);
        return query.includeArtifacts ? task : { ...task, artifactText: undefined };
      }),
    );
    return { tasks, nextPageToken: page.nextCursor ?? '', pageSize: query.pageSize, totalSize: totalOf(page.summary) };
  }

  /** Rejects what a waiting task waits for; any other task cannot be canceled (-32002). */
  async cancel(query: TaskQuery): Promise<TaskAnswer> {
    const conversation = await this.load(query.id);
    const contextId = contextIdOf(conversation);
    const pending = pendingApprovals(conversation);
    if (pending.length === 0) {
      const state = taskOfConversation(conversation, contextId).state;
      throw new JsonRpcError(
        JsonRpcCode.TASK_NOT_CANCELABLE,
        `task ${query.id} is not cancelable: it is ${state} and waits for no approval`,
      );
    }
    let outcome: Outcome | undefined;
    // Rejecting one approval of an agent tree cancels the whole pipeline, the others with it;
    // the loop only reaches them if they are still pending.
    for (const approval of pending) {
      const decided = await this.backend.resolveApproval(approval.uuid, 'rejected');
      if (!decided.decided) {
        // A rejection is never a vote: it decides at once.
        if (decided.voteRecorded) continue;
        if (decided.decision === 'approved') {
          throw new JsonRpcError(
            JsonRpcCode.TASK_NOT_CANCELABLE,
            `task ${query.id} is not cancelable: approval ${approval.uuid} was already approved and its call has run or is running`,
          );
        }
        continue;
      }
      outcome = {
        task: canceledTask(decided.conversation, contextId, decided.result.response || NOTHING_RUN),
        conversation: decided.conversation,
      };
      if (!isWaiting(decided.conversation)) break;
    }
    if (!outcome) {
      // Every approval had been rejected by someone else in the meantime: canceled all the same.
      const after = await this.load(query.id);
      outcome = {
        task: canceledTask(after, contextId, `The approvals of task ${query.id} had already been rejected. ${NOTHING_RUN}`),
        conversation: after,
      };
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

  /** What a message to an existing task asks for; a waiting task's question (kind `input`) is answered with data. */
  private async planOf(conversation: Conversation, message: InboundMessage): Promise<Continuation> {
    const first = pendingApprovals(conversation)[0];
    const asksForInput = first !== undefined && isWaiting(conversation) && (await this.backend.asksForInput(first.uuid));
    return planContinuation(conversation, message, asksForInput);
  }

  private async carryOut(conversation: Conversation, plan: Continuation, contextId: string): Promise<Outcome> {
    switch (plan.kind) {
      case 'unclear':
        // Nothing is sent to the orchestrator: the task waits as it did.
        return { task: unclearAnswerTask(conversation, contextId, plan.text, plan.question === true), conversation };
      case 'message': {
        const turn = await this.backend.sendMessage(conversation.id, plan.text);
        return { task: taskAfterTurn(turn.conversation, turn.result, contextId), conversation: turn.conversation };
      }
      case 'decision':
        return this.decide(plan.uuid, plan.decision, contextId, plan.reason, plan.input);
    }
  }

  private async decide(
    uuid: string,
    decision: Decision,
    contextId: string,
    reason?: string,
    input?: Record<string, unknown>,
  ): Promise<Outcome> {
    const outcome = await this.backend.resolveApproval(uuid, decision, reason, input);
    if (outcome.decided) {
      // After a rejection the model may go on and stop again for another call: then it waits.
      if (decision === 'rejected' && !outcome.result.waitingApproval)
        return {
          task: canceledTask(outcome.conversation, contextId, outcome.result.response || NOTHING_RUN),
          conversation: outcome.conversation,
        };
      return { task: taskAfterTurn(outcome.conversation, outcome.result, contextId), conversation: outcome.conversation };
    }
    // Someone decided first (an approval is decided exactly once), or the quorum needs more votes: say so, run nothing.
    const conversation = await this.load(outcome.approval.conversationId);
    const task = taskOfConversation(conversation, contextId);
    if (outcome.voteRecorded) {
      const note = voteRecordedText(uuid, outcome.votes, outcome.required);
      return { task: { ...task, statusText: task.statusText ? `${task.statusText}\n${note}` : note }, conversation };
    }
    const when = outcome.decidedAt ? ` at ${outcome.decidedAt.toISOString()}` : '';
    const note = `Approval ${uuid} had already been ${outcome.decision}${when}; nothing was run this time.`;
    return { task: { ...task, statusText: task.statusText ? `${task.statusText}\n${note}` : note }, conversation };
  }
}
