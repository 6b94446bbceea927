import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): the
 * payload signed is `${webhook-id}.${webhook-timestamp}.${body}`, with HMAC-SHA256 keyed by
 * the secret's decoded bytes, sent as `v1,<base64>` in `webhook-signature`. Secrets come in
 * the spec's `whsec_<base64>` form; the key is the part after the prefix, base64-decoded.
 */

const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** The spec asks for secrets of 24 to 64 bytes; fewer than 16 is refused as too weak to sign with. */
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 128;

export class WebhookSecretError extends Error {}

/**
 * The HMAC key of a `whsec_…` secret read from the environment variable `variable`. A missing
 * or malformed secret fails with a message naming the variable, never its value.
 */
export function webhookKey(variable: string, value: string | undefined): Buffer {
  if (value === undefined || value.trim() === '')
    throw new WebhookSecretError(`the environment variable ${variable} (a webhook's secret_env) is not set`);
  const text = value.trim();
  if (!text.startsWith(PREFIX))
    throw new WebhookSecretError(`the environment variable ${variable} does not hold a webhook secret of the form whsec_<base64>`);
  const encoded = text.slice(PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded))
    throw new WebhookSecretError(`the environment variable ${variable} holds a webhook secret whose part after whsec_ is not base64`);
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new WebhookSecretError(
      `the environment variable ${variable} holds a webhook secret of ${key.length} bytes; ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} are needed`,
    );
  }
  return key;
}

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>`. */
export function webhookSignature(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one delivery attempt, signed at `timestampSeconds` (each attempt signs anew). */
export function webhookHeaders(key: Buffer, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(key, id, timestampSeconds, body),
  };
}
