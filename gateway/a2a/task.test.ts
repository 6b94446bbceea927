import { describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type Message,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import { canceledTask, finalEvents, taskAfterTurn, taskInProgress, taskOfConversation, unclearAnswerTask, withHistory } from './task.js';

const at = new Date('2026-01-02T03:04:05.000Z');

function approval(uuid: string, chain: string[] = []): PendingApproval {
  return {
    uuid,
    conversationId: 'c1',
    toolName: 'resources_add',
    toolArgsJson: JSON.stringify({ name: 'x', value: 1 }),
    description: 'resources_add on resources: {"name":"x","value":1}',
    createdAt: at,
    status: ApprovalStatus.APPROVAL_STATUS_PENDING,
    argsHash: '',
    toolCallId: '',
    updatedAt: at,
    votes: [],
    agentChain: chain,
  };
}

function message(role: MessageRole, content: string, extra: Partial<Message> = {}): Message {
  return { id: `m-${content}`, role, content, createdAt: at, seq: 1, ...extra };
}

const active: Conversation = {
  id: 'c1',
  sessionId: '4be2a91c',
  status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
  messages: [
    message(MessageRole.MESSAGE_ROLE_SYSTEM, 'You manage resources.'),
    message(MessageRole.MESSAGE_ROLE_USER, 'list'),
    message(MessageRole.MESSAGE_ROLE_ASSISTANT, '', { toolCall: { id: 't', name: 'resources_list', argumentsJson: '{}' } }),
    message(MessageRole.MESSAGE_ROLE_TOOL, '[]'),
    message(MessageRole.MESSAGE_ROLE_ASSISTANT, 'There are none.'),
    message(MessageRole.MESSAGE_ROLE_TOOL, 'late tool output'),
  ],
  createdAt: at,
  updatedAt: at,
  messageCount: 6,
  usage: undefined,
  pendingApprovals: [],
  runRevision: 0,
  watched: false,
};

const first = approval('u1', ['agent-b']);
const second = approval('u2');
const waiting: Conversation = {
  ...active,
  status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
  pendingApproval: first,
  pendingApprovals: [first, second],
};

describe('taskOfConversation', () => {
  it('reads a conversation that waits for nothing as completed with its last assistant text', () => {
    expect(taskOfConversation(active, 'ctx')).toEqual({
      id: 'c1',
      contextId: 'ctx',
      state: 'completed',
      approvals: [],
      artifactText: 'There are none.',
      timestamp: '2026-01-02T03:04:05.000Z',
      history: [],
    });
  });

  it('leaves the artifact out when the agent has said nothing yet', () => {
    expect(taskOfConversation({ ...active, messages: [] }, 'ctx').artifactText).toBeUndefined();
  });

  it('reads a waiting conversation as input-required with every approval, one status line each', () => {
    const task = taskOfConversation(waiting, 'ctx');
    expect(task.state).toBe('input-required');
    expect(task.statusText).toBe(
      'Approval required (id: u1): resources_add on resources: {"name":"x","value":1}\nApproval required (id: u2): resources_add on resources: {"name":"x","value":1}',
    );
    expect(task.approvals.map((a) => [a.uuid, a.chain])).toEqual([
      ['u1', ['agent-b']],
      ['u2', []],
    ]);
    expect(task.artifactText).toBeUndefined();
  });
});

describe('taskAfterTurn', () => {
  it('takes the turn response as the artifact', () => {
    expect(taskAfterTurn(active, { response: 'Done.', waitingApproval: false }, 'ctx')).toMatchObject({
      state: 'completed',
      artifactText: 'Done.',
    });
  });

  it('puts the turn approval first, should the stored list not have it yet', () => {
    const third = approval('u3');
    const task = taskAfterTurn(waiting, { response: '', waitingApproval: true, approval: third }, 'ctx');
    expect(task.approvals.map((a) => a.uuid)).toEqual(['u3', 'u1', 'u2']);
  });
});

describe('other states', () => {
  it('canceled carries the rejection text', () => {
    expect(canceledTask(active, 'ctx', 'Operation cancelled by user.')).toMatchObject({
      state: 'canceled',
      statusText: 'Operation cancelled by user.',
    });
  });

  it('an unclear answer keeps the approval line first and says what is expected', () => {
    const task = unclearAnswerTask(waiting, 'ctx', ' maybe ');
    expect(task.state).toBe('input-required');
    const [line, ...rest] = task.statusText!.split('\n');
    expect(line).toBe('Approval required (id: u1): resources_add on resources: {"name":"x","value":1}');
    expect(rest.join('\n')).toContain('"maybe" is neither an approval nor a rejection');
    expect(rest.join('\n')).toContain('{"approved": true|false}');
  });

  it('in progress: no artifact, no status text', () => {
    expect(taskInProgress(active, 'ctx', 'working')).toEqual({
      id: 'c1',
      contextId: 'ctx',
      state: 'working',
      approvals: [],
      timestamp: '2026-01-02T03:04:05.000Z',
      history: [],
    });
  });
});

describe('withHistory', () => {
  it('keeps the latest user and agent text messages, no system, tool or tool-call messages', () => {
    const task = withHistory(taskOfConversation(active, 'ctx'), active, 10);
    expect(task.history).toEqual([
      { id: 'm-list', role: 'user', text: 'list' },
      { id: 'm-There are none.', role: 'agent', text: 'There are none.' },
    ]);
    expect(withHistory(task, active, 1).history).toEqual([{ id: 'm-There are none.', role: 'agent', text: 'There are none.' }]);
    expect(withHistory(taskOfConversation(active, 'ctx'), active, undefined).history).toEqual([]);
  });
});

describe('finalEvents', () => {
  it('sends the artifact of a completed task before its final status', () => {
    const task = taskOfConversation(active, 'ctx');
    expect(finalEvents(task).map((event) => event.kind)).toEqual(['artifact', 'status']);
    expect(finalEvents(taskOfConversation(waiting, 'ctx'))).toEqual([
      { kind: 'status', task: taskOfConversation(waiting, 'ctx'), final: true },
    ]);
  });
});

describe('taskOfConversation: submitted and working', () => {
  const fresh: Conversation = {
    ...active,
    messages: [message(MessageRole.MESSAGE_ROLE_SYSTEM, 'You manage resources.')],
    title: '',
    a2aOrigin: { dialect: 'v1.0', contextId: 'ctx' },
  };

  it('an A2A task whose first turn has not begun is submitted; one whose turn runs is working', () => {
    expect(taskOfConversation(fresh, 'ctx').state).toBe('submitted');
    expect(taskOfConversation({ ...fresh, messages: [], title: '' }, 'ctx').state).toBe('submitted');
    expect(taskOfConversation({ ...fresh, turnRunning: true }, 'ctx').state).toBe('working');
    expect(taskOfConversation({ ...fresh, messages: [], title: 'hello' }, 'ctx').state).toBe('completed');
  });

  it('a conversation made over REST without a message reads as before: completed', () => {
    expect(taskOfConversation({ ...fresh, a2aOrigin: undefined }, 'c1').state).toBe('completed');
  });
});
