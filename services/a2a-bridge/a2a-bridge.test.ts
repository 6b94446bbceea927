import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { A2ABridgeServiceService, Dialect, TaskState, type Peer } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { runWithContext, type RequestContext } from '../common/context.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import { createLogger, type Logger } from '../common/log.js';
import {
  APPROVAL_ARGS,
  APPROVAL_TOOL,
  approvalDescription,
  startHangingAgent,
  startMockLlm,
  startSdkAgent,
  startTypePartsAgent,
  unreachableUrl,
  type A2aTestPeer,
  type MockLlm,
} from '../../test/support/a2a-peers.js';
import { logLines } from '../../test/support/log-lines.js';
import { startA2aBridge } from './index.js';
import { lineLogger } from '../../test/support/line-logger.js';

const TOKEN = 'Bearer a2a-bridge-test-token-7c4e1f9a';
const SESSION = 'a1b2c3d4';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Bridge {
  client: PromiseClient<typeof A2ABridgeServiceService>;
  log: string[];
}

async function startBridge(config: Record<string, unknown> = {}, logger?: Logger): Promise<Bridge> {
  const log = lineLogger();
  const service = await startA2aBridge({
    config: configSlice(configSchema.parse(config), 'a2aBridge'),
    listen: '127.0.0.1:0',
    log: logger ?? log,
  });
  cleanups.push(() => service.stop());
  const client = createPromiseClient(A2ABridgeServiceService, service.address, 'test', 10_000);
  cleanups.push(() => client.close());
  return { client, log: log.lines };
}

async function peerOf<T extends A2aTestPeer>(started: Promise<T>): Promise<T> {
  const peer = await started;
  cleanups.push(() => peer.close());
  return peer;
}

/** Runs `fn` as a request of a caller with this context: its gRPC calls carry it as metadata. */
function asCaller<T>(context: Partial<RequestContext>, fn: () => Promise<T>): Promise<T> {
  return runWithContext({ sessionId: SESSION, ...context }, fn);
}

const peer = (url: string, name = 'helper', timeoutMs = 0): Peer => ({ name, url, timeoutMs });

async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('DescribeAgent', () => {
  it('reads a v1.0 card from the origin given a base URL, and uses the path it names on that origin', async () => {
    const agent = await peerOf(startSdkAgent({ name: 'remover' }));
    const { client } = await startBridge();
    const described = await asCaller({}, () => client.describeAgent({ peer: peer(agent.baseUrl) }));
    expect(described).toEqual({
      name: 'remover',
      description: 'A test agent that asks for an approval before it acts',
      dialect: Dialect.DIALECT_V1_0,
      endpointUrl: agent.endpoint,
      skills: [{ id: 'remove', name: 'Remove resources', description: 'Removes resources, after an approval' }],
    });
    // The card was asked for as v1.0: a server that also speaks v0.3 would otherwise send its v0.3 card.
    expect(agent.requests[0]).toMatchObject({ method: 'GET', path: '/.well-known/agent-card.json', headers: { 'a2a-version': '1.0' } });
  });

  it('takes v0.3 from a card that only lists v0.3', async () => {
    const agent = await peerOf(startSdkAgent({ versions: ['0.3'] }));
    const { client } = await startBridge();
    expect((await asCaller({}, () => client.describeAgent({ peer: peer(agent.endpoint) }))).dialect).toBe(Dialect.DIALECT_V0_3);
  });

  it('falls back to agent.json beside the origin and probes a card that declares no version: the type-parts dialect', async () => {
    const typeParts = await peerOf(startTypePartsAgent());
    const { client } = await startBridge();
    const described = await asCaller({}, () => client.describeAgent({ peer: peer(typeParts.endpoint) }));
    expect(described).toMatchObject({
      name: 'type-parts-agent',
      dialect: Dialect.DIALECT_TYPE_PARTS,
      endpointUrl: typeParts.endpoint,
      skills: [{ id: 'resources_remove' }],
    });
    expect(typeParts.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /a2a/.well-known/agent-card.json',
      'GET /a2a/.well-known/agent.json',
      'GET /.well-known/agent-card.json',
      'GET /.well-known/agent.json',
      'POST /a2a',
      'POST /a2a',
      'POST /a2a',
    ]);
    // v1.0 first (with its header), then v0.3, then the type-parts tasks/get, which it understands.
    expect(typeParts.rpcRequests().map((request) => (request.body as { method: string }).method)).toEqual([
      'GetTask',
      'agent/getAuthenticatedExtendedCard',
      'tasks/get',
    ]);
    expect(typeParts.rpcRequests()[0]!.headers['a2a-version']).toBe('1.0');
    expect(typeParts.rpcRequests()[1]!.headers['a2a-version']).toBeUndefined();
  });

  it('probes a peer without a card, and remembers the answer', async () => {
    const agent = await peerOf(startSdkAgent({ card: false }));
    const { client } = await startBridge();
    const described = await asCaller({}, () => client.describeAgent({ peer: peer(agent.endpoint, 'cardless') }));
    expect(described).toMatchObject({
      name: 'cardless',
      description: '',
      dialect: Dialect.DIALECT_V1_0,
      endpointUrl: agent.endpoint,
      skills: [],
    });
    const seen = agent.requests.length;
    await asCaller({}, () => client.describeAgent({ peer: peer(agent.endpoint, 'cardless') }));
    expect(agent.requests.length).toBe(seen);
  });

  it('fails FAILED_PRECONDITION for a peer that speaks no dialect we know', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nothing here');
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { client } = await startBridge();
    const { port } = server.address() as AddressInfo;
    const failed = await failure(asCaller({}, () => client.describeAgent({ peer: peer(`http://127.0.0.1:${port}/a2a`, 'nobody') })));
    expect(failed.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(failed.message).toContain(`sub-agent nobody at http://127.0.0.1:${port}/a2a speaks no A2A dialect we know`);
  });
});

