/**
 * The shipped agents as a newcomer runs them, from the root of a fresh clone: each keeps its
 * conversations to itself, and a shipped configuration copied to another folder is refused
 * with the reason rather than started without its tools. Real processes: bin/asg from dist.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASG, REPO_ROOT, spawnProcess, tempDir, testEnvironment, type AsgProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { logLines, logLineWhere } from '../support/log-lines.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { freshClone } from '../support/shipped-configs.js';

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel();
});

afterAll(async () => {
  await model?.close();
});

/** `asg up --config <file> --port 0` in `cwd`, once it serves; its URL. */
async function up(file: string, cwd: string): Promise<{ agent: AsgProcess; url: string }> {
  const agent = spawnProcess(process.execPath, [ASG, 'up', '--config', file, '--port', '0'], testEnvironment(model.geminiBaseUrl), cwd);
  try {
    const line = await agent.waitForLine(
      logLineWhere((candidate) => candidate.msg === 'agent up'),
      60_000,
    );
    return { agent, url: String(logLines(line)[0]!.url) };
  } catch (error) {
    await agent.stop();
    throw error;
  }
}

describe('two shipped agents started from the same folder', () => {
  const started: AsgProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((agent) => agent.stop()));
  });

  it('never see each other’s conversations', async () => {
    const clone = freshClone();
    const single = await up('config/agent.yaml', clone);
    started.push(single.agent);
    const tree = await up('config/sequential.yaml', clone);
    started.push(tree.agent);
    const inSingle = await post(`${single.url}/conversations`, { message: 'list all resources' });
    const inTree = await post(`${tree.url}/conversations`, { message: 'list all resources' });
    expect(inSingle.status, JSON.stringify(inSingle.body)).toBe(201);
    expect(inTree.status, JSON.stringify(inTree.body)).toBe(201);
    const ids = async (url: string) =>
      ((await get<{ conversations: { id: string }[] }>(`${url}/conversations`)).body.conversations ?? []).map((c) => c.id);
    expect(await ids(single.url)).toEqual([inSingle.body.conversation.id]);
    expect(await ids(tree.url)).toEqual([inTree.body.conversation.id]);
    expect((await get(`${single.url}/conversations/${inTree.body.conversation.id}`)).status).toBe(404);
    expect((await get(`${tree.url}/conversations/${inSingle.body.conversation.id}`)).status).toBe(404);
  }, 180_000);
});

describe('a shipped configuration copied to an empty folder', () => {
  const folder = tempDir('asg-copied-');
  const file = join(folder, 'agent.yaml');
  copyFileSync(join(REPO_ROOT, 'config', 'agent.yaml'), file);
  const reason = /mcp_servers\[0\]\.args\[0\]: "bin\/asg" does not exist in .*relative paths are taken from the folder the agent starts in/;

  it('is refused by asg config check, which says why', () => {
    const run = spawnSync(process.execPath, [ASG, 'config', 'check', 'agent.yaml'], {
      cwd: folder,
      env: testEnvironment(model.geminiBaseUrl),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(reason);
  });

  it('is refused by asg up, in the same words, before anything starts', async () => {
    const agent = spawnProcess(
      process.execPath,
      [ASG, 'up', '--config', 'agent.yaml', '--port', '0'],
      testEnvironment(model.geminiBaseUrl),
      folder,
    );
    expect(await agent.exited).toBe(1);
    expect(agent.output()).toMatch(reason);
    expect(agent.output()).not.toContain('agent up');
  }, 60_000);
});
