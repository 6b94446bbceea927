/**
 * A turn a crash cut off is visible as interrupted in its conversation, and the
 * conversation goes on. A store object is one boot; opening the database again is a restart.
 * Run on each driver (sqlite-storage.test.ts, postgres-storage.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalStatus, ConversationStatus, MessageRole, type NewMessage } from '../../gen/ts/asg/store/v1/store.js';
import type { ConversationStorage } from './storage.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { INTERRUPTED_TURN_NOTE } from './storage.js';

let storage: ConversationStorage;

export function interruptedTurnConformance(driver: StorageDriver): void {
  beforeEach(async () => {
    await driver.createDatabase();
    storage = await driver.open();
  });

  afterEach(async () => {
    await storage.close();
    await driver.dropDatabase();
  });

  const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
  const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });

  /** The store process stopped (or crashed: nothing it holds in memory matters) and started again. */
  async function restart(): Promise<number> {
    await storage.close();
    storage = await driver.open();
    return storage.noteInterruptedTurns();
  }

  async function newConversation(): Promise<string> {
    return (await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: 'You help.' })).id;
  }

  async function transcript(id: string): Promise<string[]> {
    const conversation = await storage.getConversation({ id, includeMessages: true });
    return conversation.messages.map(
      (message) => `${MessageRole[message.role].replace('MESSAGE_ROLE_', '').toLowerCase()}: ${message.content}`,
    );
  }

  const endTurn = (conversationId: string, messages: NewMessage[]) =>
    storage.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
      endsTurn: true,
    });

  describe('a turn a crash cut off', () => {
    it('gets a note when the store starts again, once, and the next turn follows it', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('hello') });
      expect(await restart()).toBe(1);
      expect(await transcript(id)).toEqual(['system: You help.', 'user: hello', `assistant: ${INTERRUPTED_TURN_NOTE}`]);
      expect(await restart()).toBe(0);

      const next = await storage.startTurn({ conversationId: id, message: user('hello again') });
      expect(next.started).toBe(true);
      await endTurn(id, [assistant('hi')]);
      expect(await restart()).toBe(0);
      expect((await transcript(id)).slice(3)).toEqual(['user: hello again', 'assistant: hi']);
    });

    it('is noted by the next StartTurn, before its message, when the store did not sweep', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('first') });
      await storage.close();
      storage = await driver.open();
      const start = await storage.startTurn({ conversationId: id, message: user('second') });
      expect(start.started).toBe(true);
      expect(start.conversation!.messages.slice(1).map((message) => message.content)).toEqual(['first', INTERRUPTED_TURN_NOTE, 'second']);
    });

    it('is not a turn that is still running in this boot', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('first') });
      // A second message while the turn runs is refused (busy), not appended.
      expect((await storage.startTurn({ conversationId: id, message: user('second') })).busy).toBe(true);
      expect(await storage.noteInterruptedTurns()).toBe(0);
      expect(await transcript(id)).toEqual(['system: You help.', 'user: first']);
    });

    it('leaves turns that ended alone: an answer with ends_turn, a stop for approval, a run that ended', async () => {
      const answered = await newConversation();
      await storage.startTurn({ conversationId: answered, message: user('question') });
      await storage.appendMessages({
        conversationId: answered,
        messages: [],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        endsTurn: false,
      });
      await endTurn(answered, [assistant('answer')]);

      const stopped = await newConversation();
      await storage.startTurn({ conversationId: stopped, message: user('delete it') });
      await storage.createApproval({
        conversationId: stopped,
        toolCallId: 'c1',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'delete',
        messages: [],
        agentChain: [],
      });

      const piped = await newConversation();
      const start = await storage.startTurn({ conversationId: piped, message: user('run the tree') });
      await storage.updateRun({
        conversationId: piped,
        messages: [assistant('done')],
        approvals: [],
        run: undefined,
        expectedRevision: start.conversation!.runRevision,
        returnConversation: false,
      });

      expect(await restart()).toBe(0);
      expect((await storage.getConversation({ id: stopped, includeMessages: false })).status).toBe(
        ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
      );
    });

    it('after an approved call without an outcome: the call is settled first, then the note, then the new message', async () => {
      const id = await newConversation();
      await storage.startTurn({ conversationId: id, message: user('delete it') });
      const call = assistant('');
      call.toolCall = { id: 'c1', name: 'delete', argumentsJson: '{}' };
      const approval = await storage.createApproval({
        conversationId: id,
        toolCallId: 'c1',
        toolName: 'delete',
        toolArgsJson: '{}',
        description: 'delete',
        messages: [call],
        agentChain: [],
      });
      await storage.claimApproval({ uuid: approval.uuid, approved: true, messages: [], clearRun: false, alsoReject: [] });
      await storage.startApprovalExecution(approval.uuid);

      // The crash: the store's start leaves the conversation to the approval rules.
      expect(await restart()).toBe(0);
      const refused = await storage.startTurn({ conversationId: id, message: user('again') });
      expect(refused.started).toBe(false);
      expect(refused.unfinishedApprovals.map((unfinished) => unfinished.status)).toEqual([ApprovalStatus.APPROVAL_STATUS_EXECUTING]);
      const result: NewMessage = {
        role: MessageRole.MESSAGE_ROLE_TOOL,
        content: 'interrupted',
        toolCall: { id: 'c1', name: 'delete', argumentsJson: '{}', result: 'interrupted', isError: true },
      };
      expect((await storage.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 0, messages: [result] })).marked).toBe(true);
      const started = await storage.startTurn({ conversationId: id, message: user('again') });
      expect(started.started).toBe(true);
      expect(started.conversation!.messages.slice(1).map((message) => `${MessageRole[message.role]} ${message.content}`)).toEqual([
        'MESSAGE_ROLE_USER delete it',
        'MESSAGE_ROLE_ASSISTANT ',
        'MESSAGE_ROLE_TOOL interrupted',
        `MESSAGE_ROLE_ASSISTANT ${INTERRUPTED_TURN_NOTE}`,
        'MESSAGE_ROLE_USER again',
      ]);
    });
  });
}
