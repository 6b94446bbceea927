/**
 * Who a conversation belongs to (store.proto Conversation.owner,
 * CreateConversationRequest.owner, ListConversationsRequest.owner). The store records the owner
 * the gateway names and lists one owner's conversations, with the counts of that owner's only,
 * through an index of owners; who may see what is the gateway's rule (gateway/app/ownership.ts),
 * not the store's. Also a task's A2A push-notification configs, which belong to the
 * conversation as its owner does. Run on each driver (sqlite-storage.test.ts, postgres-storage.test.ts), each
 * test on a database of its own.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ConversationStatus, MessageRole, type ConversationSummary } from '../../gen/ts/asg/store/v1/store.js';
import { DATABASE_FILE } from './sqlite/driver.js';
import { SQL } from '../../test/support/sqlite-statements.js';
import { MAX_PUSH_CONFIGS, type ConversationStorage } from './storage.js';
import {
  DROP_POSTGRES_SCHEMA_6,
  DROP_POSTGRES_SCHEMA_12,
  DROP_POSTGRES_SCHEMA_13,
  DROP_SCHEMA_15,
  DROP_SCHEMA_21,
  DROP_SCHEMA_22,
} from '../../test/support/sqlite-schema-undo.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { storesPerTest } from '../../test/support/stores-per-test.js';

const SESSION = 'a1b2c3d4';

let storage: ConversationStorage;

export function ownersConformance(driver: StorageDriver): void {
  const sqliteIt: typeof it = driver.name === 'sqlite' ? it : (it.skip as typeof it);

  const another = storesPerTest(driver, (opened) => {
    storage = opened;
  });

  async function created(owner?: string, on: ConversationStorage = storage): Promise<string> {
    return (await on.createConversation({ sessionId: SESSION, systemPrompt: 'You help.', ...(owner !== undefined && { owner }) })).id;
  }

  /** Every page of a listing, newest first, `pageSize` at a time. */
  async function listAll(
    owner: string | undefined,
    pageSize: number,
  ): Promise<{ ids: string[]; pages: number; summary: ConversationSummary | undefined }> {
    const ids: string[] = [];
    let pageToken = '';
    let pages = 0;
    let summary: ConversationSummary | undefined;
    do {
      const page = await storage.listConversations({ pageSize, pageToken, ...(owner !== undefined && { owner }) });
      ids.push(...page.conversations.map((conversation) => conversation.id));
      summary = page.summary;
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken !== '');
    return { ids, pages, summary };
  }

  const complete = (conversationId: string) =>
    storage.appendMessages({
      conversationId,
      messages: [{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'done' }],
      status: ConversationStatus.CONVERSATION_STATUS_COMPLETED,
      returnConversation: false,
    });

  const waitForApproval = (conversationId: string) =>
    storage.createApproval({
      conversationId,
      toolCallId: 'call-1',
      toolName: 'delete_file',
      toolArgsJson: '{}',
      description: 'Delete',
      messages: [],
      agentChain: [],
    });

  describe('conversation owners', () => {
    it('keeps the owner it was given, and none when given none', async () => {
      const alices = await created('alice');
      const nobodys = await created();
      expect((await storage.getConversation({ id: alices, includeMessages: true })).owner).toBe('alice');
      expect((await storage.getConversation({ id: alices, includeMessages: false })).owner).toBe('alice');
      expect((await storage.getConversation({ id: nobodys, includeMessages: false })).owner).toBeUndefined();
      const listed = new Map((await storage.listConversations({ pageSize: 10, pageToken: '' })).conversations.map((c) => [c.id, c.owner]));
      expect(listed).toEqual(
        new Map([
          [alices, 'alice'],
          [nobodys, undefined],
        ]),
      );
      // A turn, an approval and its claim leave the owner as it was.
      const approval = await waitForApproval(alices);
      await storage.claimApproval({ uuid: approval.uuid, approved: false, messages: [], clearRun: false, alsoReject: [] });
      expect((await storage.getConversation({ id: alices, includeMessages: false })).owner).toBe('alice');
    });

    it("lists one owner's conversations, newest first and paged, and only theirs", async () => {
      const alices: string[] = [];
      // Interleaved with the others', so that a page of alice's skips over theirs.
      for (let index = 0; index < 7; index++) {
        alices.push(await created('alice'));
        await created('bob');
        await created();
      }
      const all = await listAll(undefined, 50);
      expect(all.ids).toHaveLength(21);
      const mine = await listAll('alice', 3);
      expect(mine.ids).toEqual([...alices].reverse());
      expect(mine.pages).toBe(3);
      // Names are compared exactly: no other case, no prefix.
      expect((await listAll('Alice', 10)).ids).toEqual([]);
      expect((await listAll('ali', 10)).ids).toEqual([]);
      expect((await listAll('carol', 10)).ids).toEqual([]);
    });

    it("counts an owner's conversations by status as they change; the summary of everyone counts every one", async () => {
      const [active, waiting, completed, resumed] = [
        await created('alice'),
        await created('alice'),
        await created('alice'),
        await created('alice'),
      ];
      await created('bob');
      await created();
      await complete(completed!);
      await waitForApproval(waiting!);
      const other = await waitForApproval(resumed!);
      await storage.claimApproval({ uuid: other.uuid, approved: false, messages: [], clearRun: false, alsoReject: [] });

      expect((await listAll('alice', 10)).summary).toEqual({ total: 4, active: 2, waitingApproval: 1, completed: 1 });
      expect((await listAll('bob', 10)).summary).toEqual({ total: 1, active: 1, waitingApproval: 0, completed: 0 });
      expect((await listAll('carol', 10)).summary).toEqual({ total: 0, active: 0, waitingApproval: 0, completed: 0 });
      expect((await listAll(undefined, 10)).summary).toEqual({ total: 6, active: 4, waitingApproval: 1, completed: 1 });

      await complete(active!);
      expect((await listAll('alice', 1)).summary).toEqual({ total: 4, active: 1, waitingApproval: 1, completed: 2 });
      expect((await listAll(undefined, 1)).summary).toEqual({ total: 6, active: 3, waitingApproval: 1, completed: 2 });
    });

    it('keeps the counts exact when two stores create and finish conversations of one owner at once', async () => {
      const second = await another();
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, index) => created(index % 2 === 0 ? 'alice' : 'bob', index % 4 < 2 ? storage : second)),
      );
      await Promise.all(
        ids
          .filter((_, index) => index % 3 === 0)
          .map((id, index) =>
            (index % 2 === 0 ? storage : second).appendMessages({
              conversationId: id,
              messages: [],
              status: ConversationStatus.CONVERSATION_STATUS_COMPLETED,
              returnConversation: false,
            }),
          ),
      );
      const expected = (owner: string) => {
        const theirs = ids.filter((_, index) => (index % 2 === 0 ? 'alice' : 'bob') === owner);
        const done = ids.filter((id, index) => index % 3 === 0 && theirs.includes(id)).length;
        return { total: theirs.length, active: theirs.length - done, waitingApproval: 0, completed: done };
      };
      expect((await listAll('alice', 50)).summary).toEqual(expected('alice'));
      expect((await listAll('bob', 50)).summary).toEqual(expected('bob'));
    });

    it('migrates a database of the schema before owners: its conversations have none, new ones do', async () => {
      const earlier = await created();
      await storage.close();
      // Back to the schema before owners (SQLite 14, PostgreSQL 5).
      await driver.execute(
        driver.name === 'sqlite'
          ? `${DROP_SCHEMA_15} UPDATE schema_version SET version = 14;`
          : `${DROP_POSTGRES_SCHEMA_6} UPDATE schema_version SET version = 5;`,
      );
      storage = await driver.open();
      expect((await storage.getConversation({ id: earlier, includeMessages: false })).owner).toBeUndefined();
      const alices = await created('alice');
      await complete(alices);
      expect(await listAll('alice', 10)).toMatchObject({
        ids: [alices],
        summary: { total: 1, active: 0, waitingApproval: 0, completed: 1 },
      });
      expect((await listAll(undefined, 10)).summary).toEqual({ total: 2, active: 1, waitingApproval: 0, completed: 1 });
    });

    it('migrates the bare owners stored before owners named their source to the token principal of their name, counts and all', async () => {
      const carols = [await created('carol'), await created('carol')];
      // A JWT could have been named "token:carol": its conversations stay apart from the token carol's.
      const oddly = await created('token:carol');
      const nobodys = await created();
      await complete(carols[1]!);
      await storage.close();
      // Back to the schema whose owners were bare names (SQLite 16, PostgreSQL 7): its data is what it was
      // (the history digests, decision ids, quorums and run journals added later go).
      await driver.execute(
        `DROP INDEX approvals_escalation_due; ALTER TABLE approvals DROP COLUMN escalates_at; ALTER TABLE approvals DROP COLUMN escalation_role; ALTER TABLE approvals DROP COLUMN escalated_at; ${driver.name === 'sqlite' ? DROP_SCHEMA_22 + DROP_SCHEMA_21 : DROP_POSTGRES_SCHEMA_13 + DROP_POSTGRES_SCHEMA_12} DROP TABLE approval_votes; ALTER TABLE approvals DROP COLUMN quorum_required; ALTER TABLE approvals DROP COLUMN quorum_role; ALTER TABLE approvals DROP COLUMN quorum_not_requester; ALTER TABLE approvals DROP COLUMN requested_by; ALTER TABLE approvals DROP COLUMN decision_id; DROP TABLE history_digests; UPDATE schema_version SET version = ${driver.name === 'sqlite' ? 16 : 7};`,
      );
      storage = await driver.open();
      const ownerOf = async (id: string) => (await storage.getConversation({ id, includeMessages: false })).owner;
      expect([await ownerOf(carols[0]!), await ownerOf(carols[1]!), await ownerOf(oddly), await ownerOf(nobodys)]).toEqual([
        'token:carol',
        'token:carol',
        'token:token:carol',
        undefined,
      ]);
      expect(await listAll('token:carol', 1)).toMatchObject({
        ids: [...carols].reverse(),
        summary: { total: 2, active: 1, waitingApproval: 0, completed: 1 },
      });
      expect(await listAll('token:token:carol', 10)).toMatchObject({
        ids: [oddly],
        summary: { total: 1, active: 1, waitingApproval: 0, completed: 0 },
      });
      expect(await listAll('carol', 10)).toMatchObject({ ids: [], summary: { total: 0, active: 0, waitingApproval: 0, completed: 0 } });
      // The counts go on from there.
      await complete(carols[0]!);
      expect((await listAll('token:carol', 10)).summary).toEqual({ total: 2, active: 0, waitingApproval: 0, completed: 2 });
      expect((await listAll(undefined, 10)).summary).toEqual({ total: 4, active: 2, waitingApproval: 0, completed: 2 });
    });

    sqliteIt("reads one owner's page through the index of owners, not by filtering every conversation", () => {
      const db = new Database(join(driver.dataDir!, DATABASE_FILE), { readonly: true });
      try {
        for (const name of ['ownerFirstPage', 'ownerPageAfter'] as const) {
          const plan = db.prepare(`EXPLAIN QUERY PLAN ${SQL[name]}`).all({ owner: 'alice', created_at: '', id: '', limit: 1 }) as {
            detail: string;
          }[];
          expect(plan.map((step) => step.detail).join(' | '), name).toMatch(/conversations USING INDEX conversations_by_owner/);
        }
      } finally {
        db.close();
      }
    });
  });

  describe('push-notification configs of a task', () => {
    const config = (conversationId: string, id: string, url = `http://127.0.0.1:9/${id}`) => ({
      conversationId,
      id,
      url,
      token: `token-${id}`,
      dialect: 'v1.0',
      createdAt: undefined,
    });

    it('adds, replaces by id (keeping created_at), lists oldest first, gets and deletes', async () => {
      const id = await created();
      const first = await storage.setPushConfig(config(id, 'a'));
      expect(first).toMatchObject({ conversationId: id, id: 'a', token: 'token-a', dialect: 'v1.0', createdAt: expect.any(Date) });
      await storage.setPushConfig(config(id, 'b'));
      const replaced = await storage.setPushConfig(config(id, 'a', 'https://hooks.example.com/a'));
      expect(replaced.url).toBe('https://hooks.example.com/a');
      expect(replaced.createdAt).toEqual(first.createdAt);
      expect((await storage.listPushConfigs(id)).map((entry) => entry.id)).toEqual(['a', 'b']);
      expect(await storage.getPushConfig(id, 'b')).toMatchObject({ id: 'b', url: 'http://127.0.0.1:9/b' });
      expect(await storage.deletePushConfig(id, 'b')).toBe(true);
      expect(await storage.deletePushConfig(id, 'b')).toBe(false);
      expect(await storage.getPushConfig(id, 'b')).toBeUndefined();
      expect(await storage.listPushConfigs(await created())).toEqual([]);
    });

    it('refuses a config of an unknown conversation (NOT_FOUND) and more than MAX_PUSH_CONFIGS per task', async () => {
      await expect(storage.setPushConfig(config('00000000-0000-4000-8000-000000000000', 'a'))).rejects.toMatchObject({ code: 5 });
      expect(await storage.listPushConfigs('not-an-id')).toEqual([]);
      const id = await created();
      for (let index = 0; index < MAX_PUSH_CONFIGS; index++) await storage.setPushConfig(config(id, `c${index}`));
      await expect(storage.setPushConfig(config(id, 'one-more'))).rejects.toMatchObject({ code: 9 });
      // Replacing one is not adding one.
      await storage.setPushConfig(config(id, 'c0', 'https://hooks.example.com/c0'));
    });
  });
}
