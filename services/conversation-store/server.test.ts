import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  ConversationStoreServiceService,
  type ClaimApprovalRequest,
  MessageRole,
  type Conversation,
  ConversationEvent,
  type NewApproval,
  PendingApproval,
  type PublishEventRequest,
  type Run,
  type RunLease,
  type UpdateRunRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { createLogger } from '../common/log.js';
import type { RunningService } from '../common/service.js';
import { EVENT_KINDS } from './event-feed.js';
import { startConversationStore } from './index.js';

type StoreClient = PromiseClient<typeof ConversationStoreServiceService>;

let root: string;
let dataDir: string;
let service: RunningService;
let store: StoreClient;

async function start(): Promise<void> {
  service = await startConversationStore({
    config: configSlice(configSchema.parse({ data_dir: dataDir }), 'conversationStore'),
    listen: '127.0.0.1:0',
    log: createLogger('conversation-store-test'),
  });
  store = createPromiseClient(ConversationStoreServiceService, service.address, 'test', 5000);
}

async function stop(): Promise<void> {
  store.close();
  await service.stop();
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'asg-store-grpc-'));
  // A folder that does not exist yet: the service creates it.
  dataDir = join(root, 'nested', 'data');
  await start();
});

afterEach(async () => {
  await stop();
  rmSync(root, { recursive: true, force: true });
});

async function conversation(systemPrompt = 'be brief'): Promise<Conversation> {
  const { conversation } = await store.createConversation({ sessionId: '0badcafe', systemPrompt });
  return conversation!;
}

async function pendingApproval(conversationId: string): Promise<PendingApproval> {
  const { approval } = await store.createApproval({
    conversationId,
    toolCallId: 'call-1',
    toolName: 'drop_table',
    toolArgsJson: JSON.stringify({ table: 'users' }),
    description: 'Drop the users table',
    agentChain: [],
    messages: [
      {
        role: MessageRole.MESSAGE_ROLE_ASSISTANT,
        content: '',
        toolCall: { id: 'call-1', name: 'drop_table', argumentsJson: JSON.stringify({ table: 'users' }) },
      },
    ],
  });
  return approval!;
}

describe('conversation store over gRPC', () => {
  it('creates its data folder and serves create, get and list', async () => {
    expect(existsSync(join(dataDir, 'conversations.db'))).toBe(true);
    expect(service.name).toBe('conversation-store');
    expect(service.address).toBe(`127.0.0.1:${service.port}`);

    const created = await conversation('be brief');
    const { conversation: read } = await store.getConversation({ id: created.id, includeMessages: true });
    expect(read?.sessionId).toBe('0badcafe');
    expect(read?.messages.map((message) => [message.seq, message.role, message.content])).toEqual([
      [1, MessageRole.MESSAGE_ROLE_SYSTEM, 'be brief'],
    ]);
    expect(read?.createdAt).toBeInstanceOf(Date);

    const page = await store.listConversations({ pageSize: 0, pageToken: '' });
    expect(page.conversations.map((item) => item.id)).toEqual([created.id]);
    expect(page.summary).toEqual({ total: 1, active: 1, waitingApproval: 0, completed: 0 });
    expect(page.nextPageToken).toBe('');
  });

  it("refuses a journal whose steps do not fit the journal's format, and the write it came with", async () => {
    const { id } = await conversation();
    const runId = '5e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b';
    const write = (kind: string, body: unknown) =>
      store.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'step' }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        journal: {
          runId,
          startedAtMs: 1,
          status: 'running',
          steps: [{ index: 0, kind, node: 'agent', startedAtMs: 1, durationMs: 2, bodyJson: JSON.stringify(body) }],
        },
      });
    await expect(
      write('model_call', { model: 'm', provider: 'gemini', input_tokens: -1, output_tokens: 0, finish_reason: 'stop' }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('journal.steps[0].body_json: the body of a model_call step does not fit journal format 2'),
    });
    await expect(write('thinking', {})).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('journal.steps[0].kind: one of node_started'),
    });
    expect((await store.getConversation({ id, includeMessages: true })).conversation!.messages).toHaveLength(1);
    await expect(store.getRun({ runId })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });

    await write('node_started', { type: 'llm' });
    expect((await store.getRun({ runId })).steps).toMatchObject([{ index: 0, kind: 'node_started', node: 'agent', durationMs: 2 }]);
    expect((await store.listRuns({ conversationId: id, pageSize: 0, pageToken: '' })).runs).toMatchObject([{ runId, status: 'running' }]);
  });

  it('answers INVALID_ARGUMENT with the field and what was expected', async () => {
    await expect(store.createConversation({ sessionId: 'ABCDEF12', systemPrompt: '' })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'invalid CreateConversation request: session_id: 8 lowercase hex characters',
    });
    await expect(
      store.createConversation({ sessionId: 'abcdef12', systemPrompt: '', lease: { owner: 'boot-a', node: 'node-a', ttlMs: 1000 } }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'invalid CreateConversation request: lease: a lease is for a first turn: only with first_message',
    });
    await expect(store.getConversation({ id: '', includeMessages: false })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('id: required'),
    });
    await expect(store.listConversations({ pageSize: 501, pageToken: '' })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('page_size: at most 500'),
    });
    const { id } = await conversation();
    // History pages: a limit of 1..1000, one cursor at most, and a cursor only with a limit.
    for (const [request, field] of [
      [{ messageLimit: 1001 }, 'message_limit: at most 1000'],
      [{ messageLimit: 5, beforeMessageId: id, afterMessageId: id }, 'at most one of before_message_id and after_message_id'],
      [{ beforeMessageId: id }, 'a cursor needs include_messages and a message_limit'],
    ] as const) {
      await expect(store.getConversation({ id, includeMessages: true, ...request })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(field),
      });
    }
    await expect(
      store.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_UNSPECIFIED, content: 'who am I?' }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      }),
    ).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining('messages[0].role') });
    await expect(store.markApprovalInterrupted({ uuid: 'x', minAgeMs: -1, messages: [] })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('min_age_ms'),
    });
    expect((await store.getConversation({ id, includeMessages: false })).conversation?.messageCount).toBe(1);
  });

  it('answers NOT_FOUND for malformed and unknown ids', async () => {
    await expect(store.getConversation({ id: 'not-a-uuid', includeMessages: true })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    await expect(store.getApproval({ uuid: '11111111-2222-4333-8444-555555555555' })).rejects.toMatchObject({
      code: GrpcStatus.NOT_FOUND,
      message: 'approval 11111111-2222-4333-8444-555555555555 not found',
    });
    await expect(store.listUnfinishedApprovals({ conversationId: 'x' })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
  });

  it('runs an approval through its whole lifecycle', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    await expect(pendingApproval(id)).rejects.toMatchObject({
      code: GrpcStatus.FAILED_PRECONDITION,
      message: expect.stringContaining(approval.uuid),
    });

    const { conversation: waiting } = await store.getConversation({ id, includeMessages: false });
    expect(waiting?.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
    expect(JSON.parse(waiting!.pendingApproval!.toolArgsJson)).toEqual({ table: 'users' });

    const fetched = await store.getApproval({ uuid: approval.uuid });
    expect(fetched.sessionId).toMatch(/^[0-9a-f]{8}$/);
    expect(fetched.run).toBeUndefined();
    expect(fetched.approval?.uuid).toBe(approval.uuid);

    const claim = await store.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [] });
    expect(claim.claimed).toBe(true);
    // The changed conversation comes back with the claim: no second read needed.
    expect(claim.conversation?.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    expect(claim.conversation?.pendingApproval).toBeUndefined();
    await store.startApprovalExecution({ uuid: approval.uuid });
    expect((await store.listUnfinishedApprovals({ conversationId: id })).approvals.map((item) => item.uuid)).toEqual([approval.uuid]);
    await expect(store.startApprovalExecution({ uuid: approval.uuid })).rejects.toMatchObject({ code: GrpcStatus.FAILED_PRECONDITION });
    const { approval: done } = await store.finishApprovalExecution({
      uuid: approval.uuid,
      success: true,
      messages: [
        {
          role: MessageRole.MESSAGE_ROLE_TOOL,
          content: 'dropped',
          toolCall: { id: 'call-1', name: 'drop_table', argumentsJson: JSON.stringify({ table: 'users' }), result: 'dropped' },
        },
      ],
    });
    expect(done?.status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
    const { conversation: after } = await store.getConversation({ id, includeMessages: true });
    expect(after).toEqual(
      (await store.appendMessages({ conversationId: id, messages: [], status: 0, returnConversation: true })).conversation,
    );
    expect(after?.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    expect(after?.messages.at(-1)?.toolCall?.result).toBe('dropped');
    expect(after?.messageCount).toBe(3);
  });

  it('lets exactly one of 20 concurrent claims win; the others see its decision', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        store.claimApproval({
          uuid: approval.uuid,
          approved: index % 2 === 0,
          messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content: `decision ${index}` }],
          clearRun: false,
          alsoReject: [],
        }),
      ),
    );
    const winners = claims.filter((claim) => claim.claimed);
    expect(winners).toHaveLength(1);
    const decision = winners[0]!.approval!;
    expect([ApprovalStatus.APPROVAL_STATUS_APPROVED, ApprovalStatus.APPROVAL_STATUS_REJECTED]).toContain(decision.status);
    for (const loser of claims.filter((claim) => !claim.claimed)) {
      expect(loser.approval?.status).toBe(decision.status);
      expect(loser.approval?.decidedAt).toEqual(decision.decidedAt);
    }
    // Only the winner's messages were stored.
    const { conversation: after } = await store.getConversation({ id, includeMessages: true });
    expect(after?.messages.filter((message) => message.content.startsWith('decision '))).toHaveLength(1);
    expect(after?.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
  });

  it('marks an unfinished approval interrupted only after min_age_ms', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    await store.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [] });
    await store.startApprovalExecution({ uuid: approval.uuid });
    const note = [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'interrupted' }];

    const tooRecent = await store.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 3_600_000, messages: note });
    expect(tooRecent.marked).toBe(false);
    expect(tooRecent.approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_EXECUTING);

    const marked = await store.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 0, messages: note });
    expect(marked.marked).toBe(true);
    expect(marked.approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_INTERRUPTED);
    const { conversation: after } = await store.getConversation({ id, includeMessages: true });
    expect(after?.messages.filter((message) => message.content === 'interrupted')).toHaveLength(1);
  });

  it('keeps its data across a restart', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    await stop();
    await start();

    const { conversation: read } = await store.getConversation({ id, includeMessages: true });
    expect(read?.pendingApproval?.uuid).toBe(approval.uuid);
    expect(read?.messageCount).toBe(2);
    const claim = await store.claimApproval({ uuid: approval.uuid, approved: false, messages: [], clearRun: true, alsoReject: [] });
    expect(claim.claimed).toBe(true);
    expect(claim.approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
  });
});

