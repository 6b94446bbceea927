import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type AppendMessagesRequest,
  type ApprovalRejection,
  type CreateApprovalRequest,
  type NewApproval,
  type NewMessage,
  type Run,
  type UpdateRunRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus } from '../common/grpc/errors.js';
import { DATABASE_FILE, openSqliteStorage } from './sqlite/driver.js';
import { SCHEMA_VERSION } from './sqlite/schema.js';
import { SQL } from '../../test/support/sqlite-statements.js';
import type { ConversationStorage } from './storage.js';
import { DROP_SCHEMA_13 } from '../../test/support/sqlite-schema-undo.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';

const SESSION = 'a1b2c3d4';
/** Back to schema 4: what migration 5 added (A2A origins, agent chains). */
const DROP_SCHEMA_5 =
  'ALTER TABLE conversations DROP COLUMN a2a_dialect; ALTER TABLE conversations DROP COLUMN a2a_context_id; ALTER TABLE approvals DROP COLUMN agent_chain;';
/**
 * Back to schema 11: what migrations 13 (dropped first) and 12 did (the runs table), undone: the
 * pipeline state and its revision go back to their columns on the conversation, the bytes as
 * the text they were.
 */
const DROP_SCHEMA_12 = `${DROP_SCHEMA_13}
  ALTER TABLE conversations ADD COLUMN pipeline_state TEXT;
  ALTER TABLE conversations ADD COLUMN pipeline_revision INTEGER NOT NULL DEFAULT 0;
  UPDATE conversations SET
    pipeline_state = (SELECT CAST(state AS TEXT) FROM runs WHERE runs.conversation_id = conversations.id),
    pipeline_revision = coalesce((SELECT revision FROM runs WHERE runs.conversation_id = conversations.id), 0);
  DROP TABLE runs;`;
/** Back to schema 5: what migration 6 added (the event log). */
/** Back to schema 7: what migrations 13 (leases), 12 (the runs table), 11 (the running mark's time), 10 (a decision's reason), 9 (the running-turn mark) and 8 (the first user message's text, the index of message ids) added; dropped first. */
const DROP_SCHEMA_8 = `${DROP_SCHEMA_12} ALTER TABLE conversations DROP COLUMN running_turn_since; ALTER TABLE approvals DROP COLUMN reason; DROP INDEX conversations_running_turn; ALTER TABLE conversations DROP COLUMN running_turn_boot; DROP TRIGGER conversations_first_user_text; DROP INDEX messages_by_id; ALTER TABLE conversations DROP COLUMN first_user_text;`;
/** Back to schema 6: what migration 7 added (the index of pending approvals); dropped first. */
const DROP_SCHEMA_7 = `${DROP_SCHEMA_8} DROP INDEX approvals_pending;`;
const DROP_SCHEMA_6 = `${DROP_SCHEMA_7} DROP TABLE events;`;
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

let dir: string;
let clock: number;
let storage: ConversationStorage;

/**
 * The storage tests, run against each driver (sqlite-storage.test.ts, postgres-storage.test.ts):
 * one behaviour, two databases. Tests of the SQLite file itself (its migrations from older
 * releases, its query plans, its prepared statements) are skipped on PostgreSQL.
 */
