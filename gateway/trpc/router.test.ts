import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TRPCClientError } from '@trpc/client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ApprovalStatus, ConversationStatus, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { currentContext } from '../../services/common/context.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import { FakeEventFeed } from '../../test/support/fake-event-feed.js';
import { approvalRecord, conversationRecord, messageRecord } from '../../test/support/store-records.js';
import { record, trpcClient, type TestTrpcClient } from '../../test/support/trpc-client.js';
import type { Agent } from '../app/agent.js';
import type { ConversationUpdate } from '../app/conversation-updates.js';
import type { PendingApprovalUpdate } from '../app/pending-approval-updates.js';
import { createHttpApp } from '../http/app.js';
import { conversationListReply, conversationPageReply, conversationReply, toolListReply } from '../app/replies.js';
import { approvalRecordJson } from '../app/shapes.js';
import { trpcRouter } from './middleware.js';

/**
 * The tRPC router over real HTTP and SSE, in process, with an agent and an event feed of
 * its own: the shapes are REST's, failures get REST's codes, and subscriptions resume after
 * a dropped connection from the last stored event.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const ORCHESTRATOR = '/asg.orchestrator.v1.OrchestratorService/SendMessage';

const waiting = conversationRecord({
  id: 'c1',
  status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
  messages: [messageRecord({ content: 'add resource web-1 with value 5' })],
  pendingApproval: approvalRecord(),
  pendingApprovals: [approvalRecord()],
  messageCount: 1,
  title: 'add resource web-1',
});

/** The orchestrator's view of `waiting`'s run: its agent tree waits at node [0]. */
const pipeline: PipelineView = {
  pausedNodePath: [0],
  pausedNodeOutputKey: 'added',
  sessionState: {},
  userMessage: 'add resource web-1 with value 5',
  pauses: [{ approvalUuid: approvalRecord().uuid, pausedNodePath: [0], pausedNodeOutputKey: 'added', loopIterations: {} }],
  branchOutputs: {},
};

/** The history pages getConversation was asked for, in order. */
const pagesAsked: unknown[] = [];

/** Session ids the agent's calls ran with, by call. */
const sessions: Record<string, string> = {};

/** What resolveApproval and listApprovals were asked, in order. */
const decisions: unknown[] = [];
const approvalQueries: unknown[] = [];

const agent: Agent = {
  async createConversation(message) {
    sessions.create = currentContext()?.sessionId ?? '';
    return {
      conversation: waiting,
      pipeline,
      ...(message && { result: { response: 'Approval required', waitingApproval: true, approval: approvalRecord() } }),
    };
  },
  async getConversation(id, page) {
    sessions.get = currentContext()?.sessionId ?? '';
    pagesAsked.push(page);
    if (id !== 'c1')
      throw new RpcError(GrpcStatus.NOT_FOUND, `conversation ${id} not found`, '/asg.store.v1.ConversationStoreService/GetConversation');
    return waiting;
  },
  async getConversationRecord(id) {
    return { ...(await this.getConversation(id)), messages: [] };
  },
  async viewConversation(id, page) {
    return { conversation: await this.getConversation(id, page), pipeline };
  },
  async listConversations(page) {
    return {
      conversations: [waiting],
      pipelines: new Map([[waiting.id, pipeline]]),
      summary: { total: 1, active: 0, waitingApproval: 1, completed: 0 },
      ...(page.cursor === undefined && { nextCursor: 'next' }),
    };
  },
  async sendMessage(conversationId, message) {
    if (message === 'outage')
      throw new RpcError(
        GrpcStatus.UNAVAILABLE,
        'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7104.',
        ORCHESTRATOR,
      );
    return { conversation: { ...waiting, id: conversationId }, result: { response: 'ok', waitingApproval: false } };
  },
  async findConversationByHistory() {
    return undefined;
  },
  async recordHistoryDigest() {},
  async deleteConversation() {},
  async resolveApproval(uuid, decision, details) {
    decisions.push({ uuid, decision, ...details });
    if (uuid === 'decided') {
      const approval = approvalRecord({ uuid, status: ApprovalStatus.APPROVAL_STATUS_DONE });
      return { decided: false, approval, decision: 'approved', decidedAt: new Date('2025-01-15T10:02:40.000Z') };
    }
    const conversation = conversationRecord({
      id: 'c1',
      messages: [messageRecord({ role: MessageRole.MESSAGE_ROLE_TOOL, content: decision })],
    });
    return { decided: true, conversation, result: { response: decision, waitingApproval: false } };
  },
  async listApprovals(query) {
    approvalQueries.push(query);
    return { approvals: [approvalRecord({ decidedBy: 'alice' })], nextCursor: 'p2' };
  },
  async getApproval(uuid) {
    if (uuid !== approvalRecord().uuid)
      throw new RpcError(GrpcStatus.NOT_FOUND, `approval ${uuid} not found`, '/asg.store.v1.ConversationStoreService/GetApproval');
    return {
      approval: approvalRecord({ status: ApprovalStatus.APPROVAL_STATUS_REJECTED, decidedBy: 'alice', via: 'web', reason: 'no' }),
      sessionId: '4be2a91c',
    };
  },
  async listAudit() {
    return { entries: [] };
  },
  async listRuns() {
    return { runs: [] };
  },
  async getRun(runId) {
    return {
      run: { runId, conversationId: 'c', status: 'completed', startedAt: new Date(0), stepCount: 0, journalVersion: 1 },
      steps: [],
    };
  },
  async forkRun(runId, step, message) {
    decisions.push({ fork: runId, step, message });
    return { conversation: waiting, result: { response: 'Approval required', waitingApproval: true }, copiedOnly: false };
  },
  async listTools() {
    return [{ name: 'resources_add', description: 'Adds', inputSchema: { type: 'object' }, destructive: true, server: 'resources' }];
  },
  async toolListing() {
    return { tools: await this.listTools(), servers: [] };
  },
};

