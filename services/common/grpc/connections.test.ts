/**
 * The connections between services — round robin over every address of a target,
 * `dns:///` targets, keepalive that no server answers with GOAWAY, and connections recycled by
 * max_connection_age under a long WatchEvents reader. Real gRPC on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, connectivityState, credentials, getChannelzHandlers, type handleUnaryCall } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { until } from '../../../test/support/until.js';
import {
  ConversationStatus,
  ConversationStoreServiceService,
  MessageRole,
  type ConversationEvent,
} from '../../../gen/ts/asg/store/v1/store.js';
import { ToolBrokerServiceService } from '../../../gen/ts/asg/tools/v1/tools.js';
import { OrchestratorServiceService } from '../../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { createEventFeed } from '../../../gateway/app/event-feed.js';
import { startConversationStore } from '../../conversation-store/index.js';
import { configSchema, DEFAULT_GRPC_SETTINGS } from '../config/schema.js';
import { configSlice } from '../config/slices.js';
import { createLogger } from '../log.js';
import type { RunningService } from '../service.js';
import { channelOptions, createPromiseClient, idempotentReads, serviceConfigOf } from './client.js';
import { createServer, implement, listen, shutdown, type Server } from './server.js';

const log = createLogger('connections-test');
const CALL = { name: 't', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tool broker whose CallTool answers with the name of the server that took it. */
async function namedBroker(name: string, settings = DEFAULT_GRPC_SETTINGS): Promise<{ server: Server; port: number }> {
  const server = createServer(settings);
  server.addService(
    ToolBrokerServiceService,
    implement(
      ToolBrokerServiceService,
      name,
      { listTools: async () => ({ tools: [], servers: [] }), callTool: async () => ({ text: '', isError: false, server: name }) },
      log,
    ),
  );
  const port = await listen(server, '127.0.0.1:0');
  cleanups.push(() => shutdown(server, Date.now() + 1000));
  return { server, port };
}

describe('the channel service config', () => {
  it('balances round robin, and retries reads only: never StartTurn, UpdateRun, ClaimApproval or a tool call', () => {
    for (const definition of [ConversationStoreServiceService, OrchestratorServiceService, ToolBrokerServiceService]) {
      const config = JSON.parse(serviceConfigOf(definition));
      expect(config.loadBalancingConfig).toEqual([{ round_robin: {} }]);
      const retried = (config.methodConfig[0]?.name ?? []).map((name: { method: string }) => name.method);
      expect(retried).toEqual(idempotentReads(definition).map((read) => read.method));
      for (const method of retried) expect(method).toMatch(/^(Get|List|Describe)[A-Z]/);
      for (const write of ['StartTurn', 'UpdateRun', 'ClaimApproval', 'AppendMessages', 'CallTool', 'ResolveApproval'])
        expect(retried).not.toContain(write);
    }
  });
});

describe('balancing and targets', () => {
  it('spreads calls over both servers of an ipv4: target list', async () => {
    const a = await namedBroker('a');
    const b = await namedBroker('b');
    const client = createPromiseClient(ToolBrokerServiceService, `ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`, 'balancer', 5000);
    cleanups.push(() => client.close());
    const answeredBy = new Set<string>();
    // round_robin picks among the READY subchannels: once both have connected, calls alternate.
    const deadline = Date.now() + 10_000;
    while (answeredBy.size < 2 && Date.now() < deadline) {
      answeredBy.add((await client.callTool(CALL)).server);
    }
    expect([...answeredBy].sort()).toEqual(['a', 'b']);
  });

  it('reaches a server through a dns:/// target', async () => {
    const { port } = await namedBroker('dns');
    const client = createPromiseClient(ToolBrokerServiceService, `dns:///localhost:${port}`, 'dns', 5000);
    cleanups.push(() => client.close());
    expect((await client.callTool(CALL)).server).toBe('dns');
  });
});

