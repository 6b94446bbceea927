import type * as pb from '../../../gen/ts/asg/store/v1/store.js';
import { failedPrecondition } from '../../common/grpc/errors.js';
import { storedId } from '../ids.js';
import { isoTimestamp } from '../records.js';
import { type PushConfigRow, pushConfigOfRow } from '../rows.js';
import { MAX_PUSH_CONFIGS } from '../storage.js';
import { requireConversation } from './lookups.js';
import type { SqlStatements } from './port.js';

/** One statement: of processes claiming at once, one holds the cursor. */
export async function claimWebhookCursor(
  tx: SqlStatements,
  endpoint: string,
  lease: pb.RunLease,
  nowMs: number,
): Promise<pb.ClaimWebhookCursorResponse> {
  const args = { endpoint, owner: lease.owner, node: lease.node, ttl_ms: lease.ttlMs, now_ms: nowMs };
  const [claimed] = await tx.all<{ last_event_id: number }>('claimWebhookCursor', args);
  if (claimed) return { held: true, lastEventId: claimed.last_event_id };
  const [held] = await tx.all<{ last_event_id: number }>('selectWebhookCursor', { endpoint });
  return { held: false, lastEventId: held?.last_event_id ?? 0 };
}

export async function advanceWebhookCursor(tx: SqlStatements, request: pb.AdvanceWebhookCursorRequest, nowMs: number): Promise<boolean> {
  const { endpoint, owner, lastEventId, ttlMs } = request;
  return (await tx.run('advanceWebhookCursor', { endpoint, owner, last_event_id: lastEventId, ttl_ms: ttlMs, now_ms: nowMs })) > 0;
}

export async function setPushConfig(tx: SqlStatements, config: pb.PushConfig, nowMs: number): Promise<pb.PushConfig> {
  const conversation = await requireConversation(tx, config.conversationId);
  const [existing] = await tx.all<PushConfigRow>('selectPushConfig', { conversation_id: conversation.id, id: config.id });
  if (!existing) {
    const [count] = await tx.all<{ n: number | string }>('countPushConfigs', { conversation_id: conversation.id });
    if (Number(count?.n ?? 0) >= MAX_PUSH_CONFIGS)
      throw failedPrecondition(`task ${conversation.id} has ${MAX_PUSH_CONFIGS} push-notification configs already; delete one first`);
  }
  const row: PushConfigRow = {
    conversation_id: conversation.id,
    id: config.id,
    url: config.url,
    token: config.token,
    dialect: config.dialect,
    // A replaced config keeps its creation.
    created_at: existing?.created_at ?? isoTimestamp(nowMs),
  };
  await tx.run('upsertPushConfig', { ...row });
  return pushConfigOfRow(row);
}

export async function getPushConfig(tx: SqlStatements, conversationId: string, id: string): Promise<pb.PushConfig | undefined> {
  const stored = storedId(conversationId);
  if (stored === undefined) return undefined;
  const [row] = await tx.all<PushConfigRow>('selectPushConfig', { conversation_id: stored, id });
  return row && pushConfigOfRow(row);
}

export async function listPushConfigs(tx: SqlStatements, conversationId: string): Promise<pb.PushConfig[]> {
  const stored = storedId(conversationId);
  if (stored === undefined) return [];
  return (await tx.all<PushConfigRow>('selectPushConfigs', { conversation_id: stored })).map(pushConfigOfRow);
}

export async function deletePushConfig(tx: SqlStatements, conversationId: string, id: string): Promise<boolean> {
  const stored = storedId(conversationId);
  if (stored === undefined) return false;
  return (await tx.run('deletePushConfig', { conversation_id: stored, id })) > 0;
}
