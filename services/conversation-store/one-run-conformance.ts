/**
 * One active run per conversation. StartTurn refuses (busy) while a turn of
 * this boot is marked running, atomically; every write that ends a turn frees the
 * conversation; a mark older than the stale limit does not keep it busy. Run on each driver
 * (sqlite-storage.test.ts, postgres-storage.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationStatus, MessageRole, type ConversationEvent, type NewMessage } from '../../gen/ts/asg/store/v1/store.js';
import type { ConversationStorage } from './storage.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';

const STALE_MS = 60_000;

let storage: ConversationStorage;
/** The store's clock, moved by the tests. */
let clock: number;
let events: ConversationEvent[];

export function oneRunConformance(driver: StorageDriver): void {
  beforeEach(async () => {
    await driver.createDatabase();
    clock = Date.parse('2026-01-01T00:00:00Z');
    storage = await driver.open({ now: () => clock, staleTurnAfterMs: STALE_MS });
    events = [];
    storage.onEventsCommitted((batch) => events.push(...batch));
  });

  afterEach(async () => {
    await storage.close();
    await driver.dropDatabase();
  });

  const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
  const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });

  async function newConversation(): Promise<string> {
    return (await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '' })).id;
  }

  const endTurn = (conversationId: string, messages: NewMessage[]) =>
    storage.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
      endsTurn: true,
    });

  const contents = async (id: string) =>
    (await storage.getConversation({ id, includeMessages: true })).messages.map((message) => message.content);
  const running = async (id: string) => (await storage.getConversation({ id, includeMessages: false })).turnRunning;
  const turnEvents = () => events.flatMap((event) => (event.turnStarted ? ['turn_started'] : event.turnEnded ? ['turn_ended'] : []));

  async function pendingApproval(id: string) {
    const call: NewMessage = { ...assistant(''), toolCall: { id: 'c1', name: 'delete', argumentsJson: '{}' } };
    return storage.createApproval({
      conversationId: id,
      toolCallId: 'c1',
      toolName: 'delete',
      toolArgsJson: '{}',
      description: 'delete',
      messages: [call],
      agentChain: [],
    });
  }

  describe('one active run per conversation (store)', () => {
    it('refuses a message while a turn runs: busy, nothing appended; the turn that ends frees it', async () => {
      const id = await newConversation();
      expect((await storage.startTurn({ conversationId: id, message: user('first') })).started).toBe(true);
      expect(await running(id)).toBe(true);

      const refused = await storage.startTurn({ conversationId: id, message: user('second') });
      expect(refused).toMatchObject({ started: false, busy: true });
      expect(refused.conversation!.turnRunning).toBe(true);
      expect(await contents(id)).toEqual(['first']);

      await endTurn(id, [assistant('answer')]);
      expect(await running(id)).toBe(false);
      expect(await storage.startTurn({ conversationId: id, message: user('second') })).toMatchObject({ started: true, busy: false });
      expect(await contents(id)).toEqual(['first', 'answer', 'second']);
      expect(turnEvents()).toEqual(['turn_started', 'turn_ended', 'turn_started']);
    });

    it('lets exactly one of many concurrent StartTurns start', async () => {
      const id = await newConversation();
      const starts = await Promise.all(
        Array.from({ length: 20 }, (_, index) => storage.startTurn({ conversationId: id, message: user(`m${index}`) })),
      );
      expect(starts.filter((start) => start.started)).toHaveLength(1);
      expect(starts.filter((start) => start.busy)).toHaveLength(19);
      expect(await contents(id)).toHaveLength(1);
    });

    it('frees the conversation with an ends_turn append that carries no message (a failed turn)', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('first') });
      await endTurn(id, []);
      expect(await running(id)).toBe(false);
      expect((await storage.startTurn({ conversationId: id, message: user('second') })).started).toBe(true);
    });

    it('keeps the waiting answer while an approval is pending, and is busy while the approved call and its continuation run', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('delete it') });
      const approval = await pendingApproval(id);
      expect(await running(id)).toBe(false);
      const waiting = await storage.startTurn({ conversationId: id, message: user('hello?') });
      expect(waiting).toMatchObject({ started: false, busy: false });
      expect(waiting.conversation!.pendingApproval?.uuid).toBe(approval.uuid);

      await storage.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [] });
      expect(await storage.startTurn({ conversationId: id, message: user('hello?') })).toMatchObject({ started: false, busy: true });
      await storage.startApprovalExecution(approval.uuid);
      await storage.finishApprovalExecution({
        uuid: approval.uuid,
        success: true,
        messages: [
          {
            role: MessageRole.MESSAGE_ROLE_TOOL,
            content: 'deleted',
            toolCall: { id: 'c1', name: 'delete', argumentsJson: '{}', result: 'deleted' },
          },
        ],
      });
      // The call finished, its continuation (the model's answer) still runs.
      expect(await storage.startTurn({ conversationId: id, message: user('hello?') })).toMatchObject({ started: false, busy: true });
      await endTurn(id, [assistant('deleted it')]);
      expect(await storage.startTurn({ conversationId: id, message: user('thanks') })).toMatchObject({ started: true });
      expect(turnEvents()).toEqual(['turn_started', 'turn_ended', 'turn_started', 'turn_ended', 'turn_started']);
    });

    it("starts a new conversation's first turn in its creation, as StartTurn starts one: messages, mark, lease, events", async () => {
      const lease = { owner: 'boot-a', node: 'node-a', ttlMs: 30_000 };
      const created = await storage.createConversation({
        sessionId: 'a1b2c3d4',
        systemPrompt: 'be brief',
        firstMessage: user('first'),
        lease,
      });
      expect(created.messages.map((message) => [message.role, message.content])).toEqual([
        [MessageRole.MESSAGE_ROLE_SYSTEM, 'be brief'],
        [MessageRole.MESSAGE_ROLE_USER, 'first'],
      ]);
      expect(created.turnRunning).toBe(true);
      expect(await storage.startTurn({ conversationId: created.id, message: user('second') })).toMatchObject({
        started: false,
        busy: true,
      });
      // The turn is held under the caller's lease, as a StartTurn with it would hold it.
      expect(await storage.renewRunLease(created.id, lease)).toBe(true);
      expect(await storage.renewRunLease(created.id, { ...lease, owner: 'boot-b' })).toBe(false);
      await endTurn(created.id, [assistant('answer')]);
      expect(await contents(created.id)).toEqual(['be brief', 'first', 'answer']);

      // The same events as a creation followed by a StartTurn.
      const kinds = (batch: ConversationEvent[]) =>
        batch.map((event) =>
          Object.keys(event).find((key) => !['id', 'conversationId', 'at'].includes(key) && event[key as keyof ConversationEvent]),
        );
      const inOne = kinds(events);
      events.length = 0;
      const twoSteps = await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'be brief' });
      await storage.startTurn({ conversationId: twoSteps.id, message: user('first'), lease });
      await endTurn(twoSteps.id, [assistant('answer')]);
      expect(inOne).toEqual(kinds(events));
      expect(inOne).toContain('turnStarted');
    });

    it('a rejection starts no turn', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('delete it') });
      const approval = await pendingApproval(id);
      await storage.claimApproval({ uuid: approval.uuid, approved: false, messages: [], clearRun: false, alsoReject: [] });
      expect(await running(id)).toBe(false);
      expect((await storage.startTurn({ conversationId: id, message: user('ok') })).started).toBe(true);
    });

    it('a run write that pauses or ends the run frees the conversation; one that goes on does not', async () => {
      const id = await newConversation();
      const start = await storage.startTurn({ conversationId: id, message: user('run the tree') });
      const state = { state: Buffer.from('{"run_id":"r1"}'), schemaVersion: 1, revision: 0 };
      const revision = await storage.updateRun({
        conversationId: id,
        messages: [assistant('step')],
        approvals: [],
        run: state,
        expectedRevision: start.conversation!.runRevision,
        returnConversation: false,
      });
      expect(await running(id)).toBe(true);
      await storage.updateRun({
        conversationId: id,
        messages: [assistant('done')],
        approvals: [],
        run: undefined,
        expectedRevision: revision,
        returnConversation: false,
      });
      expect(await running(id)).toBe(false);
    });

    it('does not count a mark older than the stale limit as busy (its turn died with its process)', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('first') });
      clock += STALE_MS - 1;
      expect(await storage.startTurn({ conversationId: id, message: user('too early') })).toMatchObject({ started: false, busy: true });
      clock += 2;
      expect(await running(id)).toBe(false);
      const start = await storage.startTurn({ conversationId: id, message: user('second') });
      expect(start).toMatchObject({ started: true, busy: false });
      expect(start.conversation!.turnRunning).toBe(true);
      expect(await contents(id)).toEqual(['first', 'second']);
      // The stale turn ends (for watchers) as the new one starts.
      expect(turnEvents()).toEqual(['turn_started', 'turn_ended', 'turn_started']);
      // The new mark is fresh: its own turn is busy again.
      expect((await storage.startTurn({ conversationId: id, message: user('third') })).busy).toBe(true);
    });

    it('does not carry a mark into a new boot as busy: that turn is interrupted', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('first') });
      await storage.close();
      storage = await driver.open({ now: () => clock, staleTurnAfterMs: STALE_MS });
      expect(await running(id)).toBe(false);
      expect((await storage.startTurn({ conversationId: id, message: user('second') })).started).toBe(true);
    });
  });
}
