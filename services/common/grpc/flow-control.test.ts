import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrchestratorServiceService } from '../../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService, MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { ToolBrokerServiceService } from '../../../gen/ts/asg/tools/v1/tools.js';
import { EventFeed } from '../../conversation-store/event-feed.js';
import { conversationStoreHandlers } from '../../conversation-store/server.js';
import { openSqliteStorage, type SqliteConversationStorage } from '../../conversation-store/sqlite/driver.js';
import { createLogger } from '../log.js';
import { createPromiseClient, serviceConfigOf } from './client.js';
import { GrpcStatus, RpcError, unavailable } from './errors.js';
import { createServer, implement, listen, SERVER_OPTIONS, shutdown } from './server.js';

/**
 * Under a burst of list reads the store refused streams ("Stream refused by server"
 * → 503) and a GOAWAY surfaced as a 500. A burst over one channel must queue behind the
 * server's stream limit, and idempotent reads must survive refused streams and GOAWAYs.
 */

const log = createLogger('flow-control-test');
const BURST = 300;

/** Outcomes of settled calls, by gRPC status name ("OK" for a success). */
async function outcomes(calls: Promise<unknown>[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const result of await Promise.allSettled(calls)) {
    const name =
      result.status === 'fulfilled' ? 'OK' : result.reason instanceof RpcError ? GrpcStatus[result.reason.code]! : String(result.reason);
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

describe('a burst of list reads over one channel', () => {
  let dataDir: string;
  let storage: SqliteConversationStorage;
  let feed: EventFeed;
  let server: Server;
  let address: string;
  let running = 0;
  let mostRunning = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'asg-flow-'));
    storage = openSqliteStorage({ dataDir });
    for (let i = 0; i < 10; i++) {
      const { id } = await storage.createConversation({ sessionId: 'abcdef12', systemPrompt: '' });
      await storage.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content: `question ${i} ${'x'.repeat(60_000)}` }],
        status: 0,
        returnConversation: false,
      });
    }
    feed = new EventFeed(storage);
    const handlers = conversationStoreHandlers(storage, feed);
    // Counts the handlers running at once; the turn of the event loop makes calls overlap.
    const listConversations: typeof handlers.listConversations = async (request, ctx) => {
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      try {
        await new Promise((resolve) => setImmediate(resolve));
        return await handlers.listConversations(request, ctx);
      } finally {
        running -= 1;
      }
    };
    // A small stream limit, so that the burst is thirty times what one connection may have open.
    server = createServer(undefined, { 'grpc.max_concurrent_streams': 10 });
    server.addService(
      ConversationStoreServiceService,
      implement(ConversationStoreServiceService, 'store', { ...handlers, listConversations }, log),
    );
    address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
  });

  afterAll(async () => {
    await shutdown(server, 1000);
    feed.close();
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('queues behind max_concurrent_streams: every read answers, none is refused', async () => {
    const client = createPromiseClient(ConversationStoreServiceService, address, 'burst', 30_000);
    try {
      const pages = Array.from({ length: BURST }, () => client.listConversations({ pageSize: 500, pageToken: '' }));
      expect(await outcomes(pages)).toEqual({ OK: BURST });
      expect(mostRunning).toBeLessThanOrEqual(10);
      // Summaries: ten conversations of 60 KB each list in a few KB.
      const page = await pages[0]!;
      expect(page.conversations).toHaveLength(10);
      expect(page.conversations.every((conversation) => conversation.messages.length === 0 && conversation.messageCount === 1)).toBe(true);
      expect(ConversationStoreServiceService.listConversations.responseSerialize(page).length).toBeLessThan(10_000);
    } finally {
      client.close();
    }
  });
});

