/**
 * The deadline is the deadline: a human decision that arrives after an approval's expires_at is
 * refused by the store's claim itself, even when no expiry loop has looked at the approval yet
 * (here it looks once a minute). The human gets 409 with the expired record; the expiry's own
 * decision (on_timeout: reject) is what stands and what the model reads, and nothing ran.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const EXPIRED_RESULT =
  'Not approved: no decision within 1s; the approval expired. The call was not executed. Do not retry it unless the user asks you to.';

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  // The expiry loop polls at start, then only after a minute: any expiry in this test is the claim's.
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { approvals: { timeout: '1s', on_timeout: 'reject' }, runs: { takeover_interval: '60s' } },
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('a decision after expires_at', () => {
  for (const body of [{ approved: true }, { approved: false, reason: 'no' }]) {
    it(`${body.approved ? 'an approval' : 'a rejection'} is refused with 409 and the expired record, before any expiry loop ran; nothing runs`, async () => {
      const name = `late-${body.approved ? 'yes' : 'no'}`;
      const created = await post(`${agent.url}/conversations`, { message: `add ${name} with value 1` });
      expect(created.status).toBe(201);
      const approval = created.body.result.approval as { uuid: string; expires_at: string };
      const expiresAt = Date.parse(approval.expires_at);
      await until('the approval past its expires_at', () => Date.now() > expiresAt + 100);
      // Still pending as stored: nothing but the claim below has decided it.
      expect((await get(`${agent.url}/approvals/${approval.uuid}`)).body.status).toBe('pending');

      const late = await post(`${agent.url}/approvals/${approval.uuid}`, body);
      expect(late.status).toBe(409);
      expect(late.body).toMatchObject({ decision: 'expired', approval: { uuid: approval.uuid, decided_by: 'timeout', via: 'timeout' } });
      expect(late.body.error).toMatch(new RegExp(`^approval ${approval.uuid} had expired at `));

      const record = (await get(`${agent.url}/approvals/${approval.uuid}`)).body;
      expect(record).toMatchObject({ status: 'expired', decided_by: 'timeout', via: 'timeout' });
      expect(Date.parse(record.decided_at)).toBeGreaterThanOrEqual(expiresAt);
      // The audit has the expiry alone: the late human decided nothing.
      const audited = (await get(`${agent.url}/audit`)).body.entries.filter(
        (entry: { subject: string }) => entry.subject === approval.uuid,
      );
      expect(audited).toMatchObject([{ kind: 'approval.expired', actor: 'timeout' }]);
      const conversation = (await get(`${agent.url}/conversations/${created.body.conversation.id}`)).body.conversation;
      expect(conversation.turn_running).toBeUndefined();
      expect(conversation.messages.filter((message: { role: string }) => message.role === 'tool')).toMatchObject([
        { content: EXPIRED_RESULT },
      ]);
      expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain(name);
    });
  }
});
