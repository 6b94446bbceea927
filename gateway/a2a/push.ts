import { randomUUID } from 'node:crypto';
import { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushConfig } from '../../gen/ts/asg/store/v1/store.js';
import { pushUrlProblem } from '../../services/common/push-url.js';
import type { ConversationStoreClient } from '../app/backends.js';
import type { Dialect } from './dialect.js';
import { invalidParams, JsonRpcCode, JsonRpcError } from './jsonrpc.js';
import type { PushConfigInput } from './params.js';

/**
 * A2A push-notification configs: kept in the store with their task, delivered by
 * the orchestrator from the events outbox (services/orchestrator/webhooks/push.ts). Here: the
 * checks of a config a caller sets — an http(s) url that is not on a private network (SSRF,
 * services/common/push-url.ts), no credentials (they would have to be stored, and secrets are never stored;
 * the receiver checks the token instead) — and how each dialect writes a config.
 */

export type PushConfigStore = Pick<ConversationStoreClient, 'setPushConfig' | 'getPushConfig' | 'listPushConfigs' | 'deletePushConfig'>;

export interface PushSettings {
  store: PushConfigStore;
  /** `a2a_push.allow_private_networks`. */
  allowPrivateNetworks: boolean;
}

/** The config to store, or -32602 saying what is wrong with it. */
export async function checkedPushConfig(
  taskId: string,
  input: PushConfigInput,
  dialect: Dialect,
  allowPrivateNetworks: boolean,
): Promise<PushConfig> {
  if (input.authentication?.credentials !== undefined && input.authentication.credentials !== '') {
    throw invalidParams(
      'authentication.credentials: this agent does not store credentials for push notifications; give a token (sent back in X-A2A-Notification-Token) instead',
    );
  }
  const problem = await pushUrlProblem(input.url, allowPrivateNetworks);
  if (problem) throw invalidParams(`url: ${JSON.stringify(input.url.slice(0, 200))} cannot receive push notifications: ${problem}`);
  if (input.id !== undefined && input.id.length > 200) throw invalidParams('id: at most 200 characters');
  return {
    conversationId: taskId,
    id: input.id ?? randomUUID(),
    url: input.url,
    token: input.token ?? '',
    dialect: dialect === 'v1.0' ? 'v1.0' : 'v0.3',
    createdAt: undefined,
  };
}

export const pushConfigNotFound = (taskId: string, id: string) =>
  new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, `push-notification config ${id} of task ${taskId} not found`);

/** A config as each dialect writes it: v0.3 `{"taskId", "pushNotificationConfig": {…}}`, v1.0 TaskPushNotificationConfig. */
export function pushConfigJson(config: PushConfig, dialect: Dialect): unknown {
  if (dialect === 'v1.0') {
    return TaskPushNotificationConfig.toJSON({
      tenant: '',
      id: config.id,
      taskId: config.conversationId,
      url: config.url,
      token: config.token,
      authentication: undefined,
    });
  }
  return {
    taskId: config.conversationId,
    pushNotificationConfig: { id: config.id, url: config.url, ...(config.token !== '' && { token: config.token }) },
  };
}
