/**
 * An approval with a 2 s timeout and on_timeout: reject expires across a restart of the
 * mesh, and the model sees the rejection. The whole agent (`asg up`: every
 * service and the MCP child) is killed with SIGKILL as soon as the approval is asked for, and
 * started again on the same data: nothing in memory survives, so the expiry can only come from
 * the stored expires_at, found by the restarted orchestrator.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const EXPIRING = { approvals: { timeout: '2s', on_timeout: 'reject' } };
const REJECTION =
  'Not approved: no decision within 2s; the approval expired. The call was not executed. Do not retry it unless the user asks you to.';

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel();
});

afterAll(async () => {
  await model?.close();
});

describe('approval expiry across a restart of the mesh', () => {
  it('a 2 s approval left pending by a killed agent is expired by the restarted one; the model reads the rejection and nothing ran', async () => {
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: EXPIRING });
    let second: AgentProcess | undefined;
    try {
      const created = await post(`${first.url}/conversations`, { message: 'add expiring-1 with value 4' });
      expect(created.status).toBe(201);
      const approval = created.body.result.approval;
      expect(approval.on_timeout).toBe('reject');
      expect(Date.parse(approval.expires_at) - Date.parse(approval.created_at)).toBe(2_000);
      process.kill(-first.pid, 'SIGKILL');
      await first.exited;
      const killedAt = Date.now();

      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: first.dir, config: EXPIRING });
      const record = await until('the approval expired by the restarted agent', async () => {
        const answer = await get(`${second!.url}/approvals/${approval.uuid}`);
        return answer.body.status === 'expired' && answer.body;
      });
      expect(record).toMatchObject({ decided_by: 'timeout', via: 'timeout', reason: 'no decision within 2s; the approval expired' });
      // Decided after the kill: by the restarted mesh, not by the first before it died.
      expect(Date.parse(record.decided_at)).toBeGreaterThan(killedAt);
      const audited = (await get(`${second.url}/audit?kind=approval.expired`)).body.entries.filter(
        (entry: { subject: string }) => entry.subject === approval.uuid,
      );
      expect(audited).toMatchObject([{ actor: 'timeout', via: 'timeout' }]);

      const conversationId = created.body.conversation.id as string;
      const after = await until('the run to go on after the expiry', async () => {
        const conversation = (await get(`${second!.url}/conversations/${conversationId}`)).body.conversation;
        return (
          !conversation.turn_running &&
          conversation.status !== 'waiting_approval' &&
          conversation.messages.at(-1)?.role === 'assistant' &&
          conversation
        );
      });
      expect(after.messages.filter((message: { role: string }) => message.role === 'tool')).toMatchObject([
        { content: REJECTION, tool_call: { rejected: true } },
      ]);
      expect(model.requests.filter((request) => request.toolResults.some((result) => result.output === REJECTION))).toHaveLength(1);
      expect(resourceNames(join(first.dir, 'resources.db'))).not.toContain('expiring-1');
      // A late human decision finds it decided.
      expect((await post(`${second.url}/approvals/${approval.uuid}`, { approved: true })).status).toBe(409);
    } finally {
      await first.stop();
      await second?.stop();
    }
  }, 90_000);
});