/** The keepalive pings a channel's connections have sent, as grpc-js's channelz counts them. */
async function keepalivesSent(channel: ReturnType<Client['getChannel']>): Promise<number> {
  const channelz = getChannelzHandlers();
  // The handlers of the channelz service, called directly: a request in, a callback out.
  const ask = <Request, Response>(handler: handleUnaryCall<Request, Response>, request: Request) =>
    new Promise<Response>((resolve, reject) =>
      handler({ request } as Parameters<typeof handler>[0], (error, value) =>
        error || !value ? reject(error ?? new Error('channelz had no answer')) : resolve(value),
      ),
    );
  const { channel: info } = await ask(channelz.GetChannel, { channel_id: String(channel.getChannelzRef().id) });
  let sent = 0;
  for (const { subchannel_id } of info?.subchannel_ref ?? []) {
    const { subchannel } = await ask(channelz.GetSubchannel, { subchannel_id: String(subchannel_id) });
    for (const { socket_id } of subchannel?.socket_ref ?? []) {
      const { socket } = await ask(channelz.GetSocket, { socket_id: String(socket_id), summary: false });
      sent += Number(socket?.data?.keep_alives_sent ?? 0);
    }
  }
  return sent;
}

describe('keepalive', () => {
  it('keeps an idle channel that pings every 250 ms connected over ten pings: no GOAWAY (too_many_pings or other), no reconnect', async () => {
    // The server's ping policy follows keepalive_time (serverOptions), so any pace proves the pair; a
    // ping answered late on a busy machine must not end the connection here, hence the long timeout.
    const settings = { ...DEFAULT_GRPC_SETTINGS, keepalive_time: 250, keepalive_timeout: 5000 };
    const { port } = await namedBroker('idle', settings);
    // The options createPromiseClient gives every channel, on a bare client whose state can be watched;
    // with channelz on, which counts the pings.
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
      ...channelOptions(ToolBrokerServiceService, settings),
      'grpc.enable_channelz': 1,
    });
    cleanups.push(() => client.close());
    await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 5000, (error) => (error ? reject(error) : resolve())));
    const channel = client.getChannel();
    const states: number[] = [];
    const watch = (state: number) =>
      channel.watchConnectivityState(state, Infinity, () => {
        const next = channel.getConnectivityState(false);
        states.push(next);
        if (next !== connectivityState.SHUTDOWN) watch(next);
      });
    watch(channel.getConnectivityState(false));
    // Ten keepalive pings, with no call at all (keepalive_permit_without_calls).
    await until('ten keepalive pings', async () => (await keepalivesSent(channel)) >= 10, 30_000, 100);
    expect(channel.getConnectivityState(false)).toBe(connectivityState.READY);
    // A GOAWAY would have sent the channel to IDLE (and back): it never left READY.
    expect(states).toEqual([]);
  }, 40_000);
});

describe('max_connection_age under a WatchEvents reader', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'asg-age-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a reader whose stream is cut by the connection age resumes after its last event: every event once, in order', async () => {
    // Connections end every ~300 ms, and a stream still open 100 ms after the GOAWAY is cut.
    const config = configSchema.parse({ data_dir: dataDir, grpc: { max_connection_age: '300ms', max_connection_age_grace: '100ms' } });
    const store: RunningService = await startConversationStore({
      config: configSlice(config, 'conversationStore'),
      listen: '127.0.0.1:0',
      log,
    });
    cleanups.push(() => store.stop(Date.now() + 1000));
    const client = createPromiseClient(ConversationStoreServiceService, store.address, 'reader', 10_000);
    cleanups.push(() => client.close());
    let streams = 0;
    const feed = createEventFeed({
      watchEvents: (request, opts) => {
        streams += 1;
        return client.watchEvents(request, opts);
      },
      listPendingApprovals: client.listPendingApprovals,
    });

    const { conversation } = await client.createConversation({ sessionId: '0badcafe', systemPrompt: '' });
    const id = conversation!.id;
    const total = 30;
    const received: ConversationEvent[] = [];
    const reading = (async () => {
      for await (const event of feed.watch({ conversationId: id, afterId: 0, signal: new AbortController().signal })) {
        if (!event.messageAdded) continue;
        received.push(event);
        if (received.length === total) return;
      }
    })();
    // Live events only reach a watch that is open: wait until the store counts it.
    while (!(await client.getConversation({ id, includeMessages: false })).conversation?.watched)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // Written over about 1.5 s: several connection ages.
    for (let n = 1; n <= total; n++) {
      await client.appendMessages({
        conversationId: id,
        messages: [{ role: MessageRole.MESSAGE_ROLE_USER, content: `message ${n}` }],
        status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
        returnConversation: false,
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await reading;
    expect(received.map((event) => event.messageAdded?.content)).toEqual(Array.from({ length: total }, (_, i) => `message ${i + 1}`));
    const ids = received.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(total);
    // The stream was in fact cut and resumed.
    expect(streams).toBeGreaterThan(1);
  }, 30_000);
});