describe.each([
  { dialect: Dialect.DIALECT_V1_0, start: () => startSdkAgent(), url: (agent: A2aTestPeer) => agent.baseUrl, dataParts: true },
  {
    dialect: Dialect.DIALECT_V0_3,
    start: () => startSdkAgent({ versions: ['0.3'] }),
    url: (agent: A2aTestPeer) => agent.endpoint,
    dataParts: true,
  },
  { dialect: Dialect.DIALECT_TYPE_PARTS, start: () => startTypePartsAgent(), url: (agent: A2aTestPeer) => agent.baseUrl, dataParts: false },
])('SendMessage and GetTask in $dialect (1 = v1.0, 2 = v0.3, 3 = type-parts)', ({ dialect, start, url, dataParts }) => {
  it('asks, waits for the approval, goes on when approved, and reads the task again', async () => {
    const agent = await peerOf(start());
    const { client } = await startBridge();
    const target = peer(url(agent));

    const asked = await asCaller({}, () => client.sendMessage({ peer: target, text: 'remove r-42' }));
    const waiting = asked.task!;
    expect(waiting).toMatchObject({ state: TaskState.TASK_STATE_INPUT_REQUIRED, dialect });
    expect(waiting.id).not.toBe('');
    expect(waiting.approval!.uuid).toMatch(UUID);
    expect(waiting.approval!.description).toBe(approvalDescription('remove r-42'));
    expect(waiting.text).toBe(`Approval required (id: ${waiting.approval!.uuid}): ${approvalDescription('remove r-42')}`);
    if (dataParts) {
      // From the data part: the tool and its arguments too.
      expect(waiting.approval).toMatchObject({ toolName: APPROVAL_TOOL, toolArgsJson: JSON.stringify(APPROVAL_ARGS), chain: [] });
      expect(waiting.contextId).not.toBe('');
    } else {
      expect(waiting.approval).toMatchObject({ toolName: '', chain: [] });
    }

    const answered = await asCaller({}, () =>
      client.sendMessage({ peer: target, text: '', taskId: waiting.id, contextId: waiting.contextId, approved: true }),
    );
    expect(answered.task).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_COMPLETED, text: 'done: remove r-42', dialect });
    expect(answered.task!.approval).toBeUndefined();
    expect(agent.messages.at(-1)).toEqual({ taskId: waiting.id, text: 'approved', data: dataParts ? [{ approved: true }] : [] });

    const read = await asCaller({}, () => client.getTask({ peer: target, taskId: waiting.id }));
    expect(read.task).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_COMPLETED, text: 'done: remove r-42', dialect });
  });

  it('cancels when rejected', async () => {
    const agent = await peerOf(start());
    const { client } = await startBridge();
    const target = peer(url(agent));
    const waiting = (await asCaller({}, () => client.sendMessage({ peer: target, text: 'remove r-7' }))).task!;
    const answered = await asCaller({}, () => client.sendMessage({ peer: target, text: '', taskId: waiting.id, approved: false }));
    expect(answered.task).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_CANCELED, text: 'rejected: nothing was done' });
    expect(agent.messages.at(-1)).toMatchObject({ text: 'rejected', data: dataParts ? [{ approved: false }] : [] });
  });

  it('fails NOT_FOUND for a task the peer does not have', async () => {
    const agent = await peerOf(start());
    const { client } = await startBridge();
    const failed = await failure(asCaller({}, () => client.getTask({ peer: peer(url(agent)), taskId: 'no-such-task' })));
    expect(failed.code).toBe(GrpcStatus.NOT_FOUND);
    expect(failed.message).toContain('sub-agent helper at');
    expect(failed.message).toContain('has no such task');
  });
});

