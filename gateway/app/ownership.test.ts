import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, isCode, notFound } from '../../services/common/grpc/errors.js';
import { conversationRecord } from '../../test/support/store-records.js';
import type { Agent, ConversationQuery, NewConversationOrigin } from './agent.js';
import { AccessDenied } from './decision-guard.js';
import { failureOf } from './errors.js';
import { guardConversations, listingOwner, mayAccess, ownerOfNewConversation, requireAccess } from './ownership.js';
import { withAuthScope, type AuthScope, type Role } from './principal.js';

/** Who may see and talk to a conversation: the rule, and the guard every face's operations pass. Owners are principals: `token:alice`, `jwt:<issuer>#alice`. */

const ALICE = '11111111-1111-4111-8111-111111111111';
const NOBODYS = '22222222-2222-4222-8222-222222222222';
const UNKNOWN = '33333333-3333-4333-8333-333333333333';

const ISSUER = 'https://issuer.test';
const who = (name: string, ...roles: Role[]) => ({ id: `token:${name}`, name, roles });
const alice = who('alice', 'chat');
/** A JWT whose name claim says alice: another principal than the token alice. */
const jwtAlice = { id: `jwt:${ISSUER}#alice`, name: 'alice', roles: ['chat'] as Role[] };
const bob = who('bob', 'chat');
const carol = who('carol', 'approve');
const carolWhoChats = who('carol', 'chat', 'approve');
const root = who('root', 'admin');