export function storageConformance(driver: StorageDriver): void {
  /** A clock the tests move by hand, so ages and orderings never depend on real time. */
  const open = () => driver.open({ now: () => clock });
  /** A test of the SQLite database file itself. */
  const sqliteIt: typeof it = driver.name === 'sqlite' ? it : (it.skip as typeof it);

  beforeEach(async () => {
    await driver.createDatabase();
    dir = driver.dataDir ?? '';
    clock = Date.parse('2025-01-01T00:00:00.000Z');
    storage = await open();
  });

  afterEach(async () => {
    await storage.close();
    await driver.dropDatabase();
  });

  const user = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_USER, content });
  const assistant = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content });

  function append(conversationId: string, messages: NewMessage[], change: Partial<AppendMessagesRequest> = {}) {
    return storage.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
      ...change,
    });
  }

  function approvalRequest(conversationId: string, change: Partial<CreateApprovalRequest> = {}): CreateApprovalRequest {
    return {
      conversationId,
      toolCallId: 'call-1',
      toolName: 'delete_file',
      toolArgsJson: JSON.stringify({ path: '/tmp/x', options: { force: true, depth: 2 } }),
      description: 'Delete /tmp/x',
      messages: [],
      agentChain: [],
      ...change,
    };
  }

  const claim = (uuid: string, approved: boolean, messages: NewMessage[] = [], clearRun = false, alsoReject: ApprovalRejection[] = []) =>
    storage.claimApproval({ uuid, approved, messages, clearRun, alsoReject });

  /** An approval for UpdateRun: the orchestrator picks its uuid. */
  const newApproval = (uuid: string, toolCallId = 'call-1'): NewApproval => ({
    uuid,
    toolCallId,
    toolName: 'delete_file',
    toolArgsJson: JSON.stringify({ path: `/tmp/${toolCallId}` }),
    description: `Delete /tmp/${toolCallId}`,
    agentChain: [],
  });

  /** UpdateRun with nothing but the revision; without `run` it clears the run. */
  function update(conversationId: string, expectedRevision: number, change: Partial<UpdateRunRequest> = {}) {
    return storage.updateRun({ conversationId, messages: [], approvals: [], expectedRevision, returnConversation: false, ...change });
  }

  async function newConversation(systemPrompt = '') {
    return storage.createConversation({ sessionId: SESSION, systemPrompt });
  }

  async function approvedApproval() {
    const conversation = await newConversation();
    const approval = await storage.createApproval(approvalRequest(conversation.id));
    await claim(approval.uuid, true);
    return { conversation, approval };
  }

  /** A run as the orchestrator writes it: bytes the store keeps without reading them. Its revision is the store's to set. */
  const runOf = (text: string, schemaVersion = 1): Run => ({ state: Buffer.from(text), schemaVersion, revision: 0 });

  /** The run of an agent tree waiting at one node per approval (what its bytes say is the orchestrator's business). */
  const pausedAt = (...uuids: string[]): Run => runOf(JSON.stringify({ pauses: uuids.map((approval_uuid) => ({ approval_uuid })) }));

  /** A run as read back: the store's revision on it. */
  const atRevision = (run: Run, revision: number): Run => ({ ...run, revision });

  // Not in uuid order, so that a list read back in this order is in insertion order.
  const A = 'eeeeeeee-0000-4000-8000-00000000000a';
  const B = 'aaaaaaaa-0000-4000-8000-00000000000b';
  const C = 'cccccccc-0000-4000-8000-00000000000c';

  describe('conversations', () => {
    it('creates an active conversation whose first message is the system prompt', async () => {
      const created = await newConversation('You are careful.');
      expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.sessionId).toBe(SESSION);
      expect(created.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      expect(created.messageCount).toBe(1);
      expect(created.messages).toMatchObject([{ seq: 1, role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'You are careful.' }]);
      expect(created.createdAt?.toISOString()).toBe('2025-01-01T00:00:00.000Z');

      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read).toEqual(created);
    });

    it('creates a conversation without messages when the system prompt is empty', async () => {
      const created = await newConversation();
      expect(created.messages).toEqual([]);
      expect(created.messageCount).toBe(0);
    });

    it('reads only the row when messages are not asked for, but always counts them', async () => {
      const created = await newConversation('system');
      await append(created.id, [user('hi'), assistant('hello')]);
      const read = await storage.getConversation({ id: created.id, includeMessages: false });
      expect(read.messages).toEqual([]);
      expect(read.messageCount).toBe(3);
    });

    it('answers NOT_FOUND for unknown and malformed ids, never a database error', async () => {
      for (const id of [UNKNOWN_UUID, 'not-a-uuid', "x' OR 1=1 --"]) {
        await expect(storage.getConversation({ id, includeMessages: true })).rejects.toMatchObject({
          code: GrpcStatus.NOT_FOUND,
          message: `conversation ${id} not found`,
        });
      }
    });
  });

  describe('appending messages', () => {
    it("keeps a tool call's opaque provider state", async () => {
      const created = await newConversation();
      const toolCall = {
        id: 'c1',
        name: 'resources_list',
        argumentsJson: '{}',
        providerMetadataJson: '{"google":{"thoughtSignature":"abc"}}',
      };
      await append(created.id, [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'calling', toolCall }]);
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages[0]!.toolCall).toEqual({ ...toolCall, result: undefined, isError: undefined });
    });

    it('numbers messages 1, 2, 3… in request order across calls', async () => {
      const { id } = await newConversation('system');
      const first = await append(id, [user('one'), assistant('two')]);
      const second = await append(id, [user('three')]);
      expect(first.map((message) => message.seq)).toEqual([2, 3]);
      expect(second.map((message) => message.seq)).toEqual([4]);

      const read = await storage.getConversation({ id, includeMessages: true });
      expect(read.messages.map((message) => [message.seq, message.content])).toEqual([
        [1, 'system'],
        [2, 'one'],
        [3, 'two'],
        [4, 'three'],
      ]);
      expect(new Set(read.messages.map((message) => message.id)).size).toBe(4);
      expect(read.messageCount).toBe(4);
    });

    it('stores tool calls with their arguments and results', async () => {
      const { id } = await newConversation();
      const call = {
        id: 'call-7',
        name: 'list_files',
        argumentsJson: JSON.stringify({ dir: '/srv', filters: { hidden: false }, limit: 3 }),
      };
      await append(id, [
        { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: '', toolCall: call },
        { role: MessageRole.MESSAGE_ROLE_TOOL, content: 'a, b', toolCall: { ...call, result: 'a, b', isError: false } },
      ]);
      const [asked, answered] = (await storage.getConversation({ id, includeMessages: true })).messages;
      expect(asked?.toolCall).toEqual({ ...call, result: undefined, isError: undefined });
      expect(answered?.toolCall).toEqual({ ...call, result: 'a, b', isError: false });
      expect(answered?.role).toBe(MessageRole.MESSAGE_ROLE_TOOL);
    });

    it('keeps JSON values of any depth and reads them back as stored: messages, approvals, decisions, events', async () => {
      // Deeper than any bound the edge applies: what an earlier release may have stored must read back.
      const deep = JSON.stringify({ list: [JSON.parse(`${'{"a":['.repeat(150)}1${']}'.repeat(150)}`)] });
      const { id } = await newConversation();
      const call = { id: 'call-1', name: 'delete_file', argumentsJson: deep };
      const approval = await storage.createApproval(
        approvalRequest(id, { toolArgsJson: deep, messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: '', toolCall: call }] }),
      );
      await storage.claimApproval({
        uuid: approval.uuid,
        approved: true,
        messages: [],
        clearRun: false,
        alsoReject: [],
        editedArgsJson: deep,
      });
      const stored = await storage.getApproval(approval.uuid);
      expect([stored.toolArgsJson, stored.editedArgsJson]).toEqual([deep, deep]);
      expect(
        (await storage.listApprovals({ statuses: [], conversationId: id, pageSize: 0, pageToken: '' })).approvals[0]?.editedArgsJson,
      ).toBe(deep);
      expect((await storage.getConversation({ id, includeMessages: true })).messages.at(-1)?.toolCall?.argumentsJson).toBe(deep);
      const events = await storage.readEvents({ conversationId: id, afterId: 0, limit: 100 });
      expect(events.find((event) => event.messageAdded?.toolCall)?.messageAdded?.toolCall?.argumentsJson).toBe(deep);
      expect(events.find((event) => event.approvalRequested)?.approvalRequested?.toolArgsJson).toBe(deep);
      expect(events.find((event) => event.approvalResolved)?.approvalResolved?.editedArgsJson).toBe(deep);
    });

    it('changes the status in the same call, unspecified keeps it, and the run is left alone', async () => {
      const { id, updatedAt } = await newConversation();
      await update(id, 0, { run: pausedAt() });
      await append(id, [assistant('done')], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED });
      let read = await storage.getConversation({ id, includeMessages: false });
      expect(read.status).toBe(ConversationStatus.CONVERSATION_STATUS_COMPLETED);
      expect(read.updatedAt!.getTime()).toBeGreaterThan(updatedAt!.getTime());

      await append(id, [user('again')]);
      await append(id, [], { status: ConversationStatus.CONVERSATION_STATUS_ACTIVE });
      read = await storage.getConversation({ id, includeMessages: false });
      expect(read.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      // Only UpdateRun (and a new turn) changes the state: appends keep it and its revision.
      expect(read.run).toEqual(atRevision(pausedAt(), 1));
      expect(read.runRevision).toBe(1);
    });

    it('moves updated_at forward on every change even when the clock stands still', async () => {
      const { id, createdAt } = await newConversation();
      const stamps: number[] = [];
      for (const text of ['a', 'b', 'c']) {
        await append(id, [user(text)]);
        stamps.push((await storage.getConversation({ id, includeMessages: false })).updatedAt!.getTime());
      }
      expect(stamps).toEqual([1, 2, 3].map((step) => createdAt!.getTime() + step));
    });

    it('answers NOT_FOUND for an unknown conversation and stores nothing', async () => {
      await expect(append(UNKNOWN_UUID, [user('lost')])).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      expect(await driver.countRows('messages')).toBe(0);
    });

    it('refuses to change the status of a waiting conversation outside the approval calls', async () => {
      const { id } = await newConversation();
      const approval = await storage.createApproval(approvalRequest(id));
      await expect(append(id, [user('x')], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED })).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining(approval.uuid),
      });
      // Appending without a status change is allowed while waiting.
      await expect(append(id, [user('still there?')])).resolves.toHaveLength(1);
      await expect(append(id, [], { status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL })).resolves.toEqual([]);
      const other = await newConversation();
      await expect(append(other.id, [], { status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
    });

    sqliteIt('appends at message 10 and at message 10,000 with the same prepared statements', async () => {
      const { id } = await newConversation();
      for (let index = 1; index <= 9; index++) await append(id, [user(`m${index}`)]);

      const prepare = vi.spyOn(Database.prototype, 'prepare');
      try {
        expect((await append(id, [user('m10')]))[0]?.seq).toBe(10);
        const bulk = Array.from({ length: 9_989 }, (_, index) => user(`m${index + 11}`));
        const stored = await append(id, bulk);
        expect(stored.at(-1)?.seq).toBe(9_999);
        expect((await append(id, [user('m10000')]))[0]?.seq).toBe(10_000);
        expect((await append(id, [user('m10001')]))[0]?.seq).toBe(10_001);
        expect(prepare).not.toHaveBeenCalled();
      } finally {
        prepare.mockRestore();
      }

      const read = await storage.getConversation({ id, includeMessages: true });
      expect(read.messageCount).toBe(10_001);
      expect(read.messages).toHaveLength(10_001);
      expect(read.messages.every((message, index) => message.seq === index + 1 && message.content === `m${index + 1}`)).toBe(true);
    });

    sqliteIt('has no statement that scans a whole table', () => {
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        for (const [name, sql] of Object.entries(SQL)) {
          const parameters = (sql.match(/\?/g) ?? []).map(() => '[]');
          const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], '']));
          const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql.replace(/RETURNING \*/, '')}`);
          const plan = (Object.keys(named).length > 0 ? statement.all(named) : statement.all(...parameters)) as { detail: string }[];
          const details = plan.map((step) => step.detail);
          // Ordered reads may walk an index (stopping at LIMIT); a bare SCAN reads every row.
          const fullScans = details.filter((detail) =>
            /^SCAN (conversations|messages|approvals|events|runs|audit|webhook_cursors)\b(?! USING)/.test(detail),
          );
          expect(fullScans, `${name}: ${details.join(' | ')}`).toEqual([]);
        }
      } finally {
        db.close();
      }
    });
  });

  describe('starting a turn', () => {
    it('appends the user message and returns the whole conversation', async () => {
      const created = await newConversation('system');
      const start = await storage.startTurn({ conversationId: created.id, message: user('list things') });
      expect(start.started).toBe(true);
      expect(start.unfinishedApprovals).toEqual([]);
      expect(start.conversation.messages.map((m) => [m.seq, m.content])).toEqual([
        [1, 'system'],
        [2, 'list things'],
      ]);
      expect(start.conversation.messageCount).toBe(2);
    });

    it('appends nothing while the conversation waits for an approval', async () => {
      const created = await newConversation('system');
      const approval = await storage.createApproval(approvalRequest(created.id));
      const start = await storage.startTurn({ conversationId: created.id, message: user('are you there?') });
      expect(start.started).toBe(false);
      expect(start.conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
      expect(start.conversation.pendingApproval?.uuid).toBe(approval.uuid);
      expect(start.conversation.messageCount).toBe(1);
    });

    it('appends nothing while an approved call has no recorded outcome, and names it', async () => {
      const { conversation, approval } = await approvedApproval();
      await storage.startApprovalExecution(approval.uuid);
      const start = await storage.startTurn({ conversationId: conversation.id, message: user('next') });
      expect(start.started).toBe(false);
      expect(start.unfinishedApprovals.map((a) => [a.uuid, a.status])).toEqual([[approval.uuid, ApprovalStatus.APPROVAL_STATUS_EXECUTING]]);
      expect(start.conversation.messageCount).toBe(0);
      await storage.finishApprovalExecution({ uuid: approval.uuid, success: true, messages: [] });
      // The approved call's continuation is a running turn until its last write.
      expect((await storage.startTurn({ conversationId: conversation.id, message: user('next') })).busy).toBe(true);
      await storage.appendMessages({
        conversationId: conversation.id,
        messages: [],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
        endsTurn: true,
      });
      expect((await storage.startTurn({ conversationId: conversation.id, message: user('next') })).started).toBe(true);
    });

    it('is NOT_FOUND for an unknown conversation', async () => {
      await expect(storage.startTurn({ conversationId: UNKNOWN_UUID, message: user('x') })).rejects.toMatchObject({
        code: GrpcStatus.NOT_FOUND,
      });
    });
  });

  describe('listing', () => {
    it('pages newest first with an opaque token and no overlap', async () => {
      const created: string[] = [];
      for (let index = 0; index < 7; index++) created.push((await newConversation(`prompt ${index}`)).id);
      const newestFirst = [...created].reverse();

      const seen: string[] = [];
      let pageToken = '';
      const sizes: number[] = [];
      do {
        const page = await storage.listConversations({ pageSize: 3, pageToken });
        sizes.push(page.conversations.length);
        seen.push(...page.conversations.map((conversation) => conversation.id));
        expect(page.conversations.every((conversation) => conversation.messages.length === 0 && conversation.messageCount === 1)).toBe(
          true,
        );
        pageToken = page.nextPageToken;
      } while (pageToken !== '');
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual(newestFirst);
    });

    it('uses 50 as the page size when 0 is asked for', async () => {
      for (let index = 0; index < 51; index++) await newConversation();
      const first = await storage.listConversations({ pageSize: 0, pageToken: '' });
      expect(first.conversations).toHaveLength(50);
      expect(first.nextPageToken).not.toBe('');
      const last = await storage.listConversations({ pageSize: 0, pageToken: first.nextPageToken });
      expect(last.conversations).toHaveLength(1);
      expect(last.nextPageToken).toBe('');
    });

    it("lists summaries: no messages, but each conversation's own count and title", async () => {
      const a = await newConversation('A');
      const b = await newConversation('B');
      await append(a.id, [user('a1'), user('a2')]);
      await append(b.id, [assistant('hello'), user('b1')]);
      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      const summaries = Object.fromEntries(
        page.conversations.map((conversation) => [
          conversation.id,
          [conversation.messages.length, conversation.messageCount, conversation.title],
        ]),
      );
      expect(summaries).toEqual({ [a.id]: [0, 3, 'a1'], [b.id]: [0, 3, 'b1'] });
    });

    it('counts conversations by status as they change, and shows pending approvals', async () => {
      const [active, waiting, completed, resumed] = [
        await newConversation(),
        await newConversation(),
        await newConversation(),
        await newConversation(),
      ];
      await append(completed!.id, [], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED });
      const approval = await storage.createApproval(approvalRequest(waiting!.id));
      const other = await storage.createApproval(approvalRequest(resumed!.id));
      await claim(other.uuid, false);

      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      expect(page.summary).toEqual({ total: 4, active: 2, waitingApproval: 1, completed: 1 });
      const byId = new Map(page.conversations.map((conversation) => [conversation.id, conversation]));
      expect(byId.get(waiting!.id)?.pendingApproval?.uuid).toBe(approval.uuid);
      expect(byId.get(active!.id)?.pendingApproval).toBeUndefined();
      expect(byId.get(resumed!.id)?.pendingApproval).toBeUndefined();

      await append(active!.id, [], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED });
      const after = await storage.listConversations({ pageSize: 1, pageToken: '' });
      expect(after.summary).toEqual({ total: 4, active: 1, waitingApproval: 1, completed: 2 });
    });

    it('refuses a page token it did not issue', async () => {
      for (const pageToken of ['garbage', Buffer.from('["yesterday","x"]').toString('base64url')]) {
        await expect(storage.listConversations({ pageSize: 5, pageToken })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
        });
      }
    });
  });

  describe('creating approvals', () => {
    it('appends the messages, stores the call with its hash and makes the conversation wait, at once', async () => {
      const { id } = await newConversation('system');
      clock += 1_000;
      const approval = await storage.createApproval(
        approvalRequest(id, {
          messages: [
            user('delete it'),
            {
              role: MessageRole.MESSAGE_ROLE_ASSISTANT,
              content: '',
              toolCall: { id: 'call-1', name: 'delete_file', argumentsJson: JSON.stringify({ path: '/tmp/x' }) },
            },
          ],
          remoteAgentName: 'ops',
          remoteTaskId: 'task-9',
        }),
      );
      expect(approval).toMatchObject({
        conversationId: id,
        toolCallId: 'call-1',
        toolName: 'delete_file',
        toolArgsJson: JSON.stringify({ path: '/tmp/x', options: { force: true, depth: 2 } }),
        description: 'Delete /tmp/x',
        status: ApprovalStatus.APPROVAL_STATUS_PENDING,
        remoteAgentName: 'ops',
        remoteTaskId: 'task-9',
        decidedAt: undefined,
      });
      // Canonical JSON: keys sorted at every depth, whatever order they were given in.
      const canonical = '{"tool_args":{"options":{"depth":2,"force":true},"path":"/tmp/x"},"tool_name":"delete_file"}';
      expect(approval.argsHash).toBe(createHash('sha256').update(canonical).digest('hex'));

      const read = await storage.getConversation({ id, includeMessages: true });
      expect(read.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
      expect(read.pendingApproval).toEqual(approval);
      expect(read.pendingApprovals).toEqual([approval]);
      expect(read.messages.map((message) => message.seq)).toEqual([1, 2, 3]);
      expect(read.updatedAt).toEqual(approval.createdAt);
      expect(await storage.getApproval(approval.uuid)).toEqual(approval);
    });

    it('hashes equal arguments equally whatever their key order', async () => {
      const a = await storage.createApproval(
        approvalRequest((await newConversation()).id, { toolArgsJson: JSON.stringify({ b: [1, { y: 2, x: 1 }], a: 'z' }) }),
      );
      const b = await storage.createApproval(
        approvalRequest((await newConversation()).id, { toolArgsJson: JSON.stringify({ a: 'z', b: [1, { x: 1, y: 2 }] }) }),
      );
      const c = await storage.createApproval(
        approvalRequest((await newConversation()).id, { toolArgsJson: JSON.stringify({ a: 'z', b: [{ x: 1, y: 2 }, 1] }) }),
      );
      expect(a.argsHash).toBe(b.argsHash);
      expect(c.argsHash).not.toBe(a.argsHash);
    });

    it('refuses a second approval while one is pending, without storing its messages', async () => {
      const { id } = await newConversation();
      const first = await storage.createApproval(approvalRequest(id));
      await expect(storage.createApproval(approvalRequest(id, { messages: [user('again')] }))).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: `conversation ${id} already waits for approval ${first.uuid}`,
      });
      const read = await storage.getConversation({ id, includeMessages: true });
      expect(read.messageCount).toBe(0);
      expect(read.pendingApproval?.uuid).toBe(first.uuid);
    });

    it('answers NOT_FOUND for an unknown conversation', async () => {
      await expect(storage.createApproval(approvalRequest(UNKNOWN_UUID))).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      await expect(storage.createApproval(approvalRequest('nope'))).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    });
  });

  describe('claiming approvals', () => {
    it('approves once: the conversation resumes, messages are appended and the run cleared', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A)], run: pausedAt(A) });
      const approval = await storage.getApproval(A);
      clock += 5_000;
      const won = await claim(approval.uuid, true, [assistant('approved, running')], true);
      expect(won.claimed).toBe(true);
      expect(won.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_APPROVED);
      expect(won.approval.decidedAt?.getTime()).toBe(clock);

      const read = await storage.getConversation({ id, includeMessages: true });
      expect(read.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      expect(read.pendingApproval).toBeUndefined();
      expect(read.run).toBeUndefined();
      // Clearing is a change of the state too: a run that read revision 1 can no longer write.
      expect(read.runRevision).toBe(2);
      expect(read.messages.map((message) => message.content)).toEqual(['approved, running']);

      clock += 5_000;
      const late = await claim(approval.uuid, false, [assistant('must not appear')], true);
      expect(late.claimed).toBe(false);
      expect(late.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_APPROVED);
      expect(late.approval.decidedAt).toEqual(won.approval.decidedAt);
      expect((await storage.getConversation({ id, includeMessages: false })).messageCount).toBe(1);

      // A new approval may be created once the first is decided.
      await expect(storage.createApproval(approvalRequest(id))).resolves.toMatchObject({ status: ApprovalStatus.APPROVAL_STATUS_PENDING });
    });

    it('keeps the run and its revision unless asked to clear it', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A)], run: pausedAt(A) });
      await claim(A, false, [], false);
      const read = await storage.getConversation({ id, includeMessages: false });
      expect(read.run).toEqual(atRevision(pausedAt(A), 1));
      expect(read.runRevision).toBe(1);
      expect(read.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    });

    it('answers NOT_FOUND for unknown and malformed uuids', async () => {
      for (const uuid of [UNKNOWN_UUID, 'garbage']) {
        await expect(claim(uuid, true)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND, message: `approval ${uuid} not found` });
        await expect(storage.getApproval(uuid)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      }
    });
  });

  describe('executing approved calls', () => {
    it('goes approved → executing → done, appending the result with the outcome', async () => {
      const { conversation, approval } = await approvedApproval();
      const executing = await storage.startApprovalExecution(approval.uuid);
      expect(executing.status).toBe(ApprovalStatus.APPROVAL_STATUS_EXECUTING);

      await expect(storage.startApprovalExecution(approval.uuid)).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining('is executing'),
      });

      const done = await storage.finishApprovalExecution({
        uuid: approval.uuid,
        success: true,
        messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'deleted' }],
      });
      expect(done.status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
      const read = await storage.getConversation({ id: conversation.id, includeMessages: true });
      expect(read.messages.map((message) => message.content)).toEqual(['deleted']);

      await expect(
        storage.finishApprovalExecution({ uuid: approval.uuid, success: false, messages: [user('twice')] }),
      ).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining('is done'),
      });
      expect((await storage.getConversation({ id: conversation.id, includeMessages: false })).messageCount).toBe(1);
    });

    it('records a failed outcome as failed', async () => {
      const { approval } = await approvedApproval();
      await storage.startApprovalExecution(approval.uuid);
      const failed = await storage.finishApprovalExecution({ uuid: approval.uuid, success: false, messages: [] });
      expect(failed.status).toBe(ApprovalStatus.APPROVAL_STATUS_FAILED);
    });

    it('refuses to start a pending or rejected approval, and to finish one that is not executing', async () => {
      const pending = await storage.createApproval(approvalRequest((await newConversation()).id));
      await expect(storage.startApprovalExecution(pending.uuid)).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining('is pending'),
      });
      await expect(storage.finishApprovalExecution({ uuid: pending.uuid, success: true, messages: [] })).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
      });

      const rejected = await storage.createApproval(approvalRequest((await newConversation()).id));
      await claim(rejected.uuid, false);
      await expect(storage.startApprovalExecution(rejected.uuid)).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining('is rejected'),
      });

      const { approval: approved } = await approvedApproval();
      await expect(storage.finishApprovalExecution({ uuid: approved.uuid, success: true, messages: [] })).rejects.toMatchObject({
        code: GrpcStatus.FAILED_PRECONDITION,
        message: expect.stringContaining('is approved'),
      });
      expect((await storage.getApproval(approved.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_APPROVED);
    });

    it('answers NOT_FOUND for unknown approvals', async () => {
      await expect(storage.startApprovalExecution(UNKNOWN_UUID)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
      await expect(storage.finishApprovalExecution({ uuid: 'bad', success: true, messages: [] })).rejects.toMatchObject({
        code: GrpcStatus.NOT_FOUND,
      });
      await expect(storage.markApprovalInterrupted({ uuid: UNKNOWN_UUID, minAgeMs: 0, messages: [] })).rejects.toMatchObject({
        code: GrpcStatus.NOT_FOUND,
      });
    });
  });

  describe('unfinished approvals', () => {
    it('lists the approved and executing approvals of one conversation only', async () => {
      const { id } = await newConversation();
      const approved = await storage.createApproval(approvalRequest(id, { toolCallId: 'a' }));
      await claim(approved.uuid, true);
      const executing = await storage.createApproval(approvalRequest(id, { toolCallId: 'b' }));
      await claim(executing.uuid, true);
      await storage.startApprovalExecution(executing.uuid);
      const done = await storage.createApproval(approvalRequest(id, { toolCallId: 'c' }));
      await claim(done.uuid, true);
      await storage.startApprovalExecution(done.uuid);
      await storage.finishApprovalExecution({ uuid: done.uuid, success: true, messages: [] });
      const rejected = await storage.createApproval(approvalRequest(id, { toolCallId: 'd' }));
      await claim(rejected.uuid, false);
      await storage.createApproval(approvalRequest(id, { toolCallId: 'e' }));
      await approvedApproval();

      const unfinished = await storage.listUnfinishedApprovals(id);
      expect(unfinished.map((approval) => [approval.toolCallId, approval.status])).toEqual([
        ['a', ApprovalStatus.APPROVAL_STATUS_APPROVED],
        ['b', ApprovalStatus.APPROVAL_STATUS_EXECUTING],
      ]);
      await expect(storage.listUnfinishedApprovals(UNKNOWN_UUID)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    });

    it('marks an unfinished approval interrupted only once it is old enough', async () => {
      const { conversation, approval } = await approvedApproval();
      await storage.startApprovalExecution(approval.uuid);
      const note = [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: 'interrupted, not run again' }];

      clock += 59_999;
      const early = await storage.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 60_000, messages: note });
      expect(early.marked).toBe(false);
      expect(early.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_EXECUTING);
      expect((await storage.getConversation({ id: conversation.id, includeMessages: false })).messageCount).toBe(0);

      clock += 1;
      const marked = await storage.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 60_000, messages: note });
      expect(marked.marked).toBe(true);
      expect(marked.approval.status).toBe(ApprovalStatus.APPROVAL_STATUS_INTERRUPTED);
      const read = await storage.getConversation({ id: conversation.id, includeMessages: true });
      expect(read.messages.map((message) => message.content)).toEqual(['interrupted, not run again']);
      expect(await storage.listUnfinishedApprovals(conversation.id)).toEqual([]);

      const again = await storage.markApprovalInterrupted({ uuid: approval.uuid, minAgeMs: 0, messages: note });
      expect(again.marked).toBe(false);
      expect((await storage.getConversation({ id: conversation.id, includeMessages: false })).messageCount).toBe(1);
      await expect(storage.startApprovalExecution(approval.uuid)).rejects.toMatchObject({ code: GrpcStatus.FAILED_PRECONDITION });
    });

    it('never marks a pending or finished approval', async () => {
      const pending = await storage.createApproval(approvalRequest((await newConversation()).id));
      const { approval: finished } = await approvedApproval();
      await storage.startApprovalExecution(finished.uuid);
      await storage.finishApprovalExecution({ uuid: finished.uuid, success: true, messages: [] });
      clock += 3_600_000;
      for (const uuid of [pending.uuid, finished.uuid]) {
        const result = await storage.markApprovalInterrupted({ uuid, minAgeMs: 0, messages: [] });
        expect(result.marked).toBe(false);
      }
      expect((await storage.getApproval(pending.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_PENDING);
      expect((await storage.getApproval(finished.uuid)).status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
    });
  });

  describe('the database file', () => {
    it('keeps everything across a close and reopen', async () => {
      const { id } = await newConversation('system');
      await append(id, [user('hello')]);
      await update(id, 0, { approvals: [newApproval(A)], run: pausedAt(A) });
      const completed = await newConversation();
      await append(completed.id, [], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED });
      const before = await storage.getConversation({ id, includeMessages: true });
      await storage.close();

      storage = await open();
      expect(await storage.getConversation({ id, includeMessages: true })).toEqual(before);
      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      expect(page.summary).toEqual({ total: 2, active: 0, waitingApproval: 1, completed: 1 });
      expect((await claim(A, true)).claimed).toBe(true);
      expect((await append(id, [user('after restart')]))[0]?.seq).toBe(3);
      // A conversation created after the restart still sorts first.
      const newest = await newConversation();
      expect((await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations[0]?.id).toBe(newest.id);
    });

    sqliteIt('is in WAL mode with the current schema version', () => {
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SCHEMA_VERSION }]);
      } finally {
        db.close();
      }
    });

    sqliteIt('refuses a database written by a newer schema', async () => {
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION + 1);
      db.close();
      await expect(open()).rejects.toThrow(/newer than this build knows/);
      // Reopening with a good version again works (afterEach closes it).
      const fix = new Database(join(dir, DATABASE_FILE));
      fix.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION);
      fix.close();
      storage = await open();
    });
  });

  describe('compaction records', () => {
    it('keeps the compaction of the message that announces it', async () => {
      const created = await newConversation('system');
      const compaction = {
        strategy: 'partial-summary',
        fromSeq: 2,
        toSeq: 9,
        summary: 'They listed things.',
        tokensBefore: 900,
        tokensAfter: 300,
      };
      await append(created.id, [{ role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'History compacted', compaction }]);
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages[1]!.compaction).toEqual(compaction);
      expect(read.messages[0]!.compaction).toBeUndefined();
    });
  });

  describe('token usage', () => {
    it('keeps each message its usage and the conversation a running sum', async () => {
      const created = await newConversation('system');
      expect(created.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
      await append(created.id, [{ ...assistant('step one'), usage: { inputTokens: 100, outputTokens: 7 } }, user('plain')]);
      await append(created.id, [{ ...assistant('step two'), usage: { inputTokens: 120, outputTokens: 9 } }]);
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.usage).toEqual({ inputTokens: 220, outputTokens: 16 });
      expect(read.messages.map((m) => m.usage)).toEqual([
        undefined,
        { inputTokens: 100, outputTokens: 7 },
        undefined,
        { inputTokens: 120, outputTokens: 9 },
      ]);
      // The sum is kept, not recomputed: a conversation read without its messages has it too.
      expect((await storage.getConversation({ id: created.id, includeMessages: false })).usage).toEqual({
        inputTokens: 220,
        outputTokens: 16,
      });
    });

    sqliteIt('migrates a version-1 database, keeping its rows', async () => {
      const created = await newConversation('old');
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      // Back to schema 1: the shape of a database written before usage existed.
      db.exec(DROP_SCHEMA_6);
      db.exec(DROP_SCHEMA_5);
      db.exec(
        'ALTER TABLE messages DROP COLUMN input_tokens; ALTER TABLE messages DROP COLUMN output_tokens; ALTER TABLE messages DROP COLUMN compaction;',
      );
      db.exec('ALTER TABLE conversations DROP COLUMN pipeline_revision;');
      db.exec('ALTER TABLE messages DROP COLUMN node;');
      db.exec('ALTER TABLE conversations DROP COLUMN input_tokens; ALTER TABLE conversations DROP COLUMN output_tokens;');
      db.prepare('UPDATE schema_version SET version = 1').run();
      db.close();
      storage = await open();
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages.map((m) => m.content)).toEqual(['old']);
      expect(read.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    });
  });

  describe('node names (orchestrated mode)', () => {
    it('keeps the node that produced a message, and none on the others', async () => {
      const created = await newConversation('system');
      await append(created.id, [{ ...assistant('analysis'), node: 'analyzer' }, assistant('plain')]);
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages.map((m) => m.node)).toEqual([undefined, 'analyzer', undefined]);
    });

    sqliteIt('migrates a version-2 database: old messages have no node', async () => {
      const created = await newConversation('old');
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      db.exec(DROP_SCHEMA_6);
      db.exec(DROP_SCHEMA_5);
      db.exec('ALTER TABLE conversations DROP COLUMN pipeline_revision;');
      db.exec('ALTER TABLE messages DROP COLUMN node;');
      db.prepare('UPDATE schema_version SET version = 2').run();
      db.close();
      storage = await open();
      await append(created.id, [{ ...assistant('new'), node: 'executor' }]);
      const read = await storage.getConversation({ id: created.id, includeMessages: true });
      expect(read.messages.map((m) => [m.content, m.node])).toEqual([
        ['old', undefined],
        ['new', 'executor'],
      ]);
    });
  });

  describe('pipelines waiting at several approvals', () => {
    const tool = (content: string): NewMessage => ({ role: MessageRole.MESSAGE_ROLE_TOOL, content });
    const read = (id: string) => storage.getConversation({ id, includeMessages: true });
    const statusOf = async (uuid: string) => (await storage.getApproval(uuid)).status;

    /** The raw column, which error messages name: it must follow the oldest pending approval. */
    const pendingApprovalColumn = (id: string) => driver.pendingApprovalColumn(id);

    it('creates two approvals, their messages and the state in one transaction; the conversation waits for both, oldest first', async () => {
      const { id } = await newConversation('system');
      clock += 1_000;
      const revision = await update(id, 0, {
        messages: [assistant('branch 0 asks'), assistant('branch 1 asks')],
        approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')],
        run: pausedAt(A, B),
      });
      expect(revision).toBe(1);

      const conversation = await read(id);
      expect(conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
      expect(conversation.pendingApprovals.map((approval) => [approval.uuid, approval.toolCallId, approval.status])).toEqual([
        [A, 'call-a', ApprovalStatus.APPROVAL_STATUS_PENDING],
        [B, 'call-b', ApprovalStatus.APPROVAL_STATUS_PENDING],
      ]);
      expect(conversation.pendingApproval).toEqual(conversation.pendingApprovals[0]);
      expect(conversation.pendingApprovals[1]).toEqual(await storage.getApproval(B));
      expect(conversation.run).toEqual(atRevision(pausedAt(A, B), 1));
      expect(conversation.runRevision).toBe(1);
      expect(await pendingApprovalColumn(id)).toBe(A);
      // One change: the new messages, both approvals and the conversation share one timestamp.
      const stamps = [
        conversation.updatedAt,
        ...conversation.messages.slice(1).map((m) => m.createdAt),
        ...conversation.pendingApprovals.map((a) => a.createdAt),
      ];
      expect(new Set(stamps.map((stamp) => stamp!.getTime()))).toEqual(new Set([clock]));
      expect(conversation.messages.map((message) => [message.seq, message.content])).toEqual([
        [1, 'system'],
        [2, 'branch 0 asks'],
        [3, 'branch 1 asks'],
      ]);
    });

    it('stays waiting while another approval is pending, and becomes active with the last claim', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')], run: pausedAt(A, B) });

      expect((await claim(A, true, [assistant('A approved')])).claimed).toBe(true);
      let conversation = await read(id);
      expect(conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
      expect(conversation.pendingApproval?.uuid).toBe(B);
      expect(conversation.pendingApprovals.map((approval) => approval.uuid)).toEqual([B]);
      expect(await pendingApprovalColumn(id)).toBe(B);
      // A claim without clear_run leaves the run and its revision to the orchestrator.
      expect(conversation.runRevision).toBe(1);
      // No new turn while a branch still waits.
      expect((await storage.startTurn({ conversationId: id, message: user('hello?') })).started).toBe(false);

      expect((await claim(B, false, [tool('B rejected')])).claimed).toBe(true);
      conversation = await read(id);
      expect(conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      expect(conversation.pendingApproval).toBeUndefined();
      expect(conversation.pendingApprovals).toEqual([]);
      expect(await pendingApprovalColumn(id)).toBeNull();
      expect(conversation.messages.map((message) => message.content)).toEqual(['A approved', 'B rejected']);
    });

    it('refuses a write computed from another revision with ABORTED, writing nothing', async () => {
      const { id } = await newConversation('system');
      await update(id, 0, { run: pausedAt() });
      const before = await read(id);
      const lastEvent = await storage.latestEventId();

      for (const stale of [0, 2]) {
        await expect(
          update(id, stale, { messages: [assistant('lost')], approvals: [newApproval(A)], run: pausedAt(A) }),
        ).rejects.toMatchObject({ code: GrpcStatus.ABORTED, message: expect.stringContaining(`revision 1, not ${stale}`) });
      }
      expect(await read(id)).toEqual(before);
      expect(await storage.latestEventId()).toBe(lastEvent);
      await expect(storage.getApproval(A)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    });

    it('raises the revision by one per write, reports it on the conversation and the run, and clears an absent run', async () => {
      const created = await newConversation();
      expect(created.runRevision).toBe(0);
      expect(created.run).toBeUndefined();

      for (const revision of [1, 2, 3]) {
        // The revision a caller sends with the run is not taken: the store sets it.
        const run = { ...runOf(`step ${revision}`, revision), revision: 99 };
        expect(await update(created.id, revision - 1, { run })).toBe(revision);
        const conversation = await read(created.id);
        expect(conversation.runRevision).toBe(revision);
        expect(conversation.run).toEqual({ ...run, revision });
      }

      // Clearing is a change like any other: the revision goes on instead of back to 0, so a
      // request that read the cleared run's revision cannot write over a later one.
      expect(await update(created.id, 3)).toBe(4);
      const cleared = await read(created.id);
      expect(cleared.run).toBeUndefined();
      expect(cleared.runRevision).toBe(4);
      expect(cleared.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
    });

    it('rejects the other pending approvals with a winning rejection, in its transaction, skipping one already decided', async () => {
      const { id } = await newConversation();
      await update(id, 0, {
        approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b'), newApproval(C, 'call-c')],
        run: pausedAt(A, B, C),
      });
      await claim(C, true);
      clock += 5_000;

      const won = await claim(A, false, [tool('A rejected')], true, [
        { uuid: B, messages: [tool('B rejected with A')] },
        { uuid: C, messages: [tool('must not appear: C was approved before')] },
      ]);
      expect(won.claimed).toBe(true);
      const rejectedB = await storage.getApproval(B);
      expect(rejectedB.status).toBe(ApprovalStatus.APPROVAL_STATUS_REJECTED);
      expect(rejectedB.decidedAt).toEqual(won.approval.decidedAt);
      expect(await statusOf(C)).toBe(ApprovalStatus.APPROVAL_STATUS_APPROVED);

      const conversation = await read(id);
      expect(conversation.status).toBe(ConversationStatus.CONVERSATION_STATUS_ACTIVE);
      expect(conversation.pendingApprovals).toEqual([]);
      expect(conversation.run).toBeUndefined();
      expect(conversation.messages.map((message) => message.content)).toEqual(['A rejected', 'B rejected with A']);
    });

    it("keeps a rejection's reason on the approval, those rejected with it, and the tool message", async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')], run: pausedAt(A, B) });
      const rejectedCall = {
        id: 'call-a',
        name: 'resources_add',
        argumentsJson: JSON.stringify({ value: 1e9 }),
        result: 'Rejected by a human: value too large.',
        isError: true,
        rejected: true,
        reason: 'value too large',
      };
      const won = await storage.claimApproval({
        uuid: A,
        approved: false,
        messages: [{ role: MessageRole.MESSAGE_ROLE_TOOL, content: rejectedCall.result, toolCall: rejectedCall }],
        clearRun: true,
        alsoReject: [{ uuid: B, messages: [tool('B rejected with A')] }],
        reason: 'value too large',
      });
      expect(won.approval.reason).toBe('value too large');
      expect((await storage.getApproval(B)).reason).toBe('value too large');
      storage.close();
      storage = await open();
      expect((await storage.getApproval(A)).reason).toBe('value too large');
      expect((await read(id)).messages[0]!.toolCall).toEqual(rejectedCall);
    });

    it('claims only while the run is at expected_run_revision; otherwise ABORTED and nothing is written', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')], run: pausedAt(A, B) });
      const stale = storage.claimApproval({
        uuid: A,
        approved: false,
        messages: [tool('A rejected')],
        clearRun: true,
        alsoReject: [{ uuid: B, messages: [tool('B rejected with A')] }],
        expectedRunRevision: 0,
      });
      await expect(stale).rejects.toMatchObject({ code: GrpcStatus.ABORTED, message: expect.stringContaining('is at revision 1, not 0') });
      const unchanged = await read(id);
      expect(unchanged.pendingApprovals.map((approval) => approval.uuid)).toEqual([A, B]);
      expect(unchanged.run).toBeDefined();
      expect(unchanged.messages).toEqual([]);
      const won = await storage.claimApproval({
        uuid: A,
        approved: false,
        messages: [tool('A rejected')],
        clearRun: true,
        alsoReject: [{ uuid: B, messages: [tool('B rejected with A')] }],
        expectedRunRevision: 1,
      });
      expect(won.claimed).toBe(true);
      const after = await read(id);
      expect(after.pendingApprovals).toEqual([]);
      expect(after.run).toBeUndefined();
    });

    it('leaves the reason of an approval decided without one unset', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a')], run: pausedAt(A) });
      expect((await claim(A, true)).approval.reason).toBeUndefined();
    });

    it("refuses to reject another conversation's approval with INVALID_ARGUMENT, undoing the whole claim", async () => {
      const { id } = await newConversation();
      const other = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')], run: pausedAt(A, B) });
      await update(other.id, 0, { approvals: [newApproval(C)], run: pausedAt(C) });
      const before = await read(id);

      // B comes first, so its rejection has run when C is refused: the rollback must undo it.
      await expect(
        claim(A, false, [tool('A rejected')], true, [
          { uuid: B, messages: [tool('B rejected')] },
          { uuid: C, messages: [tool('C rejected')] },
        ]),
      ).rejects.toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining(C) });

      expect(await read(id)).toEqual(before);
      expect([await statusOf(A), await statusOf(B), await statusOf(C)]).toEqual([
        ApprovalStatus.APPROVAL_STATUS_PENDING,
        ApprovalStatus.APPROVAL_STATUS_PENDING,
        ApprovalStatus.APPROVAL_STATUS_PENDING,
      ]);
      expect((await read(other.id)).messageCount).toBe(0);
    });

    it('clears a run left behind when a turn starts, raising the revision', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A)], run: pausedAt(A) });
      // Rejected without clearing: the request that should have cleared the run stopped first.
      await claim(A, false, [tool('A rejected')]);

      const start = await storage.startTurn({ conversationId: id, message: user('something new') });
      expect(start.started).toBe(true);
      expect(start.conversation.run).toBeUndefined();
      expect(start.conversation.runRevision).toBe(2);

      // With no run to clear, a turn is no change of it.
      expect((await storage.startTurn({ conversationId: id, message: user('and more') })).conversation.runRevision).toBe(2);
    });

    it('refuses a malformed or already used approval uuid with INVALID_ARGUMENT, writing nothing', async () => {
      const { id } = await newConversation();
      const other = await newConversation();
      const attempts: [string, NewApproval[]][] = [
        ['not a UUID', [newApproval('not-a-uuid')]],
        ['already exists', [newApproval(A, 'call-a'), newApproval(A, 'call-b')]],
      ];
      for (const [problem, approvals] of attempts) {
        await expect(update(id, 0, { messages: [assistant('asks')], approvals, run: pausedAt(A) })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          message: expect.stringContaining(problem),
        });
      }
      const untouched = await read(id);
      expect([untouched.messageCount, untouched.runRevision, untouched.status]).toEqual([
        0,
        0,
        ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      ]);
      await expect(storage.getApproval(A)).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });

      // A uuid some approval already has, even in another conversation, is never reused.
      await update(id, 0, { approvals: [newApproval(A)], run: pausedAt(A) });
      await expect(update(other.id, 0, { approvals: [newApproval(A)], run: pausedAt(A) })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
        message: expect.stringContaining('already exists'),
      });
      expect((await storage.getApproval(A)).conversationId).toBe(id);
      expect((await read(other.id)).runRevision).toBe(0);
    });

    it('lists and gets the pending approvals of several conversations, each its own, oldest first', async () => {
      const two = await newConversation();
      const one = await newConversation();
      const none = await newConversation();
      await update(two.id, 0, { approvals: [newApproval(A, 'call-a'), newApproval(B, 'call-b')], run: pausedAt(A, B) });
      clock += 1_000;
      // A later step of the same run pauses once more: it comes after the two.
      await update(two.id, 1, { approvals: [newApproval(C, 'call-c')], run: pausedAt(A, B, C) });
      const simple = await storage.createApproval(approvalRequest(one.id));

      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      const pending = Object.fromEntries(page.conversations.map((c) => [c.id, c.pendingApprovals.map((approval) => approval.uuid)]));
      expect(pending).toEqual({ [two.id]: [A, B, C], [one.id]: [simple.uuid], [none.id]: [] });
      expect(page.conversations.map((c) => c.pendingApproval?.uuid)).toEqual([undefined, simple.uuid, A]);
      expect(page.summary).toMatchObject({ waitingApproval: 2, active: 1 });

      const got = await storage.getConversation({ id: two.id, includeMessages: false });
      expect(got.pendingApprovals).toEqual(page.conversations.find((c) => c.id === two.id)!.pendingApprovals);
      expect(got.runRevision).toBe(2);
    });

    sqliteIt(
      'migrates a version-3 database: a stored state without pauses becomes a schema 0 run at revision 0 that can be written',
      async () => {
        const { id } = await newConversation('old');
        await storage.close();
        const db = new Database(join(dir, DATABASE_FILE));
        db.exec(DROP_SCHEMA_6);
        db.exec(DROP_SCHEMA_5);
        db.exec('ALTER TABLE conversations DROP COLUMN pipeline_revision;');
        // What a version-3 store wrote: one pause, no pauses, branch outputs or run id.
        const legacy = {
          paused_node_path: [1, 0],
          paused_node_output_key: 'draft',
          session_state: { topic: 'tides' },
          user_message: 'go on',
          tree_fingerprint: 'f00d',
        };
        db.prepare('UPDATE conversations SET pipeline_state = ? WHERE id = ?').run(JSON.stringify(legacy), id);
        db.prepare('UPDATE schema_version SET version = 3').run();
        db.close();

        storage = await open();
        const migrated = await read(id);
        expect(migrated.runRevision).toBe(0);
        expect(migrated.run).toEqual({ state: Buffer.from(JSON.stringify(legacy)), schemaVersion: 0, revision: 0 });
        expect(migrated.messages.map((message) => message.content)).toEqual(['old']);
        expect(await update(id, 0, { run: pausedAt() })).toBe(1);
      },
    );
  });

  describe('runs kept opaquely', () => {
    const read = (id: string) => storage.getConversation({ id, includeMessages: false });
    const FIXTURES = fileURLToPath(new URL('../../test/fixtures/store-before-issue-12/', import.meta.url));

    it('keeps the bytes of a run exactly as written, whatever they are, through reads, lists and a reopen', async () => {
      // Every byte value, then sequences that are not UTF-8 (a lone continuation byte, a cut
      // two-byte sequence, an overlong NUL): a store that decoded them as text would change them.
      const binary = Buffer.concat([
        Buffer.from(Array.from({ length: 256 }, (_, value) => value)),
        Buffer.from([0x80, 0xc3, 0x00, 0xc0, 0x80, 0xff, 0xfe]),
      ]);
      const cases: [string, Run][] = [
        ['binary', { state: binary, schemaVersion: 7, revision: 0 }],
        // An empty state is still a run: only an absent one clears it.
        ['empty', { state: Buffer.alloc(0), schemaVersion: 1, revision: 0 }],
        ['large', { state: Buffer.alloc(2_000_000, 0xa5), schemaVersion: 2, revision: 0 }],
      ];
      const ids = new Map<string, string>();
      for (const [name, run] of cases) {
        const { id } = await newConversation();
        ids.set(name, id);
        expect(await update(id, 0, { run })).toBe(1);
      }
      const expectKept = async () => {
        const listed = new Map((await storage.listConversations({ pageSize: 10, pageToken: '' })).conversations.map((c) => [c.id, c.run]));
        for (const [name, run] of cases) {
          const id = ids.get(name)!;
          for (const got of [(await read(id)).run, listed.get(id)]) {
            // Buffer.equals, not a deep equal: element by element, 2 MB takes seconds.
            expect(got?.state.equals(run.state), name).toBe(true);
            expect([got?.schemaVersion, got?.revision], name).toEqual([run.schemaVersion, 1]);
          }
        }
      };
      await expectKept();
      await storage.close();
      storage = await open();
      await expectKept();

      // In the database: a BLOB of those bytes, the schema version beside it.
      if (driver.name !== 'sqlite') return;
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        const row = db
          .prepare('SELECT state, typeof(state) AS type, schema_version, revision FROM runs WHERE conversation_id = ?')
          .get(ids.get('binary')) as Record<string, unknown>;
        expect(row).toEqual({ state: binary, type: 'blob', schema_version: 7, revision: 1 });
      } finally {
        db.close();
      }
    });

    it('clears a run with clear_run when the claim wins, and not when it loses', async () => {
      const { id } = await newConversation();
      await update(id, 0, { approvals: [newApproval(A, 'call-a')], run: pausedAt(A) });
      expect((await claim(A, false, [], true)).claimed).toBe(true);
      expect([(await read(id)).run, (await read(id)).runRevision]).toEqual([undefined, 2]);
      // A lost claim changes nothing, also not the revision a writer names.
      await update(id, 2, { run: pausedAt() });
      expect((await claim(A, true, [], true)).claimed).toBe(false);
      expect([(await read(id)).run, (await read(id)).runRevision]).toEqual([atRevision(pausedAt(), 3), 3]);
    });

    sqliteIt(
      'moves the pipeline states of a schema 11 database into runs: schema version 0, the same bytes, the same revision',
      async () => {
        const paused = await newConversation('paused');
        const ended = await newConversation('ended');
        const never = await newConversation('never');
        await storage.close();
        const db = new Database(join(dir, DATABASE_FILE));
        db.exec(DROP_SCHEMA_12);
        db.prepare('UPDATE schema_version SET version = 11').run();
        // What schema 11 stored (runs not yet versioned): the state as JSON text (not all of it ASCII) and
        // its revision beside it; a run that ended keeps its revision with no state.
        const legacy = JSON.stringify({
          paused_node_path: [0],
          session_state: { note: 'café ☕ 𝄞' },
          pauses: [{ approval_uuid: A, node_path: [0] }],
          run_id: 'r1',
        });
        db.prepare('UPDATE conversations SET pipeline_state = ?, pipeline_revision = 3 WHERE id = ?').run(legacy, paused.id);
        db.prepare('UPDATE conversations SET pipeline_revision = 2 WHERE id = ?').run(ended.id);
        db.close();

        storage = await open();
        expect((await read(paused.id)).run).toEqual({ state: Buffer.from(legacy, 'utf8'), schemaVersion: 0, revision: 3 });
        expect((await read(ended.id)).run).toBeUndefined();
        expect((await read(ended.id)).runRevision).toBe(2);
        expect((await read(never.id)).run).toBeUndefined();
        expect((await read(never.id)).runRevision).toBe(0);

        // Writers go on from the migrated revisions; the old columns are gone.
        await expect(update(paused.id, 0, { run: pausedAt() })).rejects.toMatchObject({ code: GrpcStatus.ABORTED });
        expect(await update(paused.id, 3, { run: pausedAt() })).toBe(4);
        expect(await update(ended.id, 2)).toBe(3);
        const check = new Database(join(dir, DATABASE_FILE), { readonly: true });
        try {
          const columns = (check.prepare("SELECT name FROM pragma_table_info('conversations')").all() as { name: string }[]).map(
            (column) => column.name,
          );
          expect(columns).not.toContain('pipeline_state');
          expect(columns).not.toContain('pipeline_revision');
          expect(check.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SCHEMA_VERSION });
        } finally {
          check.close();
        }
      },
    );

    sqliteIt(
      'opens stores of schema 7 (before lists were summaries): the paused agent tree keeps its state as a schema 0 run',
      async () => {
        for (const fixture of ['simple.db', 'tree.db']) {
          const copy = mkdtempSync(join(tmpdir(), 'asg-store-fixture-'));
          try {
            copyFileSync(join(FIXTURES, fixture), join(copy, DATABASE_FILE));
            const old = openSqliteStorage({ dataDir: copy, now: () => clock });
            try {
              const { conversations } = await old.listConversations({ pageSize: 10, pageToken: '' });
              expect(conversations.length, fixture).toBeGreaterThan(0);
              const waiting = conversations.filter((c) => c.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL);
              expect(waiting.length, fixture).toBeGreaterThan(0);
              const runs = conversations.flatMap((c) => (c.run ? [c.run] : []));
              if (fixture === 'simple.db') {
                expect(runs).toEqual([]);
                continue;
              }
              const paused = await old.getConversation({ id: waiting[0]!.id, includeMessages: true });
              expect(paused.run?.schemaVersion).toBe(0);
              expect(paused.run?.revision).toBe(paused.runRevision);
              const state = JSON.parse(paused.run!.state.toString('utf8')) as { pauses: { approval_uuid: string }[] };
              expect(state.pauses.map((pause) => pause.approval_uuid)).toEqual([paused.pendingApproval?.uuid]);
            } finally {
              await old.close();
            }
          } finally {
            rmSync(copy, { recursive: true, force: true });
          }
        }
      },
    );
  });

  describe('A2A origins and agent chains', () => {
    const origin = { dialect: 'v0.3', contextId: 'ctx-7f3a' };
    const chain = ['summarizer', 'db-agent', 'db-admin'];

    it('keeps the A2A origin of a conversation created over A2A, and none on the others', async () => {
      const created = await storage.createConversation({ sessionId: SESSION, systemPrompt: 'system', a2aOrigin: origin });
      const plain = await newConversation();
      expect(created.a2aOrigin).toEqual(origin);
      expect(plain.a2aOrigin).toBeUndefined();

      expect((await storage.getConversation({ id: created.id, includeMessages: false })).a2aOrigin).toEqual(origin);
      expect((await storage.getConversation({ id: plain.id, includeMessages: true })).a2aOrigin).toBeUndefined();
      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      expect(page.conversations.map((c) => [c.id, c.a2aOrigin])).toEqual([
        [plain.id, undefined],
        [created.id, origin],
      ]);
      // Later changes leave it as it is.
      await append(created.id, [user('hello')], { status: ConversationStatus.CONVERSATION_STATUS_COMPLETED });
      expect((await storage.getConversation({ id: created.id, includeMessages: false })).a2aOrigin).toEqual(origin);
    });

    it("keeps a proxy approval's agent chain in order through get, claim and the conversation's pending approvals", async () => {
      const { id } = await newConversation();
      const created = await storage.createApproval(
        approvalRequest(id, { remoteAgentName: 'summarizer', remoteTaskId: 'task-1', agentChain: chain }),
      );
      expect(created.agentChain).toEqual(chain);
      expect((await storage.getApproval(created.uuid)).agentChain).toEqual(chain);
      expect((await storage.getConversation({ id, includeMessages: false })).pendingApprovals.map((a) => a.agentChain)).toEqual([chain]);
      const page = await storage.listConversations({ pageSize: 10, pageToken: '' });
      expect(page.conversations[0]!.pendingApproval?.agentChain).toEqual(chain);

      const won = await claim(created.uuid, true);
      expect(won.approval.agentChain).toEqual(chain);
      const lost = await claim(created.uuid, false);
      expect(lost).toMatchObject({ claimed: false, approval: { agentChain: chain } });
      expect((await storage.startApprovalExecution(created.uuid)).agentChain).toEqual(chain);
      expect((await storage.listUnfinishedApprovals(id)).map((a) => a.agentChain)).toEqual([chain]);
    });

    it('keeps the agent chains of approvals created by UpdateRun, each its own; none reads as []', async () => {
      const { id } = await newConversation();
      await update(id, 0, {
        approvals: [{ ...newApproval(A, 'call-a'), agentChain: chain }, newApproval(B, 'call-b')],
        run: pausedAt(A, B),
      });
      expect((await storage.getConversation({ id, includeMessages: false })).pendingApprovals.map((a) => [a.uuid, a.agentChain])).toEqual([
        [A, chain],
        [B, []],
      ]);
      expect((await storage.getApproval(B)).agentChain).toEqual([]);
      // An empty chain is stored as NULL, not as "[]".
      if (driver.name !== 'sqlite') return;
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        expect(db.prepare('SELECT uuid, agent_chain FROM approvals ORDER BY rowid').all()).toEqual([
          { uuid: A, agent_chain: JSON.stringify(chain) },
          { uuid: B, agent_chain: null },
        ]);
      } finally {
        db.close();
      }
    });

    sqliteIt('migrates a version-4 database: old conversations have no A2A origin, old approvals no agents', async () => {
      const { id } = await newConversation('old');
      const old = await storage.createApproval(approvalRequest(id));
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      db.exec(DROP_SCHEMA_6);
      db.exec(DROP_SCHEMA_5);
      db.prepare('UPDATE schema_version SET version = 4').run();
      db.close();

      storage = await open();
      const migrated = await storage.getConversation({ id, includeMessages: true });
      expect(migrated.a2aOrigin).toBeUndefined();
      expect(migrated.messages.map((message) => message.content)).toEqual(['old']);
      expect(migrated.pendingApprovals.map((approval) => [approval.uuid, approval.agentChain])).toEqual([[old.uuid, []]]);
      expect(await storage.getApproval(old.uuid)).toEqual({ ...old, agentChain: [] });

      // The new columns are written from now on.
      const created = await storage.createConversation({ sessionId: SESSION, systemPrompt: '', a2aOrigin: origin });
      expect((await storage.getConversation({ id: created.id, includeMessages: false })).a2aOrigin).toEqual(origin);
      const proxied = await storage.createApproval(approvalRequest(created.id, { agentChain: chain }));
      expect((await storage.getApproval(proxied.uuid)).agentChain).toEqual(chain);
    });
  });

  describe('ListPendingApprovals (the pending panel)', () => {
    it('pages every pending approval of every conversation, oldest first, and nothing decided', async () => {
      const uuids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const conversation = await newConversation();
        clock += 1000;
        uuids.push((await storage.createApproval(approvalRequest(conversation.id, { toolCallId: `call-${i}` }))).uuid);
      }
      await claim(uuids[1]!, true);
      const first = await storage.listPendingApprovals({ pageSize: 2, pageToken: '' });
      expect(first.approvals.map((approval) => approval.uuid)).toEqual([uuids[0], uuids[2]]);
      const second = await storage.listPendingApprovals({ pageSize: 2, pageToken: first.nextPageToken });
      expect(second.approvals.map((approval) => approval.uuid)).toEqual([uuids[3], uuids[4]]);
      expect(second.nextPageToken).toBe('');
      expect((await storage.listPendingApprovals({ pageSize: 0, pageToken: '' })).approvals).toHaveLength(4);
    });

    it('refuses a page token it did not issue', async () => {
      await expect(storage.listPendingApprovals({ pageSize: 10, pageToken: 'not-a-token' })).rejects.toMatchObject({
        code: GrpcStatus.INVALID_ARGUMENT,
      });
    });

    sqliteIt('adds its index to a schema 6 database', async () => {
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      db.exec(DROP_SCHEMA_7);
      db.prepare('UPDATE schema_version SET version = 6').run();
      db.close();
      storage = await open();
      expect((await storage.listPendingApprovals({ pageSize: 10, pageToken: '' })).approvals).toEqual([]);
    });
  });

  describe('lists are summaries, histories are paged', () => {
    it('titles a conversation by the first words of its first user message, cut at a word boundary', async () => {
      const { id } = await newConversation('You are terse.');
      expect((await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations[0]?.title).toBe('');
      const long = 'Please   summarise\nthe quarterly report for the board and list every risk you find in it';
      await storage.startTurn({ conversationId: id, message: user(long) });
      await append(id, [assistant('Sure.'), user('a later question')]);
      const [listed] = (await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations;
      expect(listed?.title).toBe('Please summarise the quarterly report for the board and…');
      expect([...listed!.title!].length).toBeLessThanOrEqual(60);
      expect((await storage.getConversation({ id, includeMessages: false })).title).toBe(listed?.title);
    });

    it('keeps short titles whole and cuts one long word with an ellipsis', async () => {
      const short = await newConversation();
      await append(short.id, [user('  hi there  ')]);
      const word = await newConversation();
      await append(word.id, [user('x'.repeat(5000))]);
      const titles = new Map((await storage.listConversations({ pageSize: 10, pageToken: '' })).conversations.map((c) => [c.id, c.title]));
      expect(titles.get(short.id)).toBe('hi there');
      expect(titles.get(word.id)).toBe(`${'x'.repeat(59)}…`);
    });

    it('counts messages and pending approvals as they are appended and decided, without reading messages', async () => {
      const { id } = await newConversation('sys');
      await append(id, [user('delete it'), assistant('asking')]);
      const approval = await storage.createApproval(approvalRequest(id, { messages: [assistant('calling delete_file')] }));
      let [listed] = (await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations;
      expect([listed?.messageCount, listed?.pendingApprovals.length, listed?.pendingApproval?.uuid, listed?.messages]).toEqual([
        4,
        1,
        approval.uuid,
        [],
      ]);
      await claim(approval.uuid, true, [assistant('approved')]);
      [listed] = (await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations;
      expect([listed?.messageCount, listed?.pendingApprovals.length, listed?.pendingApproval]).toEqual([5, 0, undefined]);

      if (driver.name !== 'sqlite') return;
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        // The list statements touch no message: their plans name only conversations and approvals.
        for (const name of ['firstPage', 'pageAfter', 'selectPendingApprovalsOfConversations'] as const) {
          const sql = SQL[name];
          const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], '']));
          const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
          const plan = (Object.keys(named).length > 0 ? statement.all(named) : statement.all('[]')) as { detail: string }[];
          expect(plan.map((step) => step.detail).join(' | '), name).not.toMatch(/messages/);
        }
      } finally {
        db.close();
      }
    });

    async function history(count: number) {
      const { id } = await newConversation();
      await append(
        id,
        Array.from({ length: count }, (_, index) => user(`m${index + 1}`)),
      );
      const all = (await storage.getConversation({ id, includeMessages: true })).messages;
      return { id, ids: all.map((message) => message.id) };
    }
    const contents = (conversation: { messages: { content: string }[] }) => conversation.messages.map((message) => message.content);

    it('returns the newest page, and the pages before and after a message id', async () => {
      const { id, ids } = await history(10);
      const newest = await storage.getConversation({ id, includeMessages: true, messageLimit: 3 });
      expect([contents(newest), newest.hasMoreBefore, newest.hasMoreAfter, newest.messageCount]).toEqual([
        ['m8', 'm9', 'm10'],
        true,
        false,
        10,
      ]);
      const older = await storage.getConversation({ id, includeMessages: true, messageLimit: 3, beforeMessageId: ids[7] });
      expect([contents(older), older.hasMoreBefore, older.hasMoreAfter]).toEqual([['m5', 'm6', 'm7'], true, true]);
      const oldest = await storage.getConversation({ id, includeMessages: true, messageLimit: 5, beforeMessageId: ids[2] });
      expect([contents(oldest), oldest.hasMoreBefore, oldest.hasMoreAfter]).toEqual([['m1', 'm2'], false, true]);
      const newer = await storage.getConversation({ id, includeMessages: true, messageLimit: 4, afterMessageId: ids[5] });
      expect([contents(newer), newer.hasMoreBefore, newer.hasMoreAfter]).toEqual([['m7', 'm8', 'm9', 'm10'], true, false]);
      const middle = await storage.getConversation({ id, includeMessages: true, messageLimit: 2, afterMessageId: ids[0] });
      expect([contents(middle), middle.hasMoreBefore, middle.hasMoreAfter]).toEqual([['m2', 'm3'], true, true]);
      const whole = await storage.getConversation({ id, includeMessages: true, messageLimit: 10 });
      expect([contents(whole).length, whole.hasMoreBefore, whole.hasMoreAfter]).toEqual([10, false, false]);
      // Without a limit: every message, as turns read it.
      expect(contents(await storage.getConversation({ id, includeMessages: true }))).toHaveLength(10);
    });

    it('ends a page before it passes the text budget, with at least one message', async () => {
      const { id } = await newConversation();
      const big = 'y'.repeat(3_000_000);
      await append(id, [user(big), user(big), user(big), user(big)]);
      const page = await storage.getConversation({ id, includeMessages: true, messageLimit: 1000 });
      expect([page.messages.length, page.hasMoreBefore]).toEqual([2, true]);
      const huge = await newConversation();
      await append(huge.id, [user('z'.repeat(9_000_000))]);
      expect((await storage.getConversation({ id: huge.id, includeMessages: true, messageLimit: 1000 })).messages).toHaveLength(1);
    });

    it('refuses a cursor that is not a message of the conversation', async () => {
      const { id, ids } = await history(2);
      const other = await history(1);
      for (const beforeMessageId of [UNKNOWN_UUID, other.ids[0]!, 'not-an-id']) {
        await expect(storage.getConversation({ id, includeMessages: true, messageLimit: 5, beforeMessageId })).rejects.toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          message: expect.stringContaining('before_message_id'),
        });
      }
      expect(ids).toHaveLength(2);
    });

    sqliteIt('fills titles when it migrates a schema 7 database', async () => {
      const { id } = await newConversation('sys');
      await append(id, [assistant('hi'), user('first question here'), user('second')]);
      await storage.close();
      const db = new Database(join(dir, DATABASE_FILE));
      db.exec(DROP_SCHEMA_8);
      db.prepare('UPDATE schema_version SET version = 7').run();
      db.close();
      storage = await open();
      expect((await storage.listConversations({ pageSize: 1, pageToken: '' })).conversations[0]?.title).toBe('first question here');
      // Cursors are found through the new index of message ids.
      const later = await history(3);
      expect(
        contents(await storage.getConversation({ id: later.id, includeMessages: true, messageLimit: 1, beforeMessageId: later.ids[2] })),
      ).toEqual(['m2']);
    });
  });
}