describe('JSON values over gRPC', () => {
  // A value this deep as google.protobuf.Struct fails every protobuf decoder (100 levels of nesting); as text it is one string.
  const deep = `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`;

  it('carries arguments of any depth as text: stored, and read back unchanged by every reader', async () => {
    const { id } = await conversation();
    // A new database: event 1 is the conversation's status; its replay starts after it.
    const events = store.watchEvents({ conversationId: id, afterId: 1, storedOnly: true, kinds: [] })[Symbol.asyncIterator]();
    const { approval } = await store.createApproval({
      conversationId: id,
      toolCallId: 'call-1',
      toolName: 'drop_table',
      toolArgsJson: deep,
      description: 'Drop',
      agentChain: [],
      messages: [
        { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: '', toolCall: { id: 'call-1', name: 'drop_table', argumentsJson: deep } },
      ],
    });
    await store.claimApproval({
      uuid: approval!.uuid,
      approved: true,
      messages: [],
      clearRun: false,
      alsoReject: [],
      editedArgsJson: deep,
    });

    expect((await store.getApproval({ uuid: approval!.uuid })).approval).toMatchObject({ toolArgsJson: deep, editedArgsJson: deep });
    const listed = await store.listApprovals({ statuses: [], conversationId: id, pageSize: 0, pageToken: '' });
    expect(listed.approvals.map((item) => [item.toolArgsJson, item.editedArgsJson])).toEqual([[deep, deep]]);
    const { conversation: read } = await store.getConversation({ id, includeMessages: true });
    expect(read?.messages.at(-1)?.toolCall?.argumentsJson).toBe(deep);
    const kinds: string[] = [];
    while (!kinds.includes('approvalResolved')) {
      const { value } = await events.next();
      const event = value!.event!;
      if (event.messageAdded?.toolCall) expect(event.messageAdded.toolCall.argumentsJson).toBe(deep);
      if (event.approvalResolved) expect(event.approvalResolved.editedArgsJson).toBe(deep);
      kinds.push(...(['messageAdded', 'approvalRequested', 'approvalResolved'] as const).filter((key) => event[key] !== undefined));
    }
    expect(kinds).toEqual(expect.arrayContaining(['messageAdded', 'approvalRequested', 'approvalResolved']));
    await events.return?.();
  });

  it('answers INVALID_ARGUMENT for a value that is not the text of a JSON object, and stores nothing', async () => {
    const { id } = await conversation();
    for (const [text, problem] of [
      ['[1]', 'must be a JSON object'],
      ['{"a":', 'must be valid JSON'],
      ['', 'must be valid JSON'],
    ] as const) {
      const request = {
        conversationId: id,
        toolCallId: 'c',
        toolName: 't',
        toolArgsJson: text,
        description: 'd',
        agentChain: [],
        messages: [],
      };
      await expect(store.createApproval(request)).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(`tool_args_json: the value ${problem}`),
      });
    }
    const call = { id: 'c', name: 't', argumentsJson: '"text"' };
    await expect(
      store.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: '', toolCall: call }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('messages[0].tool_call.arguments_json: the value must be a JSON object'),
    });
    expect((await store.getConversation({ id, includeMessages: false })).conversation).toMatchObject({
      status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      messageCount: 1,
    });
  });
});

