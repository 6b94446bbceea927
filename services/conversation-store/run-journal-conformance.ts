/**
 * The run journal (store.proto RunJournalEntry, ListRuns, GetRun): a write's steps are stored
 * in the write's own transaction — stored with it, refused with it — numbered after the run's
 * earlier steps; a run's row keeps its status, start, end and step count; a conversation's
 * runs are listed newest first, paged. Run on each driver (sqlite-storage.test.ts,
 * postgres-storage.test.ts), each test on a database of its own.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConversationStatus, MessageRole, type NewMessage, type RunJournalEntry, type RunStep } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import type { ConversationStorage } from './storage.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { storesPerTest } from '../../test/support/stores-per-test.js';

let storage: ConversationStorage;

const START = Date.parse('2026-03-01T10:00:00.000Z');

const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });

const modelCall = (at: number, inputTokens: number): RunStep => ({
  index: 0,
  kind: 'model_call',
  node: 'assistant',
  startedAtMs: at,
  durationMs: 40,
  bodyJson: JSON.stringify({
    model: 'gemini-2.5-flash',
    provider: 'gemini',
    input_tokens: inputTokens,
    output_tokens: 7,
    finish_reason: 'stop',
  }),
});

const toolCall = (at: number): RunStep => ({
  index: 0,
  kind: 'tool_call',
  node: 'assistant',
  startedAtMs: at,
  durationMs: 5,
  bodyJson: JSON.stringify({
    tool: 'resources_list',
    server: 'resources',
    arguments: {},
    args_hash: 'h',
    outcome: 'ok',
    summary: '[]',
  }),
});

const journal = (runId: string, status: string, steps: RunStep[]): RunJournalEntry => ({ runId, startedAtMs: START, status, steps });

export function runJournalConformance(driver: StorageDriver): void {
  storesPerTest(driver, (opened) => {
    storage = opened;
  });

  async function startedConversation(): Promise<string> {
    const { id } = await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' });
    await storage.startTurn({ conversationId: id, message: user('hello') });
    return id;
  }

  const finish = (conversationId: string, entry: RunJournalEntry, expectedRevision = 0) =>
    storage.updateRun({
      conversationId,
      messages: [assistant('done')],
      approvals: [],
      expectedRevision,
      returnConversation: false,
      journal: entry,
    });

  describe('steps written with the run', () => {
    it("stores a write's steps with it, in order from index 0, and the run as completed with its start, end and count", async () => {
      const id = await startedConversation();
      const runId = randomUUID();
      await finish(id, journal(runId, 'completed', [modelCall(START + 1, 120), toolCall(START + 50), modelCall(START + 60, 180)]));

      const { run, steps } = await storage.getRun(runId);
      expect(run).toMatchObject({ runId, conversationId: id, status: 'completed', stepCount: 3, journalVersion: 2 });
      expect(run!.startedAt).toEqual(new Date(START));
      expect(run!.endedAt).toBeInstanceOf(Date);
      expect(steps.map((step) => [step.index, step.kind])).toEqual([
        [0, 'model_call'],
        [1, 'tool_call'],
        [2, 'model_call'],
      ]);
      expect(steps[0]).toMatchObject({ node: 'assistant', startedAtMs: START + 1, durationMs: 40 });
      expect(JSON.parse(steps[2]!.bodyJson)).toMatchObject({ input_tokens: 180, output_tokens: 7 });
    });

    it("numbers a later write's steps after the run's earlier ones; a running run has no end", async () => {
      const id = await startedConversation();
      const runId = randomUUID();
      await storage.appendMessages({
        conversationId: id,
        messages: [assistant('node one')],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        journal: journal(runId, 'running', [modelCall(START, 1), toolCall(START + 1)]),
      });
      const running = await storage.getRun(runId);
      expect(running.run).toMatchObject({ status: 'running', stepCount: 2 });
      expect(running.run!.endedAt).toBeUndefined();

      await finish(id, journal(runId, 'completed', [modelCall(START + 2, 3)]));
      const { run, steps } = await storage.getRun(runId);
      expect(run).toMatchObject({ status: 'completed', stepCount: 3 });
      expect(steps.map((step) => step.index)).toEqual([0, 1, 2]);
    });

    it('stores nothing of a write that is refused: its steps go with it', async () => {
      const id = await startedConversation();
      const runId = randomUUID();
      const refused = finish(id, journal(runId, 'completed', [modelCall(START, 1)]), 5);
      await expect(refused).rejects.toMatchObject({ code: GrpcStatus.ABORTED });
      await expect(storage.getRun(runId)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      expect((await storage.listRuns({ conversationId: id, pageSize: 0, pageToken: '' })).runs).toEqual([]);
    });

    it("records a decision's steps with the claim that wins, none with one that loses", async () => {
      const id = await startedConversation();
      const runId = randomUUID();
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'delete',
        messages: [],
        agentChain: [],
      });
      const decision = (approved: boolean): RunStep => ({
        index: 0,
        kind: 'decision',
        node: 'assistant',
        startedAtMs: START,
        durationMs: 0,
        bodyJson: JSON.stringify({ approval_uuid: approval.uuid, approved, decided_by: 'carol', via: 'rest' }),
      });
      const claim = (approved: boolean) =>
        storage.claimApproval({
          uuid: approval.uuid,
          approved,
          messages: [],
          clearRun: false,
          alsoReject: [],
          journal: journal(runId, 'running', [decision(approved)]),
        });
      expect((await claim(true)).claimed).toBe(true);
      expect((await claim(false)).claimed).toBe(false);
      const { steps } = await storage.getRun(runId);
      expect(steps.map((step) => JSON.parse(step.bodyJson).approved)).toEqual([true]);
    });

    it("refuses steps of another conversation's run, and the write with them", async () => {
      const first = await startedConversation();
      const second = await startedConversation();
      const runId = randomUUID();
      await finish(first, journal(runId, 'completed', [modelCall(START, 1)]));
      await expect(finish(second, journal(runId, 'completed', [modelCall(START, 1)]))).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
      expect((await storage.getConversation({ id: second, includeMessages: false })).runRevision).toBe(0);
      expect((await storage.getRun(runId)).run!.stepCount).toBe(1);
    });
  });

  describe('listRuns and getRun', () => {
    it("lists a conversation's runs newest first, paged, with their step counts", async () => {
      const id = await startedConversation();
      const runIds: string[] = [];
      for (let run = 0; run < 3; run++) {
        const runId = randomUUID();
        runIds.push(runId);
        const steps = Array.from({ length: run + 1 }, (_, index) => modelCall(START + index, index));
        await storage.updateRun({
          conversationId: id,
          messages: [],
          approvals: [],
          expectedRevision: run,
          returnConversation: false,
          journal: { runId, startedAtMs: START + run * 1000, status: 'completed', steps },
        });
      }
      const first = await storage.listRuns({ conversationId: id, pageSize: 2, pageToken: '' });
      expect(first.runs.map((run) => [run.runId, run.stepCount])).toEqual([
        [runIds[2], 3],
        [runIds[1], 2],
      ]);
      const second = await storage.listRuns({ conversationId: id, pageSize: 2, pageToken: first.nextPageToken });
      expect(second.runs.map((run) => run.runId)).toEqual([runIds[0]]);
      expect(second.nextPageToken).toBe('');
      await expect(storage.listRuns({ conversationId: id, pageSize: 2, pageToken: 'bogus' })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
    });

    it('NOT_FOUND for an unknown conversation or run', async () => {
      const unknown = '00000000-0000-4000-8000-000000000000';
      await expect(storage.listRuns({ conversationId: unknown, pageSize: 0, pageToken: '' })).rejects.toMatchObject({
        code: GrpcStatus.NOT_FOUND,
      });
      await expect(storage.getRun(unknown)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      await expect(storage.getRun('not-a-run')).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    });
  });

  describe('where steps stand in their conversation, and forks', () => {
    it("records each step's message_seq (sent, or the count before the write's messages) and the run's user message", async () => {
      const id = await startedConversation();
      const runId = randomUUID();
      await finish(id, journal(runId, 'completed', [{ ...modelCall(START, 1), messageSeq: 1 }, toolCall(START + 10)]));
      const { run, steps } = await storage.getRun(runId);
      expect(run).toMatchObject({ journalVersion: 2, messageSeq: 1 });
      // The second step carried none: it stands before the write's own message ("done", seq 2).
      expect(steps.map((step) => step.messageSeq)).toEqual([1, 1]);
      expect((await storage.listRuns({ conversationId: id, pageSize: 0, pageToken: '' })).runs[0]?.messageSeq).toBe(1);
    });

    it('copies the first messages into a new conversation of its own owner in one call, the source unchanged', async () => {
      const id = await startedConversation();
      await storage.appendMessages({
        conversationId: id,
        messages: [assistant('one'), user('two'), assistant('three')],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
      const fork = await storage.forkConversation({ sourceConversationId: id, upToSeq: 3, owner: 'token:bob', sessionId: 'a1b2c3d5' });
      expect(fork.id).not.toBe(id);
      expect(fork.owner).toBe('token:bob');
      expect(fork.messages.map((message) => [message.seq, message.content])).toEqual([
        [1, 'hello'],
        [2, 'one'],
        [3, 'two'],
      ]);
      expect(fork.pendingApprovals).toEqual([]);
      const source = await storage.getConversation({ id, includeMessages: true });
      expect(source.messages.map((message) => message.content)).toEqual(['hello', 'one', 'two', 'three']);
      // Its own messages: appending to the fork leaves the source as it was.
      await storage.appendMessages({
        conversationId: fork.id,
        messages: [assistant('other')],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
      expect((await storage.getConversation({ id, includeMessages: true })).messageCount).toBe(4);
      expect((await storage.getConversation({ id: fork.id, includeMessages: true })).messageCount).toBe(4);
      await expect(storage.listRuns({ conversationId: fork.id, pageSize: 0, pageToken: '' })).resolves.toMatchObject({ runs: [] });
    });

    it('marks the fork running with a lease, and refuses a seq past the last message or an unknown source', async () => {
      const id = await startedConversation();
      const fork = await storage.forkConversation({
        sourceConversationId: id,
        upToSeq: 1,
        sessionId: 'a1b2c3d6',
        lease: { owner: 'replica-a', node: 'node-a', ttlMs: 60_000 },
      });
      // Its turn is running: a message of another request finds it busy.
      const start = await storage.startTurn({ conversationId: fork.id, message: user('again') });
      expect(start).toMatchObject({ started: false, busy: true });
      await expect(storage.forkConversation({ sourceConversationId: id, upToSeq: 2, sessionId: 'a1b2c3d6' })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
      await expect(
        storage.forkConversation({ sourceConversationId: '00000000-0000-4000-8000-000000000000', upToSeq: 0, sessionId: 'a1b2c3d6' }),
      ).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    });
  });
}
