import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { deferredHandlers } from '../common/grpc/deferred-handlers.js';
import { unavailable } from '../common/grpc/errors.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown, type ServiceHandlers } from '../common/grpc/server.js';
import type { ConversationStoreConfig } from '../common/config/slices.js';
import { observeGauge } from '../common/metrics.js';
import { redactSecrets } from '../common/secrets.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { EventFeed, type EventFeedOptions } from './event-feed.js';
import { openConfiguredStorage, storageTarget } from './open-storage.js';
import { reasonOf, StorageOpening } from './opening.js';
import { conversationStoreHandlers } from './server.js';
import type { ConversationStorage } from './storage.js';

export type { ApprovalClaim, ConversationPage, ConversationStorage, InterruptionMark } from './storage.js';
export type { EventFeedOptions } from './event-feed.js';

const SERVICE = 'conversation-store';

/** The store on `options.listen`, keeping its data in `<data_dir>/conversations.db` or the PostgreSQL database of `store.url`. */
export interface ConversationStoreOptions extends ServiceOptions<ConversationStoreConfig> {
  /** The watchers' limits (event-feed.ts); the defaults otherwise. */
  events?: EventFeedOptions;
  /** Where ASG_DATABASE_URL and ASG_EVENTS_URL are read; `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

export async function startConversationStore(options: ConversationStoreOptions): Promise<RunningService> {
  const env = options.env ?? process.env;
  const { where, events, eventsUrlIgnored } = storageTarget(options.config, env);
  const onBackgroundError = (what: string, error: unknown) => options.log.warn(what, { error: reasonOf(error) });
  const server = createServer(options.config.grpc);
  // Ready while the database answers: from its opening (migrated, interrupted turns noted) while its probe gets answers.
  const health = new ServingHealth(server, [ConversationStoreServiceService]);
  let open: OpenStore | undefined;
  const handlers = deferredHandlers(ConversationStoreServiceService, () => {
    if (open) return open.handlers;
    throw unavailable('the conversation store cannot reach its database yet; try again shortly');
  });
  const opening = new StorageOpening(
    async () => {
      const { storage } = await openConfiguredStorage(options.config, env, onBackgroundError);
      // Before anyone reads them: a conversation whose turn a crash cut off says so.
      try {
        const interrupted = await storage.noteInterruptedTurns();
        if (interrupted > 0) options.log.warn('turns cut off by an earlier stop noted as interrupted', { conversations: interrupted });
      } catch (error) {
        await storage.close();
        throw error;
      }
      return storage;
    },
    (storage) => {
      const feed = new EventFeed(storage, options.events);
      const stopFollowing = storage.onAvailability?.((available, reason) => {
        if (available) {
          options.log.info('the conversation store reaches its database again and is ready');
          health.markServing();
        } else {
          options.log.warn('the conversation store cannot reach its database; it is not ready until the database answers', {
            error: redactSecrets(reason),
          });
          health.markNotServing();
        }
      });
      const stopObservingApprovals = observeGauge(
        'asg_approvals_pending',
        'Approvals waiting for a decision, counted in the store at each scrape',
        () => countPendingApprovals(storage),
      );
      // Every WatchEvents stream open on this replica: each live subscription of a gateway, and each outbox.
      const stopObservingWatchers = observeGauge(
        'asg_store_event_watchers',
        'WatchEvents streams open on this store replica',
        async () => feed.watcherCount,
      );
      open = {
        storage,
        handlers: conversationStoreHandlers(storage, feed),
        release: () => {
          stopFollowing?.();
          stopObservingApprovals();
          stopObservingWatchers();
          feed.close();
        },
      };
      health.markServing();
    },
    options.log,
  );
  // A database that needs a person (a refused login, a newer schema) stops the start here.
  await opening.first();
  server.addService(ConversationStoreServiceService, implement(ConversationStoreServiceService, SERVICE, handlers, options.log));
  let port: number;
  try {
    port = await listen(server, options.listen);
  } catch (error) {
    server.forceShutdown();
    await opening.stop(Date.now() + DEFAULT_STOP_GRACE_MS);
    open?.release();
    await open?.storage.close();
    throw error;
  }
  const address = `${options.listen.slice(0, options.listen.lastIndexOf(':'))}:${port}`;
  const local = serveInProcess(
    options.inProcess,
    { definition: ConversationStoreServiceService, address, handlers, service: SERVICE, log: options.log },
    health,
  );
  options.log.info('conversation store listening', { address, database: where, events, ready: open !== undefined });
  if (eventsUrlIgnored)
    options.log.warn('events.url (ASG_EVENTS_URL) is ignored: the SQLite store is one replica and hands its events over in-process');
  let stopped: Promise<void> | undefined;
  return {
    name: SERVICE,
    address,
    port,
    // NOT_SERVING first; watches never end on their own, so they are ended next: the calls in flight finish before closing.
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopped ??= (async () => {
        await health.beginStop(deadline, options.config.grpc.drain_delay);
        await opening.stop(deadline);
        open?.release();
        await Promise.all([shutdown(server, deadline), local.stop(deadline)]);
        await open?.storage.close();
      })()),
  };
}

/** The store once its storage opened: what its handlers serve from, and what its stop releases. */
interface OpenStore {
  storage: ConversationStorage;
  handlers: ServiceHandlers<typeof ConversationStoreServiceService>;
  /** Stops following the database's availability and the gauges, and ends the watches (UNAVAILABLE: reconnect). */
  release(): void;
}

/** Pages read at most per scrape: past 10 000 pending approvals the gauge says 10 000. */
const PENDING_PAGES = 20;

/** How many approvals wait for a decision, as the database says now (every replica reads the same: take max, not sum). */
async function countPendingApprovals(storage: ConversationStorage): Promise<number> {
  let count = 0;
  let pageToken = '';
  for (let page = 0; page < PENDING_PAGES; page += 1) {
    const { approvals, nextPageToken } = await storage.listPendingApprovals({ pageSize: 500, pageToken });
    count += approvals.length;
    if (!nextPageToken) break;
    pageToken = nextPageToken;
  }
  return count;
}