describe('conversation owners over gRPC', () => {
  it('carries the owner through create, get and a list filtered by it', async () => {
    const { conversation: alices } = await store.createConversation({ sessionId: '0badcafe', systemPrompt: '', owner: 'alice' });
    const plain = await conversation();
    expect(alices?.owner).toBe('alice');
    expect((await store.getConversation({ id: alices!.id, includeMessages: false })).conversation?.owner).toBe('alice');
    expect((await store.getConversation({ id: plain.id, includeMessages: false })).conversation?.owner).toBeUndefined();
    const mine = await store.listConversations({ pageSize: 0, pageToken: '', owner: 'alice' });
    expect(mine.conversations.map((item) => [item.id, item.owner])).toEqual([[alices!.id, 'alice']]);
    expect(mine.summary).toEqual({ total: 1, active: 1, waitingApproval: 0, completed: 0 });
    expect((await store.listConversations({ pageSize: 0, pageToken: '' })).conversations.map((item) => item.id)).toEqual([
      plain.id,
      alices!.id,
    ]);
  });

  it('answers INVALID_ARGUMENT for a blank, too long or control-character owner', async () => {
    for (const [owner, message] of [
      ['', 'owner: a name, not blank'],
      ['  ', 'owner: a name, not blank'],
      ['x'.repeat(513), 'owner: at most 512 characters'],
      ['al\nice', 'owner: no control characters'],
    ] as const) {
      await expect(store.createConversation({ sessionId: '0badcafe', systemPrompt: '', owner })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
      await expect(store.listConversations({ pageSize: 0, pageToken: '', owner })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
    }
  });
});

describe('A2A origins and agent chains over gRPC', () => {
  const origin = { dialect: 'v1.0', contextId: 'ctx-42' };
  const chain = ['summarizer', 'db-agent'];

  it('carries the A2A origin through create, get and list', async () => {
    const { conversation: created } = await store.createConversation({ sessionId: '0badcafe', systemPrompt: '', a2aOrigin: origin });
    const plain = await conversation();
    expect(created?.a2aOrigin).toEqual(origin);
    expect((await store.getConversation({ id: created!.id, includeMessages: false })).conversation?.a2aOrigin).toEqual(origin);
    const page = await store.listConversations({ pageSize: 0, pageToken: '' });
    expect(page.conversations.map((item) => [item.id, item.a2aOrigin])).toEqual([
      [plain.id, undefined],
      [created!.id, origin],
    ]);
  });

  it('carries the agent chain of CreateApproval and UpdateRun approvals through get, claim and the pending approvals', async () => {
    const { id } = await conversation();
    const { approval, conversation: waiting } = await store.createApproval({
      conversationId: id,
      toolCallId: 'call-1',
      toolName: 'drop_table',
      toolArgsJson: JSON.stringify({ table: 'users' }),
      description: 'Drop the users table',
      remoteAgentName: 'summarizer',
      remoteTaskId: 'task-1',
      agentChain: chain,
      messages: [],
    });
    expect(approval?.agentChain).toEqual(chain);
    expect(waiting?.pendingApproval?.agentChain).toEqual(chain);
    expect((await store.getApproval({ uuid: approval!.uuid })).approval?.agentChain).toEqual(chain);
    const page = await store.listConversations({ pageSize: 0, pageToken: '' });
    expect(page.conversations[0]?.pendingApprovals.map((item) => item.agentChain)).toEqual([chain]);
    const claim = await store.claimApproval({ uuid: approval!.uuid, approved: false, messages: [], clearRun: false, alsoReject: [] });
    expect(claim.approval?.agentChain).toEqual(chain);

    const other = await conversation();
    const uuid = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
    const reply = await store.updateRun({
      conversationId: other.id,
      messages: [],
      approvals: [{ uuid, toolCallId: 'call-2', toolName: 'drop_table', toolArgsJson: '{}', description: 'Drop', agentChain: chain }],
      expectedRevision: 0,
      returnConversation: true,
    });
    expect(reply.conversation?.pendingApprovals.map((item) => item.agentChain)).toEqual([chain]);
    expect((await store.getApproval({ uuid })).approval?.agentChain).toEqual(chain);
  });

  it('answers INVALID_ARGUMENT for an unknown dialect, an empty or too long context id and a bad agent chain', async () => {
    const refusedOrigins: [{ dialect: string; contextId: string }, string][] = [
      [{ dialect: 'v2.0', contextId: 'ctx' }, 'a2a_origin.dialect: one of seed, v0.3, v1.0'],
      [{ dialect: 'seed', contextId: '' }, 'a2a_origin.context_id: a context id, not empty'],
      [{ dialect: 'seed', contextId: 'x'.repeat(257) }, 'a2a_origin.context_id: at most 256 characters'],
    ];
    for (const [a2aOrigin, message] of refusedOrigins) {
      await expect(store.createConversation({ sessionId: '0badcafe', systemPrompt: '', a2aOrigin })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
    }
    const longest = await store.createConversation({
      sessionId: '0badcafe',
      systemPrompt: '',
      a2aOrigin: { dialect: 'seed', contextId: 'x'.repeat(256) },
    });
    expect(longest.conversation?.a2aOrigin?.contextId).toHaveLength(256);

    const { id } = await conversation();
    const refusedChains: [string[], string][] = [
      [['summarizer', ''], 'agent_chain[1]: an agent name, not empty'],
      [Array.from({ length: 21 }, (_, index) => `agent-${index}`), 'agent_chain: at most 20 agents'],
    ];
    for (const [agentChain, message] of refusedChains) {
      const request = {
        conversationId: id,
        toolCallId: 'call-1',
        toolName: 'drop_table',
        toolArgsJson: '{}',
        description: 'Drop',
        agentChain,
        messages: [],
      };
      await expect(store.createApproval(request)).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
      const approvals = [
        {
          uuid: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          toolCallId: 'call-1',
          toolName: 'drop_table',
          toolArgsJson: '{}',
          description: 'Drop',
          agentChain,
        },
      ];
      await expect(
        store.updateRun({ conversationId: id, messages: [], approvals, expectedRevision: 0, returnConversation: false }),
      ).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining(`approvals[0].${message}`) });
    }
    expect((await store.getConversation({ id, includeMessages: false })).conversation?.status).toBe(
      ConversationStatus.CONVERSATION_STATUS_ACTIVE,
    );
  });
});

describe('UpdateRun over gRPC', () => {
  const A = '0e1d2c3b-4a59-4687-8796-a5b4c3d2e1f0';
  const B = '9f8e7d6c-5b4a-4938-8271-605f4e3d2c1b';
  const approvalFor = (uuid: string, toolCallId: string): NewApproval => ({
    uuid,
    toolCallId,
    toolName: 'drop_table',
    toolArgsJson: JSON.stringify({ table: toolCallId }),
    description: `Drop ${toolCallId}`,
    agentChain: [],
  });
  // Opaque bytes, some not UTF-8, so that nothing on the way may treat them as text.
  const state: Run = {
    state: Buffer.concat([Buffer.from(`{"pauses":["${A}","${B}"]}`), Buffer.from([0x00, 0xff, 0xc3])]),
    schemaVersion: 1,
    revision: 0,
  };
  const updateRequest = (conversationId: string, change: Partial<UpdateRunRequest> = {}): UpdateRunRequest => ({
    conversationId,
    messages: [],
    approvals: [],
    expectedRevision: 0,
    returnConversation: false,
    ...change,
  });

  it('creates both approvals and the run, returns the waiting conversation, and GetApproval carries the run, bytes unchanged', async () => {
    const { id } = await conversation();
    const reply = await store.updateRun(
      updateRequest(id, {
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'two branches ask', node: 'cleaner' }],
        approvals: [approvalFor(A, 'users'), approvalFor(B, 'orders')],
        run: state,
        returnConversation: true,
      }),
    );
    expect(reply.revision).toBe(1);
    expect(reply.conversation?.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
    expect(reply.conversation?.pendingApprovals.map((approval) => [approval.uuid, JSON.parse(approval.toolArgsJson)])).toEqual([
      [A, { table: 'users' }],
      [B, { table: 'orders' }],
    ]);
    expect(reply.conversation?.pendingApproval?.uuid).toBe(A);
    expect(reply.conversation?.runRevision).toBe(1);
    expect(reply.conversation?.run).toEqual({ ...state, revision: 1 });
    expect(reply.conversation?.messages.at(-1)).toMatchObject({ content: 'two branches ask', node: 'cleaner' });

    const fetched = await store.getApproval({ uuid: B });
    expect(fetched.run).toEqual({ ...state, revision: 1 });
    // Without return_conversation only the revision comes back.
    expect((await store.updateRun(updateRequest(id, { expectedRevision: 1, run: state }))).conversation).toBeUndefined();
  });

  it('lets exactly one of 10 concurrent writes from the same revision win; the others are ABORTED', async () => {
    const { id } = await conversation();
    const writes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) =>
        store.updateRun(
          updateRequest(id, {
            messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: `branch ${index}` }],
            run: { ...state, state: Buffer.from(`${index}`) },
          }),
        ),
      ),
    );
    const won = writes.filter((write) => write.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(won[0]!.value.revision).toBe(1);
    for (const lost of writes.filter((write) => write.status === 'rejected')) {
      expect(lost.reason).toMatchObject({ code: GrpcStatus.ABORTED, message: expect.stringContaining('revision 1, not 0') });
    }
    // Only the winner's messages and run were stored.
    const { conversation: after } = await store.getConversation({ id, includeMessages: true });
    const winner = after!.run!.state.toString();
    expect(after?.messages.filter((message) => message.content.startsWith('branch ')).map((message) => message.content)).toEqual([
      `branch ${winner}`,
    ]);
    expect(after?.runRevision).toBe(1);
  });

  it('answers INVALID_ARGUMENT for a missing or upper-case approval uuid, a negative schema version, a negative revision and also_reject on an approval', async () => {
    const { id } = await conversation();
    const refused: [Partial<UpdateRunRequest>, string][] = [
      [{ approvals: [approvalFor('', 'users')] }, 'approvals[0].uuid: a UUID in lower case'],
      [{ approvals: [approvalFor('0F1E2D3C-4B5A-4968-8776-A5B4C3D2E1F0', 'users')] }, 'approvals[0].uuid: a UUID in lower case'],
      [{ run: { ...state, schemaVersion: -1 } }, 'run.schema_version: a schema version, 0 or more'],
      [{ expectedRevision: -1 }, 'expected_revision: a revision, 0 or more'],
    ];
    for (const [change, message] of refused) {
      await expect(store.updateRun(updateRequest(id, change))).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
    }
    expect((await store.getConversation({ id, includeMessages: false })).conversation?.runRevision).toBe(0);
    const uuid = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
    await expect(
      store.claimApproval({ uuid, approved: true, messages: [], clearRun: false, alsoReject: [{ uuid, messages: [] }] }),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('also_reject: only a rejection rejects other approvals with it'),
    });
  });

  it('rejects the other pending approval with a winning rejection (also_reject) and returns the active conversation', async () => {
    const { id } = await conversation();
    await store.updateRun(updateRequest(id, { approvals: [approvalFor(A, 'users'), approvalFor(B, 'orders')], run: state }));
    const claim = await store.claimApproval({
      uuid: A,
      approved: false,
      messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'users: rejected' }],
      clearRun: true,
      alsoReject: [{ uuid: B, messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'orders: rejected with users' }] }],
    });
    expect(claim.claimed).toBe(true);
    expect(claim.conversation?.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    expect(claim.conversation?.pendingApprovals).toEqual([]);
    expect(claim.conversation?.run).toBeUndefined();
    expect(claim.conversation?.runRevision).toBe(2);
    expect(claim.conversation?.messages.slice(-2).map((message) => message.content)).toEqual([
      'users: rejected',
      'orders: rejected with users',
    ]);
    expect((await store.getApproval({ uuid: B })).approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
  });

  it('clears a run left behind when a turn starts, and a stale write after it is ABORTED', async () => {
    const { id } = await conversation();
    // A run that keeps going (no approval): the request that would end it never came.
    await store.updateRun(updateRequest(id, { run: state }));
    const start = await store.startTurn({ conversationId: id, message: { role: MessageRole.MESSAGE_ROLE_USER, content: 'again' } });
    expect(start.started).toBe(true);
    expect(start.conversation?.run).toBeUndefined();
    expect(start.conversation?.runRevision).toBe(2);
    await expect(store.updateRun(updateRequest(id, { expectedRevision: 1, run: state }))).rejects.toMatchObject({
      code: GrpcStatus.ABORTED,
    });
    expect((await store.getConversation({ id, includeMessages: false })).conversation?.runRevision).toBe(2);
  });
});

