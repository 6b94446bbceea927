/**
 * The examples of examples/ work as their READMEs say: each folder is copied as it is into a
 * temporary tree beside a bin/asg (a link to this build's), started from its own folder with
 * `asg up` on a free port, and driven with a scripted model. Every configuration in them passes
 * `asg config check` where it stands.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ASG, REPO_ROOT, spawnProcess, tempDir, testEnvironment, type AsgProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { logLines, logLineWhere } from '../support/log-lines.js';
import { resourceNames } from '../support/resources-db.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ScriptedReply,
  type ScriptedModelServer,
} from '../support/scripted-model.js';

const EXAMPLES = join(REPO_ROOT, 'examples');

/** Each example's answers: a node or agent is known by the first words of its prompt. */
function examplesScript(request: ModelRequest): ScriptedReply | Promise<ScriptedReply> {
  const role = /^You (?:are the ([\w ]+)\.|write text files)/.exec(request.system);
  if (role?.[0] === 'You write text files') {
    if (request.toolResults.length > 0) return { text: `Written. ${request.toolResults[0]!.output}` };
    const write = /write "([^"]*)" to (\S+)/.exec(request.lastUserText);
    if (!write) return { text: 'I write files.' };
    return { toolCalls: [{ name: 'write_file', args: { root: 'workspace', path: write[2]!, content: write[1]! } }] };
  }
  switch (role?.[1]) {
    case 'analyzer':
      return { text: `ANALYSIS: ${request.lastUserText}` };
    case 'reporter':
      return { text: `REPORT: ${request.system.split('\n').slice(-2).join(' ').trim()}` };
    case 'front desk':
      if (request.toolResults.length > 0) return { text: `The worker says: ${request.toolResults[0]!.output}` };
      return { toolCalls: [{ name: 'a2a_worker', args: { message: request.lastUserText } }] };
    default:
      // The executor and the worker.
      return resourceAgentScript(request);
  }
}

let model: ScriptedModelServer;
const running: AsgProcess[] = [];

beforeAll(async () => {
  model = await startScriptedModel(examplesScript);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((agent) => agent.stop()));
});

afterAll(async () => {
  await model?.close();
});

/** The example's folder, copied into a fresh tree that has bin/asg where the example's `../../bin/asg` expects it. */
function copyExample(name: string): string {
  const tree = tempDir('asg-example-');
  mkdirSync(join(tree, 'bin'));
  symlinkSync(ASG, join(tree, 'bin', 'asg'));
  const folder = join(tree, 'examples', name);
  cpSync(join(EXAMPLES, name), folder, { recursive: true, filter: (source) => !source.startsWith(join(EXAMPLES, name, 'data')) });
  return folder;
}

/** `node ../../bin/asg up [args]` in the example's folder, on a free port; its URL once it serves. */
async function upIn(folder: string, ...args: string[]): Promise<string> {
  const agent = spawnProcess(
    process.execPath,
    ['../../bin/asg', 'up', '--port', '0', ...args],
    testEnvironment(model.geminiBaseUrl),
    folder,
  );
  running.push(agent);
  const line = await agent.waitForLine(
    logLineWhere((candidate) => candidate.msg === 'agent up'),
    60_000,
  );
  return String(logLines(line)[0]!.url);
}

