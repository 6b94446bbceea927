import { describe, expect, it } from 'vitest';
import type { PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ApprovalStatus,
  ApprovalTimeoutAction,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import {
  approvalRecordJson,
  auditEntryJson,
  conversationJson,
  conversationListItemJson,
  conversationSummaryJson,
  messageJson,
  pendingApprovalJson,
  pipelineStateJson,
  toolJson,
  turnResultJson,
} from './shapes.js';
import { modelFailureText, toolsFailureText } from '../../services/common/turn-failure.js';

const created = new Date('2025-01-15T10:02:03.000Z');
const updated = new Date('2025-01-15T10:05:00.000Z');

const approval: PendingApproval = {
  uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
  conversationId: '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13',
  toolName: 'delete_resource',
  toolArgsJson: JSON.stringify({ id: 'res-42', force: true }),
  description: 'delete_resource({"id":"res-42"})',
  createdAt: created,
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
  argsHash: 'abc123',
  toolCallId: 'call-1',
  updatedAt: updated,
  votes: [],
  agentChain: [],
};

const conversation: Conversation = {
  id: '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13',
  sessionId: '4be2a91c',
  status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
  messages: [
    { id: 'm1', role: MessageRole.MESSAGE_ROLE_USER, content: 'delete res-42', createdAt: created, seq: 1 },
    {
      id: 'm2',
      role: MessageRole.MESSAGE_ROLE_ASSISTANT,
      content: '',
      toolCall: { id: 'call-1', name: 'delete_resource', argumentsJson: JSON.stringify({ id: 'res-42' }) },
      createdAt: created,
      seq: 2,
    },
  ],
  pendingApproval: approval,
  pendingApprovals: [approval],
  // The stored run: the orchestrator's bytes, which only its view (below) describes.
  run: { state: Buffer.from('{"tree_fingerprint":"f00d","run_id":"run-7f3a"}'), schemaVersion: 2, revision: 3 },
  runRevision: 3,
  watched: false,
  createdAt: created,
  updatedAt: updated,
  messageCount: 2,
  usage: { inputTokens: 0, outputTokens: 0 },
};

/** The orchestrator's view of the conversation's run (DescribeRuns, or a turn's answer). */
const pipeline: PipelineView = {
  pausedNodePath: [1, 0],
  pausedNodeOutputKey: 'plan',
  sessionState: { plan: 'delete' },
  userMessage: 'delete res-42',
  pauses: [],
  branchOutputs: {},
};

describe('conversationJson (C)', () => {
  it('maps every field to the snake_case shape with enum names and ISO times', () => {
    expect(conversationJson(conversation, pipeline)).toEqual({
      id: '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13',
      session_id: '4be2a91c',
      status: 'waiting_approval',
      messages: [
        { id: 'm1', role: 'user', content: 'delete res-42', created_at: '2025-01-15T10:02:03.000Z', seq: 1 },
        {
          id: 'm2',
          role: 'assistant',
          content: '',
          tool_call: { name: 'delete_resource', arguments: { id: 'res-42' } },
          created_at: '2025-01-15T10:02:03.000Z',
          seq: 2,
        },
      ],
      pending_approval: {
        uuid: 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47',
        conversation_id: '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13',
        tool_name: 'delete_resource',
        tool_args: { id: 'res-42', force: true },
        description: 'delete_resource({"id":"res-42"})',
        created_at: '2025-01-15T10:02:03.000Z',
      },
      pending_approvals: [pendingApprovalJson(approval)],
      pipeline_state: {
        paused_node_path: [1, 0],
        paused_node_output_key: 'plan',
        session_state: { plan: 'delete' },
        user_message: 'delete res-42',
        pauses: [],
        branch_outputs: {},
      },
      usage: { input_tokens: 0, output_tokens: 0 },
      created_at: '2025-01-15T10:02:03.000Z',
      updated_at: '2025-01-15T10:05:00.000Z',
    });
  });

  it('shows the tokens of a model step on its message and their sum on the conversation', () => {
    const json = conversationJson({
      ...conversation,
      messages: [{ ...conversation.messages[0]!, usage: { inputTokens: 12, outputTokens: 3 } }],
      usage: { inputTokens: 40, outputTokens: 9 },
    });
    expect(json.messages[0]!.usage).toEqual({ input_tokens: 12, output_tokens: 3 });
    expect(json.usage).toEqual({ input_tokens: 40, output_tokens: 9 });
    expect(conversationJson(conversation).messages.every((message) => !('usage' in message))).toBe(true);
  });

  it('names the agent-tree node on the messages that have one, and shows no tree fingerprint', () => {
    const json = conversationJson({
      ...conversation,
      messages: [{ ...conversation.messages[0]!, node: 'executor' }, conversation.messages[1]!],
    });
    expect(json.messages[0]!.node).toBe('executor');
    expect(json.messages[1]).not.toHaveProperty('node');
    expect(Object.keys(json.messages[0]!)).toEqual(['id', 'role', 'content', 'node', 'created_at', 'seq']);
    expect(JSON.stringify(json)).not.toContain('f00d');
  });

  it('keeps the documented key order', () => {
    expect(Object.keys(conversationJson(conversation, pipeline))).toEqual([
      'id',
      'session_id',
      'status',
      'messages',
      'pending_approval',
      'pending_approvals',
      'pipeline_state',
      'usage',
      'created_at',
      'updated_at',
    ]);
  });

  it('leaves out absent optional fields instead of writing null', () => {
    const json = conversationJson({
      ...conversation,
      status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      pendingApproval: undefined,
      pendingApprovals: [],
    });
    expect(json.status).toBe('active');
    expect(json).not.toHaveProperty('pending_approval');
    expect(json).not.toHaveProperty('pending_approvals');
    expect(json).not.toHaveProperty('pipeline_state');
    expect(JSON.stringify(json)).not.toContain('null');
  });

  it('shows pipeline_state from the view of the run only: a run without one (simple mode) shows none', () => {
    expect(conversationJson(conversation)).not.toHaveProperty('pipeline_state');
    expect(conversationJson(conversation, pipeline).pipeline_state).toEqual(pipelineStateJson(pipeline));
  });

  // A message's seq is shown (a run's message_seq names its user message by it); the count is not.
  it('never shows internal fields (message count, approval status and hash, tool-call ids)', () => {
    const text = JSON.stringify(conversationJson(conversation));
    for (const internal of ['message_count', 'messageCount', 'args_hash', 'abc123', 'call-1', 'tool_call_id', '"status":"pending"']) {
      expect(text).not.toContain(internal);
    }
  });

  it('names the owner of a conversation created with authentication on, before usage, and none otherwise', () => {
    const owned = { ...conversation, owner: 'alice' };
    expect(conversationJson(owned).owner).toBe('alice');
    expect(Object.keys(conversationJson(owned)).slice(-4)).toEqual(['owner', 'usage', 'created_at', 'updated_at']);
    expect(conversationListItemJson({ ...owned, messages: [] }).owner).toBe('alice');
    expect(conversationJson(conversation)).not.toHaveProperty('owner');
    expect(conversationListItemJson(conversation)).not.toHaveProperty('owner');
  });

  it('names every conversation status', () => {
    const status = (value: ConversationStatus) => conversationJson({ ...conversation, status: value }).status;
    expect(status(ConversationStatus.CONVERSATION_STATUS_ACTIVE)).toBe('active');
    expect(status(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL)).toBe('waiting_approval');
    expect(status(ConversationStatus.CONVERSATION_STATUS_COMPLETED)).toBe('completed');
  });
});

describe('a pipeline waiting at several nodes', () => {
  const second: PendingApproval = { ...approval, uuid: 'c3f5e9a2-8b47-4da6-9f21-6e0a4b7d3f58', toolName: 'drop_table', createdAt: updated };
  const view: PipelineView = {
    ...pipeline,
    pauses: [
      { approvalUuid: approval.uuid, pausedNodePath: [1, 0], pausedNodeOutputKey: 'plan', loopIterations: {} },
      { approvalUuid: second.uuid, pausedNodePath: [1, 2, 0], pausedNodeOutputKey: 'cleanup', loopIterations: { '1.2': 3 } },
    ],
    branchOutputs: { '1.1': 'report written' },
  };
  const json = conversationJson({ ...conversation, pendingApprovals: [approval, second], runRevision: 7 }, view);

  it('lists every pending approval, oldest first, the first being pending_approval', () => {
    expect(json.pending_approvals).toEqual([pendingApprovalJson(approval), pendingApprovalJson(second)]);
    expect(json.pending_approval).toEqual(json.pending_approvals![0]);
  });

  it('shows each pause with its loop iterations, and each finished branch by its path', () => {
    expect(json.pipeline_state!.pauses).toEqual([
      { approval_uuid: approval.uuid, paused_node_path: [1, 0], paused_node_output_key: 'plan', loop_iterations: {} },
      { approval_uuid: second.uuid, paused_node_path: [1, 2, 0], paused_node_output_key: 'cleanup', loop_iterations: { '1.2': 3 } },
    ]);
    expect(json.pipeline_state!.branch_outputs).toEqual({ '1.1': 'report written' });
    expect(Object.keys(json.pipeline_state!)).toEqual([
      'paused_node_path',
      'paused_node_output_key',
      'session_state',
      'user_message',
      'pauses',
      'branch_outputs',
    ]);
  });

  it('never shows the stored run: its bytes, schema version or revision', () => {
    const text = JSON.stringify(json);
    for (const internal of ['f00d', 'fingerprint', 'run-7f3a', 'run_id', 'revision', 'schema', '"run"', 'Buffer']) {
      expect(text).not.toContain(internal);
    }
  });

  it('shows the same pipeline_state on a list item, and none without a view', () => {
    const item = conversationListItemJson({ ...conversation, messages: [], title: 'delete res-42' }, view);
    expect(item.pipeline_state).toEqual(json.pipeline_state);
    expect(Object.keys(item)).toEqual([
      'id',
      'session_id',
      'status',
      'title',
      'message_count',
      'pending_approvals',
      'pending_approval',
      'pipeline_state',
      'usage',
      'created_at',
      'updated_at',
    ]);
    expect(conversationListItemJson(conversation)).not.toHaveProperty('pipeline_state');
  });
});

describe('messageJson (M)', () => {
  it('names every role', () => {
    const role = (value: MessageRole) => messageJson({ id: 'm', role: value, content: '', createdAt: created, seq: 1 }).role;
    expect(role(MessageRole.MESSAGE_ROLE_SYSTEM)).toBe('system');
    expect(role(MessageRole.MESSAGE_ROLE_USER)).toBe('user');
    expect(role(MessageRole.MESSAGE_ROLE_ASSISTANT)).toBe('assistant');
    expect(role(MessageRole.MESSAGE_ROLE_TOOL)).toBe('tool');
  });

  it('carries a tool result and is_error, including an empty result and is_error false', () => {
    const json = messageJson({
      id: 'm3',
      role: MessageRole.MESSAGE_ROLE_TOOL,
      content: '',
      toolCall: { id: 'call-1', name: 'list', argumentsJson: JSON.stringify(undefined), result: '', isError: false },
      createdAt: created,
      seq: 3,
    });
    expect(json.tool_call).toEqual({ name: 'list', arguments: {}, result: '', is_error: false });
    expect(Object.keys(json)).toEqual(['id', 'role', 'content', 'tool_call', 'created_at', 'seq']);
  });

  it('marks an assistant answer that says the turn could not go on as an error, and nothing else', () => {
    const assistant = (content: string, role = MessageRole.MESSAGE_ROLE_ASSISTANT) =>
      messageJson({ id: 'm4', role, content, createdAt: created, seq: 4 });
    expect(assistant(modelFailureText('provider', 'no API key for gemini')).is_error).toBe(true);
    expect(assistant(toolsFailureText('the tool broker is unreachable')).is_error).toBe(true);
    expect(assistant('The model could not answer that, sorry.')).not.toHaveProperty('is_error');
    expect(assistant(modelFailureText('provider', 'x'), MessageRole.MESSAGE_ROLE_USER)).not.toHaveProperty('is_error');
  });
});

describe('pendingApprovalJson (P)', () => {
  it('has exactly the keys of P, with the proxy fields only when set', () => {
    expect(Object.keys(pendingApprovalJson(approval))).toEqual([
      'uuid',
      'conversation_id',
      'tool_name',
      'tool_args',
      'description',
      'created_at',
    ]);
    const proxied = pendingApprovalJson({
      ...approval,
      remoteTaskId: 'task-7',
      remoteAgentName: 'summarizer',
      agentChain: ['summarizer', 'db-agent'],
    });
    expect(Object.keys(proxied)).toEqual([
      'uuid',
      'conversation_id',
      'tool_name',
      'tool_args',
      'description',
      'remote_task_id',
      'remote_agent_name',
      'agent_chain',
      'created_at',
    ]);
    expect(proxied.remote_task_id).toBe('task-7');
    expect(proxied.remote_agent_name).toBe('summarizer');
    expect(proxied.agent_chain).toEqual(['summarizer', 'db-agent']);
  });

  it('treats empty proxy fields (an empty agent chain too) as absent and missing arguments as {}', () => {
    const json = pendingApprovalJson({
      ...approval,
      remoteTaskId: '',
      remoteAgentName: '',
      toolArgsJson: JSON.stringify(undefined),
      agentChain: [],
    });
    expect(json).not.toHaveProperty('remote_task_id');
    expect(json).not.toHaveProperty('remote_agent_name');
    expect(json).not.toHaveProperty('agent_chain');
    expect(json.tool_args).toEqual({});
  });
});

describe('approvalRecordJson (an approval as a resource)', () => {
  const decidedAt = new Date('2025-01-15T10:04:00.000Z');
  const expiresAt = new Date('2025-01-15T10:32:03.000Z');

  it('shows a pending approval with its expiry, and nothing of a decision', () => {
    const json = approvalRecordJson({ ...approval, expiresAt, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT });
    expect(json).toEqual({
      uuid: approval.uuid,
      conversation_id: approval.conversationId,
      tool_name: 'delete_resource',
      tool_args: { id: 'res-42', force: true },
      description: 'delete_resource({"id":"res-42"})',
      status: 'pending',
      requested_at: '2025-01-15T10:02:03.000Z',
      expires_at: '2025-01-15T10:32:03.000Z',
      on_timeout: 'reject',
    });
  });

  it('shows who decided, when, through which face, why, and the edited arguments', () => {
    const json = approvalRecordJson({
      ...approval,
      status: ApprovalStatus.APPROVAL_STATUS_DONE,
      decidedAt,
      decidedBy: 'alice',
      via: 'web',
      reason: 'force off',
      editedArgsJson: JSON.stringify({ id: 'res-42', force: false }),
    });
    expect(Object.keys(json)).toEqual([
      'uuid',
      'conversation_id',
      'tool_name',
      'tool_args',
      'description',
      'status',
      'execution',
      'requested_at',
      'decided_at',
      'decided_by',
      'via',
      'reason',
      'edited_args',
    ]);
    expect(json).toMatchObject({
      status: 'approved',
      execution: 'done',
      decided_at: '2025-01-15T10:04:00.000Z',
      decided_by: 'alice',
      via: 'web',
      reason: 'force off',
    });
    expect(json.tool_args).toEqual({ id: 'res-42', force: true });
    expect(json.edited_args).toEqual({ id: 'res-42', force: false });
  });

  it.each([
    [ApprovalStatus.APPROVAL_STATUS_PENDING, 'pending', undefined],
    [ApprovalStatus.APPROVAL_STATUS_APPROVED, 'approved', undefined],
    [ApprovalStatus.APPROVAL_STATUS_EXECUTING, 'approved', 'executing'],
    [ApprovalStatus.APPROVAL_STATUS_DONE, 'approved', 'done'],
    [ApprovalStatus.APPROVAL_STATUS_FAILED, 'approved', 'failed'],
    [ApprovalStatus.APPROVAL_STATUS_INTERRUPTED, 'approved', 'interrupted'],
    [ApprovalStatus.APPROVAL_STATUS_REJECTED, 'rejected', undefined],
    [ApprovalStatus.APPROVAL_STATUS_EXPIRED, 'expired', undefined],
  ])('store status %s is "%s" (execution %s)', (status, name, execution) => {
    const json = approvalRecordJson({ ...approval, status });
    expect(json.status).toBe(name);
    expect(json.execution).toBe(execution);
  });

  it('keeps P lean while pending and names the decider in a decided P (a 409 body)', () => {
    expect(
      Object.keys(pendingApprovalJson({ ...approval, expiresAt, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE })),
    ).toEqual(['uuid', 'conversation_id', 'tool_name', 'tool_args', 'description', 'expires_at', 'on_timeout', 'created_at']);
    expect(
      pendingApprovalJson({ ...approval, status: ApprovalStatus.APPROVAL_STATUS_REJECTED, decidedBy: 'bob', via: 'cli', reason: 'no' }),
    ).toMatchObject({ decided_by: 'bob', via: 'cli', reason: 'no' });
  });
});

describe('auditEntryJson', () => {
  const at = new Date('2025-01-15T10:04:00.000Z');

  it('parses the detail and leaves out an empty face', () => {
    expect(
      auditEntryJson({
        id: 7,
        at,
        kind: 'approval.decided',
        actor: 'alice',
        via: 'rest',
        subject: approval.uuid,
        detailJson: '{"decision":"approved","reason":"ok"}',
      }),
    ).toEqual({
      id: 7,
      at: '2025-01-15T10:04:00.000Z',
      kind: 'approval.decided',
      actor: 'alice',
      via: 'rest',
      subject: approval.uuid,
      detail: { decision: 'approved', reason: 'ok' },
    });
    const loaded = auditEntryJson({ id: 8, at, kind: 'config.loaded', actor: 'gateway', via: '', subject: 'agent.yaml', detailJson: '' });
    expect(loaded).not.toHaveProperty('via');
    expect(loaded.detail).toEqual({});
  });

  it('keeps a detail that is not a JSON object as text', () => {
    expect(auditEntryJson({ id: 9, at, kind: 'auth.failed', actor: '', via: 'rest', subject: '', detailJson: 'not json' }).detail).toEqual({
      text: 'not json',
    });
    expect(auditEntryJson({ id: 9, at, kind: 'auth.failed', actor: '', via: 'rest', subject: '', detailJson: '[1]' }).detail).toEqual({
      text: '[1]',
    });
  });
});

describe('the A2A origin of a conversation', () => {
  it('is never shown over REST', () => {
    const json = conversationJson({ ...conversation, a2aOrigin: { dialect: 'v0.3', contextId: 'ctx-7f3a' } });
    expect(json).toEqual(conversationJson(conversation));
    expect(JSON.stringify(json)).not.toContain('ctx-7f3a');
  });
});

describe('turnResultJson (R)', () => {
  it('includes the approval only when there is one', () => {
    expect(turnResultJson({ response: 'done', waitingApproval: false })).toEqual({ response: 'done', waiting_approval: false });
    expect(turnResultJson({ response: 'needs approval', waitingApproval: true, approval })).toEqual({
      response: 'needs approval',
      waiting_approval: true,
      approval: pendingApprovalJson(approval),
    });
  });

  it('says is_error when the turn could not go on', () => {
    const failed = modelFailureText('transient', 'model gemini-2.5-flash is unavailable (HTTP 503)');
    expect(turnResultJson({ response: failed, waitingApproval: false })).toEqual({
      response: failed,
      waiting_approval: false,
      is_error: true,
    });
  });
});

describe('conversationSummaryJson', () => {
  it('maps the counts and reads a missing summary as zeros', () => {
    expect(conversationSummaryJson({ total: 5, active: 2, waitingApproval: 1, completed: 2 })).toEqual({
      total: 5,
      active: 2,
      waiting_approval: 1,
      completed: 2,
    });
    expect(conversationSummaryJson(undefined)).toEqual({ total: 0, active: 0, waiting_approval: 0, completed: 0 });
  });
});

describe('toolJson', () => {
  it('uses the camelCase tool keys and the effective destructive flag, not the raw annotation', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } } };
    expect(
      toolJson({
        name: 'delete_resource',
        description: 'Deletes',
        inputSchema: schema,
        destructive: true,
        server: 'resources',
        destructiveHint: false,
      }),
    ).toEqual({ name: 'delete_resource', description: 'Deletes', inputSchema: schema, destructiveHint: true, server: 'resources' });
  });

  it('gives a tool without a schema an empty object schema', () => {
    expect(toolJson({ name: 'ping', description: '', inputSchema: undefined, destructive: false, server: 's' }).inputSchema).toEqual({
      type: 'object',
      properties: {},
    });
  });
});
