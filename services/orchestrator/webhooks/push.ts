import { randomUUID } from 'node:crypto';
import { Role, StreamResponse, TaskState, type Part, type Task } from '@a2a-js/sdk';
import {
  ConversationStatus,
  MessageRole,
  type Conversation,
  type ConversationEvent,
  type PushConfig,
} from '../../../gen/ts/asg/store/v1/store.js';
import { pushUrlProblem } from '../../common/push-url.js';
import type { OrchestratorClients } from '../clients.js';
import { approvalRequiredText } from '../domain/messages.js';
import type { OutboundPost, OutboxTarget } from './deliverer.js';

/**
 * A2A push notifications from the same outbox as the webhooks: one cursor over the
 * store's events, held by one orchestrator replica at a time, with the webhooks' retries and
 * backoff. When a turn of a conversation ends (`turn_ended`), each push-notification config of
 * its task gets the task as it now is — `completed` with its artifact, `input-required` with
 * the approval it waits for, or `failed` — POSTed as the task's A2A dialect writes it (v0.3:
 * the Task object; v1.0: a StreamResponse `{"task": …}`), with the config's token in
 * `X-A2A-Notification-Token`. Its stream carries `turn_ended` events alone; most turns belong
 * to tasks with no config, which the event says (`has_push_configs`, read when the turn ended),
 * and nothing more is read for them.
 */

const PUSH_CURSOR = 'a2a-push';

/** The newest messages read to find the answer's text (the artifact). */
const ANSWER_WINDOW = 50;

type PushClients = Pick<OrchestratorClients, 'store'>;

type State = 'completed' | 'input-required' | 'failed';

interface TaskFacts {
  id: string;
  contextId: string;
  state: State;
  statusText?: string;
  artifactText?: string;
  timestamp: string;
}

function facts(conversation: Conversation, outcome: string): TaskFacts {
  const base = {
    id: conversation.id,
    contextId: conversation.a2aOrigin?.contextId || conversation.id,
    timestamp: (conversation.updatedAt ?? new Date()).toISOString(),
  };
  if (conversation.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL) {
    const pending =
      conversation.pendingApprovals.length > 0
        ? conversation.pendingApprovals
        : conversation.pendingApproval
          ? [conversation.pendingApproval]
          : [];
    return { ...base, state: 'input-required', statusText: pending.map(approvalRequiredText).join('\n') || 'Waiting for an approval.' };
  }
  if (outcome === 'failed' || outcome === 'interrupted')
    return { ...base, state: 'failed', statusText: `The turn ${outcome === 'failed' ? 'failed' : 'was interrupted'}.` };
  const answer = [...conversation.messages]
    .reverse()
    .find((message) => message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && message.content.trim() !== '');
  return { ...base, state: 'completed', ...(answer && { artifactText: answer.content }) };
}

const V1_STATES: Record<State, TaskState> = {
  completed: TaskState.TASK_STATE_COMPLETED,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  failed: TaskState.TASK_STATE_FAILED,
};

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

/** v1.0: a StreamResponse carrying the task, written by the SDK's own codec. */
function v1Body(task: TaskFacts): unknown {
  const value: Task = {
    id: task.id,
    contextId: task.contextId,
    status: {
      state: V1_STATES[task.state],
      message:
        task.statusText === undefined
          ? undefined
          : {
              messageId: randomUUID(),
              contextId: task.contextId,
              taskId: task.id,
              role: Role.ROLE_AGENT,
              parts: [textPart(task.statusText)],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            },
      timestamp: task.timestamp,
    },
    artifacts:
      task.artifactText === undefined
        ? []
        : [
            {
              artifactId: 'response',
              name: 'response',
              description: '',
              parts: [textPart(task.artifactText)],
              metadata: undefined,
              extensions: [],
            },
          ],
    history: [],
    metadata: undefined,
  };
  return StreamResponse.toJSON({ payload: { $case: 'task', value } });
}

/** v0.3: the Task object, as the gateway's v0.3 wire writes it. */
function v03Body(task: TaskFacts): unknown {
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    status: {
      state: task.state,
      ...(task.statusText !== undefined && {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'agent',
          parts: [{ kind: 'text', text: task.statusText }],
          taskId: task.id,
          contextId: task.contextId,
        },
      }),
      timestamp: task.timestamp,
    },
    ...(task.artifactText !== undefined && {
      artifacts: [{ artifactId: 'response', name: 'response', parts: [{ kind: 'text', text: task.artifactText }] }],
    }),
  };
}

function post(config: PushConfig, task: TaskFacts, eventId: number, allowPrivateNetworks: boolean): OutboundPost {
  const body = JSON.stringify(config.dialect === 'v1.0' ? v1Body(task) : v03Body(task));
  const origin = URL.canParse(config.url) ? new URL(config.url).origin : 'an unreadable url';
  return {
    id: `push_${config.id}_${eventId}`,
    url: config.url,
    origin,
    type: `a2a.task.${task.state}`,
    body,
    // A2A: the config's token comes back so that the receiver can tell our notifications from others'.
    headers: (): Record<string, string> => (config.token === '' ? {} : { 'X-A2A-Notification-Token': config.token }),
    refuse: () => pushUrlProblem(config.url, allowPrivateNetworks),
  };
}

export function a2aPushTarget(clients: PushClients, allowPrivateNetworks: boolean): OutboxTarget {
  return {
    where: PUSH_CURSOR,
    origin: 'the tasks’ push-notification urls',
    name: PUSH_CURSOR,
    label: 'A2A push notifications',
    kinds: ['turn_ended'],
    async posts(event: ConversationEvent) {
      if (!event.turnEnded) return [];
      // false: the task had no config when its turn ended; absent (an event of an earlier release): not known.
      if (event.turnEnded.hasPushConfigs === false) return [];
      const { configs } = await clients.store.listPushConfigs({ conversationId: event.conversationId });
      if (configs.length === 0) return [];
      const { conversation } = await clients.store.getConversation({
        id: event.conversationId,
        includeMessages: true,
        messageLimit: ANSWER_WINDOW,
      });
      if (!conversation) return [];
      const task = facts(conversation, event.turnEnded.outcome ?? '');
      return configs.map((config) => post(config, task, event.id, allowPrivateNetworks));
    },
  };
}
