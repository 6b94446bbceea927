import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  ConversationStoreServiceService,
  MessageRole,
  type Conversation,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { configSchema } from '../common/config/schema.js';
import { createLogger } from '../common/log.js';
import type { RunningService } from '../common/service.js';
import { startConversationStore } from './index.js';

type StoreClient = PromiseClient<typeof ConversationStoreServiceService>;

let root: string;
let dataDir: string;
let service: RunningService;
let store: StoreClient;

async function start(): Promise<void> {
  service = await startConversationStore({
    config: configSchema.parse({ data_dir: dataDir }),
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
    toolArgs: { table: 'users' },
    description: 'Drop the users table',
    messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: '', toolCall: { id: 'call-1', name: 'drop_table', arguments: { table: 'users' } } }],
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
    expect(read?.messages.map((message) => [message.seq, message.role, message.content])).toEqual([[1, MessageRole.MESSAGE_ROLE_SYSTEM, 'be brief']]);
    expect(read?.createdAt).toBeInstanceOf(Date);

    const page = await store.listConversations({ pageSize: 0, pageToken: '', includeMessages: false });
    expect(page.conversations.map((item) => item.id)).toEqual([created.id]);
    expect(page.summary).toEqual({ total: 1, active: 1, waitingApproval: 0, completed: 0 });
    expect(page.nextPageToken).toBe('');
  });

  it('answers INVALID_ARGUMENT with the field and what was expected', async () => {
    await expect(store.createConversation({ sessionId: 'ABCDEF12', systemPrompt: '' })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'invalid CreateConversation request: session_id: 8 lowercase hex characters (DESIGN rule 6)',
    });
    await expect(store.getConversation({ id: '', includeMessages: false })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('id: required'),
    });
    await expect(store.listConversations({ pageSize: 501, pageToken: '', includeMessages: false })).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('page_size: at most 500'),
    });
    const { id } = await conversation();
    await expect(
      store.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_UNSPECIFIED, content: 'who am I?' }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        clearPipelineState: false,
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
    await expect(pendingApproval(id)).rejects.toMatchObject({ code: GrpcStatus.FAILED_PRECONDITION, message: expect.stringContaining(approval.uuid) });

    const { conversation: waiting } = await store.getConversation({ id, includeMessages: false });
    expect(waiting?.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
    expect(waiting?.pendingApproval?.toolArgs).toEqual({ table: 'users' });

    const fetched = await store.getApproval({ uuid: approval.uuid });
    expect(fetched.sessionId).toMatch(/^[0-9a-f]{8}$/);
    expect(fetched.pipelineState).toBeUndefined();
    expect(fetched.approval?.uuid).toBe(approval.uuid);

    const claim = await store.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearPipelineState: false });
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
      messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'dropped', toolCall: { id: 'call-1', name: 'drop_table', arguments: { table: 'users' }, result: 'dropped' } }],
    });
    expect(done?.status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
    const { conversation: after } = await store.getConversation({ id, includeMessages: true });
    expect(after).toEqual((await store.appendMessages({ conversationId: id, messages: [], status: 0, clearPipelineState: false, returnConversation: true })).conversation);
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
          clearPipelineState: false,
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
    await store.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearPipelineState: false });
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
    const claim = await store.claimApproval({ uuid: approval.uuid, approved: false, messages: [], clearPipelineState: true });
    expect(claim.claimed).toBe(true);
    expect(claim.approval?.status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
  });
});
