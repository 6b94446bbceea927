import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/config/load.js';
import { redactSecrets } from '../../common/secrets.js';
import { verifyStandardWebhook, WebhookVerificationError } from '../../../test/support/webhook-receiver.js';
import { endpointName, webhookEndpoints } from './index.js';
import { webhookHeaders, webhookKey, webhookSignature } from './signing.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('Standard Webhooks signatures', () => {
  it("matches the spec's reference test vector", () => {
    // The example of the Standard Webhooks reference libraries: this secret, id, timestamp and body give this signature.
    expect(webhookSignature(webhookKey('S', SECRET), 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('a receiver verifying as the spec says accepts the headers, and refuses a changed body, id or timestamp', () => {
    const body = JSON.stringify({ type: 'approval.requested', timestamp: '2026-01-01T00:00:00.000Z', data: { uuid: 'u' } });
    const now = 1_800_000_000;
    const headers = webhookHeaders(webhookKey('S', SECRET), 'msg_1', now, body);
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(verifyStandardWebhook(SECRET, headers, body, now)).toMatchObject({ type: 'approval.requested' });
    expect(() => verifyStandardWebhook(SECRET, headers, body.replace('"u"', '"v"'), now)).toThrow(WebhookVerificationError);
    expect(() => verifyStandardWebhook(SECRET, { ...headers, 'webhook-id': 'msg_2' }, body, now)).toThrow(WebhookVerificationError);
    expect(() => verifyStandardWebhook(SECRET, { ...headers, 'webhook-timestamp': String(now + 1) }, body, now)).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifyStandardWebhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, headers, body, now)).toThrow(
      WebhookVerificationError,
    );
  });

  it('a missing or malformed secret names the variable, never the value', () => {
    const bad = ['', 'not-a-whsec-secret-value', 'whsec_***notbase64***', `whsec_${Buffer.alloc(8, 1).toString('base64')}`];
    expect(() => webhookKey('HOOK_SECRET', undefined)).toThrow("the environment variable HOOK_SECRET (a webhook's secret_env) is not set");
    for (const value of bad) {
      let message = '';
      try {
        webhookKey('HOOK_SECRET', value);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('HOOK_SECRET');
      if (value) expect(message).not.toContain(value);
    }
  });

  it('webhookEndpoints: a ConfigError at start for a secret that is missing, or a url given twice; the secret is redacted from then on', () => {
    const hook = { url: 'https://hooks.example.test/asg?token=abc', secret_env: 'HOOK_SECRET', events: ['approval.requested' as const] };
    expect(() => webhookEndpoints([hook], {})).toThrow(ConfigError);
    expect(() => webhookEndpoints([hook], {})).toThrow('webhooks[0].secret_env: the environment variable HOOK_SECRET');
    expect(() => webhookEndpoints([hook, hook], { HOOK_SECRET: SECRET })).toThrow('webhooks[1].url is the url of webhooks[0] too');
    const [endpoint] = webhookEndpoints([hook], { HOOK_SECRET: SECRET });
    expect(endpoint).toMatchObject({
      where: 'webhooks[0]',
      origin: 'https://hooks.example.test',
      name: endpointName(hook.url),
      events: new Set(['approval.requested']),
    });
    expect(endpoint!.name).toMatch(/^[0-9a-f]{64}$/);
    expect(redactSecrets(`secret ${SECRET} here`)).toBe('secret [redacted] here');
  });
});