describe('runs with leases over gRPC', () => {
  const lease = (owner: string, ttlMs = 60_000): RunLease => ({ owner, node: `node-of-${owner}`, ttlMs });
  const user = (content: string) => ({ role: MessageRole.MESSAGE_ROLE_USER, content });

  it('starts a leased turn, renews, releases and takes it over; fences the previous owner', async () => {
    const { id } = await conversation();
    const start = await store.startTurn({ conversationId: id, message: user('go'), lease: lease('a') });
    expect([start.started, start.conversation?.turnRunning]).toEqual([true, true]);
    expect(await store.renewRunLease({ conversationId: id, lease: lease('a') })).toEqual({ held: true });
    expect(await store.renewRunLease({ conversationId: id, lease: lease('b') })).toEqual({ held: false });
    expect(await store.takeOverRuns({ lease: lease('b'), limit: 10, givenUp: [] })).toEqual({ runs: [] });
    expect(await store.releaseRunLease({ conversationId: id, owner: 'a' })).toEqual({ released: true });
    expect(await store.takeOverRuns({ lease: lease('b'), limit: 10, givenUp: [] })).toEqual({
      runs: [{ conversationId: id, previousOwner: 'a', takeovers: 1 }],
    });
    const append = (leaseOwner: string) =>
      store.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: leaseOwner }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        leaseOwner,
      });
    await expect(append('a')).rejects.toMatchObject({
      code: GrpcStatus.ABORTED,
      message: expect.stringContaining('lease is held by another replica'),
    });
    await append('b');
    const { conversation: read } = await store.getConversation({ id, includeMessages: true });
    expect(read?.messages.map((message) => message.content)).toEqual(['be brief', 'go', 'b']);
    await expect(store.renewRunLease({ conversationId: '11111111-2222-4333-8444-555555555555', lease: lease('a') })).rejects.toMatchObject({
      code: GrpcStatus.NOT_FOUND,
    });
  });

  it('answers INVALID_ARGUMENT for a missing lease, an empty or too long owner or node, a ttl or limit out of range, and replaces_uuid without outcome_unknown', async () => {
    const { id } = await conversation();
    const long = 'x'.repeat(201);
    const refused: [Promise<unknown>, string][] = [
      [store.renewRunLease({ conversationId: id, lease: undefined }), 'lease: a lease (owner, node, ttl_ms)'],
      [store.renewRunLease({ conversationId: id, lease: { ...lease('a'), owner: ' ' } }), 'lease.owner: required'],
      [store.renewRunLease({ conversationId: id, lease: { ...lease('a'), node: long } }), 'lease.node: at most 200 characters'],
      [store.renewRunLease({ conversationId: id, lease: lease('a', 0) }), 'lease.ttl_ms: from 1 to 3600000 milliseconds'],
      [store.renewRunLease({ conversationId: id, lease: lease('a', 3_600_001) }), 'lease.ttl_ms: at most 3600000 milliseconds'],
      [store.releaseRunLease({ conversationId: id, owner: '' }), 'owner: required'],
      [store.releaseRunLease({ conversationId: '', owner: 'a' }), 'conversation_id: required'],
      [store.takeOverRuns({ lease: lease('a'), limit: 0, givenUp: [] }), 'limit: from 1 to 100'],
      [store.takeOverRuns({ lease: lease('a'), limit: 101, givenUp: [] }), 'limit: at most 100'],
      [
        store.takeOverRuns({ lease: lease('a'), limit: 1, givenUp: Array.from({ length: 101 }, () => id) }),
        'given_up: at most 100 conversation ids',
      ],
      [store.startTurn({ conversationId: id, message: user('go'), lease: lease('a', -5) }), 'lease.ttl_ms'],
      [
        store.claimApproval({
          uuid: id,
          approved: true,
          messages: [],
          clearRun: false,
          alsoReject: [],
          continuesTurn: true,
          lease: { ...lease('a'), node: '' },
        }),
        'lease.node: required',
      ],
      [
        store.appendMessages({
          conversationId: id,
          messages: [],
          status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
          returnConversation: false,
          leaseOwner: long,
        }),
        'lease_owner: at most 200 characters',
      ],
      [
        store.updateRun({
          conversationId: id,
          messages: [],
          approvals: [],
          expectedRevision: 0,
          returnConversation: false,
          interruptedApproval: '',
        }),
        'interrupted_approval: required',
      ],
      [
        store.updateRun({
          conversationId: id,
          messages: [],
          approvals: [
            {
              uuid: '0e1d2c3b-4a59-4687-8796-a5b4c3d2e1f0',
              toolCallId: 'c',
              toolName: 't',
              toolArgsJson: '{}',
              description: '',
              agentChain: [],
              replacesUuid: '9f8e7d6c-5b4a-4938-8271-605f4e3d2c1b',
            },
          ],
          expectedRevision: 0,
          returnConversation: false,
        }),
        'approvals[0].replaces_uuid: only an approval with outcome_unknown replaces another',
      ],
    ];
    for (const [call, message] of refused)
      await expect(call).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining(message) });
    const { conversation: read } = await store.getConversation({ id, includeMessages: true });
    expect([read?.messageCount, read?.turnRunning, read?.runRevision]).toEqual([1, false, 0]);
  });
});

