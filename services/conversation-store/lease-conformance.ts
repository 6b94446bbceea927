/**
 * Runs with leases (store.proto RunLease, RenewRunLease, ReleaseRunLease,
 * TakeOverRuns). A turn started with a lease belongs to one orchestrator replica until it ends;
 * its owner renews it, a replica takes over a lease that expired or that a previous boot of its
 * node holds, and writes that name a lease owner are fenced. Run on each driver
 * (sqlite-storage.test.ts, postgres-storage.test.ts), each test on a database of its own.
 *
 * Clocks: the store's clock is the real one plus a skew the tests move to age running marks past
 * the stale limit. Leases expire on the SQLite driver's clock and on PostgreSQL's own, so a test
 * that needs an expired lease releases it, or gives it 1 ms and polls with a deadline.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type ConversationEvent,
  type NewApproval,
  type NewMessage,
  type Run,
  type RunLease,
  type TakenOverRun,
  type UpdateRunRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import { runWithContext } from '../common/context.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { DATABASE_FILE } from './sqlite/driver.js';
import { SQL } from '../../test/support/sqlite-statements.js';
import { INTERRUPTED_TURN_NOTE, type ConversationStorage } from './storage.js';
import { DROP_POSTGRES_SCHEMA_5, DROP_SCHEMA_13 } from '../../test/support/sqlite-schema-undo.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { until } from '../../test/support/until.js';

const STALE_MS = 60_000;
const MINUTE = 60_000;
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

let storage: ConversationStorage;
/** Added to the real clock by the tests that age running marks. */
let skew: number;
let events: ConversationEvent[];

/** A replica's lease: `owner` is one boot, `node` the replica across its restarts. */
const lease = (owner: string, node = `node-of-${owner}`, ttlMs = MINUTE): RunLease => ({ owner, node, ttlMs });
const A = lease('a-boot-1', 'node-a');
const B = lease('b-boot-1', 'node-b');
const C = lease('c-boot-1', 'node-c');