describe('mayAccess: the rule', () => {
  it('lets a chat principal read and write its own conversations only', () => {
    expect([mayAccess(alice, 'token:alice', 'read'), mayAccess(alice, 'token:alice', 'write')]).toEqual([true, true]);
    expect([mayAccess(bob, 'token:alice', 'read'), mayAccess(bob, 'token:alice', 'write')]).toEqual([false, false]);
    expect([mayAccess(alice, undefined, 'read'), mayAccess(alice, undefined, 'write')]).toEqual([false, false]);
    // Principals are compared exactly.
    expect(mayAccess(who('Alice', 'chat'), 'token:alice', 'read')).toBe(false);
  });

  it('keeps a JWT and an API token of the same name apart, both ways', () => {
    expect([mayAccess(jwtAlice, 'token:alice', 'read'), mayAccess(jwtAlice, 'token:alice', 'write')]).toEqual([false, false]);
    expect([mayAccess(alice, `jwt:${ISSUER}#alice`, 'read'), mayAccess(alice, `jwt:${ISSUER}#alice`, 'write')]).toEqual([false, false]);
    expect(mayAccess(jwtAlice, `jwt:${ISSUER}#alice`, 'write')).toBe(true);
    // A bare name (an owner from before principals named their source, not migrated) is nobody's.
    expect([mayAccess(alice, 'alice', 'read'), mayAccess(jwtAlice, 'alice', 'read')]).toEqual([false, false]);
    expect([listingOwner(alice), listingOwner(jwtAlice)]).toEqual(['token:alice', `jwt:${ISSUER}#alice`]);
  });

  it('lets an approver read every conversation, its own or not, owned or not, and write only its own with chat', () => {
    for (const owner of ['token:alice', undefined, 'token:carol']) expect(mayAccess(carol, owner, 'read')).toBe(true);
    expect(mayAccess(carol, 'token:alice', 'write')).toBe(false);
    expect(mayAccess(carol, 'token:carol', 'write')).toBe(false);
    expect(mayAccess(carolWhoChats, 'token:carol', 'write')).toBe(true);
    expect(mayAccess(carolWhoChats, 'token:alice', 'write')).toBe(false);
  });

  it('lets an admin read and write everything, and a principal without roles nothing', () => {
    for (const owner of ['token:alice', undefined])
      for (const access of ['read', 'write'] as const) expect(mayAccess(root, owner, access)).toBe(true);
    expect(mayAccess(who('alice'), 'token:alice', 'read')).toBe(false);
  });

  it('lists only the own conversations of whoever may not read all of them', () => {
    expect([listingOwner(alice), listingOwner(carol), listingOwner(carolWhoChats), listingOwner(root)]).toEqual([
      'token:alice',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('gives a new conversation its creator as owner when authentication is on, and none without', () => {
    const scope = (authentication: boolean): AuthScope => ({
      principal: { ...alice, via: 'rest' },
      subject: 'POST /conversations',
      authentication,
    });
    expect(ownerOfNewConversation(scope(true))).toBe('token:alice');
    expect(ownerOfNewConversation(scope(false))).toBeUndefined();
    expect(ownerOfNewConversation(undefined)).toBeUndefined();
  });
});

describe('requireAccess', () => {
  it('answers a stranger exactly as the store answers an unknown id, whether it reads or writes', () => {
    const store = failureOf(notFound(`conversation ${ALICE} not found`));
    for (const access of ['read', 'write'] as const) {
      const error = catching(() => requireAccess(bob, { id: ALICE, owner: 'token:alice' }, access));
      expect(isCode(error, GrpcStatus.NOT_FOUND)).toBe(true);
      expect(failureOf(error)).toEqual(store);
    }
  });

  it('refuses an approver who writes to a conversation it may read with 403, naming whose it is', () => {
    const error = catching(() => requireAccess(carolWhoChats, { id: ALICE, owner: 'token:alice' }, 'write'));
    expect(error).toBeInstanceOf(AccessDenied);
    expect(failureOf(error)).toMatchObject({
      status: 403,
      message: expect.stringContaining(`token:carol may read conversation ${ALICE} but not send to it: it belongs to token:alice`),
    });
    expect(failureOf(catching(() => requireAccess(carol, { id: NOBODYS }, 'write'))).message).toContain(
      'created without authentication and belongs to nobody',
    );
  });
});

function catching(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

/** The application layer in miniature: two conversations, alice's and one without owner; every call recorded. */
function fakeAgent() {
  const stored = new Map<string, Conversation>([
    [ALICE, conversationRecord({ id: ALICE, owner: 'token:alice' })],
    [NOBODYS, conversationRecord({ id: NOBODYS })],
  ]);
  const calls: string[] = [];
  const created: (NewConversationOrigin | undefined)[] = [];
  const listed: ConversationQuery[] = [];
  const find = (id: string) => {
    const conversation = stored.get(id);
    if (!conversation) throw notFound(`conversation ${id} not found`);
    return conversation;
  };
  const agent: Pick<
    Agent,
    | 'createConversation'
    | 'getConversation'
    | 'getConversationRecord'
    | 'viewConversation'
    | 'listConversations'
    | 'sendMessage'
    | 'findConversationByHistory'
    | 'recordHistoryDigest'
    | 'deleteConversation'
    | 'listTools'
    | 'listRuns'
    | 'getRun'
    | 'forkRun'
  > = {
    async createConversation(_message, origin) {
      created.push(origin);
      return { conversation: conversationRecord({ owner: origin?.owner }) };
    },
    async getConversation(id) {
      calls.push(`get ${id}`);
      return find(id);
    },
    async getConversationRecord(id) {
      calls.push(`record ${id}`);
      return find(id);
    },
    async viewConversation(id) {
      calls.push(`view ${id}`);
      return { conversation: find(id) };
    },
    async listConversations(query) {
      listed.push(query);
      return { conversations: [], pipelines: new Map(), summary: undefined };
    },
    async sendMessage(id) {
      calls.push(`send ${id}`);
      return { conversation: find(id), result: { response: 'ok', waitingApproval: false } };
    },
    async findConversationByHistory(digest, owner) {
      calls.push(`find ${digest} of ${owner ?? 'nobody'}`);
      return undefined;
    },
    async recordHistoryDigest(id, digest) {
      calls.push(`digest ${digest} on ${id}`);
    },
    async deleteConversation(id) {
      calls.push(`delete ${id}`);
    },
    async listTools() {
      calls.push('tools');
      return [];
    },
    async listRuns(id) {
      calls.push(`runs ${id}`);
      find(id);
      return { runs: [] };
    },
    async getRun(runId) {
      calls.push(`run ${runId}`);
      const conversationId = runId === 'run-of-alice' ? ALICE : NOBODYS;
      return {
        run: { runId, conversationId, status: 'completed', startedAt: undefined, stepCount: 0, journalVersion: 1 },
        steps: [],
      };
    },
    async forkRun(runId: string, step: number, message?: string, owner?: string) {
      calls.push(`fork ${runId} at ${step}${message === undefined ? '' : ` with ${message}`} for ${owner ?? 'nobody'}`);
      return { conversation: { ...find(NOBODYS), owner }, result: { response: '', waitingApproval: false }, copiedOnly: true };
    },
  };
  return { agent: guardConversations(agent), calls, created, listed };
}

const as = <T>(principal: { id: string; name: string; roles: Role[] }, run: () => Promise<T>, authentication = true) =>
  withAuthScope({ principal: { ...principal, via: 'rest' }, subject: 'GET /conversations/:id', authentication }, run);

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => failureOf(error),
  );

describe('guardConversations', () => {
  it('lets alice read and talk to her conversation, checked on its record first', async () => {
    const { agent, calls } = fakeAgent();
    await as(alice, () => agent.getConversation(ALICE));
    await as(alice, () => agent.viewConversation(ALICE));
    await as(alice, () => agent.sendMessage(ALICE, 'hi'));
    expect(calls).toEqual([`record ${ALICE}`, `get ${ALICE}`, `record ${ALICE}`, `view ${ALICE}`, `record ${ALICE}`, `send ${ALICE}`]);
  });

  it("answers bob 404 for alice's conversation on every operation, as for an unknown id, and reads, describes and runs nothing", async () => {
    const { agent, calls } = fakeAgent();
    const unknown = await as(bob, () => failure(agent.getConversation(UNKNOWN)));
    for (const operation of [
      () => agent.getConversation(ALICE),
      () => agent.getConversationRecord(ALICE),
      () => agent.viewConversation(ALICE),
      () => agent.sendMessage(ALICE, 'hi'),
    ]) {
      expect(await as(bob, () => failure(operation()))).toEqual({ ...unknown, message: unknown!.message.replace(UNKNOWN, ALICE) });
    }
    expect(unknown).toMatchObject({ status: 404 });
    expect(calls.filter((call) => !call.startsWith('record'))).toEqual([]);
  });

  it('lets an approver read everyone’s without a second read, refuses its message with 403 before anything runs', async () => {
    const { agent, calls } = fakeAgent();
    await as(carol, () => agent.getConversation(ALICE));
    await as(carol, () => agent.viewConversation(NOBODYS));
    expect(await as(carolWhoChats, () => failure(agent.sendMessage(ALICE, 'hi')))).toMatchObject({ status: 403 });
    expect(calls).toEqual([`get ${ALICE}`, `view ${NOBODYS}`, `record ${ALICE}`]);
  });

  it("looks a resent history up among the caller's own conversations only, an admin's too, and records one only where it may write", async () => {
    const { agent, calls } = fakeAgent();
    await as(alice, () => agent.findConversationByHistory('d', 'token:bob'));
    await as(root, () => agent.findConversationByHistory('d'));
    await as(alice, () => agent.findConversationByHistory('d'), false);
    await as(alice, () => agent.recordHistoryDigest(ALICE, 'd'));
    expect(await as(bob, () => failure(agent.recordHistoryDigest(ALICE, 'd')))).toMatchObject({ status: 404 });
    expect(calls).toEqual([
      'find d of token:alice',
      `find d of ${root.id}`,
      'find d of nobody',
      `record ${ALICE}`,
      `digest d on ${ALICE}`,
      `record ${ALICE}`,
    ]);
  });

  it('lets the owner and an admin delete a conversation; bob gets 404 and an approver 403, and nothing is deleted', async () => {
    const { agent, calls } = fakeAgent();
    const decider = { principal: 'token:alice', via: 'rest' as const };
    await as(alice, () => agent.deleteConversation(ALICE, decider));
    expect(await as(bob, () => failure(agent.deleteConversation(ALICE, decider)))).toMatchObject({ status: 404 });
    expect(await as(carolWhoChats, () => failure(agent.deleteConversation(ALICE, decider)))).toMatchObject({ status: 403 });
    await as(root, () => agent.deleteConversation(ALICE, decider));
    expect(calls).toEqual([`record ${ALICE}`, `delete ${ALICE}`, `record ${ALICE}`, `record ${ALICE}`, `delete ${ALICE}`]);
  });

  it("reads runs as their conversation is: alice her own; bob 404 for alice's, as for an unknown run; an approver everyone's", async () => {
    const { agent, calls } = fakeAgent();
    await as(alice, () => agent.listRuns(ALICE, { limit: 10 }));
    expect((await as(alice, () => agent.getRun('run-of-alice'))).run.conversationId).toBe(ALICE);
    expect(await as(bob, () => failure(agent.listRuns(ALICE, { limit: 10 })))).toMatchObject({ status: 404 });
    expect(await as(bob, () => failure(agent.getRun('run-of-alice')))).toMatchObject({
      status: 404,
      message: 'run run-of-alice not found',
    });
    await as(carol, () => agent.getRun('run-of-alice'));
    expect(calls).toEqual([
      `record ${ALICE}`,
      `runs ${ALICE}`,
      'run run-of-alice',
      `record ${ALICE}`,
      `record ${ALICE}`,
      'run run-of-alice',
      `record ${ALICE}`,
      'run run-of-alice',
    ]);
  });

  it("forks a run the caller may read into a conversation of the caller's own; bob gets 404 for alice's and nothing is forked", async () => {
    const { agent, calls } = fakeAgent();
    expect((await as(alice, () => agent.forkRun('run-of-alice', 2, 'again'))).conversation.owner).toBe('token:alice');
    expect(await as(bob, () => failure(agent.forkRun('run-of-alice', 0)))).toMatchObject({
      status: 404,
      message: 'run run-of-alice not found',
    });
    expect(calls.filter((call) => call.startsWith('fork'))).toEqual(['fork run-of-alice at 2 with again for token:alice']);
  });

  it('lets an admin do everything without reading the record first', async () => {
    const { agent, calls } = fakeAgent();
    await as(root, () => agent.getConversation(ALICE));
    await as(root, () => agent.sendMessage(NOBODYS, 'hi'));
    expect(calls).toEqual([`get ${ALICE}`, `send ${NOBODYS}`]);
  });

  it('hides a conversation created without authentication from a chat principal', async () => {
    const { agent } = fakeAgent();
    expect(await as(alice, () => failure(agent.getConversation(NOBODYS)))).toMatchObject({ status: 404 });
  });

  it("answers a JWT named alice 404 for the token alice's conversation, as for an unknown id, and gives its own conversations its own principal", async () => {
    const { agent, calls, created } = fakeAgent();
    const unknown = await as(jwtAlice, () => failure(agent.getConversation(UNKNOWN)));
    for (const operation of [
      () => agent.getConversation(ALICE),
      () => agent.viewConversation(ALICE),
      () => agent.sendMessage(ALICE, 'hi'),
    ]) {
      expect(await as(jwtAlice, () => failure(operation()))).toEqual({ ...unknown, message: unknown!.message.replace(UNKNOWN, ALICE) });
    }
    expect(calls.filter((call) => !call.startsWith('record'))).toEqual([]);
    await as(jwtAlice, () => agent.createConversation('hi'));
    expect(created).toEqual([{ owner: `jwt:${ISSUER}#alice` }]);
  });

  it("lists only a chat principal's own conversations, everyone's for an approver or admin, whatever the query asked", async () => {
    const { agent, listed } = fakeAgent();
    await as(alice, () => agent.listConversations({ limit: 10, owner: 'token:bob' }));
    await as(carol, () => agent.listConversations({ limit: 10 }));
    await as(root, () => agent.listConversations({ limit: 5, cursor: 'c' }));
    expect(listed).toEqual([{ limit: 10, owner: 'token:alice' }, { limit: 10 }, { limit: 5, cursor: 'c' }]);
  });

  it('makes the creator the owner of a new conversation, keeping its A2A origin', async () => {
    const { agent, created } = fakeAgent();
    const origin = { dialect: 'v1.0', contextId: 'ctx' };
    const { conversation } = await as(alice, () => agent.createConversation('hi', { a2aOrigin: origin }));
    expect(conversation.owner).toBe('token:alice');
    expect(created).toEqual([{ a2aOrigin: origin, owner: 'token:alice' }]);
  });

  it('refuses every operation outside a request, and leaves the others (tools) alone', async () => {
    const { agent, calls } = fakeAgent();
    await expect(agent.getConversation(ALICE)).rejects.toBeInstanceOf(AccessDenied);
    await expect(agent.listConversations({ limit: 1 })).rejects.toBeInstanceOf(AccessDenied);
    await expect(agent.createConversation('hi')).rejects.toBeInstanceOf(AccessDenied);
    await agent.listTools();
    expect(calls).toEqual(['tools']);
  });
});
