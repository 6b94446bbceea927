import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { A2ABridgeServiceService, TaskState } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { runWithContext } from '../common/context.js';
import { createPromiseClient } from '../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { openEventStream } from '../common/sse.js';
import { startA2aBridge } from './index.js';

/**
 * The bridge reads a streaming peer's events as the event-stream format means them: `id:` is
 * remembered and sent back as `Last-Event-ID` when it resubscribes, `event: error` is an
 * error and never a result, and events of other types are not A2A's answers. The peer here
 * is a hand-made v0.3 server, written with the product's own SSE writer.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

interface Rpc {
  method: string;
  id: unknown;
  lastEventId?: string;
}

type Answer = (rpc: Rpc, res: ServerResponse) => void;

/** A v0.3 peer whose card streams; `answer` writes each JSON-RPC answer. */
async function startPeer(answer: Answer): Promise<{ url: string; rpcs: Rpc[] }> {
  const rpcs: Rpc[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const { port } = server.address() as AddressInfo;
    if (req.method === 'GET') {
      if (req.url !== '/.well-known/agent-card.json') return void res.writeHead(404).end();
      res.setHeader('content-type', 'application/json');
      return void res.end(
        JSON.stringify({
          name: 'resumer',
          url: `http://127.0.0.1:${port}/a2a`,
          protocolVersion: '0.3.0',
          capabilities: { streaming: true },
        }),
      );
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { method: string; id: unknown };
      const lastEventId = req.headers['last-event-id'];
      const rpc: Rpc = { method: parsed.method, id: parsed.id, ...(typeof lastEventId === 'string' && { lastEventId }) };
      rpcs.push(rpc);
      answer(rpc, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => void server.closeAllConnections());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, rpcs };
}

async function sendThroughBridge(url: string) {
  const service = await startA2aBridge({ config: configSlice(configSchema.parse({}), 'a2aBridge'), listen: '127.0.0.1:0', log: quiet });
  cleanups.push(() => service.stop());
  const client = createPromiseClient(A2ABridgeServiceService, service.address, 'test', 10_000);
  cleanups.push(() => client.close());
  return runWithContext({ sessionId: 'a1b2c3d4' }, () =>
    client.sendMessage({ peer: { name: 'resumer', url, timeoutMs: 0 }, text: 'remove r-1' }),
  );
}

const working = { kind: 'task', id: 't-1', contextId: 'c-1', status: { state: 'working' } };
const completed = {
  kind: 'status-update',
  taskId: 't-1',
  contextId: 'c-1',
  status: {
    state: 'completed',
    message: { kind: 'message', messageId: 'm-1', role: 'agent', parts: [{ kind: 'text', text: 'removed r-1' }] },
  },
  final: true,
};
const result = (rpc: Rpc, value: unknown) => ({ jsonrpc: '2.0', id: rpc.id, result: value });

describe('a streaming peer, read as an event stream', () => {
  it('is resubscribed with the last event id it sent, and events of other types are passed over', async () => {
    const peer = await startPeer((rpc, res) => {
      const stream = openEventStream(res);
      if (rpc.method === 'message/stream') {
        stream.send({ id: '7', data: result(rpc, working) });
        // Not an A2A answer: read as one, it would settle the task here and then.
        stream.send({ event: 'progress', data: result(rpc, { ...completed, status: { state: 'failed' } }) });
        // The connection drops once those are on their way: the task goes on at the peer.
        res.write(': cut\n\n', () => res.destroy());
        return;
      }
      stream.send({ id: '8', data: result(rpc, completed) });
      stream.end();
    });
    const answered = await sendThroughBridge(peer.url);
    expect(answered.task).toMatchObject({ id: 't-1', state: TaskState.TASK_STATE_COMPLETED, text: 'removed r-1' });
    expect(peer.rpcs).toEqual([
      { method: 'message/stream', id: expect.anything() },
      { method: 'tasks/resubscribe', id: expect.anything(), lastEventId: '7' },
    ]);
  });

  it('reads an error event as the peer refusing, never as a result', async () => {
    const peer = await startPeer((rpc, res) => {
      const stream = openEventStream(res);
      stream.send({ event: 'error', data: result(rpc, working) });
      stream.end();
    });
    const failed = await sendThroughBridge(peer.url).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(RpcError);
    expect(failed).toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('refused message/stream: an error event of the stream is no JSON-RPC error'),
    });
    expect(peer.rpcs.map((rpc) => rpc.method)).toEqual(['message/stream']);
  });

  it("reads an error event's JSON-RPC error as the peer's answer", async () => {
    const peer = await startPeer((rpc, res) => {
      const stream = openEventStream(res);
      stream.send({ event: 'error', data: { jsonrpc: '2.0', id: rpc.id, error: { code: -32602, message: 'no such resource' } } });
      stream.end();
    });
    await expect(sendThroughBridge(peer.url)).rejects.toMatchObject({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringContaining('refused message/stream: no such resource (JSON-RPC -32602)'),
    });
  });
});