export function leaseConformance(driver: StorageDriver): void {
  const open = () => driver.open({ now: () => Date.now() + skew, staleTurnAfterMs: STALE_MS });
  const sqliteIt: typeof it = driver.name === 'sqlite' ? it : (it.skip as typeof it);
  const postgresIt: typeof it = driver.name === 'postgres' ? it : (it.skip as typeof it);

  beforeEach(async () => {
    await driver.createDatabase();
    skew = 0;
    storage = await open();
    events = [];
    storage.onEventsCommitted((batch) => events.push(...batch));
  });

  afterEach(async () => {
    await storage.close();
    await driver.dropDatabase();
  });

  const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
  const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });
  const runOf = (text: string): Run => ({ state: Buffer.from(text), schemaVersion: 1, revision: 0 });

  /** The store process stopped (a crash: nothing it holds in memory matters) and started again. */
  async function restart(): Promise<number> {
    await storage.close();
    storage = await open();
    return storage.noteInterruptedTurns();
  }

  async function newConversation(): Promise<string> {
    return (await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' })).id;
  }

  /** A conversation with a turn started under `runLease` (null: a turn without a lease, as stored before runs had leases). */
  async function leasedTurn(runLease: RunLease | null = A, text = 'go'): Promise<string> {
    const id = await newConversation();
    expect((await storage.startTurn({ conversationId: id, message: user(text), lease: runLease ?? undefined })).started).toBe(true);
    return id;
  }

  const append = (conversationId: string, messages: NewMessage[], leaseOwner?: string, endsTurn = false) =>
    storage.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
      endsTurn,
      leaseOwner,
    });
  const update = (conversationId: string, expectedRevision: number, change: Partial<UpdateRunRequest> = {}) =>
    storage.updateRun({ conversationId, messages: [], approvals: [], expectedRevision, returnConversation: false, ...change });
  const read = (id: string) => storage.getConversation({ id, includeMessages: true });
  const contents = async (id: string) => (await read(id)).messages.map((message) => message.content);
  const running = async (id: string) => (await storage.getConversation({ id, includeMessages: false })).turnRunning;
  const turnEvents = () => events.flatMap((event) => (event.turnStarted ? ['turn_started'] : event.turnEnded ? ['turn_ended'] : []));
  const taken = (runs: TakenOverRun[]) => runs.map((run) => [run.conversationId, run.previousOwner, run.takeovers]);

  const newApproval = (uuid: string, change: Partial<NewApproval> = {}): NewApproval => ({
    uuid,
    toolCallId: 'call-1',
    toolName: 'delete_file',
    toolArgsJson: JSON.stringify({ path: '/tmp/x' }),
    description: 'Delete /tmp/x',
    agentChain: [],
    ...change,
  });

  describe('runs with leases (store)', () => {
    it('sets the lease with the mark of a started turn: its owner renews it, nobody else; the turn that ends clears it', async () => {
      const id = await leasedTurn(A);
      expect(await running(id)).toBe(true);
      expect(await storage.renewRunLease(id, A)).toBe(true);
      expect(await storage.renewRunLease(id, { ...B, node: A.node })).toBe(false);
      expect(await storage.releaseRunLease(id, B.owner)).toBe(false);
      // Unexpired, of another node: nobody takes it.
      expect(await storage.takeOverRuns(B, 10)).toEqual([]);

      await append(id, [assistant('done')], A.owner, true);
      expect(await running(id)).toBe(false);
      expect(await storage.renewRunLease(id, A)).toBe(false);
      expect(await storage.releaseRunLease(id, A.owner)).toBe(false);
      expect(await storage.takeOverRuns({ ...B, node: A.node }, 10)).toEqual([]);
      // Without a lease a turn is marked as before, and no lease is anyone's.
      expect((await storage.startTurn({ conversationId: id, message: user('again') })).started).toBe(true);
      expect(await storage.renewRunLease(id, A)).toBe(false);
      expect(await storage.takeOverRuns({ ...B, node: A.node }, 10)).toEqual([]);
    });

    it('sets the lease with the mark of a claim that continues the turn, and a new turn with no takeovers', async () => {
      const id = await leasedTurn(A);
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'delete',
        messages: [],
        agentChain: [],
      });
      // Stopping for an approval ends the turn and its lease.
      expect(await storage.renewRunLease(id, A)).toBe(false);
      const claim = await storage.claimApproval({
        uuid: approval.uuid,
        approved: true,
        messages: [],
        clearRun: false,
        alsoReject: [],
        continuesTurn: true,
        lease: B,
      });
      expect(claim.claimed).toBe(true);
      expect(await running(id)).toBe(true);
      expect(await storage.renewRunLease(id, A)).toBe(false);
      expect(await storage.renewRunLease(id, B)).toBe(true);
      expect(await storage.releaseRunLease(id, B.owner)).toBe(true);
      expect(taken(await storage.takeOverRuns(C, 10))).toEqual([[id, B.owner, 1]]);
      expect(turnEvents()).toEqual(['turn_started', 'turn_ended', 'turn_started']);
    });

    it('is busy while leased even after the store boot that marked it is gone, and is never noted as interrupted; a stale mark is not busy', async () => {
      const id = await leasedTurn(A, 'first');
      expect(await restart()).toBe(0);
      expect(await running(id)).toBe(true);
      const refused = await storage.startTurn({ conversationId: id, message: user('second') });
      expect(refused).toMatchObject({ started: false, busy: true });
      expect(refused.conversation.turnRunning).toBe(true);
      expect(await contents(id)).toEqual(['first']);
      // Also when the lease expired: the run waits for a replica to take it over.
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      expect((await storage.startTurn({ conversationId: id, message: user('second') })).busy).toBe(true);
      expect(await restart()).toBe(0);

      // Past the stale limit the turn is over for StartTurn; it starts without a note.
      skew += STALE_MS + 1;
      expect(await running(id)).toBe(false);
      const start = await storage.startTurn({ conversationId: id, message: user('second'), lease: B });
      expect(start).toMatchObject({ started: true, busy: false });
      expect(await contents(id)).toEqual(['first', 'second']);
      expect(await storage.renewRunLease(id, B)).toBe(true);
      expect(await storage.renewRunLease(id, A)).toBe(false);
    });

    it('keeps the interrupted-turn note for a mark without a lease, which no replica takes over', async () => {
      const id = await leasedTurn(null, 'hello');
      expect(await storage.takeOverRuns(B, 10)).toEqual([]);
      expect(await restart()).toBe(1);
      expect(await contents(id)).toEqual(['hello', INTERRUPTED_TURN_NOTE]);
      expect(await running(id)).toBe(false);

      // At the next StartTurn when the store did not sweep, before the new message.
      expect((await storage.startTurn({ conversationId: id, message: user('again') })).started).toBe(true);
      await storage.close();
      storage = await open();
      expect((await storage.startTurn({ conversationId: id, message: user('third') })).started).toBe(true);
      expect(await contents(id)).toEqual(['hello', INTERRUPTED_TURN_NOTE, 'again', INTERRUPTED_TURN_NOTE, 'third']);
    });

    it('takes over a released lease once: the new owner holds it, the previous one no longer; never its own, nor an unexpired foreign one', async () => {
      const id = await leasedTurn(A);
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      // Still running: release gives the lease back, the mark stays.
      expect(await running(id)).toBe(true);
      expect(await storage.takeOverRuns(A, 10)).toEqual([]);
      expect(taken(await storage.takeOverRuns(B, 10))).toEqual([[id, A.owner, 1]]);
      expect(await storage.takeOverRuns(C, 10)).toEqual([]);
      expect(await storage.takeOverRuns(B, 10)).toEqual([]);
      expect(await storage.renewRunLease(id, A)).toBe(false);
      expect(await storage.releaseRunLease(id, A.owner)).toBe(false);
      expect(await storage.renewRunLease(id, B)).toBe(true);
      expect(await running(id)).toBe(true);
      // The turn goes on: a takeover writes no event, and it is still one turn.
      expect(turnEvents()).toEqual(['turn_started']);

      // Taken again, the count goes on; the turn's end and a new turn start it over.
      expect(await storage.releaseRunLease(id, B.owner)).toBe(true);
      expect(taken(await storage.takeOverRuns(C, 10))).toEqual([[id, B.owner, 2]]);
      await append(id, [assistant('done')], C.owner, true);
      expect((await storage.startTurn({ conversationId: id, message: user('next'), lease: A })).started).toBe(true);
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      expect(taken(await storage.takeOverRuns(B, 10))).toEqual([[id, A.owner, 1]]);
    });

    it('takes over at once, unexpired, what a previous boot of the same node holds', async () => {
      const id = await leasedTurn(A);
      const restarted = lease('a-boot-2', A.node);
      expect(await storage.takeOverRuns(B, 10)).toEqual([]);
      expect(taken(await storage.takeOverRuns(restarted, 10))).toEqual([[id, A.owner, 1]]);
      expect(await storage.renewRunLease(id, A)).toBe(false);
      expect(await storage.renewRunLease(id, restarted)).toBe(true);
      // The new boot's lease is its own now, unexpired: no one else takes it.
      expect(await storage.takeOverRuns(B, 10)).toEqual([]);
      expect(await storage.takeOverRuns(restarted, 10)).toEqual([]);
    });

    it("takes back the caller's own run only where it says it gave it up, at once, expired or not; a given-up id of another's lease or of no run changes nothing", async () => {
      const kept = await leasedTurn(A, 'kept');
      const givenUp = await leasedTurn(A, 'given up');
      const others = await leasedTurn(B, 'of b');
      const ended = await leasedTurn(A, 'ended');
      await append(ended, [assistant('done')], A.owner, true);
      expect(await storage.takeOverRuns(A, 10, [givenUp, others, ended, 'not-an-id', UNKNOWN_UUID])).toMatchObject([
        { conversationId: givenUp, previousOwner: A.owner, takeovers: 1 },
      ]);
      // Taken back, it is a fresh lease of the same owner: the fence lets its writes through again.
      expect(await storage.renewRunLease(givenUp, A)).toBe(true);
      await append(givenUp, [assistant('went on')], A.owner);
      expect(await contents(givenUp)).toEqual(['given up', 'went on']);
      // Not named, the caller's own run is never its to take; nor is another's, named or not.
      expect(await storage.takeOverRuns(A, 10)).toEqual([]);
      expect(await storage.renewRunLease(others, B)).toBe(true);
      expect([await running(kept), await running(ended)]).toEqual([true, false]);
      // Only the caller's own: named by another taker, it stays where it is.
      expect(await storage.takeOverRuns(C, 10, [kept])).toEqual([]);
    });

    it('takes over a lease once its ttl passed', async () => {
      const id = await leasedTurn(lease('short', 'node-short', 1));
      let runs: TakenOverRun[] = [];
      await until('the 1 ms lease to expire', async () => {
        runs = await storage.takeOverRuns(B, 10);
        return runs.length > 0;
      });
      expect(taken(runs)).toEqual([[id, 'short', 1]]);
      // A renewal of the expired owner comes too late.
      expect(await storage.renewRunLease(id, lease('short', 'node-short'))).toBe(false);
      expect(await storage.renewRunLease(id, B)).toBe(true);
    });

    it('takes at most `limit` runs, oldest expiry first, each once', async () => {
      const ids = [await leasedTurn(A, 'r0'), await leasedTurn(A, 'r1'), await leasedTurn(A, 'r2')];
      const unexpired = await leasedTurn(C, 'r3');
      // Released (expired from now) in the order r2, r0, r1, a few milliseconds apart on every clock.
      for (const index of [2, 0, 1]) {
        const releasedAt = Date.now();
        expect(await storage.releaseRunLease(ids[index]!, A.owner)).toBe(true);
        await until('the clock to move on', async () => Date.now() > releasedAt + 5);
      }
      const first = await storage.takeOverRuns(B, 2);
      const second = await storage.takeOverRuns(B, 2);
      expect([first, second].map((runs) => runs.map((run) => run.conversationId))).toEqual([[ids[2], ids[0]], [ids[1]]]);
      expect(await storage.takeOverRuns(B, 2)).toEqual([]);
      expect(await storage.renewRunLease(unexpired, C)).toBe(true);
    });

    it('takes over stale marks too, and the run is a running turn again (busy)', async () => {
      const id = await leasedTurn(A);
      skew += STALE_MS + 1;
      expect(await running(id)).toBe(false);
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      expect(taken(await storage.takeOverRuns(B, 10))).toEqual([[id, A.owner, 1]]);
      expect(await running(id)).toBe(true);
      expect(await storage.startTurn({ conversationId: id, message: user('more') })).toMatchObject({ started: false, busy: true });
    });

    it('fences appends and run writes: ABORTED with nothing written unless the named owner holds the lease', async () => {
      const id = await leasedTurn(A);
      const revision = (await read(id)).runRevision;
      await append(id, [assistant('step 1')], A.owner);
      const fenced = { code: GrpcStatus.ABORTED, message: expect.stringMatching(/lease is held by another replica/) };
      await expect(append(id, [assistant('intruder')], B.owner)).rejects.toMatchObject(fenced);
      await expect(append(id, [assistant('intruder')], B.owner, true)).rejects.toMatchObject(fenced);
      await expect(update(id, revision, { messages: [assistant('intruder')], run: runOf('x'), leaseOwner: B.owner })).rejects.toMatchObject(
        fenced,
      );
      expect(await running(id)).toBe(true);

      // Taken over: the previous owner is fenced off, the new one writes.
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      await storage.takeOverRuns(B, 10);
      await expect(append(id, [assistant('late')], A.owner)).rejects.toMatchObject(fenced);
      await expect(update(id, revision, { run: runOf('late'), leaseOwner: A.owner })).rejects.toMatchObject(fenced);
      const next = await update(id, revision, { messages: [assistant('step 2')], run: runOf('s2'), leaseOwner: B.owner });
      // Without an owner nothing is checked, as before.
      await append(id, [assistant('unfenced')]);
      await update(id, next, { messages: [assistant('done')], leaseOwner: B.owner });

      // The run ended (cleared): every owner is fenced off.
      const ended = { code: GrpcStatus.ABORTED, message: expect.stringMatching(/turn ended/) };
      await expect(append(id, [assistant('after')], B.owner)).rejects.toMatchObject(ended);
      await expect(update(id, next + 1, { run: runOf('after'), leaseOwner: B.owner })).rejects.toMatchObject(ended);
      expect(await contents(id)).toEqual(['go', 'step 1', 'step 2', 'unfenced', 'done']);
      expect((await read(id)).runRevision).toBe(next + 1);

      // A running turn without a lease has no owner to write for.
      expect((await storage.startTurn({ conversationId: id, message: user('plain') })).started).toBe(true);
      await expect(append(id, [assistant('x')], A.owner)).rejects.toMatchObject({ code: GrpcStatus.ABORTED });
    });

    it('marks an executing approval interrupted in the run write that asks for it again with outcome_unknown; the conversation then waits', async () => {
      const X = '3f1c2b4a-0000-4000-8000-000000000001';
      const Y = '3f1c2b4a-0000-4000-8000-000000000002';
      const id = await leasedTurn(A);
      const paused = await update(id, 0, { approvals: [newApproval(X)], run: runOf('paused at X'), leaseOwner: A.owner });
      await storage.claimApproval({
        uuid: X,
        approved: true,
        messages: [],
        clearRun: false,
        alsoReject: [],
        continuesTurn: true,
        lease: A,
      });
      await storage.startApprovalExecution(X);
      // A dies while the call runs; B takes the run over.
      expect(await storage.releaseRunLease(id, A.owner)).toBe(true);
      expect(taken(await storage.takeOverRuns(B, 10))).toEqual([[id, A.owner, 1]]);
      const before = await read(id);
      events.length = 0;

      const asked = await update(id, paused, {
        interruptedApproval: X,
        approvals: [newApproval(Y, { outcomeUnknown: true, replacesUuid: X })],
        run: runOf('paused at Y'),
        leaseOwner: B.owner,
      });
      expect(asked).toBe(paused + 1);
      expect((await storage.getApproval(X)).status).toBe(ApprovalStatus.APPROVAL_STATUS_INTERRUPTED);
      const again = await storage.getApproval(Y);
      expect([again.status, again.outcomeUnknown, again.replacesUuid]).toEqual([ApprovalStatus.APPROVAL_STATUS_PENDING, true, X]);
      // No message for the interruption; the conversation waits for Y and its turn is over.
      const after = await read(id);
      expect([after.status, after.messageCount, after.turnRunning]).toEqual([
        ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
        before.messageCount,
        false,
      ]);
      expect([after.pendingApproval?.uuid, after.pendingApproval?.outcomeUnknown, after.pendingApproval?.replacesUuid]).toEqual([
        Y,
        true,
        X,
      ]);
      expect(await storage.renewRunLease(id, B)).toBe(false);
      // Everywhere approvals are returned: lists, the pending approvals, the events.
      const listed = (await storage.listConversations({ pageSize: 10, pageToken: '' })).conversations.find(
        (conversation) => conversation.id === id,
      );
      expect(listed?.pendingApprovals.map((approval) => [approval.uuid, approval.outcomeUnknown, approval.replacesUuid])).toEqual([
        [Y, true, X],
      ]);
      const pending = (await storage.listPendingApprovals({ pageSize: 10, pageToken: '' })).approvals;
      expect(pending.map((approval) => [approval.uuid, approval.outcomeUnknown, approval.replacesUuid])).toEqual([[Y, true, X]]);
      const requested = events.flatMap((event) => (event.approvalRequested ? [event.approvalRequested] : []));
      expect(requested.map((approval) => [approval.uuid, approval.outcomeUnknown, approval.replacesUuid])).toEqual([[Y, true, X]]);
      const replayed = (await storage.readEvents({ conversationId: id, afterId: 0, limit: 100 })).flatMap((event) =>
        event.approvalRequested ? [event.approvalRequested] : [],
      );
      expect(replayed.map((approval) => [approval.uuid, approval.outcomeUnknown ?? false, approval.replacesUuid])).toEqual([
        [X, false, undefined],
        [Y, true, X],
      ]);
      expect(turnEvents()).toEqual(['turn_ended']);

      // Approved, it runs again (knowingly) and its outcome is recorded as any other's.
      const claim = await storage.claimApproval({
        uuid: Y,
        approved: true,
        messages: [],
        clearRun: false,
        alsoReject: [],
        continuesTurn: true,
        lease: B,
      });
      expect([claim.claimed, claim.approval.outcomeUnknown, claim.approval.replacesUuid]).toEqual([true, true, X]);
      const resolved = events.flatMap((event) => (event.approvalResolved ? [event.approvalResolved] : []));
      expect(resolved.map((approval) => [approval.uuid, approval.outcomeUnknown])).toEqual([[Y, true]]);
    });

    it('refuses an interrupted_approval that is not an executing approval of the conversation: FAILED_PRECONDITION, nothing written', async () => {
      const X = '3f1c2b4a-0000-4000-8000-000000000011';
      const Y = '3f1c2b4a-0000-4000-8000-000000000012';
      const Z = '3f1c2b4a-0000-4000-8000-000000000013';
      const id = await leasedTurn(A);
      const revision = await update(id, 0, { approvals: [newApproval(X)], run: runOf('paused at X') });
      const other = await leasedTurn(B);
      await update(other, 0, { approvals: [newApproval(Z)], run: runOf('paused at Z') });
      await storage.claimApproval({
        uuid: Z,
        approved: true,
        messages: [],
        clearRun: false,
        alsoReject: [],
        continuesTurn: true,
        lease: B,
      });
      await storage.startApprovalExecution(Z);
      const before = await read(id);

      // Pending (not executing), another conversation's executing one, an unknown one, not a uuid.
      for (const [uuid, problem] of [
        [X, /is pending/],
        [Z, /belongs to another conversation/],
        [UNKNOWN_UUID, /not an approval of conversation/],
        ['nope', /not an approval of conversation/],
      ] as const) {
        await expect(
          update(id, revision, {
            interruptedApproval: uuid,
            approvals: [newApproval(Y, { outcomeUnknown: true, replacesUuid: X })],
            messages: [assistant('x')],
            run: runOf('y'),
          }),
        ).rejects.toMatchObject({ code: GrpcStatus.FAILED_PRECONDITION, message: expect.stringMatching(problem) });
      }
      const after = await read(id);
      expect([after.runRevision, after.messageCount, after.pendingApprovals.map((approval) => approval.uuid)]).toEqual([
        before.runRevision,
        before.messageCount,
        [X],
      ]);
      await expect(storage.getApproval(Y)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      expect((await storage.getApproval(Z)).status).toBe(ApprovalStatus.APPROVAL_STATUS_EXECUTING);
    });

    it('answers NOT_FOUND for renewing or releasing the lease of an unknown conversation', async () => {
      for (const id of [UNKNOWN_UUID, 'not-a-uuid']) {
        await expect(storage.renewRunLease(id, A)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
        await expect(storage.releaseRunLease(id, A.owner)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      }
    });

    it('migrates a database of the schema before leases: its approvals ask for the first time, its marks have no lease', async () => {
      const id = await newConversation();
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'delete',
        messages: [],
        agentChain: [],
      });
      const running = await leasedTurn(null, 'old turn');
      await storage.close();
      // Back to the schema before runs had leases (SQLite 12, PostgreSQL 3).
      await driver.execute(
        driver.name === 'sqlite'
          ? `${DROP_SCHEMA_13} UPDATE schema_version SET version = 12;`
          : `${DROP_POSTGRES_SCHEMA_5}
             DROP INDEX conversations_leased;
             ALTER TABLE conversations DROP COLUMN lease_owner, DROP COLUMN lease_node, DROP COLUMN lease_expires_at, DROP COLUMN lease_takeovers;
             ALTER TABLE approvals DROP COLUMN outcome_unknown, DROP COLUMN replaces_uuid;
             UPDATE schema_version SET version = 3;`,
      );
      storage = await open();
      const migrated = await storage.getApproval(approval.uuid);
      expect([migrated.status, migrated.outcomeUnknown, migrated.replacesUuid]).toEqual([
        ApprovalStatus.APPROVAL_STATUS_PENDING,
        undefined,
        undefined,
      ]);
      // The old mark is a crash's, as before (PostgreSQL's heartbeat may have swept it already);
      // leases work on the migrated database.
      await storage.noteInterruptedTurns();
      expect(await contents(running)).toEqual(['old turn', INTERRUPTED_TURN_NOTE]);
      const leased = await leasedTurn(A);
      expect(await storage.renewRunLease(leased, A)).toBe(true);
    });

    sqliteIt('finds the runs to take over through the index of leased marks, not by reading every conversation', async () => {
      // Covered for every statement by "has no statement that scans a whole table"; here the
      // chosen index is named.
      const db = new Database(join(driver.dataDir!, DATABASE_FILE), { readonly: true });
      try {
        const plan = db
          .prepare(`EXPLAIN QUERY PLAN ${SQL.selectTakeoverCandidates}`)
          .all({ owner: '', node: '', now: 0, limit: 1, given_up: '[]' }) as { detail: string }[];
        expect(plan.map((step) => step.detail).join(' | ')).toMatch(/USING INDEX conversations_leased/);
      } finally {
        db.close();
      }
    });

    postgresIt(
      'commits no write once its caller stopped waiting: past the deadline it is rolled back, and the caller told so finds nothing done',
      async () => {
        const id = await newConversation();
        const late = runWithContext({ sessionId: '', deadline: Date.now() - 1 }, () =>
          storage.startTurn({ conversationId: id, message: user('too late'), lease: A }),
        );
        await expect(late).rejects.toMatchObject({
          code: GrpcStatus.DEADLINE_EXCEEDED,
          message: expect.stringContaining('nothing was written'),
        });
        expect(await contents(id)).toEqual([]);
        expect(await running(id)).toBe(false);
        expect(await storage.renewRunLease(id, A)).toBe(false);
        // In time, the same write is made.
        const inTime = runWithContext({ sessionId: '', deadline: Date.now() + MINUTE }, () =>
          storage.startTurn({ conversationId: id, message: user('in time'), lease: A }),
        );
        expect((await inTime).started).toBe(true);
        expect(await contents(id)).toEqual(['in time']);
      },
    );

    postgresIt('gives each of 30 expired runs to exactly one of two replicas asking at once, many times over', async () => {
      const RUNS = 30;
      const ids: string[] = [];
      for (let index = 0; index < RUNS; index++) ids.push(await leasedTurn(lease('gone', 'node-gone', 1), `r${index}`));
      const replicas = [await open(), await open()];
      try {
        const got = new Map<string, string[]>();
        let rounds = 0;
        // Each replica asks 8 times at once per round, until every run was taken and the rounds stopped finding any.
        const deadline = Date.now() + 20_000;
        while ([...got.values()].flat().length < RUNS || rounds < 3) {
          if (Date.now() > deadline) throw new Error(`timed out: ${[...got.values()].flat().length} of ${RUNS} runs taken`);
          const answers = await Promise.all(
            replicas.flatMap((replica, index) =>
              Array.from({ length: 8 }, (_, call) => {
                const taker = lease(`replica-${index}-caller-${call}`, `node-${index}-${call}`);
                return replica
                  .takeOverRuns(taker, 1 + (call % 3))
                  .then((runs) => runs.map((run) => [run.conversationId, taker.owner, run] as const));
              }),
            ),
          );
          for (const [id, owner, run] of answers.flat()) {
            got.set(id, [...(got.get(id) ?? []), owner]);
            expect([run.previousOwner, run.takeovers]).toEqual(['gone', 1]);
          }
          rounds += 1;
        }
        expect([...got.keys()].sort()).toEqual([...ids].sort());
        expect([...got.values()].filter((owners) => owners.length !== 1)).toEqual([]);
        // Each run is its taker's now.
        for (const [id, [owner]] of got) {
          const index = Number(owner!.split('-')[1]);
          const call = Number(owner!.split('-')[3]);
          expect(await storage.renewRunLease(id, lease(owner!, `node-${index}-${call}`))).toBe(true);
        }
      } finally {
        for (const replica of replicas) await replica.close();
      }
    });
  });
}