let feed: FakeEventFeed;
let server: Server;
let url: string;
const sockets = new Set<Socket>();
let client: TestTrpcClient;

beforeAll(async () => {
  feed = new FakeEventFeed();
  server = createServer(createHttpApp([trpcRouter({ agent, feed }, quiet)], quiet));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = trpcClient(url);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Cuts every open connection, as a proxy restart or a network change does. */
function dropConnections(): void {
  for (const socket of sockets) socket.destroy();
}

async function trpcError(promise: Promise<unknown>): Promise<TRPCClientError<any>> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<any>;
}

describe('queries and mutations', () => {
  it('answer with the REST shapes, built by the same functions', async () => {
    expect(await client.conversations.get.query({ id: 'c1' })).toEqual(conversationPageReply({ conversation: waiting, pipeline }));
    expect(await client.conversations.get.query({ id: 'c1', limit: 5, before: 'm9' })).toEqual(
      conversationPageReply({ conversation: waiting, pipeline }),
    );
    expect(pagesAsked.at(-1)).toEqual({ limit: 5, before: 'm9' });
    expect((await client.conversations.get.query({ id: 'c1' })).conversation.pipeline_state).toMatchObject({
      paused_node_path: [0],
      pauses: [{ approval_uuid: approvalRecord().uuid }],
    });
    // The list the web chat reads is summaries — title and counts, no messages.
    const list = await client.conversations.list.query({ limit: 10 });
    expect(list).toEqual(conversationListReply(await agent.listConversations({ limit: 10 })));
    expect(list.conversations[0]).toMatchObject({
      id: waiting.id,
      title: 'add resource web-1',
      message_count: 1,
      pending_approvals: 1,
      pipeline_state: { paused_node_path: [0] },
    });
    expect(list.conversations[0]).not.toHaveProperty('messages');
    expect(await client.conversations.create.mutate({ message: 'add resource web-1 with value 5' })).toEqual(
      conversationReply(
        { conversation: waiting, pipeline },
        { response: 'Approval required', waitingApproval: true, approval: approvalRecord() },
      ),
    );
    expect(await client.conversations.create.mutate({})).toEqual(conversationReply({ conversation: waiting, pipeline }));
    expect(await client.conversations.send.mutate({ conversationId: 'c1', message: 'hi' })).toMatchObject({
      result: { response: 'ok', waiting_approval: false },
    });
    expect(await client.approvals.resolve.mutate({ uuid: 'u1', approved: false })).toMatchObject({ result: { response: 'rejected' } });
    expect(await client.tools.list.query()).toEqual(toolListReply(await agent.listTools()));
  });

  it('refuse bad input with BAD_REQUEST and a message naming the field', async () => {
    const empty = await trpcError(client.conversations.send.mutate({ conversationId: 'c1', message: '   ' }));
    expect(empty.data?.code).toBe('BAD_REQUEST');
    expect(empty.message).toBe('message: must not be empty');
    const tooMany = await trpcError(client.conversations.list.query({ limit: 501 }));
    expect(tooMany.data?.httpStatus).toBe(400);
    expect(tooMany.message).toMatch(/^limit: /);
    // Inputs are strict; a field the input does not take is named.
    const unknown = await trpcError(
      client.conversations.send.mutate({ conversationId: 'c1', message: 'hi', stream: true } as {
        conversationId: string;
        message: string;
      }),
    );
    expect(unknown.data).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(unknown.message).toBe('unknown field "stream"');
    const misspelt = await trpcError(
      client.approvals.resolve.mutate({ uuid: 'u1', approved: true, reasons: 'x' } as { uuid: string; approved: boolean }),
    );
    expect(misspelt.message).toBe('unknown field "reasons"');
  });

  it('map backend failures to REST’s codes and messages, without stack traces', async () => {
    const missing = await trpcError(client.conversations.get.query({ id: 'nope' }));
    expect(missing.data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    expect(missing.message).toBe('conversation nope not found');
    const outage = await trpcError(client.conversations.send.mutate({ conversationId: 'c1', message: 'outage' }));
    expect(outage.data).toMatchObject({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
    expect(outage.message).toBe(
      'service unavailable: SendMessage on the orchestrator failed: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7104.',
    );
    expect(JSON.stringify(outage.data)).not.toContain('stack');
  });

  it('answer a decision made earlier with CONFLICT and REST’s 409 body in data.conflict', async () => {
    const conflict = await trpcError(client.approvals.resolve.mutate({ uuid: 'decided', approved: true }));
    expect(conflict.data).toMatchObject({
      code: 'CONFLICT',
      httpStatus: 409,
      conflict: { decision: 'approved', approval: { uuid: 'decided', tool_name: 'resources_add' } },
    });
    expect(conflict.message).toBe('approval decided was already approved at 2025-01-15T10:02:40.000Z');
  });

  it('list and read approvals as REST does, and decide with the web face, a reason and edited arguments', async () => {
    expect(await client.approvals.list.query({ status: ['pending', 'expired'], conversationId: 'c1', limit: 5 })).toEqual({
      approvals: [approvalRecordJson(approvalRecord({ decidedBy: 'alice' }))],
      next_cursor: 'p2',
    });
    await client.approvals.list.query();
    expect(approvalQueries.slice(-2)).toEqual([{ limit: 5, statuses: ['pending', 'expired'], conversationId: 'c1' }, { limit: 50 }]);
    expect(await client.approvals.get.query({ uuid: approvalRecord().uuid })).toMatchObject({
      status: 'rejected',
      decided_by: 'alice',
      via: 'web',
      reason: 'no',
    });
    const missing = await trpcError(client.approvals.get.query({ uuid: 'nope' }));
    expect(missing.data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });

    await client.approvals.resolve.mutate({ uuid: 'u1', approved: true, arguments: { name: 'web-9', value: 1 } });
    await client.approvals.resolve.mutate({ uuid: 'u2', approved: false, reason: '  too big ' });
    expect(decisions.slice(-2)).toEqual([
      {
        uuid: 'u1',
        decision: 'approved',
        decider: { principal: 'anonymous', via: 'web', roles: ['chat', 'approve', 'admin'] },
        arguments: { name: 'web-9', value: 1 },
      },
      {
        uuid: 'u2',
        decision: 'rejected',
        decider: { principal: 'anonymous', via: 'web', roles: ['chat', 'approve', 'admin'] },
        reason: 'too big',
      },
    ]);
    const withRejection = await trpcError(client.approvals.resolve.mutate({ uuid: 'u3', approved: false, arguments: { name: 'x' } }));
    expect(withRejection.data?.code).toBe('BAD_REQUEST');
    expect(withRejection.message).toBe('arguments: arguments are only taken with an approval: a rejected call does not run');
    // The answer to an MCP server's question travels as `input`, with an approval only.
    await client.approvals.resolve.mutate({ uuid: 'u4', approved: true, input: { name: 'Ada' } });
    expect(decisions.at(-1)).toEqual({
      uuid: 'u4',
      decision: 'approved',
      decider: { principal: 'anonymous', via: 'web', roles: ['chat', 'approve', 'admin'] },
      input: { name: 'Ada' },
    });
    const declinedWithInput = await trpcError(client.approvals.resolve.mutate({ uuid: 'u5', approved: false, input: { name: 'x' } }));
    expect(declinedWithInput.message).toBe('input: input is only taken with an approval: a rejection declines the question');
    const badStatus = await trpcError(client.approvals.list.query({ status: ['waiting' as 'pending'] }));
    expect(badStatus.data?.code).toBe('BAD_REQUEST');
  });

  it('make a session id for new work and leave calls about a conversation to its stored one', async () => {
    await client.conversations.create.mutate({});
    expect(sessions.create).toMatch(/^[0-9a-f]{8}$/);
    await client.conversations.get.query({ id: 'c1' });
    expect(sessions.get).toBe('');
    await trpcClient(url, { 'X-Session-ID': 'C0FFEE42' }).conversations.create.mutate({});
    expect(sessions.create).toBe('c0ffee42');
  });
});

describe('subscriptions', () => {
  afterEach(() => {
    feed.pending = [];
  });

  const added = (content: string) => ({ conversationId: 'c1', messageAdded: messageRecord({ id: `m-${content}`, content }) });
  const contentOf = (update: ConversationUpdate) => (update.kind === 'message_added' ? update.message.content : update.kind);

  it('conversation.events: a snapshot, stored events tracked by id, live events untracked', async () => {
    const watch = record<ConversationUpdate>((callbacks) => client.conversation.events.subscribe({ conversationId: 'c1' }, callbacks));
    await vi.waitFor(() => expect(watch.items).toHaveLength(1));
    expect(watch.items[0]).toEqual({
      data: { kind: 'snapshot', conversation: conversationReply({ conversation: waiting, pipeline }).conversation },
    });
    const stored = feed.store(added('first'));
    feed.publish({ conversationId: 'c1', textDelta: { text: 'Do' } });
    feed.store({ conversationId: 'other', messageAdded: messageRecord() });
    await vi.waitFor(() => expect(watch.items).toHaveLength(3));
    const open = feed.openWatches;
    watch.stop();
    // The server lets go of the store's stream when the client leaves, with no event to wake it.
    await vi.waitFor(() => expect(feed.openWatches).toBe(open - 1));
    expect(watch.items[1]).toEqual({
      id: String(stored.id),
      data: expect.objectContaining({ id: stored.id, kind: 'message_added', conversation_id: 'c1' }),
    });
    expect(watch.items[2]).toEqual({ data: expect.objectContaining({ id: 0, kind: 'text_delta', text: 'Do' }) });
  });

  it('conversation.events: an unknown conversation ends the subscription with NOT_FOUND', async () => {
    const watch = record<ConversationUpdate>((callbacks) => client.conversation.events.subscribe({ conversationId: 'nope' }, callbacks));
    await vi.waitFor(() => expect(watch.errors).toHaveLength(1));
    expect(watch.errors[0]!.data?.code).toBe('NOT_FOUND');
    expect(watch.errors[0]!.message).toBe('conversation nope not found');
  });

  it('conversation.events: after a dropped connection, resumes after the last stored event and gets exactly what it missed, in order', async () => {
    const watch = record<ConversationUpdate>((callbacks) => client.conversation.events.subscribe({ conversationId: 'c1' }, callbacks));
    await vi.waitFor(() => expect(watch.items).toHaveLength(1));
    const before = feed.store(added('before'));
    feed.publish({ conversationId: 'c1', textDelta: { text: 'live, sent before the drop' } });
    await vi.waitFor(() => expect(watch.items).toHaveLength(3));
    const watchesBefore = feed.watchRequests.length;

    dropConnections();
    // Stored while nobody was connected: the store keeps them. A live event now reaches no one.
    feed.store(added('missed-1'));
    feed.publish({ conversationId: 'c1', textDelta: { text: 'live, lost with the connection' } });
    feed.store(added('missed-2'));
    await vi.waitFor(() => expect(watch.items.length).toBeGreaterThanOrEqual(5), { timeout: 10_000 });
    feed.store(added('after'));
    await vi.waitFor(() => expect(watch.items).toHaveLength(6));
    watch.stop();

    // The link reconnected naming the last stored event it had, not the live one after it.
    expect(feed.watchRequests.slice(watchesBefore)).toEqual([{ conversationId: 'c1', afterId: before.id }]);
    expect(watch.items.map((item) => contentOf(item.data))).toEqual(['snapshot', 'before', 'text_delta', 'missed-1', 'missed-2', 'after']);
    // No second snapshot, nothing twice; every stored event kept its id.
    expect(watch.items.filter((item) => item.id !== undefined).map((item) => Number(item.id))).toEqual(
      feed.stored.filter((event) => event.conversationId === 'c1' && event.id >= before.id).map((event) => event.id),
    );
  }, 20_000);

  it('approvals.pending: the pending ones, then requests and resolutions of any conversation, and nothing else', async () => {
    feed.pending = [approvalRecord({ uuid: 'u-old', conversationId: 'c0' })];
    const watch = record<PendingApprovalUpdate>((callbacks) => client.approvals.pending.subscribe(undefined, callbacks));
    await vi.waitFor(() => expect(watch.items).toHaveLength(1));
    expect(watch.items[0]!.data).toMatchObject({ kind: 'snapshot', approvals: [{ uuid: 'u-old', conversation_id: 'c0' }] });
    feed.store({ conversationId: 'c2', messageAdded: messageRecord() });
    const requested = feed.store({ conversationId: 'c2', approvalRequested: approvalRecord({ uuid: 'u-new', conversationId: 'c2' }) });
    feed.store({
      conversationId: 'c0',
      approvalResolved: approvalRecord({ uuid: 'u-old', conversationId: 'c0', status: ApprovalStatus.APPROVAL_STATUS_REJECTED }),
    });
    await vi.waitFor(() => expect(watch.items).toHaveLength(3));
    watch.stop();
    expect(watch.items[1]).toEqual({
      id: String(requested.id),
      data: expect.objectContaining({ kind: 'approval_requested', approval: expect.objectContaining({ uuid: 'u-new' }) }),
    });
    expect(watch.items[2]!.data).toMatchObject({ kind: 'approval_resolved', decision: 'rejected', approval: { uuid: 'u-old' } });
  });

  it('approvals.pending: resumes after a drop with the approval events it missed, without a new snapshot', async () => {
    const watch = record<PendingApprovalUpdate>((callbacks) => client.approvals.pending.subscribe(undefined, callbacks));
    await vi.waitFor(() => expect(watch.items).toHaveLength(1));
    const first = feed.store({ conversationId: 'c5', approvalRequested: approvalRecord({ uuid: 'u5', conversationId: 'c5' }) });
    await vi.waitFor(() => expect(watch.items).toHaveLength(2));
    const watchesBefore = feed.watchRequests.length;
    dropConnections();
    feed.store({
      conversationId: 'c5',
      approvalResolved: approvalRecord({ uuid: 'u5', conversationId: 'c5', status: ApprovalStatus.APPROVAL_STATUS_APPROVED }),
    });
    await vi.waitFor(() => expect(watch.items).toHaveLength(3), { timeout: 10_000 });
    watch.stop();
    expect(feed.watchRequests.slice(watchesBefore)).toEqual([{ afterId: first.id }]);
    expect(watch.items.map((item) => item.data.kind)).toEqual(['snapshot', 'approval_requested', 'approval_resolved']);
  }, 20_000);
});
