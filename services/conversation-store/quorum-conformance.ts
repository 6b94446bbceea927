/**
 * Quorums of approvers (store.proto ClaimApprovalRequest, votes; NewApproval.quorum): an approving claim of an approval
 * that needs N people is a vote, recorded in the claim's transaction; the Nth distinct vote for the arguments in force
 * claims it once, as any approval; a rejection decides at once. Run on each driver (sqlite-storage.test.ts,
 * postgres-storage.test.ts), each test on a database of its own.
 */
import { expect, it } from 'vitest';
import {
  ApprovalStatus,
  type ApprovalEscalation,
  type ApprovalQuorum,
  type ClaimApprovalRequest,
  type PendingApproval,
} from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { storesPerTest } from '../../test/support/stores-per-test.js';
import { until } from '../../test/support/until.js';
import type { ConversationStorage } from './storage.js';

let storage: ConversationStorage;

const QUORUM_OF_TWO: ApprovalQuorum = { required: 2, role: 'approve', notRequester: true, requester: 'token:carol' };

export function quorumConformance(driver: StorageDriver): void {
  const another = storesPerTest(driver, (opened) => {
    storage = opened;
  });

  /** A conversation whose run waits for one approval of delete_file that needs `quorum` (and escalates as `escalation` says). */
  async function waitingFor(quorum: ApprovalQuorum = QUORUM_OF_TWO, escalation?: ApprovalEscalation): Promise<PendingApproval> {
    const { id } = await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' });
    const uuid = '00000000-0000-4000-8000-000000000001';
    await storage.updateRun({
      conversationId: id,
      messages: [],
      approvals: [
        {
          uuid,
          toolCallId: 'call-1',
          toolName: 'delete_file',
          toolArgsJson: JSON.stringify({ path: '/tmp/x' }),
          description: 'Delete /tmp/x',
          agentChain: [],
          quorum,
          ...(escalation && { escalation }),
        },
      ],
      run: { state: Buffer.from('run'), schemaVersion: 1, revision: 0 },
      expectedRevision: 0,
      returnConversation: false,
    });
    return storage.getApproval(uuid);
  }

  const vote = (uuid: string, by: string, change: Partial<ClaimApprovalRequest> = {}, on: ConversationStorage = storage) =>
    on.claimApproval({ uuid, approved: true, messages: [], clearRun: false, alsoReject: [], decidedBy: by, via: 'rest', ...change });

  const audit = async (kinds: string[]) => (await storage.listAudit({ kinds, pageSize: 500, pageToken: '' })).entries;
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (error: { code?: number }) => error.code,
    );

  it('keeps what the approval needs and who asked for the call', async () => {
    const approval = await waitingFor();
    expect(approval.quorum).toEqual(QUORUM_OF_TWO);
    expect(approval.votes).toEqual([]);
  });

  it('records votes below the quorum without claiming; the Nth distinct vote claims once', async () => {
    const approval = await waitingFor({ ...QUORUM_OF_TWO, required: 3 });
    const first = await vote(approval.uuid, 'token:alice', { reason: 'fine' });
    expect(first).toMatchObject({ claimed: false, voteRecorded: true });
    expect(first.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
    expect(first.approval.votes).toMatchObject([{ by: 'token:alice', via: 'rest', reason: 'fine', argsHash: approval.argsHash }]);
    const second = await vote(approval.uuid, 'token:bob');
    expect(second).toMatchObject({ claimed: false, voteRecorded: true });
    expect(second.approval.votes.map((v) => v.by).sort()).toEqual(['token:alice', 'token:bob']);
    // Nothing was claimed: the conversation still waits and the call may not start.
    expect(await codeOf(storage.startApprovalExecution(approval.uuid))).toBe(GrpcStatus.FAILED_PRECONDITION);
    const third = await vote(approval.uuid, 'token:dave', { decisionId: 'd-3' });
    expect(third.claimed).toBe(true);
    expect(third.approval).toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_APPROVED, decidedBy: 'token:dave', decisionId: 'd-3' });
    expect(third.approval.votes).toHaveLength(3);
    // A vote after the claim is a lost claim, as any late decision.
    const late = await vote(approval.uuid, 'token:erin');
    expect(late).toMatchObject({ claimed: false });
    expect(late.voteRecorded).toBeFalsy();
    expect((await storage.startApprovalExecution(approval.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_EXECUTING);
    // Each vote is audited; the claim is audited as every decision.
    expect((await audit(['approval.voted'])).map((entry) => entry.actor).sort()).toEqual(['token:alice', 'token:bob', 'token:dave']);
    const [decided, ...more] = await audit(['approval.decided']);
    expect(more).toEqual([]);
    expect(decided).toMatchObject({ actor: 'token:dave', subject: approval.uuid });
  });

  it('refuses a second vote of the same voter with ALREADY_EXISTS', async () => {
    const approval = await waitingFor();
    await vote(approval.uuid, 'token:alice');
    expect(await codeOf(vote(approval.uuid, 'token:alice'))).toBe(GrpcStatus.ALREADY_EXISTS);
    expect((await storage.getApproval(approval.uuid)).votes).toHaveLength(1);
    expect((await storage.getApproval(approval.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
  });

  it("refuses the requester's vote with not_requester, audited, and counts nothing", async () => {
    const approval = await waitingFor();
    expect(await codeOf(vote(approval.uuid, 'token:carol'))).toBe(GrpcStatus.PERMISSION_DENIED);
    expect((await storage.getApproval(approval.uuid)).votes).toEqual([]);
    const [refused] = await audit(['approval.vote_refused']);
    expect(refused).toMatchObject({ actor: 'token:carol', subject: approval.uuid });
    expect((await storage.getApproval(approval.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
  });

  it('lets the requester vote when the quorum does not say not_requester', async () => {
    const approval = await waitingFor({ ...QUORUM_OF_TWO, notRequester: false });
    expect(await vote(approval.uuid, 'token:carol')).toMatchObject({ claimed: false, voteRecorded: true });
  });

  it('rejects at once, whatever the votes', async () => {
    const approval = await waitingFor();
    await vote(approval.uuid, 'token:alice');
    const rejected = await vote(approval.uuid, 'token:bob', { approved: false, reason: 'no' });
    expect(rejected.claimed).toBe(true);
    expect(rejected.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
    expect(await vote(approval.uuid, 'token:dave')).toMatchObject({ claimed: false });
  });

  it('restarts the count on an edit, and the claim runs the edited arguments', async () => {
    const approval = await waitingFor();
    await vote(approval.uuid, 'token:alice');
    const edited = await vote(approval.uuid, 'token:bob', { editedArgsJson: JSON.stringify({ path: '/tmp/y' }) });
    // bob's edit would have completed the quorum with alice's vote; it restarts it instead.
    expect(edited).toMatchObject({ claimed: false, voteRecorded: true });
    expect(edited.approval.votes.map((v) => v.by)).toEqual(['token:bob']);
    expect(edited.approval.editedArgsJson).toBe('{"path":"/tmp/y"}');
    expect(edited.approval.toolArgsJson).toBe('{"path":"/tmp/x"}');
    expect(edited.approval.votes[0]!.argsHash).not.toBe(approval.argsHash);
    // bob voted for the arguments in force: again is ALREADY_EXISTS; the same edit again is no new edit.
    expect(await codeOf(vote(approval.uuid, 'token:bob', { editedArgsJson: '{"path":"/tmp/y"}' }))).toBe(GrpcStatus.ALREADY_EXISTS);
    const done = await vote(approval.uuid, 'token:alice');
    expect(done.claimed).toBe(true);
    expect(done.approval).toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_APPROVED, editedArgsJson: '{"path":"/tmp/y"}' });
    const [edit] = (await audit(['approval.voted'])).filter((entry) => entry.actor === 'token:bob');
    expect(JSON.parse(edit!.detailJson)).toMatchObject({ votes: 1, required: 2, edited: true });
  });

  it('of two completing votes sent to two stores at once, exactly one claims', async () => {
    const other = await another();
    const approval = await waitingFor();
    await vote(approval.uuid, 'token:alice');
    const answers = await Promise.all([vote(approval.uuid, 'token:bob'), vote(approval.uuid, 'token:dave', {}, other)]);
    expect(answers.filter((answer) => answer.claimed)).toHaveLength(1);
    // The loser saw the claim (the conversation's lock orders them): it decided and recorded nothing.
    const stored = await storage.getApproval(approval.uuid);
    expect(stored.status).toBe(ApprovalStatus.APPROVAL_STATUS_APPROVED);
    expect(stored.votes).toHaveLength(2);
  });

  it('escalates a pending approval once its time has come, once across two stores: marked, audited and told as an event', async () => {
    const other = await another();
    const approval = await waitingFor(QUORUM_OF_TWO, { afterMs: 1, toRole: 'admin' });
    expect(approval).toMatchObject({ escalationRole: 'admin', escalatedAt: undefined });
    expect(approval.escalatesAt!.getTime() - approval.createdAt!.getTime()).toBe(1);
    // Its time passes on the store's clock; both stores ask at once.
    await until('its escalation is due', async () => Date.now() > approval.escalatesAt!.getTime());
    const [here, there] = await Promise.all([storage.escalateDueApprovals(10), other.escalateDueApprovals(10)]);
    expect([...here, ...there].map((each) => each.uuid)).toEqual([approval.uuid]);
    expect([...here, ...there][0]!.escalatedAt).toBeInstanceOf(Date);
    expect(await storage.escalateDueApprovals(10)).toEqual([]);
    expect((await storage.getApproval(approval.uuid)).escalatedAt).toBeInstanceOf(Date);
    const entries = await audit(['approval.escalated']);
    expect(entries).toMatchObject([{ subject: approval.uuid, actor: 'escalation', via: 'escalation' }]);
    expect(JSON.parse(entries[0]!.detailJson)).toMatchObject({ to_role: 'admin', tool_name: 'delete_file' });
    const events = await storage.readEvents({ conversationId: approval.conversationId, afterId: 0, limit: 100 });
    expect(events.filter((event) => event.approvalEscalated).map((event) => event.approvalEscalated!.uuid)).toEqual([approval.uuid]);
  });

  it('leaves alone an approval decided before its escalation, and one without any', async () => {
    const decided = await waitingFor({ ...QUORUM_OF_TWO, required: 1 }, { afterMs: 1, toRole: 'admin' });
    await vote(decided.uuid, 'token:alice');
    await until('its escalation would be due', async () => Date.now() > decided.escalatesAt!.getTime());
    expect(await storage.escalateDueApprovals(10)).toEqual([]);
    expect(await audit(['approval.escalated'])).toEqual([]);
  });
}
