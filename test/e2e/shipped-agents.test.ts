/**
 * The shipped agents as a newcomer runs them, from the root of a fresh clone: each keeps its
 * conversations to itself, and a shipped configuration copied to another folder is refused
 * with the reason rather than started without its tools — any of config/'s or the examples',
 * copied alone, works there or is refused by `asg config check` saying which path it misses.
 * Real processes: bin/asg from dist.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
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

/** Every configuration a newcomer may copy: config/'s and the examples' (a table of policy cases is not one). */
const COPYABLE = [
  ...readdirSync(join(REPO_ROOT, 'config'))
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => `config/${file}`),
  ...readdirSync(join(REPO_ROOT, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) =>
      readdirSync(join(REPO_ROOT, 'examples', entry.name))
        .filter((file) => file.endsWith('.yaml') && file !== 'cases.yaml')
        .map((file) => `examples/${entry.name}/${file}`),
    ),
].sort();

describe('any shipped configuration copied alone to an empty folder', () => {
  it('covers config/ and every example', () => {
    expect(COPYABLE).toEqual(expect.arrayContaining(['config/agent.yaml', 'config/filesystem.yaml', 'examples/file-write/agent.yaml']));
    expect(COPYABLE.length).toBeGreaterThanOrEqual(10);
  });

  // Either it still works there (it starts no MCP server by a path relative to the folder), or
  // asg config check refuses it and says which path is missing where: never "valid" with a
  // server, or a folder to serve, that cannot be found.
  it.each(COPYABLE)('%s: works there, or is refused with the reason', (file) => {
    const folder = tempDir('asg-copied-');
    copyFileSync(join(REPO_ROOT, file), join(folder, basename(file)));
    const run = spawnSync(process.execPath, [ASG, 'config', 'check', basename(file)], {
      cwd: folder,
      env: testEnvironment(model.geminiBaseUrl),
      encoding: 'utf8',
      timeout: 30_000,
    });
    const startsAServer = /^\s*command:/m.test(readFileSync(join(REPO_ROOT, file), 'utf8'));
    if (run.status === 0) {
      expect(run.stdout).toContain(`${basename(file)}: valid (`);
      expect(startsAServer, `${file} is valid in an empty folder, yet starts an MCP server`).toBe(false);
    } else {
      expect(run.status, run.stderr).toBe(1);
      // The path it misses, and what to do: start where the file expects, or make the folder.
      expect(run.stderr).toMatch(
        /args\[0\]: "[^"]+" does not exist in .*relative paths are taken from the folder the agent starts in|roots\[\d+\]\.path: "[^"]+" does not exist \(create the folder first/,
      );
    }
  });
});