describe('retrying idempotent reads on UNAVAILABLE', () => {
  let server: Server;
  let address: string;
  const attempts = { listTools: 0, callTool: 0 };
  /** How many attempts of each method fail with UNAVAILABLE before one succeeds. */
  const failFirst = { listTools: 0, callTool: 0 };

  beforeAll(async () => {
    server = createServer();
    server.addService(
      ToolBrokerServiceService,
      implement(
        ToolBrokerServiceService,
        'flaky-broker',
        {
          listTools: async () => {
            attempts.listTools += 1;
            if (attempts.listTools <= failFirst.listTools) throw unavailable('restarting');
            return { tools: [], servers: [] };
          },
          callTool: async () => {
            attempts.callTool += 1;
            if (attempts.callTool <= failFirst.callTool) throw unavailable('restarting');
            return { text: 'ran', isError: false, server: 'flaky' };
          },
        },
        log,
      ),
    );
    address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
  });

  afterAll(async () => {
    await shutdown(server, 1000);
  });

  it('configures retries for Get*/List*/Describe* unary methods only', () => {
    const config = JSON.parse(serviceConfigOf(ConversationStoreServiceService));
    const names = config.methodConfig[0].name.map((name: { method: string }) => name.method).sort();
    expect(names).toEqual([
      'GetApproval',
      'GetConversation',
      'GetPushConfig',
      'GetRun',
      'ListApprovals',
      'ListAudit',
      'ListConversations',
      'ListDueApprovals',
      'ListIdleConversations',
      'ListPendingApprovals',
      'ListPushConfigs',
      'ListRuns',
      'ListUnfinishedApprovals',
    ]);
    expect(config.methodConfig[0].retryPolicy.retryableStatusCodes).toEqual(['UNAVAILABLE']);
    // The orchestrator's reads: listing tools and describing runs; never a turn.
    const orchestrator = JSON.parse(serviceConfigOf(OrchestratorServiceService));
    expect(orchestrator.methodConfig[0].name.map((name: { method: string }) => name.method).sort()).toEqual(['DescribeRuns', 'ListTools']);
  });

  it('tries a read again, within its deadline, and a call that changes state only once', async () => {
    const client = createPromiseClient(ToolBrokerServiceService, address, 'retrier', 10_000);
    try {
      Object.assign(attempts, { listTools: 0, callTool: 0 });
      Object.assign(failFirst, { listTools: 2, callTool: 1 });
      expect(await client.listTools({})).toEqual({ tools: [], servers: [] });
      expect(attempts.listTools).toBe(3);
      await expect(client.callTool({ name: 'delete', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' })).rejects.toMatchObject({
        code: GrpcStatus.UNAVAILABLE,
      });
      expect(attempts.callTool).toBe(1);

      // A bounded number of attempts: a read that keeps failing fails after four.
      Object.assign(attempts, { listTools: 0 });
      Object.assign(failFirst, { listTools: 100 });
      await expect(client.listTools({})).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
      expect(attempts.listTools).toBe(4);
    } finally {
      client.close();
    }
  });

  it('carries a burst of reads across GOAWAYs: a server that closes its connections every 100 ms', async () => {
    // A GOAWAY every 100 ms, and a grace longer than any call takes even on a loaded machine, as
    // in production (30 s): a call in flight finishes on its old connection, and a call that
    // meets the GOAWAY is tried again on a new one. A grace shorter than a call cuts that call
    // (RST_STREAM), which no client can carry.
    const aging = new Server({ ...SERVER_OPTIONS, 'grpc.max_connection_age_ms': 100, 'grpc.max_connection_age_grace_ms': 10_000 });
    aging.addService(
      ToolBrokerServiceService,
      implement(
        ToolBrokerServiceService,
        'aging-broker',
        {
          listTools: async () => {
            await new Promise((resolve) => setTimeout(resolve, 20));
            return { tools: [], servers: [] };
          },
          callTool: async () => ({ text: '', isError: false, server: 'aging' }),
        },
        log,
      ),
    );
    const agingAddress = `127.0.0.1:${await listen(aging, '127.0.0.1:0')}`;
    const client = createPromiseClient(ToolBrokerServiceService, agingAddress, 'goaway', 20_000);
    try {
      const counts: Record<string, number> = {};
      // Waves over about a second, so that reads are in flight as connections are aged out.
      for (let wave = 0; wave < 10; wave++) {
        const result = await outcomes(Array.from({ length: BURST / 10 }, () => client.listTools({})));
        for (const [name, count] of Object.entries(result)) counts[name] = (counts[name] ?? 0) + count;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(counts).toEqual({ OK: BURST });
    } finally {
      client.close();
      await shutdown(aging, 1000);
    }
  });
});
