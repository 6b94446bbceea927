/**
 * Approvals as audited resources (store.proto ClaimApprovalRequest.decided_by … expired,
 * ListApprovals, ListDueApprovals, AppendAudit, ListAudit, ClaimWebhookCursor,
 * AdvanceWebhookCursor, TurnEnded.outcome). A decision keeps who made it, through which face and
 * why, and is audited in its own transaction; approvals are listed by status and conversation;
 * an approval may expire; webhook endpoints are delivered to by one replica at a time. Run on
 * each driver (sqlite-storage.test.ts, postgres-storage.test.ts), each test on a database of its own.
 *
 * Clocks: expiries and cursor leases are on the SQLite driver's clock and on PostgreSQL's own, so
 * a test that needs one to pass gives it a few milliseconds and polls with a deadline; times are
 * compared with each other, never with the wall clock.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ApprovalTimeoutAction,
  ConversationStatus,
  MessageRole,
  type AuditEntry,
  type ClaimApprovalRequest,
  type ConversationEvent,
  type ListApprovalsRequest,
  type NewApproval,
  type NewMessage,
  type PendingApproval,
  type RunLease,
  type UpdateRunRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { encodeAuditPageToken, encodePageToken } from './page-token.js';
import { DATABASE_FILE } from './sqlite/driver.js';
import { SQL } from '../../test/support/sqlite-statements.js';
import type { ConversationStorage } from './storage.js';
import { DROP_POSTGRES_SCHEMA_5, DROP_SCHEMA_14 } from '../../test/support/sqlite-schema-undo.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { until } from '../../test/support/until.js';
import { storesPerTest } from '../../test/support/stores-per-test.js';

const MINUTE = 60_000;
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

let storage: ConversationStorage;
let events: ConversationEvent[];

/** A lowercase UUID whose order among the others of a test is its number's. */
const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export function approvalsConformance(driver: StorageDriver): void {
  const sqliteIt: typeof it = driver.name === 'sqlite' ? it : (it.skip as typeof it);

  const another = storesPerTest(driver, (opened) => {
    storage = opened;
    events = [];
    opened.onEventsCommitted((batch) => events.push(...batch));
  });

  const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
  const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });
  const lease = (owner: string, node = `node-of-${owner}`, ttlMs = MINUTE): RunLease => ({ owner, node, ttlMs });

  async function newConversation(): Promise<string> {
    return (await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' })).id;
  }

  const newApproval = (uuid: string, change: Partial<NewApproval> = {}): NewApproval => ({
    uuid,
    toolCallId: `call-${uuid.slice(-4)}`,
    toolName: 'delete_file',
    toolArgsJson: JSON.stringify({ path: '/tmp/x' }),
    description: 'Delete /tmp/x',
    agentChain: [],
    ...change,
  });

  const update = (conversationId: string, expectedRevision: number, change: Partial<UpdateRunRequest> = {}) =>
    storage.updateRun({ conversationId, messages: [], approvals: [], expectedRevision, returnConversation: false, ...change });

  /** A conversation waiting for one approval of delete_file (simple mode). */
  async function waitingFor(toolArgs: Record<string, unknown> = { path: '/tmp/x' }): Promise<PendingApproval> {
    const id = await newConversation();
    return storage.createApproval({
      conversationId: id,
      toolCallId: 'call-1',
      toolName: 'delete_file',
      toolArgsJson: JSON.stringify(toolArgs),
      description: 'Delete',
      messages: [],
      agentChain: [],
    });
  }

  const claim = (uuid: string, change: Partial<ClaimApprovalRequest> = {}, on: ConversationStorage = storage) =>
    on.claimApproval({ uuid, approved: false, messages: [], clearRun: false, alsoReject: [], ...change });

  /** Every audit entry, newest first. */
  const audit = async (kinds: string[] = []) => (await storage.listAudit({ kinds, pageSize: 500, pageToken: '' })).entries;
  const detail = (entry: AuditEntry | undefined) => JSON.parse(entry?.detailJson ?? 'null') as Record<string, unknown>;
  const uuids = (approvals: PendingApproval[]) => approvals.map((approval) => approval.uuid);

  describe('decisions with identity, audited in their transaction', () => {
    it('keeps who approved, through which face, why and the edited arguments, beside the arguments the model asked for', async () => {
      const approval = await waitingFor();
      const claimed = await claim(approval.uuid, {
        approved: true,
        decidedBy: 'alice',
        via: 'rest',
        reason: 'looks fine',
        editedArgsJson: JSON.stringify({ path: '/tmp/y' }),
      });
      expect(claimed.claimed).toBe(true);
      const stored = await storage.getApproval(approval.uuid);
      expect(stored).toMatchObject({
        status: ApprovalStatus.APPROVAL_STATUS_APPROVED,
        decidedBy: 'alice',
        via: 'rest',
        reason: 'looks fine',
        editedArgsJson: '{"path":"/tmp/y"}',
        toolArgsJson: '{"path":"/tmp/x"}',
        argsHash: approval.argsHash,
      });
      expect(stored.decidedAt).toBeInstanceOf(Date);
      expect(claimed.approval).toEqual(stored);
      // The event of the decision carries it too.
      const resolved = events.flatMap((event) => (event.approvalResolved ? [event.approvalResolved] : []));
      expect(resolved).toEqual([stored]);
      // And the audit trail, in the claim's transaction.
      const [entry, ...rest] = await audit();
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({ kind: 'approval.decided', actor: 'alice', via: 'rest', subject: approval.uuid });
      expect(entry!.at).toEqual(stored.decidedAt);
      expect(detail(entry)).toEqual({
        conversation_id: approval.conversationId,
        tool_name: 'delete_file',
        approved: true,
        status: 'approved',
        reason: 'looks fine',
        edited: true,
      });
    });

    it('names an undisclosed decider anonymous, with no face, and audits a rejection without reason as not edited', async () => {
      const approval = await waitingFor();
      await claim(approval.uuid);
      const stored = await storage.getApproval(approval.uuid);
      expect([stored.status, stored.decidedBy, stored.via, stored.reason, stored.editedArgsJson]).toEqual([
        ApprovalStatus.APPROVAL_STATUS_REJECTED,
        'anonymous',
        undefined,
        undefined,
        undefined,
      ]);
      const [entry] = await audit();
      expect(entry).toMatchObject({ kind: 'approval.decided', actor: 'anonymous', via: '', subject: approval.uuid });
      expect(detail(entry)).toEqual({
        conversation_id: approval.conversationId,
        tool_name: 'delete_file',
        approved: false,
        status: 'rejected',
        edited: false,
      });
      // A pending approval names nobody.
      const pending = await waitingFor();
      expect([pending.decidedBy, pending.via, pending.editedArgsJson, pending.expiresAt, pending.onTimeout]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    });

    it('expires an approval as a rejection would reject it: its messages, also_reject, a continued turn; audited as approval.expired', async () => {
      const id = await newConversation();
      await update(id, 0, {
        approvals: [newApproval(uuidOf(1)), newApproval(uuidOf(2))],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      const claimed = await claim(uuidOf(1), {
        expired: true,
        decidedBy: 'timeout',
        via: 'timeout',
        messages: [assistant('it expired')],
        alsoReject: [{ uuid: uuidOf(2), messages: [assistant('cancelled with it')] }],
        continuesTurn: true,
      });
      expect(claimed.claimed).toBe(true);
      const [first, second] = [await storage.getApproval(uuidOf(1)), await storage.getApproval(uuidOf(2))];
      expect([first.status, first.decidedBy, first.via]).toEqual([ApprovalStatus.APPROVAL_STATUS_EXPIRED, 'timeout', 'timeout']);
      expect([second.status, second.decidedBy, second.via]).toEqual([ApprovalStatus.APPROVAL_STATUS_REJECTED, 'timeout', 'timeout']);
      const conversation = await storage.getConversation({ id, includeMessages: true });
      expect(conversation.messages.map((message) => message.content)).toEqual(['it expired', 'cancelled with it']);
      expect([conversation.status, conversation.turnRunning]).toEqual([ConversationStatus.CONVERSATION_STATUS_ACTIVE, true]);
      // One entry per decision, newest first (appended in the claim's order).
      const entries = await audit();
      expect(entries.map((entry) => [entry.kind, entry.subject, entry.actor, entry.via, detail(entry).status])).toEqual([
        ['approval.decided', uuidOf(2), 'timeout', 'timeout', 'rejected'],
        ['approval.expired', uuidOf(1), 'timeout', 'timeout', 'expired'],
      ]);
      expect(entries[0]!.id).toBeGreaterThan(entries[1]!.id);
      // Expired is a decision: it stays.
      expect((await claim(uuidOf(1), { approved: true })).claimed).toBe(false);
    });

    it('refuses edited arguments on a rejection and an approving expiry: INVALID_ARGUMENT, nothing decided or audited', async () => {
      const approval = await waitingFor();
      await expect(claim(approval.uuid, { editedArgsJson: JSON.stringify({ path: '/' }) })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining('edited_args'),
      });
      await expect(claim(approval.uuid, { approved: true, expired: true })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining('expired'),
      });
      expect((await storage.getApproval(approval.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
      expect(await audit()).toEqual([]);
    });

    it("keeps the winning decision's id on its approval and on those it rejected with it; a lost claim's id is not kept", async () => {
      const id = await newConversation();
      await update(id, 0, {
        approvals: [newApproval(uuidOf(1)), newApproval(uuidOf(2))],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      expect((await storage.getApproval(uuidOf(1))).decisionId).toBeUndefined();
      const won = await claim(uuidOf(1), {
        decidedBy: 'alice',
        via: 'rest',
        decisionId: 'decision-a',
        alsoReject: [{ uuid: uuidOf(2), messages: [] }],
      });
      expect(won).toMatchObject({ claimed: true, approval: { decisionId: 'decision-a' } });
      // The same person through the same face, a second decision: only its id tells it from the first.
      const lost = await claim(uuidOf(1), { decidedBy: 'alice', via: 'rest', decisionId: 'decision-b' });
      expect(lost).toMatchObject({ claimed: false, approval: { decisionId: 'decision-a' } });
      expect([(await storage.getApproval(uuidOf(1))).decisionId, (await storage.getApproval(uuidOf(2))).decisionId]).toEqual([
        'decision-a',
        'decision-a',
      ]);
    });

    it('appends nothing for a lost claim, nor for one rolled back by a stale run revision', async () => {
      const approval = await waitingFor();
      await claim(approval.uuid, { approved: true, decidedBy: 'alice' });
      const lost = await claim(approval.uuid, { decidedBy: 'bob', reason: 'too late' });
      expect(lost.claimed).toBe(false);
      expect([lost.approval.decidedBy, lost.approval.reason]).toEqual(['alice', undefined]);
      expect((await audit()).map((entry) => entry.actor)).toEqual(['alice']);

      const id = await newConversation();
      await update(id, 0, { approvals: [newApproval(uuidOf(7))], run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 } });
      await expect(claim(uuidOf(7), { decidedBy: 'carol', expectedRunRevision: 5, clearRun: true })).rejects.toMatchObject({
        code: GrpcStatus.ABORTED,
      });
      expect((await storage.getApproval(uuidOf(7))).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
      expect((await audit()).map((entry) => entry.actor)).toEqual(['alice']);
    });

    it('lets exactly one of concurrent expiring claims of one approval win, from two stores on one database, every time', async () => {
      const second = await another();
      for (let round = 0; round < 8; round++) {
        const approval = await waitingFor();
        const claims = await Promise.all(
          [storage, second, storage, second].map((on, index) =>
            claim(approval.uuid, { expired: true, decidedBy: 'timeout', via: 'timeout', messages: [assistant(`expired by ${index}`)] }, on),
          ),
        );
        expect(claims.filter((result) => result.claimed)).toHaveLength(1);
        expect((await storage.getApproval(approval.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_EXPIRED);
        const conversation = await second.getConversation({ id: approval.conversationId, includeMessages: true });
        expect(conversation.messages.filter((message) => message.content.startsWith('expired by'))).toHaveLength(1);
        expect((await audit(['approval.expired'])).filter((entry) => entry.subject === approval.uuid)).toHaveLength(1);
      }
    });
  });

  describe('approvals as resources (ListApprovals)', () => {
    /** Approvals of two conversations in every state a list shows; uuids by number, created in the given order. */
    async function approvalsOfTwoConversations() {
      const a = await newConversation();
      const b = await newConversation();
      // Three in one write share created_at: their uuids order them.
      await update(a, 0, {
        approvals: [newApproval(uuidOf(3)), newApproval(uuidOf(1)), newApproval(uuidOf(2))],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      await update(b, 0, { approvals: [newApproval(uuidOf(5))], run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 } });
      await update(b, 1, { approvals: [newApproval(uuidOf(4))], run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 } });
      await claim(uuidOf(1), { approved: true, decidedBy: 'alice' });
      await claim(uuidOf(2), { reason: 'no' });
      await claim(uuidOf(5), { expired: true, decidedBy: 'timeout' });
      return { a, b };
    }

    it('lists every approval oldest first, filtered by status and by conversation', async () => {
      const { a, b } = await approvalsOfTwoConversations();
      const all: ListApprovalsRequest = { statuses: [], conversationId: '', pageSize: 0, pageToken: '' };
      const everything = await storage.listApprovals(all);
      expect(uuids(everything.approvals)).toEqual([uuidOf(1), uuidOf(2), uuidOf(3), uuidOf(5), uuidOf(4)]);
      expect(everything.nextPageToken).toBe('');
      expect(everything.approvals[0]).toEqual(await storage.getApproval(uuidOf(1)));

      const list = async (change: Partial<ListApprovalsRequest>) => uuids((await storage.listApprovals({ ...all, ...change })).approvals);
      expect(await list({ statuses: [ApprovalStatus.APPROVAL_STATUS_PENDING] })).toEqual([uuidOf(3), uuidOf(4)]);
      expect(await list({ statuses: [ApprovalStatus.APPROVAL_STATUS_EXPIRED, ApprovalStatus.APPROVAL_STATUS_APPROVED] })).toEqual([
        uuidOf(1),
        uuidOf(5),
      ]);
      expect(await list({ statuses: [ApprovalStatus.APPROVAL_STATUS_REJECTED, ApprovalStatus.APPROVAL_STATUS_REJECTED] })).toEqual([
        uuidOf(2),
      ]);
      expect(await list({ statuses: [ApprovalStatus.APPROVAL_STATUS_DONE] })).toEqual([]);
      expect(await list({ conversationId: a })).toEqual([uuidOf(1), uuidOf(2), uuidOf(3)]);
      expect(await list({ conversationId: b.toUpperCase() })).toEqual([uuidOf(5), uuidOf(4)]);
      expect(await list({ conversationId: b, statuses: [ApprovalStatus.APPROVAL_STATUS_PENDING] })).toEqual([uuidOf(4)]);
      expect(await list({ conversationId: UNKNOWN_UUID })).toEqual([]);
      expect(await list({ conversationId: 'not-an-id' })).toEqual([]);
    });

    it('pages with an opaque token, each approval once, with and without filters', async () => {
      const { a } = await approvalsOfTwoConversations();
      for (const filter of [
        { statuses: [], conversationId: '' },
        {
          statuses: [
            ApprovalStatus.APPROVAL_STATUS_PENDING,
            ApprovalStatus.APPROVAL_STATUS_APPROVED,
            ApprovalStatus.APPROVAL_STATUS_EXPIRED,
          ],
          conversationId: '',
        },
        { statuses: [], conversationId: a },
      ]) {
        const whole = uuids((await storage.listApprovals({ ...filter, pageSize: 0, pageToken: '' })).approvals);
        for (const pageSize of [1, 2]) {
          const paged: string[] = [];
          let pageToken = '';
          do {
            const page = await storage.listApprovals({ ...filter, pageSize, pageToken });
            expect(page.approvals.length).toBeLessThanOrEqual(pageSize);
            paged.push(...uuids(page.approvals));
            pageToken = page.nextPageToken;
          } while (pageToken !== '');
          expect(paged).toEqual(whole);
        }
      }
    });

    it('refuses a token it did not issue for this list, and a status that is none: INVALID_ARGUMENT', async () => {
      await approvalsOfTwoConversations();
      const request = { statuses: [], conversationId: '', pageSize: 1, pageToken: '' };
      const conversationsToken = encodePageToken({ createdAt: '2025-01-01T00:00:00.000Z', id: uuidOf(1) });
      for (const pageToken of [
        'garbage',
        conversationsToken,
        encodeAuditPageToken(3),
        Buffer.from('["approvals","yesterday","x"]').toString('base64url'),
      ]) {
        await expect(storage.listApprovals({ ...request, pageToken })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          message: expect.stringContaining('page_token'),
        });
      }
      for (const status of [99 as ApprovalStatus, ApprovalStatus.APPROVAL_STATUS_UNSPECIFIED]) {
        await expect(storage.listApprovals({ ...request, statuses: [status] })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          message: expect.stringContaining('statuses'),
        });
      }
      // Its own token works.
      const first = await storage.listApprovals(request);
      expect((await storage.listApprovals({ ...request, pageToken: first.nextPageToken })).approvals).toHaveLength(1);
    });

    sqliteIt(
      "lists through the index of approvals by status or the conversation's, and finds due approvals through their partial index",
      () => {
        const db = new Database(join(driver.dataDir!, DATABASE_FILE), { readonly: true });
        try {
          const plan = (sql: string, parameters: Record<string, unknown>) =>
            (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(parameters) as { detail: string }[]).map((step) => step.detail).join(' | ');
          const after = { created_at: '', uuid: '', limit: 1 };
          expect(plan(SQL.approvalsOfStatusAfter, { ...after, status: 'pending' })).toMatch(/USING (COVERING )?INDEX approvals_by_status/);
          expect(plan(SQL.approvalsOfConversationAfter, { ...after, conversation_id: '', statuses: '[]' })).toMatch(
            /USING INDEX approvals_by_conversation_status/,
          );
          expect(plan(SQL.dueApprovals, { now: '', limit: 1 })).toMatch(/USING INDEX approvals_due/);
          expect(plan(SQL.auditOfKindBefore, { kind: '', before: 1, limit: 1 })).toMatch(/USING (COVERING )?INDEX audit_by_kind/);
        } finally {
          db.close();
        }
      },
    );
  });

  describe('expiry', () => {
    it("sets expires_at from expires_in_ms on the store's clock with on_timeout (reject unless approve), and lists due approvals oldest expiry first", async () => {
      const id = await newConversation();
      const [late, first, middle, never, far] = [uuidOf(1), uuidOf(2), uuidOf(3), uuidOf(4), uuidOf(5)];
      await update(id, 0, {
        approvals: [
          newApproval(late, { expiresInMs: 300, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE }),
          newApproval(first, { expiresInMs: 100 }),
          newApproval(middle, { expiresInMs: 200, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT }),
          newApproval(never, { expiresInMs: 0, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE }),
          newApproval(far, { expiresInMs: 3_600_000 }),
        ],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      const stored = new Map<string, PendingApproval>();
      for (const uuid of [late, first, middle, never, far]) stored.set(uuid, await storage.getApproval(uuid));
      const expiry = (uuid: string) => stored.get(uuid)!.expiresAt!.getTime();
      // One write, one clock reading: the expiries are as far apart as their times.
      expect([expiry(middle) - expiry(first), expiry(late) - expiry(first), expiry(far) - expiry(first)]).toEqual([
        100,
        200,
        3_600_000 - 100,
      ]);
      expect([...stored.values()].map((approval) => approval.onTimeout)).toEqual([
        ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE,
        ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
        ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
        undefined,
        ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
      ]);
      expect(stored.get(never)!.expiresAt).toBeUndefined();
      if (driver.name === 'sqlite') expect(expiry(first) - stored.get(first)!.createdAt!.getTime()).toBe(100);
      // The request event shows the expiry too.
      const requested = events.flatMap((event) => (event.approvalRequested ? [event.approvalRequested] : []));
      expect(requested.map((approval) => approval.expiresAt?.getTime())).toEqual([
        expiry(late),
        expiry(first),
        expiry(middle),
        undefined,
        expiry(far),
      ]);

      await until('three approvals due', async () => (await storage.listDueApprovals(10)).length === 3);
      expect(uuids(await storage.listDueApprovals(10))).toEqual([first, middle, late]);
      expect(uuids(await storage.listDueApprovals(2))).toEqual([first, middle]);
      // Only pending approvals are due: a decided one no longer is.
      await claim(first, { expired: true, decidedBy: 'timeout', via: 'timeout' });
      await claim(late, { approved: true, decidedBy: 'timeout', via: 'timeout' });
      expect(uuids(await storage.listDueApprovals(10))).toEqual([middle]);
      // Reading changed nothing.
      expect((await storage.getApproval(middle)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    });

    it('refuses a human claim after expires_at in the claim itself, before any expiry ran: too late, still pending, nothing audited; the expiry then decides', async () => {
      const id = await newConversation();
      const [expiring, lasting] = [uuidOf(1), uuidOf(2)];
      await update(id, 0, {
        approvals: [newApproval(expiring, { expiresInMs: 50 }), newApproval(lasting, { expiresInMs: 3_600_000 })],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      await until('the approval due', async () => (await storage.listDueApprovals(10)).length === 1);
      const before = events.length;
      for (const approved of [true, false]) {
        const late = await claim(expiring, { approved, decidedBy: 'alice', via: 'rest', continuesTurn: true, lease: lease('a-boot') });
        expect(late).toMatchObject({
          claimed: false,
          tooLate: true,
          approval: { uuid: expiring, status: ApprovalStatus.APPROVAL_STATUS_PENDING },
        });
      }
      // Nothing was decided: no event, no audit, no running turn, the conversation still waits.
      expect(events.slice(before)).toEqual([]);
      expect(await audit()).toEqual([]);
      const waiting = await storage.getConversation({ id, includeMessages: false });
      expect([waiting.status, waiting.turnRunning]).toEqual([ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL, false]);
      // One not yet due is decided as usual; the claim of the expiry (via "timeout") is never too late.
      expect((await claim(lasting, { approved: true, decidedBy: 'bob', via: 'web' })).claimed).toBe(true);
      const expired = await claim(expiring, { expired: true, decidedBy: 'timeout', via: 'timeout', reason: 'no decision in time' });
      expect(expired).toMatchObject({ claimed: true, approval: { status: ApprovalStatus.APPROVAL_STATUS_EXPIRED, decidedBy: 'timeout' } });
      // Decided, a later claim loses as any late one does: the first decision, not "too late".
      const after = await claim(expiring, { approved: true, decidedBy: 'alice', via: 'rest' });
      expect(after.claimed).toBe(false);
      expect(after.tooLate).toBeUndefined();
      expect(after.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_EXPIRED);
    });

    it('lets a rejection that cancels a run reject its other approvals whatever their expiry', async () => {
      const id = await newConversation();
      const [rejected, sibling] = [uuidOf(1), uuidOf(2)];
      await update(id, 0, {
        approvals: [newApproval(rejected, { expiresInMs: 3_600_000 }), newApproval(sibling, { expiresInMs: 50 })],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      await until('the sibling due', async () => (await storage.listDueApprovals(10)).length === 1);
      const cancelling = await claim(rejected, {
        decidedBy: 'alice',
        via: 'rest',
        clearRun: true,
        alsoReject: [{ uuid: sibling, messages: [] }],
      });
      expect(cancelling.claimed).toBe(true);
      expect((await storage.getApproval(sibling)).status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
      expect(await storage.listDueApprovals(10)).toEqual([]);
    });

    it('lists no due approval while none has passed its expiry', async () => {
      const id = await newConversation();
      await update(id, 0, {
        approvals: [newApproval(uuidOf(1), { expiresInMs: 3_600_000 }), newApproval(uuidOf(2))],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      expect(await storage.listDueApprovals(100)).toEqual([]);
    });
  });

  describe('the audit trail', () => {
    const entry = (kind: string, actor: string, subject = 'gateway.yaml'): AuditEntry => ({
      id: 0,
      at: undefined,
      kind,
      actor,
      via: 'rest',
      subject,
      detailJson: JSON.stringify({ cause: kind }),
    });

    it("appends entries with increasing ids and the store's time, and lists them newest first, a page at a time, by kind", async () => {
      const kinds = ['auth.failed', 'config.loaded', 'auth.failed', 'approval.decided', 'auth.failed'];
      const appended: AuditEntry[] = [];
      for (const [index, kind] of kinds.entries())
        appended.push(await storage.appendAudit({ ...entry(kind, `actor-${index}`), id: 999, at: new Date(0) }));
      expect(appended.map((stored) => stored.id)).toEqual([...appended.map((stored) => stored.id)].sort((x, y) => x - y));
      expect(new Set(appended.map((stored) => stored.id)).size).toBe(5);
      expect(appended[0]).toMatchObject({
        kind: 'auth.failed',
        actor: 'actor-0',
        via: 'rest',
        subject: 'gateway.yaml',
        detailJson: '{"cause":"auth.failed"}',
      });
      // The store's id and time, not the request's.
      expect(appended.every((stored) => stored.id !== 999 && stored.at!.getTime() > 0)).toBe(true);
      const newest = [...appended].reverse();
      expect(await audit()).toEqual(newest);

      const page = async (kinds: string[], pageSize: number) => {
        const seen: AuditEntry[] = [];
        let pageToken = '';
        do {
          const listed = await storage.listAudit({ kinds, pageSize, pageToken });
          expect(listed.entries.length).toBeLessThanOrEqual(pageSize);
          seen.push(...listed.entries);
          pageToken = listed.nextPageToken;
        } while (pageToken !== '');
        return seen.map((stored) => stored.actor);
      };
      expect(await page([], 2)).toEqual(['actor-4', 'actor-3', 'actor-2', 'actor-1', 'actor-0']);
      expect(await page(['auth.failed'], 2)).toEqual(['actor-4', 'actor-2', 'actor-0']);
      expect(await page(['config.loaded', 'approval.decided'], 1)).toEqual(['actor-3', 'actor-1']);
      expect(await page(['no.such_kind'], 5)).toEqual([]);
    });

    it('refuses a token it did not issue for the audit trail: INVALID_ARGUMENT', async () => {
      await storage.appendAudit(entry('auth.failed', 'x'));
      for (const pageToken of [
        'garbage',
        encodePageToken({ createdAt: '2025-01-01T00:00:00.000Z', id: uuidOf(1) }),
        Buffer.from('["audit",-1]').toString('base64url'),
      ]) {
        await expect(storage.listAudit({ kinds: [], pageSize: 1, pageToken })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          message: expect.stringContaining('page_token'),
        });
      }
    });

    it('is append-only: the database refuses to change or delete an entry', async () => {
      const stored = await storage.appendAudit(entry('auth.failed', 'mallory'));
      await storage.close();
      for (const sql of [`UPDATE audit SET actor = 'someone else'`, 'DELETE FROM audit'])
        await expect(driver.execute(sql)).rejects.toThrow(/append-only/);
      storage = await driver.open();
      expect(await audit()).toEqual([stored]);
    });
  });

  describe('webhook cursors', () => {
    const A = lease('a-boot-1', 'node-a');
    const B = lease('b-boot-1', 'node-b');
    const advance = (endpoint: string, owner: string, lastEventId: number, on: ConversationStorage = storage) =>
      on.advanceWebhookCursor({ endpoint, owner, lastEventId, ttlMs: MINUTE });

    it('starts a new endpoint at the newest event and lets one holder advance it, never back', async () => {
      await newConversation();
      const newest = await storage.latestEventId();
      expect(newest).toBeGreaterThan(0);
      expect(await storage.claimWebhookCursor('hook-1', A)).toEqual({ held: true, lastEventId: newest });
      // Another replica does not get it while A's lease runs; A renews its own.
      expect(await storage.claimWebhookCursor('hook-1', B)).toEqual({ held: false, lastEventId: newest });
      expect(await storage.claimWebhookCursor('hook-1', A)).toEqual({ held: true, lastEventId: newest });
      expect(await advance('hook-1', A.owner, newest + 5)).toBe(true);
      expect(await advance('hook-1', B.owner, newest + 9)).toBe(false);
      expect(await advance('hook-1', A.owner, 1)).toBe(true);
      expect(await storage.claimWebhookCursor('hook-1', B)).toEqual({ held: false, lastEventId: newest + 5 });
      // Not an endpoint anyone claimed: nothing to advance.
      expect(await advance('hook-unknown', A.owner, 3)).toBe(false);
      // An endpoint claimed later starts at the newest event then.
      await newConversation();
      expect(await storage.claimWebhookCursor('hook-2', B)).toEqual({ held: true, lastEventId: await storage.latestEventId() });
    });

    it('goes to another replica once its lease expired, and at once to a later boot of its node', async () => {
      await storage.claimWebhookCursor('hook-1', lease('gone', 'node-gone', 1));
      await until('the expired cursor taken', async () => (await storage.claimWebhookCursor('hook-1', B)).held);
      expect(await advance('hook-1', 'gone', 50)).toBe(false);
      expect(await advance('hook-1', B.owner, 50)).toBe(true);
      // B restarts: its next boot takes the cursor from its previous boot without waiting.
      const nextBoot = lease('b-boot-2', 'node-b');
      expect(await storage.claimWebhookCursor('hook-1', nextBoot)).toEqual({ held: true, lastEventId: 50 });
      expect(await advance('hook-1', B.owner, 60)).toBe(false);
      expect(await storage.claimWebhookCursor('hook-1', A)).toEqual({ held: false, lastEventId: 50 });
    });

    it('gives an endpoint to exactly one of two stores claiming it at once, every time', async () => {
      const second = await another();
      for (let round = 0; round < 10; round++) {
        const endpoint = `hook-race-${round}`;
        const answers = await Promise.all(
          [storage, second, storage, second].map((on, index) =>
            on.claimWebhookCursor(endpoint, lease(`replica-${index}`, `node-${index}`)),
          ),
        );
        expect(answers.filter((answer) => answer.held)).toHaveLength(1);
        expect(new Set(answers.map((answer) => answer.lastEventId)).size).toBe(1);
        // Only the holder advances it.
        const holder = answers.findIndex((answer) => answer.held);
        const advanced = await Promise.all(
          [0, 1, 2, 3].map((index) => advance(endpoint, `replica-${index}`, 100 + index, index % 2 === 0 ? storage : second)),
        );
        expect(advanced).toEqual([0, 1, 2, 3].map((index) => index === holder));
      }
    });
  });

  describe('how a turn ended (TurnEnded.outcome)', () => {
    const outcomes = () => events.flatMap((event) => (event.turnEnded ? [event.turnEnded.outcome] : []));
    const endWith = (conversationId: string, messages: NewMessage[]) =>
      storage.appendMessages({
        conversationId,
        messages,
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        endsTurn: true,
      });

    it('says answered, paused, failed or interrupted, from the write that ended the turn', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('hi') });
      await endWith(id, [assistant('hello')]);
      await storage.startTurn({ conversationId: id, message: user('again') });
      await endWith(id, []);
      await storage.startTurn({ conversationId: id, message: user('delete it') });
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c',
        toolName: 'delete_file',
        toolArgsJson: '{}',
        description: 'd',
        messages: [],
        agentChain: [],
      });
      expect(outcomes()).toEqual(['answered', 'failed', 'paused']);

      // Runs (UpdateRun): a pause, an answer after the call, a run that ended without one. The
      // decisions are rejections that go on (nothing is left approved without an outcome).
      await claim(approval.uuid, { continuesTurn: true });
      const run = { state: Buffer.from('r'), schemaVersion: 1, revision: 0 };
      const revision = (await storage.getConversation({ id, includeMessages: false })).runRevision;
      await update(id, revision, { approvals: [newApproval(uuidOf(1))], run });
      await claim(uuidOf(1), { continuesTurn: true });
      await update(id, revision + 1, {
        messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'not deleted' }, assistant('as you wish')],
      });
      expect((await storage.startTurn({ conversationId: id, message: user('and now?') })).started).toBe(true);
      await update(id, revision + 2, { messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'nothing' }] });
      expect(outcomes()).toEqual(['answered', 'failed', 'paused', 'paused', 'answered', 'failed']);

      // A turn a crash cut off; read back from the stored events (a replay says the same).
      await storage.startTurn({ conversationId: id, message: user('one more') });
      await storage.close();
      storage = await driver.open();
      await storage.noteInterruptedTurns();
      const replayed = (await storage.readEvents({ conversationId: id, afterId: 0, limit: 1000 })).flatMap((event) =>
        event.turnEnded ? [event.turnEnded.outcome] : [],
      );
      expect(replayed).toEqual([...outcomes(), 'interrupted']);
    });
  });

  describe('migration', () => {
    it('migrates a database of the schema before approvals were audited resources: approvals keep their order and decisions, and can expire', async () => {
      const id = await newConversation();
      // Created in one write, uuids in the reverse order: the insertion order is what keeps them in order.
      await update(id, 0, {
        approvals: [newApproval(uuidOf(9)), newApproval(uuidOf(8)), newApproval(uuidOf(7))],
        run: { state: Buffer.from('r'), schemaVersion: 1, revision: 0 },
      });
      await claim(uuidOf(8), { approved: true });
      await storage.close();
      // Back to the schema before approvals were audited resources (SQLite 13, PostgreSQL 4).
      await driver.execute(
        driver.name === 'sqlite'
          ? `${DROP_SCHEMA_14} UPDATE schema_version SET version = 13;`
          : `${DROP_POSTGRES_SCHEMA_5} UPDATE schema_version SET version = 4;`,
      );
      storage = await driver.open();
      const conversation = await storage.getConversation({ id, includeMessages: false });
      expect(uuids(conversation.pendingApprovals)).toEqual([uuidOf(9), uuidOf(7)]);
      expect(await storage.getApproval(uuidOf(8))).toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_APPROVED });
      expect((await claim(uuidOf(9), { expired: true, decidedBy: 'timeout' })).claimed).toBe(true);
      expect(
        (
          await storage.listApprovals({
            statuses: [ApprovalStatus.APPROVAL_STATUS_EXPIRED],
            conversationId: '',
            pageSize: 0,
            pageToken: '',
          })
        ).approvals,
      ).toHaveLength(1);
      expect((await audit()).map((entry) => entry.kind)).toEqual(['approval.expired']);
      expect((await storage.claimWebhookCursor('hook', lease('a'))).held).toBe(true);
    });
  });
}
