/**
 * Stop and go across a restart and the documented start interface:
 * `npm start -- --config FILE` serves on the config's host and port with data
 * under data_dir.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { resourceNames } from '../support/resources-db.js';
import { logLines } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
});

afterAll(async () => {
  await model?.close();
});

describe('an approval survives a restart', () => {
  it('executes the stored call with its original arguments after the mesh restarts', async () => {
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
    let second: AgentProcess | undefined;
    try {
      const created = await post(`${first.url}/conversations`, { message: 'add resource persisted-one with value 5' });
      expect(created.status).toBe(201);
      const uuid = created.body.result.approval.uuid;
      const conversationId = created.body.conversation.id;
      expect(await first.stop()).toBe(0);

      // After the restart the model would ask for something else if it were asked again.
      model.setScript((request) =>
        request.toolResults.length > 0
          ? resourceAgentScript(request)
          : { toolCalls: [{ name: 'resources_add', args: { name: 'wrong', value: 0 } }] },
      );
      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: first.dir });
      const waiting = await get(`${second.url}/conversations/${conversationId}`);
      expect(waiting.body.conversation.status).toBe('waiting_approval');
      expect(waiting.body.conversation.pending_approval).toMatchObject({ uuid, tool_args: { name: 'persisted-one', value: 5 } });

      const go = await post(`${second.url}/approvals/${uuid}`, { approved: true });
      expect(go.status).toBe(200);
      expect(go.body.conversation.status).toBe('active');
      expect(resourceNames(join(first.dir, 'resources.db'))).toEqual(['persisted-one']);
      const result = go.body.conversation.messages.find((m: any) => m.role === 'tool');
      expect(result.tool_call).toMatchObject({ name: 'resources_add', arguments: { name: 'persisted-one', value: 5 }, is_error: false });
    } finally {
      model.setScript(resourceAgentScript);
      await first.stop();
      await second?.stop();
    }
  });
});

describe('start: npm start -- --config FILE', () => {
  it('serves on the configured host and port with data under data_dir, and stops on SIGTERM', async () => {
    const port = await freePort();
    const dir = tempDir();
    const dataDir = join(dir, 'custom-data');
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir, viaNpmStart: true, config: { port, data_dir: dataDir } });
    try {
      expect(agent.url).toBe(`http://127.0.0.1:${port}`);
      expect((await get(`http://127.0.0.1:${port}/health`)).body).toEqual({ status: 'ok' });
      expect((await post(`http://127.0.0.1:${port}/conversations`, {})).status).toBe(201);
      expect(existsSync(join(dataDir, 'conversations.db'))).toBe(true);
    } finally {
      await agent.stop();
    }
    expect(logLines(agent.output()).some((line) => line.msg === 'stopping')).toBe(true);
  });
});
