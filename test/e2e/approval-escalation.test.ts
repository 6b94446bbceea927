/**
 * Escalation of a pending approval, durable like expiry: the rule asks for one person of the
 * approve role and escalates to admin after 2 s. The agent is killed while the approval waits;
 * the restarted one finds it due (a stored escalates_at), escalates it once — audited once, told
 * once as an `approval.escalated` webhook — and from then on an admin's vote counts, where
 * before it was refused (403).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { tokenAuth } from '../support/token-auth.js';
import { until } from '../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const TOKENS = { rita: 'rita-token-0123456789abcdef00', carol: 'carol-token-0123456789abcdef0' };
const auth = tokenAuth({
  rita: { token: TOKENS.rita, roles: ['chat'] },
  carol: { token: TOKENS.carol, roles: ['admin'] },
});
const as = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });
const SECRET = `whsec_${Buffer.from('an escalation secret of 32 bytes').toString('base64')}`;

let model: ScriptedModelServer;
let receiver: WebhookReceiver;
let config: Record<string, unknown>;

beforeAll(async () => {
  model = await startScriptedModel();
  receiver = await startWebhookReceiver(SECRET);
  config = {
    ...auth.config,
    runs: { takeover_interval: '200ms' },
    approvals: {
      policies: [
        {
          name: 'adds-escalate',
          tools: ['resources_add'],
          require: { approvals: 1, role: 'approve' },
          escalate: { after: '2s', to_role: 'admin' },
        },
      ],
    },
    webhooks: [{ url: receiver.url, secret_env: 'ASG_WEBHOOK_SECRET', events: ['approval.escalated'] }],
  };
});

afterAll(async () => {
  await receiver?.close();
  await model?.close();
});

describe('escalation across a restart of the mesh', () => {
  it('is done once by the restarted agent, audited once, and an admin may then decide', async () => {
    const env = { ...auth.env, ASG_WEBHOOK_SECRET: SECRET };
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env, config });
    let second: AgentProcess | undefined;
    try {
      const created = await post(`${first.url}/conversations`, { message: 'add escalated-1 with value 4' }, as('rita'));
      expect(created.status).toBe(201);
      const uuid = created.body.result.approval.uuid as string;
      const waiting = (await get(`${first.url}/approvals/${uuid}`, as('carol'))).body;
      expect(Date.parse(waiting.escalates_at) - Date.parse(waiting.requested_at)).toBe(2_000);
      expect(waiting.escalated_at).toBeUndefined();
      // Before the escalation an admin is not of the quorum's role.
      expect((await post(`${first.url}/approvals/${uuid}`, { approved: true }, as('carol'))).status).toBe(403);
      process.kill(-first.pid, 'SIGKILL');
      await first.exited;
      const killedAt = Date.now();

      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env, dir: first.dir, config });
      const escalated = await until('the approval escalated by the restarted agent', async () => {
        const record = (await get(`${second!.url}/approvals/${uuid}`, as('carol'))).body;
        return record.escalated_at !== undefined && record;
      });
      expect(escalated).toMatchObject({ status: 'pending', escalated_to: 'admin' });
      expect(Date.parse(escalated.escalated_at)).toBeGreaterThan(killedAt);
      const hook = await until('the approval.escalated webhook', () =>
        receiver.deliveries.find((delivery) => delivery.payload?.type === 'approval.escalated' && delivery.payload.data.uuid === uuid),
      );
      expect(hook.payload!.data).toMatchObject({ escalated_to: 'admin', status: 'pending' });

      const decided = await post(`${second.url}/approvals/${uuid}`, { approved: true }, as('carol'));
      expect(decided.status).toBe(200);
      expect(resourceNames(join(first.dir, 'resources.db')).filter((name) => name === 'escalated-1')).toHaveLength(1);
      // Once, whatever the polls since: one audit entry, one webhook.
      const audited = (await get(`${second.url}/audit?kind=approval.escalated`, as('carol'))).body.entries;
      expect(audited.filter((entry: { subject: string }) => entry.subject === uuid)).toHaveLength(1);
      const hooks = receiver.deliveries.filter(
        (delivery) => delivery.payload?.type === 'approval.escalated' && delivery.payload.data.uuid === uuid,
      );
      expect(new Set(hooks.map((delivery) => delivery.id))).toHaveProperty('size', 1);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});