describe('examples/', () => {
  it('every configuration passes asg config check in its folder, and the index lists every example', () => {
    const names = readdirSync(EXAMPLES, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(names.sort()).toEqual(['a2a-approval', 'approval-policy', 'file-write', 'sequential-tree']);
    const index = readFileSync(join(EXAMPLES, 'README.md'), 'utf8');
    for (const name of names) {
      expect(index).toContain(`(${name}/README.md)`);
      expect(existsSync(join(EXAMPLES, name, 'README.md'))).toBe(true);
      // Every YAML file is an agent's configuration, but a table of policy cases (run by its example's test).
      const configs = readdirSync(join(EXAMPLES, name)).filter((file) => file.endsWith('.yaml') && file !== 'cases.yaml');
      expect(configs.length).toBeGreaterThan(0);
      for (const config of configs) {
        // The editor's schema: the package's, by a path relative to the file.
        const schema = /^# yaml-language-server: \$schema=(\S+)\n/.exec(readFileSync(join(EXAMPLES, name, config), 'utf8'))?.[1];
        expect(schema, `${name}/${config}`).toMatch(/^\.\.\/\.\.\/config\/(agent|filesystem)\.schema\.json$/);
        expect(existsSync(join(EXAMPLES, name, schema!))).toBe(true);
        const check = spawnSync(process.execPath, [ASG, 'config', 'check', config], {
          cwd: join(EXAMPLES, name),
          encoding: 'utf8',
          timeout: 30_000,
          env: testEnvironment(model.geminiBaseUrl),
        });
        expect(check.status, `${name}/${config}: ${check.stderr}`).toBe(0);
        expect(check.stdout).toMatch(new RegExp(`^${config}: valid \\(`));
      }
    }
  });

  it('file-write: the write stops, is approved, and the file exists', async () => {
    const folder = copyExample('file-write');
    const url = await upIn(folder);
    const target = join(folder, 'workspace', 'notes', 'hello.txt');

    const stop = await post(`${url}/conversations`, { message: 'write "hello from the agent" to notes/hello.txt' });
    expect(stop.status).toBe(201);
    expect(stop.body.result).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'write_file', tool_args: { root: 'workspace', path: 'notes/hello.txt', content: 'hello from the agent' } },
    });
    expect(existsSync(target)).toBe(false);

    const go = await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.result).toMatchObject({ waiting_approval: false, response: expect.stringMatching(/^Written\./) });
    expect(readFileSync(target, 'utf8')).toBe('hello from the agent');
  });

  it('sequential-tree: the tree pauses at the executor, resumes there once approved, and the reporter answers', async () => {
    const folder = copyExample('sequential-tree');
    const url = await upIn(folder);

    const stop = await post(`${url}/conversations`, { message: 'add resource web-1 with value 5' });
    expect(stop.status).toBe(201);
    expect(stop.body.result).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'resources_add', tool_args: { name: 'web-1', value: 5 } },
    });
    expect(stop.body.conversation.pipeline_state).toMatchObject({
      paused_node_path: [1],
      session_state: { analysis: expect.stringContaining('ANALYSIS') },
    });
    const db = join(folder, 'data', 'resources.db');
    expect(resourceNames(db)).not.toContain('web-1');

    const go = await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.result).toMatchObject({ waiting_approval: false, response: expect.stringMatching(/^REPORT: .*Done\. resources_add/) });
    expect(resourceNames(db)).toContain('web-1');
  });

  it('a2a-approval: the worker stops, the front desk asks, the approval given there runs on the worker', async () => {
    const folder = copyExample('a2a-approval');
    const worker = await upIn(folder, '--config', 'worker.yaml');
    // The worker is on a free port, not the 8081 the front desk's configuration names.
    const front = join(folder, 'agent.yaml');
    const config = readFileSync(front, 'utf8');
    expect(config).toContain('url: http://127.0.0.1:8081/a2a');
    writeFileSync(front, config.replace('http://127.0.0.1:8081', worker));
    const url = await upIn(folder);

    const stop = await post(`${url}/conversations`, { message: 'add resource web-1 with value 5' });
    expect(stop.status).toBe(201);
    expect(stop.body.result).toMatchObject({
      waiting_approval: true,
      approval: {
        tool_name: 'a2a_worker',
        remote_agent_name: 'worker',
        description: expect.stringMatching(/^worker asks for approval: resources_add/),
      },
    });
    const db = join(folder, 'data', 'worker', 'resources.db');
    expect(resourceNames(db)).not.toContain('web-1');
    const remote = await get(`${worker}/conversations/${stop.body.result.approval.remote_task_id}`);
    expect(remote.body.conversation.status).toBe('waiting_approval');

    const go = await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.result).toMatchObject({
      waiting_approval: false,
      response: expect.stringMatching(/^The worker says: .*Done\. resources_add/),
    });
    expect(resourceNames(db)).toContain('web-1');
    expect((await get(`${worker}/conversations/${stop.body.result.approval.remote_task_id}`)).body.conversation.status).toBe('active');
  });
  it('approval-policy: its cases pass asg policy test; a small add runs at once, a production removal is refused with the reason, a large add stops', async () => {
    const folder = copyExample('approval-policy');
    const cases = spawnSync(process.execPath, ['../../bin/asg', 'policy', 'test', '--config', 'agent.yaml', '--file', 'cases.yaml'], {
      cwd: folder,
      encoding: 'utf8',
      timeout: 30_000,
      env: testEnvironment(model.geminiBaseUrl),
    });
    expect(cases.status, cases.stdout + cases.stderr).toBe(0);
    expect(cases.stdout).toContain('5 case(s), all as expected');

    const url = await upIn(folder);
    const db = join(folder, 'data', 'resources.db');
    const small = await post(`${url}/conversations`, { message: 'add resource cache-1 with value 3' });
    expect(small.status).toBe(201);
    expect(small.body.result).toMatchObject({ waiting_approval: false });
    expect(resourceNames(db)).toContain('cache-1');
    const audit = await get(`${url}/audit`);
    expect(JSON.stringify(audit.body.entries)).toContain('policy:tiny-adds');

    const removal = await post(`${url}/conversations`, { message: 'remove resource prod-db' });
    expect(removal.status).toBe(201);
    expect(removal.body.result).toMatchObject({
      waiting_approval: false,
      response: expect.stringContaining('production resources are never removed by the agent'),
    });

    const big = await post(`${url}/conversations`, { message: 'add resource pool with value 5000' });
    expect(big.status).toBe(201);
    expect(big.body.result).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'resources_add', tool_args: { name: 'pool', value: 5000 } },
    });
    expect(resourceNames(db)).not.toContain('pool');
  });
});