describe('SendMessage details', () => {
  it('parses the approval from the status text when the peer sends no data part', async () => {
    const agent = await peerOf(startSdkAgent({ approvalData: false }));
    const { client } = await startBridge();
    const waiting = (await asCaller({}, () => client.sendMessage({ peer: peer(agent.baseUrl), text: 'remove r-9' }))).task!;
    expect(waiting.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(waiting.approval).toMatchObject({ toolName: '', description: approvalDescription('remove r-9'), chain: [] });
    expect(waiting.approval!.uuid).toMatch(UUID);
  });

  it('refuses requests that make no sense, before any HTTP call', async () => {
    const agent = await peerOf(startSdkAgent());
    const { client } = await startBridge();
    expect(await failure(client.sendMessage({ peer: undefined, text: 'hi' }))).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'SendMessage: peer: expected a peer {name, url, timeout_ms}',
    });
    expect(await failure(client.sendMessage({ peer: peer('ftp://example.org/a2a'), text: 'hi' }))).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'SendMessage: peer.url: expected an http(s) URL',
    });
    expect((await failure(client.sendMessage({ peer: peer(agent.baseUrl), text: ' ' }))).message).toMatch(
      /^SendMessage: text: expected the text of the message/,
    );
    expect(await failure(client.sendMessage({ peer: peer(agent.baseUrl), text: '', approved: true }))).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: 'SendMessage: task_id: expected the id of the task whose approval "approved" answers',
    });
    expect((await failure(client.getTask({ peer: peer(agent.baseUrl), taskId: '' }))).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(agent.requests).toEqual([]);
  });
});

