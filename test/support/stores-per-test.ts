import { afterEach, beforeEach } from 'vitest';
import type { ConversationStorage } from '../../services/conversation-store/storage.js';
import type { StorageDriver } from './storage-drivers.js';

/**
 * The set-up of a conformance suite: before each test a database of its own and a store on it
 * (handed to `opened`), after it every store closed and the database dropped. Returns
 * `another()`: a second store on the same database — a replica on PostgreSQL, another process
 * on SQLite — closed with the rest.
 */
export function storesPerTest(driver: StorageDriver, opened: (storage: ConversationStorage) => void): () => Promise<ConversationStorage> {
  let storage: ConversationStorage;
  let others: ConversationStorage[] = [];

  beforeEach(async () => {
    await driver.createDatabase();
    storage = await driver.open();
    others = [];
    opened(storage);
  });

  afterEach(async () => {
    for (const other of others) await other.close();
    await storage.close();
    await driver.dropDatabase();
  });

  return async function another(): Promise<ConversationStorage> {
    const store = await driver.open();
    others.push(store);
    return store;
  };
}