describe('WatchEvents and PublishEvent over gRPC', () => {
  const describeEvent = (event: ConversationEvent | undefined) =>
    event?.messageAdded
      ? `message_added ${event.messageAdded.content}`
      : event?.textDelta
        ? `text_delta ${event.textDelta.text}`
        : JSON.stringify(event);
  const watch = (conversationId: string, afterId: number, kinds: string[] = []) =>
    store.watchEvents({ conversationId, afterId, storedOnly: false, kinds })[Symbol.asyncIterator]();
  const appendText = (conversationId: string, content: string) =>
    store.appendMessages({
      conversationId,
      messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content }],
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
    });

  it('replays the stored events after an id, then streams committed and published ones, until the client leaves', async () => {
    // A new database: the conversation's events are 1 (status active) and 2 (its system prompt).
    const { id } = await conversation('be brief');
    const events = watch(id, 1);
    const replayed = (await events.next()).value?.event;
    expect([replayed?.id, describeEvent(replayed)]).toEqual([2, 'message_added be brief']);

    await appendText(id, 'hello');
    const committed = (await events.next()).value?.event;
    expect([committed?.id, describeEvent(committed)]).toEqual([3, 'message_added hello']);

    // Published events go to the conversation's watchers (the id as any case names it), with id 0 and a time.
    await store.publishEvent({
      event: { id: 99, conversationId: id.toUpperCase(), at: undefined, textDelta: { text: 'Hel', node: 'writer' } },
    });
    const published = (await events.next()).value?.event;
    expect(published).toMatchObject({ id: 0, conversationId: id, textDelta: { text: 'Hel', node: 'writer' } });
    expect(published?.at).toBeInstanceOf(Date);
    await events.return?.();
  });

  it('marks a conversation watched while someone watches it or every conversation, and only then', async () => {
    const { id } = await conversation('');
    const read = async () => (await store.getConversation({ id, includeMessages: false })).conversation?.watched;
    expect(await read()).toBe(false);
    const mine = watch(id, 1);
    await appendText(id, 'seen');
    await mine.next();
    expect(await read()).toBe(true);
    expect(
      (await store.startTurn({ conversationId: id, message: { role: MessageRole.MESSAGE_ROLE_USER, content: 'hi' } })).conversation
        ?.watched,
    ).toBe(true);
    await mine.return?.();
    await expect.poll(read).toBe(false);
    const every = watch('', 1);
    await appendText(id, 'again');
    await every.next();
    expect(await read()).toBe(true);
    await every.return?.();
  });

  it('a stored-only watch (an outbox) gets stored events, no live ones, and marks nothing watched', async () => {
    const { id } = await conversation('');
    const read = async () => (await store.getConversation({ id, includeMessages: false })).conversation?.watched;
    const outbox = store.watchEvents({ conversationId: '', afterId: 1, storedOnly: true, kinds: [] })[Symbol.asyncIterator]();
    // Subscribed once it has handed over its first event; then a live event, then a stored one.
    await appendText(id, 'first');
    const seen = [(await outbox.next()).value?.event];
    await store.publishEvent({ event: { id: 0, conversationId: id, at: undefined, textDelta: { text: 'live only' } } });
    await appendText(id, 'stored');
    while (seen.at(-1)?.messageAdded?.content !== 'stored') seen.push((await outbox.next()).value?.event);
    expect(seen.every((event) => event !== undefined && event.id > 0)).toBe(true);
    expect(await read()).toBe(false);
    await outbox.return?.();
  });

  it('names every kind of ConversationEvent among the kinds a watch may ask for', () => {
    const { id: _id, conversationId: _conversationId, at: _at, ...kinds } = ConversationEvent.fromPartial({});
    expect(Object.values(EVENT_KINDS).sort()).toEqual(Object.keys(kinds).sort());
  });

  it('a watch of one conversation that names kinds is sent those alone, and its conversation_deleted, with which it ends', async () => {
    const { id } = await conversation('');
    const events = watch(id, 1, ['status_changed']);
    const first = events.next();
    await appendText(id, 'not a status change');
    await store.updateRun({
      conversationId: id,
      messages: [],
      approvals: [
        {
          uuid: '11111111-1111-4111-8111-111111111111',
          toolCallId: 'call-1',
          toolName: 'drop_table',
          toolArgsJson: '{}',
          description: 'Drop',
          agentChain: [],
        },
      ],
      expectedRevision: 0,
      returnConversation: false,
    });
    // Watching once it was sent its first event: the deletion comes after.
    const seen = [`${ConversationStatus[(await first).value?.event?.statusChanged ?? 0]}`];
    await store.claimApproval({
      uuid: '11111111-1111-4111-8111-111111111111',
      approved: false,
      messages: [],
      clearRun: true,
      alsoReject: [],
    });
    await store.deleteConversation({ id, actor: 'tester', via: 'test' });
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value.event!;
      seen.push(event.conversationDeleted ? 'conversation_deleted' : `${ConversationStatus[event.statusChanged ?? 0]}`);
    }
    expect(seen).toEqual(['CONVERSATION_STATUS_WAITING_APPROVAL', 'CONVERSATION_STATUS_ACTIVE', 'conversation_deleted']);
  });

  it('watches every conversation with an empty id', async () => {
    const first = await conversation('');
    const events = watch('', 1);
    const second = await conversation('second');
    await appendText(first.id, 'to the first');
    const seen = [];
    for (let index = 0; index < 3; index++) seen.push((await events.next()).value?.event);
    expect(
      seen.map((event) => [event?.conversationId, event?.messageAdded?.content ?? ConversationStatus[event?.statusChanged ?? 0]]),
    ).toEqual([
      [second.id, 'CONVERSATION_STATUS_ACTIVE'],
      [second.id, 'second'],
      [first.id, 'to the first'],
    ]);
    await events.return?.();
  });

  it('refuses a bad watch or publish with INVALID_ARGUMENT, and an unknown conversation with NOT_FOUND', async () => {
    const { id } = await conversation();
    await expect(watch('00000000-0000-4000-8000-000000000000', 0).next()).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    await expect(watch(id, -1).next()).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('after_id'),
    });
    // Kinds are ConversationEvent's field names, as store.proto spells them.
    await expect(watch(id, 0, ['turn_ended', 'turnEnded']).next()).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('kinds[1]: a kind of event: one of message_added'),
    });
    await expect(
      watch(
        id,
        0,
        Array.from({ length: 17 }, () => 'turn_ended'),
      ).next(),
    ).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('kinds: at most 16 kinds'),
    });
    const refused: [PublishEventRequest, string][] = [
      [{ event: undefined }, 'event: an event'],
      [
        {
          event: {
            id: 0,
            conversationId: id,
            at: undefined,
            messageAdded: { id: 'm', role: 2, content: 'forged', seq: 9, createdAt: undefined },
          },
        },
        'stored kinds are written by the store itself',
      ],
      [
        // Every stored kind is the store's own, the escalation too, even beside a live one.
        {
          event: {
            id: 0,
            conversationId: id,
            at: undefined,
            textDelta: { text: 'a' },
            approvalEscalated: PendingApproval.fromPartial({ uuid: 'forged', toolName: 'delete_file' }),
          },
        },
        'stored kinds are written by the store itself',
      ],
      [
        {
          event: {
            id: 0,
            conversationId: id,
            at: undefined,
            textDelta: { text: 'a' },
            toolCallStarted: { id: 'c', name: 't', argumentsJson: '{}' },
          },
        },
        'exactly one of',
      ],
      [{ event: { id: 0, conversationId: id, at: undefined } }, 'exactly one of'],
      [{ event: { id: 0, conversationId: id, at: undefined, textDelta: { text: '' } } }, 'event.text_delta.text: the text, not empty'],
      [{ event: { id: 0, conversationId: '', at: undefined, textDelta: { text: 'a' } } }, 'event.conversation_id: required'],
    ];
    for (const [request, message] of refused) {
      await expect(store.publishEvent(request)).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining(message),
      });
    }
    await expect(
      store.publishEvent({ event: { id: 0, conversationId: 'not-a-uuid', at: undefined, textDelta: { text: 'a' } } }),
    ).rejects.toMatchObject({
      code: GrpcStatus.NOT_FOUND,
    });
  });

  it('ends its watchers with UNAVAILABLE when it stops, without waiting for them', async () => {
    const { id } = await conversation();
    const events = watch(id, 0);
    const next = events.next();
    await appendText(id, 'seen');
    expect(describeEvent((await next).value?.event)).toBe('message_added seen');
    const pending = events.next();
    // It fails while the store stops, before the assertion below looks at it.
    pending.catch(() => undefined);
    // A stop that waited for its watchers would never return: this watcher never ends by itself.
    await service.stop();
    await expect(pending).rejects.toMatchObject({
      code: GrpcStatus.UNAVAILABLE,
      message: expect.stringContaining('watch again with after_id 3'),
    });
  });

  it('ends a watcher that stops reading with RESOURCE_EXHAUSTED once it falls too far behind, naming the id to watch again with', async () => {
    // A second store with a small backlog; the transport buffers some events too before the
    // store's own backlog fills, so the watcher falls behind by many large messages.
    const small = await startConversationStore({
      config: configSlice(configSchema.parse({ data_dir: join(root, 'small') }), 'conversationStore'),
      listen: '127.0.0.1:0',
      log: createLogger('conversation-store-test'),
      events: { maxBacklog: 5 },
    });
    const client = createPromiseClient(ConversationStoreServiceService, small.address, 'test', 30_000);
    try {
      const { conversation: created } = await client.createConversation({ sessionId: '0badcafe', systemPrompt: '' });
      const id = created!.id;
      const events = client.watchEvents({ conversationId: id, afterId: 0, storedOnly: false, kinds: [] })[Symbol.asyncIterator]();
      const first = events.next();
      const big = 'x'.repeat(32 * 1024);
      const append = (content: string) =>
        client.appendMessages({
          conversationId: id,
          messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content }],
          status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
          returnConversation: false,
        });
      await append('first');
      expect(describeEvent((await first).value?.event)).toBe('message_added first');
      // The watcher reads nothing while 200 events of 32 KiB commit.
      for (let index = 0; index < 200; index++) await append(`${index} ${big}`);
      const received: ConversationEvent[] = [];
      const failure = await (async () => {
        try {
          for (;;) {
            const { value, done } = await events.next();
            if (done) return undefined;
            received.push(value.event!);
          }
        } catch (error) {
          return error;
        }
      })();
      expect(failure).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED, message: expect.stringContaining('more than 5 events behind') });
      // Everything the transport held came first; the id to watch again with is the last of them.
      expect(received.length).toBeGreaterThan(0);
      expect(received.length).toBeLessThan(200);
      const lastId = received.at(-1)!.id;
      expect((failure as Error).message).toContain(`after_id ${lastId}`);
      // Watching again from there misses nothing.
      const again = client.watchEvents({ conversationId: id, afterId: lastId, storedOnly: false, kinds: [] })[Symbol.asyncIterator]();
      const rest: string[] = [];
      while (rest.length < 200 - received.length) rest.push((await again.next()).value!.event!.messageAdded!.content.split(' ')[0]!);
      expect([...received.map((event) => event.messageAdded!.content.split(' ')[0]), ...rest]).toEqual(
        Array.from({ length: 200 }, (_, index) => String(index)),
      );
      await again.return?.();
    } finally {
      client.close();
      await small.stop();
    }
  });
});

