import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import { createServer, implement, listen, shutdown } from '../../services/common/grpc/server.js';
import { createLogger } from '../../services/common/log.js';
import { EventFeed } from '../../services/conversation-store/event-feed.js';
import { conversationStoreHandlers } from '../../services/conversation-store/server.js';
import type { ConversationStorage } from '../../services/conversation-store/storage.js';

type StoreClient = PromiseClient<typeof ConversationStoreServiceService>;

/** A store opened by the caller (with a clock of its own, say) served over gRPC on loopback, and a client of it. */
export interface ServedStore {
  storage: ConversationStorage;
  client: StoreClient;
  /** Closes the client, the server and the storage. */
  stop(): Promise<void>;
}

export async function serveStore(storage: ConversationStorage, clientName = 'test'): Promise<ServedStore> {
  const feed = new EventFeed(storage);
  const server = createServer();
  const handlers = conversationStoreHandlers(storage, feed);
  server.addService(
    ConversationStoreServiceService,
    implement(ConversationStoreServiceService, 'store', handlers, createLogger('conversation-store')),
  );
  const address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
  const client = createPromiseClient(ConversationStoreServiceService, address, clientName, 30_000);
  return {
    storage,
    client,
    async stop() {
      client.close();
      await shutdown(server, 1_000);
      feed.close();
      await storage.close();
    },
  };
}
