/** `asg dev`: a change of the configuration file restarts the agent on the same data; a broken one is refused and the agent keeps running. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ASG, defaultConfig, spawnProcess, tempDir, testEnvironment, type AsgProcess } from '../test/support/agent-process.js';
import { get, post } from '../test/support/http.js';
import { until } from '../test/support/until.js';
import { logLines, logLineWhere } from '../test/support/log-lines.js';
import { startScriptedModel, type ScriptedModelServer } from '../test/support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AsgProcess | undefined;

beforeAll(async () => {
  // The model says which prompt it was given: the configuration in effect.
  model = await startScriptedModel((request) => ({ text: `my prompt: ${request.system.split('\n')[0]}` }));
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

const urlOf = (line: string) => String(logLines(line)[0]!.url);

describe('asg dev', () => {
  it('restarts on a change of the configuration, keeping the conversation; a broken configuration leaves the last good one running', async () => {
    const dir = tempDir();
    const file = join(dir, 'agent.yaml');
    const config = (prompt: string) => stringify({ ...defaultConfig(dir), prompt });
    writeFileSync(file, config('You are version one.'));
    agent = spawnProcess(process.execPath, [ASG, 'dev', '--config', file], testEnvironment(model.geminiBaseUrl));
    const first = urlOf(
      await agent.waitForLine(
        logLineWhere((line) => line.msg === 'agent up'),
        60_000,
      ),
    );
    const started = await post(`${first}/conversations`, { message: 'who are you?' });
    expect(started.status).toBe(201);
    expect(started.body.result.response).toContain('my prompt: You are version one.');
    const id = started.body.conversation.id as string;

    writeFileSync(file, config('You are version two.'));
    const second = urlOf(
      await agent.waitForLine(
        logLineWhere((line) => line.msg === 'agent restarted'),
        60_000,
      ),
    );
    const kept = await get(`${second}/conversations/${id}`);
    expect(kept.status).toBe(200);
    expect(kept.body.conversation.messages.map((message: { content: string }) => message.content)).toEqual(
      expect.arrayContaining(['who are you?', 'my prompt: You are version one.']),
    );
    // The conversation goes on; a conversation keeps the prompt it began with, a new one gets the new prompt.
    const next = await post(`${second}/conversations/${id}/messages`, { message: 'and now?' });
    expect(next.status).toBe(200);
    expect(next.body.conversation.messages.length).toBeGreaterThan(kept.body.conversation.messages.length);
    const fresh = await post(`${second}/conversations`, { message: 'who are you?' });
    expect(fresh.body.result.response).toContain('my prompt: You are version two.');

    writeFileSync(file, config('You are version three.').replace('port: 0\n', 'port: eighty\n'));
    await agent.waitForLine(
      logLineWhere((line) => line.msg === 'the changed configuration has errors: the agent keeps running with the last good one'),
      60_000,
    );
    expect(agent.output()).toMatch(new RegExp(`${file}:\\d+:\\d+: port: expected number, got string`));
    const still = await post(`${second}/conversations`, { message: 'still there?' });
    expect(still.status).toBe(201);
    expect(still.body.result.response).toContain('my prompt: You are version two.');
    expect(logLines(agent.output()).filter((line) => line.msg === 'agent restarted')).toHaveLength(1);

    // A configuration that passes the check but does not start: the last good one is started again.
    writeFileSync(
      file,
      stringify({
        ...defaultConfig(dir),
        prompt: 'You are version four.',
        mcp_servers: [{ name: 'missing', command: process.execPath, args: [join(dir, 'no-such-server.mjs')], required: true }],
      }),
    );
    await agent.waitForLine(
      logLineWhere((line) => line.msg === 'the changed configuration did not start: starting the last good one again'),
      60_000,
    );
    const restarts = await until(
      'the last good configuration restarted',
      () => {
        const lines = logLines(agent!.output()).filter((line) => line.msg === 'agent restarted');
        return lines.length === 2 && lines;
      },
      60_000,
    );
    const third = String(restarts[1]!.url);
    const back = await post(`${third}/conversations`, { message: 'who are you?' });
    expect(back.body.result.response).toContain('my prompt: You are version two.');

    expect(await agent.stop()).toBe(0);
  });
});