describe('headers, hops and the depth limit', () => {
  it('forwards Authorization and X-Session-ID on every request, card included, and counts the hop', async () => {
    const agent = await peerOf(startSdkAgent());
    const { client } = await startBridge();
    await asCaller({ authorization: TOKEN, a2aHops: 2 }, () => client.sendMessage({ peer: peer(agent.baseUrl), text: 'remove r-1' }));
    expect(agent.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of agent.requests) {
      expect(request.headers).toMatchObject({ authorization: TOKEN, 'x-session-id': SESSION, 'x-a2a-hops': '3' });
    }
    expect(agent.rpcRequests()[0]!.headers['a2a-version']).toBe('1.0');
  });

  it('sends no Authorization when none came in, and hop 1 from a first agent', async () => {
    const typeParts = await peerOf(startTypePartsAgent());
    const { client } = await startBridge();
    await asCaller({}, () => client.sendMessage({ peer: peer(typeParts.endpoint), text: 'remove r-1' }));
    for (const request of typeParts.requests) {
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers).toMatchObject({ 'x-session-id': SESSION, 'x-a2a-hops': '1' });
    }
  });

  it('refuses past a2a_max_depth without any HTTP call', async () => {
    const agent = await peerOf(startSdkAgent());
    const { client, log } = await startBridge({ a2a_max_depth: 3 });
    const failed = await failure(
      asCaller({ a2aHops: 3 }, () => client.sendMessage({ peer: peer(agent.baseUrl, 'looper'), text: 'again' })),
    );
    expect(failed).toEqual({
      code: GrpcStatus.FAILED_PRECONDITION,
      message:
        'A2A call to looper refused: the chain of agents is 4 hops deep, past a2a_max_depth (3); agents may be calling each other in a cycle',
    });
    expect((await failure(asCaller({ a2aHops: 3 }, () => client.describeAgent({ peer: peer(agent.baseUrl, 'looper') })))).code).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
    expect(agent.requests).toEqual([]);
    expect(
      log.some((line) => line.startsWith('warn a2a call failed') && line.includes('looper') && line.includes('FAILED_PRECONDITION')),
    ).toBe(true);

    // At the limit itself the call goes out.
    await asCaller({ a2aHops: 2 }, () => client.sendMessage({ peer: peer(agent.baseUrl, 'looper'), text: 'once more' }));
    expect(agent.rpcRequests().at(-1)!.headers['x-a2a-hops']).toBe('3');
  });
});

describe('failures', () => {
  it('an unreachable peer: UNAVAILABLE "sub-agent unavailable"', async () => {
    const url = await unreachableUrl();
    const { client } = await startBridge();
    const failed = await failure(asCaller({ authorization: TOKEN }, () => client.sendMessage({ peer: peer(url, 'ghost'), text: 'hello' })));
    expect(failed.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(failed.message).toMatch(new RegExp(`^sub-agent unavailable: ghost at ${url.replace(/[.]/g, '\\.')}: .*ECONNREFUSED`));
  });

  it('a peer answering 503: UNAVAILABLE', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('overloaded');
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const { client } = await startBridge();
    const failed = await failure(
      asCaller({}, () => client.sendMessage({ peer: peer(`http://127.0.0.1:${port}/a2a`, 'busy'), text: 'hello' })),
    );
    expect(failed).toEqual({
      code: GrpcStatus.UNAVAILABLE,
      message: `sub-agent unavailable: busy at http://127.0.0.1:${port}/a2a: HTTP 503 Service Unavailable`,
    });
  });

  it('a hanging peer: DEADLINE_EXCEEDED within its timeout_ms', async () => {
    const hanging = await peerOf(startHangingAgent());
    const { client } = await startBridge();
    const failed = await failure(asCaller({}, () => client.sendMessage({ peer: peer(hanging.endpoint, 'sleeper', 400), text: 'hello' })));
    // The message says which deadline ended it: the peer's own timeout, not the caller's.
    expect(failed).toEqual({
      code: GrpcStatus.DEADLINE_EXCEEDED,
      message: `sub-agent sleeper at ${hanging.endpoint} did not answer within 400 ms (its timeout)`,
    });
    // The request did reach the peer: it was the answer that never came.
    expect(hanging.rpcRequests()).toHaveLength(1);
  });

  it("a caller with an earlier deadline than the peer's timeout: the request to the peer ends at the caller's deadline", async () => {
    const hanging = await peerOf(startHangingAgent());
    const { client } = await startBridge();
    const failed = await failure(
      asCaller({}, () => client.sendMessage({ peer: peer(hanging.endpoint, 'sleeper', 60_000), text: 'hello' }, { timeoutMs: 300 })),
    );
    // Ended by the caller's 300 ms, not the peer's 60 s (the test's own timeout would say otherwise).
    expect(failed.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    // The bridge does not keep waiting for the peer after its caller has gone.
    await expect.poll(() => hanging.rpcRequests()[0]?.closedAt, { timeout: 2000 }).toBeDefined();
  });

  it("a JSON-RPC error is INVALID_ARGUMENT with the peer's message, and the token shows nowhere", async () => {
    // A careless peer that echoes the caller's Authorization header back in its error.
    let baseUrl = '';
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'GET') return res.end(JSON.stringify({ name: 'echoer', url: `${baseUrl}/a2a`, protocolVersion: '0.3.0' }));
      req.resume();
      req.on('end', () =>
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            error: {
              code: -32602,
              message: `bad params for ${req.headers.authorization} (token ${String(req.headers.authorization).split(' ')[1]})`,
            },
          }),
        ),
      );
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The service's real logger, read from stdout: its lines carry the session id.
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    cleanups.push(() => spy.mockRestore());
    const { client } = await startBridge({}, createLogger('a2a-bridge'));
    const failed = await failure(
      asCaller({ authorization: TOKEN }, () => client.sendMessage({ peer: peer(baseUrl, 'echoer'), text: 'hello' })),
    );
    spy.mockRestore();
    expect(failed.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(failed.message).toBe(
      `sub-agent echoer at ${baseUrl} refused message/send: bad params for [redacted] (token [redacted]) (JSON-RPC -32602)`,
    );
    const secret = TOKEN.split(' ')[1]!;
    expect(written.join('')).not.toContain(secret);
    const warning = logLines(written.join('')).find((line) => line.msg === 'a2a call failed');
    expect(warning).toMatchObject({ session_id: SESSION, code: 'INVALID_ARGUMENT' });
  });
});

