/**
 * Exactly-once approvals: many decisions on one UUID at the same moment,
 * one wins, the others get 409 with the first decision, and the tool runs once at most.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

async function pendingApproval(name: string): Promise<string> {
  const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value 9` });
  expect(created.body.result.waiting_approval).toBe(true);
  return created.body.result.approval.uuid;
}

describe('20 concurrent approvals of one UUID', () => {
  it('execute the tool exactly once', async () => {
    const uuid = await pendingApproval('once-only');
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(`${agent.url}/approvals/${uuid}`, { approved: true })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const conflict of responses.filter((r) => r.status === 409)) {
      expect(conflict.body.decision).toBe('approved');
      expect(conflict.body.error).toContain(uuid);
    }
    expect(resourceNames(join(agent.dir, 'resources.db')).filter((n) => n === 'once-only')).toHaveLength(1);
  });

  it('approve and reject racing: one decision wins and the loser sees it', async () => {
    const uuid = await pendingApproval('raced');
    const bodies = Array.from({ length: 20 }, (_, i) => ({ approved: i % 2 === 0 }));
    const responses = await Promise.all(bodies.map((body) => post(`${agent.url}/approvals/${uuid}`, body)));
    const winners = responses.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    const decision = winners[0]!.body.result.response.startsWith('Operation cancelled by user.') ? 'rejected' : 'approved';
    for (const loser of responses.filter((r) => r.status !== 200)) {
      expect(loser.status).toBe(409);
      expect(loser.body.decision).toBe(decision);
    }
    const created = resourceNames(join(agent.dir, 'resources.db')).filter((n) => n === 'raced');
    expect(created).toHaveLength(decision === 'approved' ? 1 : 0);
  });

  it('a later decision gets 409 with the earlier one', async () => {
    const uuid = await pendingApproval('decided-early');
    expect((await post(`${agent.url}/approvals/${uuid}`, { action: 'reject' })).status).toBe(200);
    const late = await post(`${agent.url}/approvals/${uuid}`, { action: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body.decision).toBe('rejected');
    expect(late.body.approval.uuid).toBe(uuid);
    expect(resourceNames(join(agent.dir, 'resources.db'))).not.toContain('decided-early');
  });
});
