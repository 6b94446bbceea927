/**
 * History digests (store.proto RecordHistoryDigest, FindConversationByHistory): the gateway
 * records the digest of the history a chat client was shown of a conversation, and finds the
 * conversation again by it, only among one owner's conversations (or only among those without
 * an owner). Run on each driver (sqlite-storage.test.ts, postgres-storage.test.ts), each test
 * on a database of its own.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationStorage } from './storage.js';
import type { StorageDriver } from '../../test/support/storage-drivers.js';
import { storesPerTest } from '../../test/support/stores-per-test.js';

let storage: ConversationStorage;

export function historyDigestsConformance(driver: StorageDriver): void {
  storesPerTest(driver, (opened) => {
    storage = opened;
  });

  const created = async (owner?: string) =>
    (await storage.createConversation({ sessionId: 'a1b2c3d4', systemPrompt: '', ...(owner !== undefined && { owner }) })).id;

  describe('recordHistoryDigest and findConversationByHistory', () => {
    it('finds the conversation by its latest digest only; an earlier digest no longer names it', async () => {
      const id = await created();
      expect(await storage.findConversationByHistory('d1', undefined)).toBeUndefined();
      await storage.recordHistoryDigest(id, 'd1');
      expect(await storage.findConversationByHistory('d1', undefined)).toBe(id);
      await storage.recordHistoryDigest(id, 'd2');
      expect(await storage.findConversationByHistory('d2', undefined)).toBe(id);
      expect(await storage.findConversationByHistory('d1', undefined)).toBeUndefined();
    });

    it("never finds another owner's conversation, nor an owned one for a caller without an owner", async () => {
      const carols = await created('token:carol');
      const nobodys = await created();
      await storage.recordHistoryDigest(carols, 'same');
      await storage.recordHistoryDigest(nobodys, 'same');
      expect(await storage.findConversationByHistory('same', 'token:carol')).toBe(carols);
      expect(await storage.findConversationByHistory('same', undefined)).toBe(nobodys);
      expect(await storage.findConversationByHistory('same', 'token:dave')).toBeUndefined();
    });

    it('of several conversations with one digest, finds the one recorded last', async () => {
      const first = await created('token:carol');
      const second = await created('token:carol');
      await storage.recordHistoryDigest(first, 'shared');
      await storage.recordHistoryDigest(second, 'shared');
      expect(await storage.findConversationByHistory('shared', 'token:carol')).toBe(second);
      await storage.recordHistoryDigest(first, 'shared');
      expect(await storage.findConversationByHistory('shared', 'token:carol')).toBe(first);
    });

    it('NOT_FOUND for an unknown conversation', async () => {
      await expect(storage.recordHistoryDigest('00000000-0000-4000-8000-000000000000', 'd')).rejects.toMatchObject({
        code: expect.anything(),
        message: expect.stringContaining('not found'),
      });
      await expect(storage.recordHistoryDigest('not-an-id', 'd')).rejects.toThrow(/not found/);
    });
  });
}
