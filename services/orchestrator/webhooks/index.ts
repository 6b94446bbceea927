import { createHash } from 'node:crypto';
import { ConfigError } from '../../common/config/load.js';
import type { OrchestratorConfig } from '../../common/config/slices.js';
import type { Logger } from '../../common/log.js';
import { registerSecret } from '../../common/secrets.js';
import type { OrchestratorClients } from '../clients.js';
import {
  DEFAULT_DELIVERY,
  WebhookDeliverer,
  webhookTarget,
  type DeliveryOptions,
  type OutboxTarget,
  type WebhookEndpoint,
} from './deliverer.js';
import { webhookKey, WebhookSecretError } from './signing.js';

export type { DeliveryOptions } from './deliverer.js';

/** The cursor's name of a webhook in the store: sha256 of its url (the url itself may hold a token). */
export function endpointName(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

/**
 * The configured webhooks, each with its secret read from the environment. A secret that is
 * missing or malformed stops the start with a ConfigError naming the variable (never its
 * value); so does a url configured twice (both would share one cursor).
 */
export function webhookEndpoints(webhooks: OrchestratorConfig['webhooks'], env: NodeJS.ProcessEnv): WebhookEndpoint[] {
  const seen = new Map<string, number>();
  return webhooks.map((webhook, index) => {
    const where = `webhooks[${index}]`;
    const earlier = seen.get(webhook.url);
    if (earlier !== undefined)
      throw new ConfigError(
        `invalid configuration: ${where}.url is the url of webhooks[${earlier}] too; give each url once, with every event it should get`,
      );
    seen.set(webhook.url, index);
    let key: Buffer;
    try {
      key = webhookKey(webhook.secret_env, env[webhook.secret_env]);
    } catch (error) {
      if (error instanceof WebhookSecretError) throw new ConfigError(`invalid configuration: ${where}.secret_env: ${error.message}`);
      throw error;
    }
    // Never in a log line, an answer or stored data.
    registerSecret(env[webhook.secret_env]);
    return {
      where,
      url: webhook.url,
      origin: new URL(webhook.url).origin,
      name: endpointName(webhook.url),
      events: new Set(webhook.events),
      key,
    };
  });
}

export interface Webhooks {
  stop(): Promise<void>;
}

/** Starts one deliverer per configured webhook, and one per further outbox target (the A2A push notifications). */
export function startWebhooks(
  endpoints: readonly WebhookEndpoint[],
  others: readonly OutboxTarget[],
  clients: Pick<OrchestratorClients, 'store'>,
  holder: { owner: string; node: string },
  options: Partial<DeliveryOptions>,
  log: Logger,
): Webhooks {
  const settings = { ...DEFAULT_DELIVERY, ...options };
  const targets = [...endpoints.map(webhookTarget), ...others];
  const deliverers = targets.map((target) => new WebhookDeliverer(target, clients, holder, settings, log));
  for (const deliverer of deliverers) deliverer.start();
  return { stop: async () => void (await Promise.all(deliverers.map((deliverer) => deliverer.stop()))) };
}
