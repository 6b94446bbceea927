/** grpc.health.v1 on a server, over real gRPC on loopback. */
import { afterEach, describe, expect, it } from 'vitest';
import { ToolBrokerServiceService } from '../../../gen/ts/asg/tools/v1/tools.js';
import { createLogger } from '../log.js';
import { createPromiseClient, type PromiseClient } from './client.js';
import { GrpcStatus } from './errors.js';
import { HEALTH_DEFINITION, LIVENESS_SERVICE, serviceNameOf, ServingHealth, type HealthCheckResponse } from './health.js';
import { createServer, implement, listen, shutdown, type Server } from './server.js';

const log = createLogger('health-test');
const BROKER = 'asg.tools.v1.ToolBrokerService';

let server: Server | undefined;
let client: PromiseClient<typeof HEALTH_DEFINITION> | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  if (server) await shutdown(server, Date.now() + 1000);
  server = undefined;
});

async function start(): Promise<{ health: ServingHealth; address: string }> {
  server = createServer();
  const health = new ServingHealth(server, [ToolBrokerServiceService]);
  server.addService(
    ToolBrokerServiceService,
    implement(
      ToolBrokerServiceService,
      'broker',
      { listTools: async () => ({ tools: [], servers: [] }), callTool: async () => ({ text: '', isError: false, server: 's' }) },
      log,
    ),
  );
  const address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
  client = createPromiseClient(HEALTH_DEFINITION, address, 'probe', 2000);
  return { health, address };
}

/** The statuses a Watch reports until `until` is seen, and how the stream ended. */
async function watchUntil(watch: AsyncIterable<HealthCheckResponse>, until: string, seen: string[]): Promise<unknown> {
  try {
    for await (const { status } of watch) {
      seen.push(status);
      if (status === until) return undefined;
    }
    return 'ended';
  } catch (error) {
    return error;
  }
}

async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('ServingHealth', () => {
  it('names a service by the full name of its definition', () => {
    expect(serviceNameOf(ToolBrokerServiceService)).toBe(BROKER);
  });

  it('answers Check NOT_SERVING until ready, then SERVING, for the server ("") and the service; NOT_FOUND for others', async () => {
    const { health } = await start();
    expect(health.serviceNames).toEqual(['', BROKER]);
    expect(await client!.Check({ service: '' })).toEqual({ status: 'NOT_SERVING' });
    health.markServing();
    expect(await client!.Check({ service: '' })).toEqual({ status: 'SERVING' });
    expect(await client!.Check({ service: BROKER })).toEqual({ status: 'SERVING' });
    await expect(client!.Check({ service: 'asg.nothing.v1.Nothing' })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
  });

  it('tells a Watch of every change: SERVING, then NOT_SERVING when a stop begins, then ends it UNAVAILABLE', async () => {
    const { health } = await start();
    const seen: string[] = [];
    const watching = watchUntil(client!.Watch({ service: BROKER }, { timeoutMs: 10_000 }), 'never', seen);
    await eventually(() => seen.length === 1, 'the first status');
    health.markServing();
    await eventually(() => seen.length === 2, 'SERVING');
    const stopping = health.beginStop(Date.now() + 5000, 0);
    expect(await watching).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    await stopping;
    expect(seen).toEqual(['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
  });

  it('follows a service that is ready, then not (its dependency went away), then ready again, alive all along, and stays NOT_SERVING once a stop began', async () => {
    const { health } = await start();
    const seen: string[] = [];
    const watching = watchUntil(client!.Watch({ service: BROKER }, { timeoutMs: 10_000 }), 'never', seen);
    await eventually(() => seen.length === 1, 'the first status');
    health.markServing();
    health.markNotServing();
    health.markServing();
    await eventually(() => seen.length === 4, 'three changes');
    // Alive all along: liveness probes never restart a process that only waits for a dependency.
    expect(await client!.Check({ service: LIVENESS_SERVICE })).toEqual({ status: 'SERVING' });
    expect(await health.handlers.Check({ service: LIVENESS_SERVICE }, undefined as never)).toEqual({ status: 'SERVING' });
    const stopping = health.beginStop(Date.now() + 5000, 0);
    // The dependency coming back during the stop does not make it ready again.
    health.markServing();
    expect(await client!.Check({ service: BROKER })).toEqual({ status: 'NOT_SERVING' });
    expect(await watching).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    await stopping;
    expect(seen).toEqual(['NOT_SERVING', 'SERVING', 'NOT_SERVING', 'SERVING', 'NOT_SERVING']);
  });

  it('keeps serving NOT_SERVING for the drain delay before the stop goes on, and lets the server shut down at once after', async () => {
    const { health } = await start();
    health.markServing();
    const seen: string[] = [];
    const watching = watchUntil(client!.Watch({ service: '' }, { timeoutMs: 10_000 }), 'never', seen);
    await eventually(() => seen.length === 1, 'the first status');
    let delayOver = false;
    const stopping = health.beginStop(Date.now() + 5000, 1500).then(() => (delayOver = true));
    // During the delay the server still answers: a probe sees NOT_SERVING.
    expect(await client!.Check({ service: '' })).toEqual({ status: 'NOT_SERVING' });
    expect(await client!.Check({ service: BROKER })).toEqual({ status: 'NOT_SERVING' });
    expect(delayOver).toBe(false);
    await stopping;
    expect(await watching).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    // No Watch holds the graceful shutdown (which would otherwise wait for it forever).
    await new Promise<void>((resolve, reject) => server!.tryShutdown((error) => (error ? reject(error) : resolve())));
    server = undefined;
  });
});
