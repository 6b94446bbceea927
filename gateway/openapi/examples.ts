import {
  ApprovalStatus,
  ApprovalTimeoutAction,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type PendingApproval,
  type RunRecord,
  type RunStep,
} from '../../gen/ts/asg/store/v1/store.js';
import {
  approvalListReply,
  approvalReply,
  auditListReply,
  conversationListReply,
  conversationPageReply,
  conversationReply,
  toolListReply,
} from '../app/replies.js';
import { approvalRecordJson } from '../app/shapes.js';
import { runJson, runListReply } from '../app/run-shapes.js';

/**
 * The OpenAPI document's response examples, made by the same mapping code as real responses
 * (app/replies.ts, app/shapes.ts) from proto records, so they cannot drift from them.
 */

export const CONVERSATION_ID = '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13';
export const APPROVAL_UUID = 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47';
const SESSION_ID = '4be2a91c';
const at = (seconds: number) => new Date(Date.UTC(2025, 0, 15, 10, 2, seconds));

const RUN_ID = '0b7e3f52-9c1d-4a68-b2f0-6d4e8a1c3f95';
const exampleRun: RunRecord = {
  runId: RUN_ID,
  conversationId: CONVERSATION_ID,
  status: 'completed',
  startedAt: at(5),
  endedAt: at(9),
  stepCount: 6,
  journalVersion: 2,
  messageSeq: 2,
};
const exampleStep = (index: number, kind: string, node: string, second: number, durationMs: number, body: object): RunStep => ({
  index,
  kind,
  node,
  startedAtMs: at(second).getTime(),
  durationMs,
  bodyJson: JSON.stringify(body),
  // A tree's steps stand before the messages of their node, written when the node ends.
  messageSeq: 2,
});

const exampleApproval: PendingApproval = {
  uuid: APPROVAL_UUID,
  conversationId: CONVERSATION_ID,
  toolName: 'delete_resource',
  toolArgsJson: '{"id":"res-42"}',
  votes: [],
  description: 'delete_resource on resources with arguments {"id":"res-42"}',
  createdAt: at(3),
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
  argsHash: '',
  toolCallId: '',
  updatedAt: at(3),
  agentChain: [],
};

const waitingConversation: Conversation = {
  id: CONVERSATION_ID,
  sessionId: SESSION_ID,
  status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
  messages: [
    { id: 'm1', role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'You manage resources.', createdAt: at(0), seq: 1 },
    { id: 'm2', role: MessageRole.MESSAGE_ROLE_USER, content: 'Delete resource res-42', createdAt: at(1), seq: 2 },
    {
      id: 'm3',
      role: MessageRole.MESSAGE_ROLE_ASSISTANT,
      content: '',
      toolCall: { id: 'call-1', name: 'delete_resource', argumentsJson: '{"id":"res-42"}' },
      createdAt: at(3),
      seq: 3,
    },
  ],
  pendingApproval: exampleApproval,
  pendingApprovals: [exampleApproval],
  runRevision: 0,
  watched: false,
  createdAt: at(0),
  updatedAt: at(3),
  messageCount: 3,
  usage: { inputTokens: 0, outputTokens: 0 },
};