describe('approvals as audited resources over gRPC', () => {
  const lease = (owner: string, ttlMs = 60_000): RunLease => ({ owner, node: `node-of-${owner}`, ttlMs });
  const claimRequest = (uuid: string, change: Partial<ClaimApprovalRequest> = {}): ClaimApprovalRequest => ({
    uuid,
    approved: false,
    messages: [],
    clearRun: false,
    alsoReject: [],
    ...change,
  });
  const invalid = (message: string) => ({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining(message) });

  it('decides with identity and edited arguments, lists the approval, and shows the decision in the audit trail', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    const { claimed } = await store.claimApproval(
      claimRequest(approval.uuid, {
        approved: true,
        decidedBy: 'alice',
        via: 'web',
        reason: 'ok',
        editedArgsJson: JSON.stringify({ table: 'tmp_users' }),
      }),
    );
    expect(claimed).toBe(true);
    const { approvals, nextPageToken } = await store.listApprovals({
      statuses: [ApprovalStatus.APPROVAL_STATUS_APPROVED],
      conversationId: id,
      pageSize: 0,
      pageToken: '',
    });
    expect(
      approvals.map((item) => [
        item.uuid,
        item.decidedBy,
        item.via,
        item.reason,
        JSON.parse(item.editedArgsJson!),
        JSON.parse(item.toolArgsJson),
      ]),
    ).toEqual([[approval.uuid, 'alice', 'web', 'ok', { table: 'tmp_users' }, { table: 'users' }]]);
    expect(nextPageToken).toBe('');
    const { entries } = await store.listAudit({ kinds: ['approval.decided'], pageSize: 10, pageToken: '' });
    expect(entries.map((entry) => [entry.kind, entry.actor, entry.via, entry.subject])).toEqual([
      ['approval.decided', 'alice', 'web', approval.uuid],
    ]);
    expect(JSON.parse(entries[0]!.detailJson)).toMatchObject({ approved: true, status: 'approved', reason: 'ok', edited: true });
    expect((await store.listDueApprovals({ limit: 100 })).approvals).toEqual([]);
  });

  it('answers INVALID_ARGUMENT for a decision that does not hold together, naming the field', async () => {
    const { id } = await conversation();
    const approval = await pendingApproval(id);
    const refused: [Partial<ClaimApprovalRequest>, string][] = [
      [{ editedArgsJson: JSON.stringify({ table: 'x' }) }, 'edited_args_json: only an approval runs the call with edited arguments'],
      [{ approved: true, expired: true }, 'expired: an expiry that approves'],
      [{ decidedBy: '  ' }, 'decided_by: a name, not blank'],
      [{ decidedBy: 'x'.repeat(513) }, 'decided_by: at most 512 characters'],
      [{ via: 'v'.repeat(33) }, 'via: at most 32 characters'],
      [{ decisionId: ' ' }, 'decision_id: an id, not blank'],
      [{ decisionId: 'd'.repeat(129) }, 'decision_id: at most 128 characters'],
    ];
    for (const [change, message] of refused)
      await expect(store.claimApproval(claimRequest(approval.uuid, change))).rejects.toMatchObject(invalid(message));
    expect((await store.getApproval({ uuid: approval.uuid })).approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    // An expiry that is longer than a year, or negative, is refused with the approval.
    // So is a quorum of no votes, or one whose requester is blank.
    const quorum = { required: 2, role: 'approve', notRequester: true };
    for (const [change, message] of [
      [{ expiresInMs: -1 }, 'expires_in_ms: milliseconds, 0 or more'],
      [{ expiresInMs: 400 * 24 * 3_600_000 }, 'expires_in_ms: at most'],
      [{ quorum: { ...quorum, required: 0 } }, 'quorum.required: at least 1 vote'],
      [{ quorum: { ...quorum, required: 101 } }, 'quorum.required: at most 100 votes'],
      [{ quorum: { ...quorum, requester: ' ' } }, 'quorum.requester: a name, not blank'],
    ] as const) {
      const request = {
        conversationId: id,
        messages: [],
        approvals: [
          {
            uuid: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
            toolCallId: 'c',
            toolName: 't',
            toolArgsJson: '{}',
            description: 'd',
            agentChain: [],
            ...change,
          },
        ],
        expectedRevision: 0,
        returnConversation: false,
      };
      await expect(store.updateRun(request)).rejects.toMatchObject(invalid(message));
    }
  });

  it('answers INVALID_ARGUMENT for lists, audit entries and webhook cursors outside their rules', async () => {
    const list = { statuses: [], conversationId: '', pageSize: 0, pageToken: '' };
    await expect(store.listApprovals({ ...list, statuses: [99 as ApprovalStatus] })).rejects.toMatchObject(
      invalid('statuses[0]: one of pending'),
    );
    await expect(store.listApprovals({ ...list, statuses: [ApprovalStatus.APPROVAL_STATUS_UNSPECIFIED] })).rejects.toMatchObject(
      invalid('statuses[0]'),
    );
    await expect(store.listApprovals({ ...list, pageSize: 501 })).rejects.toMatchObject(invalid('page_size: at most 500'));
    await expect(store.listApprovals({ ...list, pageToken: 'forged' })).rejects.toMatchObject(invalid('page_token'));
    for (const limit of [0, 101]) await expect(store.listDueApprovals({ limit })).rejects.toMatchObject(invalid('limit'));

    const entry = {
      id: 0,
      at: undefined,
      kind: 'auth.failed',
      actor: 'gateway',
      via: 'rest',
      subject: '/approvals',
      detailJson: '{"cause":"bad token"}',
    };
    const refused: [Partial<typeof entry>, string][] = [
      [{ kind: 'Auth.Failed' }, 'entry.kind: dotted lower-case words'],
      [{ kind: 'auth' }, 'entry.kind: dotted lower-case words'],
      [{ kind: `a.${'b'.repeat(70)}` }, 'entry.kind: at most 64 characters'],
      [{ actor: 'a'.repeat(513) }, 'entry.actor: at most 512 characters'],
      [{ via: 'v'.repeat(33) }, 'entry.via: at most 32 characters'],
      [{ subject: 's'.repeat(201) }, 'entry.subject: at most 200 characters'],
      [{ detailJson: '[1]' }, 'entry.detail_json: a JSON object'],
      [{ detailJson: 'not json' }, 'entry.detail_json: a JSON object'],
      [{ detailJson: JSON.stringify({ big: 'é'.repeat(8200) }) }, 'entry.detail_json: at most 16384 bytes'],
    ];
    for (const [change, message] of refused)
      await expect(store.appendAudit({ entry: { ...entry, ...change } })).rejects.toMatchObject(invalid(message));
    await expect(store.appendAudit({ entry: undefined })).rejects.toMatchObject(invalid('entry: an audit entry'));
    await expect(store.listAudit({ kinds: ['NOPE'], pageSize: 0, pageToken: '' })).rejects.toMatchObject(invalid('kinds[0]'));
    const { entry: stored } = await store.appendAudit({ entry });
    expect(stored).toMatchObject({
      kind: 'auth.failed',
      actor: 'gateway',
      via: 'rest',
      subject: '/approvals',
      detailJson: '{"cause":"bad token"}',
    });
    expect(stored!.id).toBeGreaterThan(0);
    expect(stored!.at).toBeInstanceOf(Date);
    expect((await store.listAudit({ kinds: [], pageSize: 0, pageToken: '' })).entries).toEqual([stored]);

    await expect(store.claimWebhookCursor({ endpoint: ' ', lease: lease('a') })).rejects.toMatchObject(invalid('endpoint: required'));
    await expect(store.claimWebhookCursor({ endpoint: 'e'.repeat(201), lease: lease('a') })).rejects.toMatchObject(
      invalid('endpoint: at most 200 characters'),
    );
    await expect(store.claimWebhookCursor({ endpoint: 'hook', lease: undefined })).rejects.toMatchObject(invalid('lease: a lease'));
    await expect(store.advanceWebhookCursor({ endpoint: 'hook', owner: 'a', lastEventId: -1, ttlMs: 1000 })).rejects.toMatchObject(
      invalid('last_event_id'),
    );
    await expect(store.advanceWebhookCursor({ endpoint: 'hook', owner: 'a', lastEventId: 1, ttlMs: 0 })).rejects.toMatchObject(
      invalid('ttl_ms'),
    );
    expect(await store.claimWebhookCursor({ endpoint: 'hook', lease: lease('a') })).toEqual({ held: true, lastEventId: 0 });
    expect(await store.advanceWebhookCursor({ endpoint: 'hook', owner: 'a', lastEventId: 4, ttlMs: 1000 })).toEqual({ held: true });
    expect(await store.claimWebhookCursor({ endpoint: 'hook', lease: lease('b') })).toEqual({ held: false, lastEventId: 4 });
  });
});
