/**
 * The data lifecycle (store.proto DeleteConversation, ListIdleConversations, PruneEvents, ClaimBackgroundLease,
 * PruneAudit, PruneRunJournals): a deletion is one transaction that leaves only the audit and one event; the event log
 * loses a prefix older than the window, whatever consumer stayed behind (named and moved past it); the audit trail gives
 * up only entries older than its retention; a run's journal goes once the run ended longer ago than its retention, never
 * while it runs or waits. Run on each driver (sqlite-storage.test.ts, postgres-storage.test.ts), each test on
 * a database of its own, with a clock of its own.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  ApprovalStatus,
  type ConversationEvent,
  MessageRole,
  type PendingApproval,
  type RunLease,
  type RunStep,
} from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { until } from '../../test/support/until.js';
import type { ConversationStorage } from './storage.js';

const DAY_MS = 24 * 3_600_000;
const KEEP_MS = 7 * DAY_MS;
const RUN_KEEP_MS = 9 * DAY_MS;

export function lifecycleConformance(driver: StorageDriver): void {
  let clock = Date.parse('2026-11-01T00:00:00.000Z');
  let storage: ConversationStorage;
  const opened: ConversationStorage[] = [];
  const open = async () => {
    const store = await driver.open({ now: () => clock });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    clock = Date.parse('2026-11-01T00:00:00.000Z');
    await driver.createDatabase();
    storage = await open();
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await driver.dropDatabase();
  });

  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (error: { code?: number }) => error.code,
    );
  const user = (content: string) => ({ role: MessageRole.MESSAGE_ROLE_USER, content });

  async function conversationWithTurn(owner?: string): Promise<string> {
    const { id } = await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'be brief', ...(owner && { owner }) });
    await storage.startTurn({ conversationId: id, message: user('delete /tmp/x') });
    return id;
  }

  /** A conversation whose run waits for one approval of delete_file. */
  async function waitingFor(owner?: string): Promise<PendingApproval> {
    const id = await conversationWithTurn(owner);
    return storage.createApproval({
      conversationId: id,
      toolCallId: 'call-1',
      toolName: 'delete_file',
      toolArgsJson: JSON.stringify({ path: '/tmp/x' }),
      description: 'Delete /tmp/x',
      messages: [],
      agentChain: [],
    });
  }

  const deleteIt = (id: string, on: ConversationStorage = storage) => on.deleteConversation({ id, actor: 'token:carol', via: 'rest' });
  const audit = async (kinds: string[]) => (await storage.listAudit({ kinds, pageSize: 500, pageToken: '' })).entries;
  const eventIds = async () => (await storage.readEvents({ afterId: 0, limit: 10_000 })).map((event) => event.id);

  it('deletes a conversation and all of it but its audit entries, rejecting its pending approval first', async () => {
    const approval = await waitingFor('token:carol');
    const id = approval.conversationId;
    await storage.setPushConfig({
      conversationId: id,
      id: 'p1',
      url: 'https://hooks.example.com/a',
      token: 't',
      dialect: 'v0.3',
      createdAt: undefined,
    });
    await storage.recordHistoryDigest(id, 'digest-1');
    const kept = await conversationWithTurn('token:carol');
    const committed: ConversationEvent[] = [];
    const unsubscribe = storage.onEventsCommitted((events) => committed.push(...events));

    expect(await deleteIt(id)).toEqual([approval.uuid]);
    unsubscribe();

    expect(await codeOf(storage.getConversation({ id, includeMessages: true }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(storage.getApproval(approval.uuid))).toBe(GrpcStatus.NOT_FOUND);
    expect(await storage.listPushConfigs(id)).toEqual([]);
    expect(await storage.findConversationByHistory('digest-1', 'token:carol')).toBeUndefined();
    // The other conversation is whole; only the deletion's event is left of the deleted one.
    expect((await storage.getConversation({ id: kept, includeMessages: true })).messages).toHaveLength(2);
    const left = await storage.readEvents({ conversationId: id, afterId: 0, limit: 100 });
    expect(left.map((event) => Boolean(event.conversationDeleted))).toEqual([true]);
    expect(committed.map((event) => [event.conversationId, Boolean(event.conversationDeleted)])).toEqual([[id, true]]);
    expect(await driver.countRows('messages')).toBe(2);
    expect(await driver.countRows('approvals')).toBe(0);
    expect(await driver.countRows('conversations')).toBe(1);
    // The counts follow: the owner's and everyone's.
    const page = await storage.listConversations({ pageSize: 10, pageToken: '', owner: 'token:carol' });
    expect(page.summary).toMatchObject({ total: 1, waitingApproval: 0, active: 1 });

    const [decided] = await audit(['approval.decided']);
    expect(decided).toMatchObject({ actor: 'token:carol', via: 'rest', subject: approval.uuid });
    expect(JSON.parse(decided!.detailJson)).toMatchObject({ conversation_id: id, status: 'rejected', reason: 'conversation deleted' });
    const deleted = await audit(['conversation.deleted']);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ actor: 'token:carol', via: 'rest', subject: id });
    expect(JSON.parse(deleted[0]!.detailJson)).toMatchObject({ rejected_approvals: [approval.uuid], owner: 'token:carol' });

    // Once: a second deletion finds nothing, and audits nothing.
    expect(await codeOf(deleteIt(id))).toBe(GrpcStatus.NOT_FOUND);
    expect(await audit(['conversation.deleted'])).toHaveLength(1);
  });

  it('of two stores deleting one conversation at once, one deletes it', async () => {
    const id = await conversationWithTurn();
    const other = await open();
    const outcomes = await Promise.all([codeOf(deleteIt(id)), codeOf(deleteIt(id, other))]);
    expect(outcomes.sort()).toEqual(['resolved', GrpcStatus.NOT_FOUND].sort());
    expect(await audit(['conversation.deleted'])).toHaveLength(1);
  });

  it('refuses a deletion while an approved call has no outcome, and deletes once it has one', async () => {
    const approval = await waitingFor();
    await storage.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [] });
    expect(await codeOf(deleteIt(approval.conversationId))).toBe(GrpcStatus.FAILED_PRECONDITION);
    await storage.startApprovalExecution(approval.uuid);
    expect(await codeOf(deleteIt(approval.conversationId))).toBe(GrpcStatus.FAILED_PRECONDITION);
    const finished = await storage.finishApprovalExecution({ uuid: approval.uuid, success: true, messages: [] });
    expect(finished.status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
    expect(await deleteIt(approval.conversationId)).toEqual([]);
    expect(await codeOf(storage.getConversation({ id: approval.conversationId, includeMessages: false }))).toBe(GrpcStatus.NOT_FOUND);
  });

  it('lists the conversations idle longer than asked, least recently changed first', async () => {
    const oldest = await conversationWithTurn();
    clock += DAY_MS;
    const older = await conversationWithTurn();
    clock += 5 * DAY_MS;
    await conversationWithTurn();
    expect(await storage.listIdleConversations(4 * DAY_MS, 10)).toEqual([oldest, older]);
    expect(await storage.listIdleConversations(4 * DAY_MS, 1)).toEqual([oldest]);
    expect(await storage.listIdleConversations(10 * DAY_MS, 10)).toEqual([]);
  });

  it('prunes the head of the event log older than the window, in batches, and resumes within it without a gap', async () => {
    await conversationWithTurn();
    await conversationWithTurn();
    const old = await eventIds();
    clock += KEEP_MS + DAY_MS;
    await conversationWithTurn();
    const young = (await eventIds()).slice(old.length);

    // A young event is never removed: nothing older than the window lies behind the head.
    const first = await storage.pruneEvents(KEEP_MS, 2);
    expect(first).toMatchObject({ removed: 2, throughId: old[1] });
    let removed = first.removed;
    for (;;) {
      const batch = await storage.pruneEvents(KEEP_MS, 2);
      if (batch.removed === 0) break;
      removed += batch.removed;
    }
    expect(removed).toBe(old.length);
    expect(await eventIds()).toEqual(young);
    // A resume from the last pruned id, or from any id within the window, misses nothing.
    expect((await storage.readEvents({ afterId: old.at(-1)!, limit: 100 })).map((event) => event.id)).toEqual(young);
    expect((await storage.readEvents({ afterId: young[0]!, limit: 100 })).map((event) => event.id)).toEqual(young.slice(1));
    expect(await storage.pruneEvents(KEEP_MS, 100)).toEqual({ removed: 0, throughId: 0, skipped: [] });
  });

  it('keeps an event a consumer has not passed while it is within the window, and skips the consumer past it after', async () => {
    const lease: RunLease = { owner: 'orchestrator-a', node: 'node-a', ttlMs: 60_000 };
    await conversationWithTurn();
    // A cursor starts at the newest event: the hook has passed these.
    expect((await storage.claimWebhookCursor('hook', lease)).held).toBe(true);
    const passed = await eventIds();
    await conversationWithTurn();
    const behind = (await eventIds()).slice(passed.length);

    clock += KEEP_MS / 2;
    expect((await storage.pruneEvents(KEEP_MS, 100)).removed).toBe(0);
    expect(await eventIds()).toEqual([...passed, ...behind]);

    clock += KEEP_MS;
    const pruned = await storage.pruneEvents(KEEP_MS, 100);
    expect(pruned.removed).toBe(passed.length + behind.length);
    expect(pruned.skipped).toEqual([{ name: 'hook', lastEventId: passed.at(-1) }]);
    expect((await storage.claimWebhookCursor('hook', lease)).lastEventId).toBe(behind.at(-1));
  });

  it('leases background work to one holder at a time until its lease expires', async () => {
    const other = await open();
    const a: RunLease = { owner: 'orchestrator-a', node: 'node-a', ttlMs: 60_000 };
    const b: RunLease = { owner: 'orchestrator-b', node: 'node-b', ttlMs: 60_000 };
    const claims = await Promise.all([storage.claimBackgroundLease('sweep', a), other.claimBackgroundLease('sweep', b)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [holder, waiter] = claims[0] ? [a, b] : [b, a];
    expect(await storage.claimBackgroundLease('sweep', holder)).toBe(true);
    expect(await storage.claimBackgroundLease('sweep', waiter)).toBe(false);
    expect(await storage.claimBackgroundLease('another', waiter)).toBe(true);
    // A short lease that its holder does not renew: the other takes it once it has expired (PostgreSQL: the database's clock).
    await storage.claimBackgroundLease('short', { ...holder, ttlMs: 1 });
    clock += 10;
    await until('the expired lease to be taken', () => other.claimBackgroundLease('short', waiter));
  });

  it('removes only the audit entries older than its retention, and nothing else may delete one', async () => {
    await storage.appendAudit({
      id: 0,
      at: undefined,
      kind: 'config.loaded',
      actor: 'orchestrator',
      via: '',
      subject: 'agent.yaml',
      detailJson: '{}',
    });
    clock += 30 * DAY_MS;
    await storage.appendAudit({
      id: 0,
      at: undefined,
      kind: 'config.loaded',
      actor: 'orchestrator',
      via: '',
      subject: 'agent.yaml',
      detailJson: '{}',
    });
    const [newest, oldest] = await audit([]);
    expect(await storage.pruneAudit(10 * DAY_MS, 100)).toBe(1);
    expect((await audit([])).map((entry) => entry.id)).toEqual([newest!.id]);
    expect(oldest!.id).toBeLessThan(newest!.id);
    expect(await storage.pruneAudit(10 * DAY_MS, 100)).toBe(0);
    await storage.close();
    opened.splice(opened.indexOf(storage), 1);
    await expect(driver.execute('DELETE FROM audit')).rejects.toThrow(/append-only/);
  });
  /** A run of a conversation of its own, written with `steps` model calls and left `status` (its end: the store's clock). */
  async function journaledRun(status: string, steps: number): Promise<{ runId: string; conversationId: string }> {
    const conversationId = await conversationWithTurn();
    const runId = randomUUID();
    const step: RunStep = {
      index: 0,
      kind: 'model_call',
      node: 'assistant',
      startedAtMs: clock,
      durationMs: 10,
      bodyJson: JSON.stringify({ model: 'gemini-2.5-flash', provider: 'gemini', input_tokens: 3, output_tokens: 2, finish_reason: 'stop' }),
    };
    await storage.updateRun({
      conversationId,
      messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'done' }],
      approvals: [],
      expectedRevision: 0,
      returnConversation: false,
      journal: { runId, startedAtMs: clock, status, steps: Array.from({ length: steps }, () => step) },
    });
    return { runId, conversationId };
  }

  it('prunes the journals of runs that ended before their retention, earliest first, in batches, with their steps; never a run that runs or waits', async () => {
    const running = await journaledRun('running', 1);
    const waiting = await journaledRun('waiting_approval', 1);
    const ended = await journaledRun('completed', 3);
    clock += DAY_MS;
    const cancelled = await journaledRun('cancelled', 2);
    clock += 5 * DAY_MS;
    const young = await journaledRun('interrupted', 1);
    await storage.appendAudit({
      id: 0,
      at: undefined,
      kind: 'config.loaded',
      actor: 'orchestrator',
      via: '',
      subject: 'a',
      detailJson: '{}',
    });
    const auditBefore = await audit([]);
    clock += 5 * DAY_MS;

    // Nine days kept: the two that ended eleven and ten days ago go, one batch each, the earliest first.
    expect(await storage.pruneRunJournals(RUN_KEEP_MS, 1)).toEqual({ removed: 1, stepsRemoved: 3 });
    expect(await codeOf(storage.getRun(ended.runId))).toBe(GrpcStatus.NOT_FOUND);
    expect((await storage.getRun(cancelled.runId)).run).toMatchObject({ status: 'cancelled' });
    expect(await storage.pruneRunJournals(RUN_KEEP_MS, 1)).toEqual({ removed: 1, stepsRemoved: 2 });
    expect(await storage.pruneRunJournals(RUN_KEEP_MS, 100)).toEqual({ removed: 0, stepsRemoved: 0 });
    expect(await codeOf(storage.getRun(cancelled.runId))).toBe(GrpcStatus.NOT_FOUND);

    // However old, a run still running or waiting stays; so does the run that ended within the window.
    for (const kept of [running, waiting, young]) expect((await storage.getRun(kept.runId)).steps).toHaveLength(1);
    expect(await driver.countRows('run_journals')).toBe(3);
    expect(await driver.countRows('run_steps')).toBe(3);
    // The conversations of pruned runs and the audit trail are as they were.
    expect((await storage.getConversation({ id: ended.conversationId, includeMessages: true })).messages).toHaveLength(3);
    expect(await audit([])).toEqual(auditBefore);
    const { runs } = await storage.listRuns({ conversationId: cancelled.conversationId, pageSize: 10, pageToken: '' });
    expect(runs).toEqual([]);

    // Five days later the young one's end is past the window too; the running and the waiting one are still kept.
    clock += 5 * DAY_MS;
    expect(await storage.pruneRunJournals(RUN_KEEP_MS, 100)).toEqual({ removed: 1, stepsRemoved: 1 });
    expect(await driver.countRows('run_journals')).toBe(2);
  });
}