describe('interop with @dwmkerr/mock-llm (A2A v0.3, @a2a-js/sdk 0.3)', () => {
  let mock: MockLlm;
  beforeAll(async () => {
    mock = await startMockLlm();
  });
  afterAll(async () => {
    await mock?.stop();
  });

  it('describes its echo agent (a v0.3 card that claims 1.0, so probed) and gets its Message answer as a completed task', async () => {
    const { client } = await startBridge();
    const echo = peer(mock.agentUrl('echo-agent'), 'echo');
    const described = await asCaller({}, () => client.describeAgent({ peer: echo }));
    expect(described).toMatchObject({
      name: 'Echo Agent',
      dialect: Dialect.DIALECT_V0_3,
      endpointUrl: mock.agentUrl('echo-agent'),
      skills: [{ id: 'echo', name: 'Echo' }],
    });

    const sent = await asCaller({ authorization: TOKEN }, () => client.sendMessage({ peer: echo, text: 'Hello, world!' }));
    expect(sent.task).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, text: 'Hello, world!', dialect: Dialect.DIALECT_V0_3 });
    expect(sent.task!.approval).toBeUndefined();
  });
});

describe('peers that stream', () => {
  const methodsOf = (agent: A2aTestPeer) => agent.rpcRequests().map((request) => (request.body as { method: string }).method);

  it.each([
    ['1.0', 'SendStreamingMessage', Dialect.DIALECT_V1_0],
    ['0.3', 'message/stream', Dialect.DIALECT_V0_3],
  ] as const)(
    'A2A v%s: a card with capabilities.streaming gets its messages as %s, approval and answer alike',
    async (version, method, dialect) => {
      const agent = await peerOf(startSdkAgent({ versions: [version], streaming: true }));
      const { client } = await startBridge();
      const target = peer(agent.baseUrl);
      const waiting = (await asCaller({}, () => client.sendMessage({ peer: target, text: 'remove r-42' }))).task!;
      expect(waiting).toMatchObject({ state: TaskState.TASK_STATE_INPUT_REQUIRED, dialect });
      expect(waiting.approval).toMatchObject({
        toolName: APPROVAL_TOOL,
        toolArgsJson: JSON.stringify(APPROVAL_ARGS),
        description: approvalDescription('remove r-42'),
      });
      const answered = (
        await asCaller({}, () =>
          client.sendMessage({ peer: target, text: '', taskId: waiting.id, contextId: waiting.contextId, approved: true }),
        )
      ).task!;
      expect(answered).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_COMPLETED, text: 'done: remove r-42', dialect });
      expect(methodsOf(agent)).toEqual([method, method]);
    },
  );

  it('a peer whose card does not stream gets plain sends', async () => {
    const agent = await peerOf(startSdkAgent({ streaming: false }));
    const { client } = await startBridge();
    await asCaller({}, () => client.sendMessage({ peer: peer(agent.baseUrl), text: 'remove r-1' }));
    expect(methodsOf(agent)).toEqual(['SendMessage']);
  });

  it.each([
    ['1.0', 'SendStreamingMessage', 'SubscribeToTask'],
    ['0.3', 'message/stream', 'tasks/resubscribe'],
  ] as const)(
    'A2A v%s: a stream cut after its first event is resubscribed; the turn gets the final answer, and the peer acted once',
    async (version, send, resubscribe) => {
      const agent = await peerOf(startSdkAgent({ versions: [version], streaming: true, cutStreams: 2 }));
      const { client, log } = await startBridge();
      const target = peer(agent.baseUrl);
      const waiting = (await asCaller({}, () => client.sendMessage({ peer: target, text: 'remove r-42' }))).task!;
      expect(waiting).toMatchObject({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      expect(waiting.approval!.uuid).toMatch(UUID);

      const answered = (
        await asCaller({}, () =>
          client.sendMessage({ peer: target, text: '', taskId: waiting.id, contextId: waiting.contextId, approved: true }),
        )
      ).task!;
      expect(answered).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_COMPLETED, text: 'done: remove r-42' });
      // Each message reached the peer's logic once: nothing was sent again after the cuts.
      expect(agent.messages.map((message) => message.text)).toEqual(['remove r-42', 'approved']);
      const methods = methodsOf(agent);
      expect(methods.filter((method) => method === send)).toHaveLength(2);
      // The rest of the approved task came on the resubscribed stream, not from a read of the task.
      expect(methods.filter((method) => method === resubscribe).length).toBeGreaterThanOrEqual(1);
      expect(methods.filter((method) => method === 'GetTask' || method === 'tasks/get')).toEqual([]);
      expect(log.some((line) => line.includes('a2a stream broke; resubscribing'))).toBe(true);
    },
  );

  it('a peer that refuses to resubscribe is asked for the task until it settles', async () => {
    const agent = await peerOf(startSdkAgent({ versions: ['1.0'], streaming: true, cutStreams: 2, refuseResubscribe: true }));
    const { client } = await startBridge();
    const target = peer(agent.baseUrl);
    const waiting = (await asCaller({}, () => client.sendMessage({ peer: target, text: 'remove r-42' }))).task!;
    expect(waiting.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = (await asCaller({}, () => client.sendMessage({ peer: target, text: '', taskId: waiting.id, approved: true }))).task!;
    expect(answered).toMatchObject({ id: waiting.id, state: TaskState.TASK_STATE_COMPLETED, text: 'done: remove r-42' });
    expect(agent.messages.map((message) => message.text)).toEqual(['remove r-42', 'approved']);
    const methods = methodsOf(agent);
    expect(methods).toContain('SubscribeToTask');
    expect(methods).toContain('GetTask');
    expect(methods.filter((method) => method === 'SendStreamingMessage')).toHaveLength(2);
  });

  it('a stream that breaks before the peer named its task fails UNAVAILABLE and sends nothing again', async () => {
    // A "peer" whose card streams and whose stream endpoint drops every connection at once.
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/.well-known/agent-card.json')) {
        const { port } = server.address() as AddressInfo;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            name: 'dropper',
            supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
            capabilities: { streaming: true },
          }),
        );
        return;
      }
      if (req.url === '/.well-known/agent.json') {
        res.statusCode = 404;
        res.end();
        return;
      }
      posts += 1;
      req.socket.destroy();
    });
    let posts = 0;
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { client } = await startBridge();
    const { port } = server.address() as AddressInfo;
    const failed = await failure(asCaller({}, () => client.sendMessage({ peer: peer(`http://127.0.0.1:${port}`), text: 'remove r-1' })));
    expect(failed.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(posts).toBe(1);
  });
});
