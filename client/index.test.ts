import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient } from './index.js';

/** A stand-in agent on 127.0.0.1: /health echoes the Authorization header; /ready never answers. */
let server: Server;
let baseUrl: string;
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.url === '/ready') {
      hanging.push(response);
      return;
    }
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ status: 'ok', authorization: request.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of hanging) response.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('createAgentClient', () => {
  it('sends the token as a bearer token, and none without one', async () => {
    const withToken = await createAgentClient({ baseUrl, token: 'client-test-token-7e21' }).GET('/health');
    expect(withToken.data).toMatchObject({ status: 'ok', authorization: 'Bearer client-test-token-7e21' });
    const without = await createAgentClient({ baseUrl }).GET('/health');
    expect(without.data).toMatchObject({ status: 'ok', authorization: null });
  });

  it('gives up on a request that outlasts its deadline', async () => {
    await expect(createAgentClient({ baseUrl, timeoutMs: 200 }).GET('/ready')).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
