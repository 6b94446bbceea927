/** The gateway's drain on SIGTERM/SIGINT, on a bare HTTP server. */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../services/common/config/schema.js';
import { until } from '../../test/support/until.js';
import { HttpDrain, REMOTE_DRAIN_DELAY_MS, RETRY_AFTER_SECONDS, serverDrainDelay } from './drain.js';

let server: Server | undefined;

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * A server whose `/slow?ms=N` answers after N ms, whose `/held` answers when the test calls
 * `release()`, and whose `/events` streams until the client leaves; `arrived` lists the paths
 * of the requests that reached the app.
 */
async function start(): Promise<{ drain: HttpDrain; url: string; server: Server; arrived: string[]; release(): void }> {
  const arrived: string[] = [];
  const held: (() => void)[] = [];
  const drain = new HttpDrain((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    arrived.push(url.pathname);
    if (url.pathname === '/held') {
      held.push(() => res.end('{}'));
      return;
    }
    if (url.pathname === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      const timer = setInterval(() => res.write(': keep-alive\n\n'), 10);
      res.once('close', () => clearInterval(timer));
      return;
    }
    const ms = Number(url.searchParams.get('ms') ?? 0);
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ waited: ms }));
    }, ms);
  });
  server = createServer(drain.listener);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    drain,
    server,
    arrived,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
  };
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One request on its own connection; rejects when the connection is cut. */
function send(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('aborted')));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HttpDrain', () => {
  it('lets requests in flight finish, answers new ones 503 with Retry-After, ends event streams at once, then closes', async () => {
    const { drain, url, server: http, arrived, release } = await start();
    const slow = send(`${url}/held`);
    const stream = send(`${url}/events`, { accept: 'text/event-stream' }).then(
      (answer) => `ended: ${answer.body.startsWith(': open')}`,
      (error: Error) => `cut: ${error.message}`,
    );
    await until('both requests in flight', () => arrived.includes('/held') && arrived.includes('/events'));
    const drained = drain.drain(http, Date.now() + 5_000);
    expect(drain.isDraining).toBe(true);

    const refused = await send(`${url}/slow`);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toEqual({ error: expect.stringContaining('stopping') });

    release();
    expect((await slow).status).toBe(200);
    expect(await stream).toMatch(/^(ended|cut)/);
    expect(await drained).toEqual({ finished: 1, streamsEnded: 1, cut: 0 });
    await expect(send(`${url}/slow`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('still passes the probe paths to the app while draining, untracked, and refuses the rest', async () => {
    const seen: string[] = [];
    let release = () => {};
    const drain = new HttpDrain(
      (req, res) => {
        seen.push(req.url ?? '');
        if (req.url === '/slow') {
          release = () => res.end('{}');
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ path: req.url }));
      },
      new Set(['/health', '/ready']),
    );
    server = createServer(drain.listener);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const slow = send(`${url}/slow`);
    await until('the request in flight', () => seen.includes('/slow'));
    const drained = drain.drain(server, Date.now() + 5_000);

    const health = await send(`${url}/health?verbose=1`);
    expect(health.status).toBe(200);
    expect(health.headers.connection).toBe('close');
    expect((await send(`${url}/ready`)).status).toBe(200);
    expect((await send(`${url}/other`)).status).toBe(503);
    release();
    expect((await slow).status).toBe(200);
    // The probes were answered by the app but are not counted as drained work.
    expect(await drained).toEqual({ finished: 1, streamsEnded: 0, cut: 0 });
    expect(seen).toEqual(['/slow', '/health?verbose=1', '/ready']);
  });

  it('cuts what is still running at the deadline', async () => {
    const { drain, url, server: http, arrived } = await start();
    // Never answered: the drain can only end by cutting it at the deadline.
    const long = send(`${url}/held`).then(
      () => 'answered',
      () => 'cut',
    );
    await until('the request in flight', () => arrived.includes('/held'));
    expect(await drain.drain(http, Date.now() + 200)).toEqual({ finished: 0, streamsEnded: 0, cut: 1 });
    expect(await long).toBe('cut');
  });

  it('with a drain delay, reports draining at once while new requests are still served (Connection: close), then refuses them', async () => {
    const { drain, url, server: http, release } = await start();
    expect(drain.isDraining).toBe(false);
    const drained = drain.drain(http, Date.now() + 5_000, 400);
    // Announced: what readiness reads turns at once, and the app still answers.
    expect(drain.isDraining).toBe(true);
    // A turn taken during the delay is in flight when it ends: new requests then get the 503, and it finishes.
    const inFlight = send(`${url}/held`);
    const during = await send(`${url}/slow?ms=1`);
    expect(during.status).toBe(200);
    expect(during.headers.connection).toBe('close');
    await until('new requests refused', async () => (await send(`${url}/slow?ms=1`)).status === 503);
    release();
    expect((await inFlight).status).toBe(200);
    // The held turn finished, nothing was cut. A poll of the wait above may also have been in
    // flight when the delay ended (on a busy machine it often is): it finished too, and counts.
    const outcome = await drained;
    expect(outcome).toMatchObject({ streamsEnded: 0, cut: 0 });
    expect(outcome.finished).toBeGreaterThanOrEqual(1);
  });
});

describe('server.drain_delay in effect', () => {
  const resolved = (raw: Record<string, unknown>) => serverDrainDelay(configSchema.parse(raw));

  it('defaults to a few seconds beyond loopback, where a balancer may still route to a stopping gateway', () => {
    expect(REMOTE_DRAIN_DELAY_MS).toBe(5_000);
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'agent.internal']) expect(resolved({ host }), host).toBe(REMOTE_DRAIN_DELAY_MS);
  });

  it('defaults to 0 on loopback, so that local starts and tests stop at once', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', ' LOCALHOST ']) expect(resolved({ host }), host).toBe(0);
    expect(resolved({})).toBe(0);
  });

  it('takes the configured value wherever the gateway listens, 0 included', () => {
    expect(resolved({ host: '0.0.0.0', server: { drain_delay: 0 } })).toBe(0);
    expect(resolved({ host: '0.0.0.0', server: { drain_delay: '2s' } })).toBe(2_000);
    expect(resolved({ host: '127.0.0.1', server: { drain_delay: '750ms' } })).toBe(750);
  });
});