const completedConversation: Conversation = {
  ...waitingConversation,
  status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
  pendingApproval: undefined,
  pendingApprovals: [],
  messages: [
    ...waitingConversation.messages,
    {
      id: 'm4',
      role: MessageRole.MESSAGE_ROLE_TOOL,
      content: 'Resource res-42 deleted',
      toolCall: {
        id: 'call-1',
        name: 'delete_resource',
        argumentsJson: '{"id":"res-42"}',
        result: 'Resource res-42 deleted',
        isError: false,
      },
      createdAt: at(40),
      seq: 4,
    },
    { id: 'm5', role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Resource res-42 has been deleted.', createdAt: at(41), seq: 5 },
  ],
  updatedAt: at(41),
  messageCount: 5,
  usage: { inputTokens: 0, outputTokens: 0 },
};

// The same approval once alice approved it with edited arguments, and a second one still pending.
const decidedApproval: PendingApproval = {
  ...exampleApproval,
  status: ApprovalStatus.APPROVAL_STATUS_DONE,
  decidedAt: at(40),
  decidedBy: 'token:alice',
  via: 'web',
  reason: 'the id was wrong',
  editedArgsJson: '{"id":"res-43"}',
  updatedAt: at(41),
};

const pendingApproval: PendingApproval = {
  ...exampleApproval,
  uuid: '9c7d2e10-4b5a-4f36-8d21-6e0a3b9c5f78',
  conversationId: 'a3d5e7f9-1b2c-4d6e-8f10-2a4c6e8b0d13',
  createdAt: at(50),
  updatedAt: at(50),
  expiresAt: new Date(Date.UTC(2025, 0, 15, 10, 32, 50)),
  onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
};

const waitingResult = { response: 'The action delete_resource needs your approval.', waitingApproval: true, approval: exampleApproval };

export const examples = {
  tools: toolListReply([
    {
      name: 'delete_resource',
      description: 'Deletes a resource by id',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      destructive: true,
      server: 'resources',
    },
  ]),
  created: conversationReply({ conversation: waitingConversation }, waitingResult),
  conversationList: conversationListReply({
    conversations: [{ ...completedConversation, messages: [], messageCount: 5, title: 'Delete resource res-42' }],
    pipelines: new Map(),
    summary: { total: 120, active: 97, waitingApproval: 3, completed: 20 },
    nextCursor: 'eyJiZWZvcmUiOiIyMDI1LTAxLTE1In0',
  }),
  conversationPage: conversationPageReply({ conversation: waitingConversation }),
  turn: conversationReply({ conversation: waitingConversation }, waitingResult),
  forked: { ...conversationReply({ conversation: waitingConversation }, waitingResult), copied_only: false },
  decided: conversationReply(
    { conversation: completedConversation },
    { response: 'Resource res-42 has been deleted.', waitingApproval: false },
  ),
  conflict: approvalReply(APPROVAL_UUID, {
    decided: false,
    approval: { ...exampleApproval, status: ApprovalStatus.APPROVAL_STATUS_DONE, decidedAt: at(40), decidedBy: 'token:alice', via: 'web' },
    decision: 'approved',
    decidedAt: at(40),
  }).body,
  approvalList: approvalListReply({ approvals: [pendingApproval], nextCursor: 'eyJhZnRlciI6IjljN2QyZTEwIn0' }),
  approval: approvalRecordJson(decidedApproval),
  audit: auditListReply({
    entries: [
      {
        id: 42,
        at: at(40),
        kind: 'approval.decided',
        actor: 'token:alice',
        via: 'web',
        subject: APPROVAL_UUID,
        detailJson: JSON.stringify({ decision: 'approved', reason: 'the id was wrong', edited: true, conversation_id: CONVERSATION_ID }),
      },
      {
        id: 41,
        at: at(2),
        kind: 'auth.failed',
        actor: '',
        via: 'rest',
        subject: '/approvals',
        detailJson: JSON.stringify({ cause: 'unknown token' }),
      },
    ],
    nextCursor: 'eyJiZWZvcmUiOjQxfQ',
  }),
  runs: runListReply({ runs: [exampleRun] }),
  run: runJson({
    run: exampleRun,
    steps: [
      exampleStep(0, 'node_started', 'pipeline', 5, 0, { type: 'sequential' }),
      exampleStep(1, 'node_started', 'pipeline/analyzer', 5, 0, { type: 'llm' }),
      exampleStep(2, 'model_call', 'pipeline/analyzer', 5, 812, {
        model: 'gemini-2.5-flash',
        provider: 'gemini',
        input_tokens: 412,
        output_tokens: 31,
        finish_reason: 'tool-calls',
        tool_calls: ['resources_list'],
      }),
      exampleStep(3, 'tool_call', 'pipeline/analyzer', 6, 40, {
        tool: 'resources_list',
        server: 'resources',
        arguments: { token: '[redacted]' },
        args_hash: '9f2c…',
        outcome: 'ok',
        summary: '[{"id":"res-42"}]',
      }),
      exampleStep(4, 'model_call', 'pipeline/analyzer', 6, 640, {
        model: 'gemini-2.5-flash',
        provider: 'gemini',
        input_tokens: 470,
        output_tokens: 18,
        finish_reason: 'stop',
      }),
      exampleStep(5, 'node_finished', 'pipeline/analyzer', 5, 1500, { outcome: 'done', output_key: 'analysis' }),
    ],
  }),
};
