/**
 * A webhook receiver for tests: an HTTP server on 127.0.0.1 that records every
 * delivery, verifies its Standard Webhooks signature with its own implementation of the
 * spec's verification (not the orchestrator's signing code) and with the spec's reference
 * library (standardwebhooks), and answers with the status the
 * test scripts per attempt.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** The spec's default tolerance for webhook-timestamp, in seconds. */
const TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {}

/**
 * Verifies one delivery as the spec says a receiver must: the three headers present, the
 * timestamp within the tolerance, and one of the space-separated `v1,<base64>` signatures
 * equal (constant time) to HMAC-SHA256 of `id.timestamp.body` under the decoded secret.
 * Returns the parsed body.
 */
export function verifyStandardWebhook(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): unknown {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook headers');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds');
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS)
    throw new WebhookVerificationError('webhook-timestamp outside the tolerance');
  if (!secret.startsWith('whsec_')) throw new WebhookVerificationError('the secret is not whsec_…');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const match = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new WebhookVerificationError('no matching signature');
  return JSON.parse(body);
}

interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed body when the signature verified; undefined when it did not. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** What the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `answer(delivery, attempt)`: the status for this attempt of this webhook-id (attempt 1, 2, …). */
export async function startWebhookReceiver(
  secret: string,
  answer: (id: string, attempt: number) => number = () => 200,
  path = '/hooks/asg',
): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const header = (name: string) => (Array.isArray(req.headers[name]) ? undefined : (req.headers[name] as string | undefined));
    const id = header('webhook-id') ?? '';
    let payload: Delivery['payload'];
    try {
      const headers = {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      };
      payload = verifyStandardWebhook(secret, headers, body) as Delivery['payload'];
      // And as the spec's reference library verifies it, which any receiver may use.
      new Webhook(secret).verify(body, headers as Record<string, string>);
    } catch {
      payload = undefined;
    }
    const attempt = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, attempt);
    const status = req.method === 'POST' && req.url === path ? (payload ? answer(id, attempt) : 401) : 404;
    deliveries.push({
      id,
      timestamp: header('webhook-timestamp') ?? '',
      signature: header('webhook-signature') ?? '',
      body,
      payload,
      status,
    });
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(status < 300 ? 'ok' : 'no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    deliveries,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
