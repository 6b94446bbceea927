import { Agent, request } from 'node:http';

/**
 * A lean keep-alive GET for latency measurements: node:http with one pooled connection, so
 * that the client's own cost and allocations (fetch's streams and Response objects) add as
 * little as possible to what is measured.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export function leanGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
