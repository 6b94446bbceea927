/**
 * A conversation whose approved call is running cannot be deleted: `bin/asg up` with a stdio MCP server whose tool
 * answers only when the test lets it, every call of it approved first. While the approved call runs, DELETE answers 409
 * and removes nothing; once the call has its outcome, DELETE answers 204.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const HELD = fileURLToPath(new URL('../fixtures/held-mcp-server.mjs', import.meta.url));

let model: ScriptedModelServer;
let agent: AgentProcess;
let callFile: string;
let releaseFile: string;

beforeAll(async () => {
  // One call of held_echo with the message's text, then an answer that quotes what the tool said.
  model = await startScriptedModel((request) =>
    request.toolResults.length > 0
      ? { text: `done: ${request.toolResults[0]!.output}` }
      : { toolCalls: [{ name: 'held_echo', args: { text: request.lastUserText } }] },
  );
  const dir = tempDir();
  callFile = join(dir, 'call');
  releaseFile = join(dir, 'release');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    dir,
    config: {
      mcp_servers: [
        {
          name: 'held',
          command: process.execPath,
          args: [HELD],
          env: { CALL_FILE: callFile, RELEASE_FILE: releaseFile },
          approval: { '*': 'always' },
        },
      ],
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('DELETE while an approved call runs', () => {
  it('answers 409 until the call has an outcome, then deletes', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'hello' });
    expect(created.body.result.waiting_approval).toBe(true);
    const id = created.body.conversation.id as string;
    const decided = post(`${agent.url}/approvals/${created.body.result.approval.uuid}`, { approved: true });
    await until('the approved call at the MCP server', () => existsSync(callFile));

    const refused = await request(`${agent.url}/conversations/${id}`, 'DELETE');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('has no outcome yet');
    expect((await get(`${agent.url}/conversations/${id}`)).status).toBe(200);

    writeFileSync(releaseFile, '');
    expect((await decided).status).toBe(200);
    expect((await request(`${agent.url}/conversations/${id}`, 'DELETE')).status).toBe(204);
    expect((await get(`${agent.url}/conversations/${id}`)).status).toBe(404);
  });
});
