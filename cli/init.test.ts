/** `asg init`: a new agent's folder that `asg up` runs as it is, from that folder, with its tools. */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASG, spawnProcess, tempDir, testEnvironment, type AsgProcess } from '../test/support/agent-process.js';
import { post } from '../test/support/http.js';
import { logLines, logLineWhere } from '../test/support/log-lines.js';
import { resourceNames } from '../test/support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../test/support/scripted-model.js';

function asgIn(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [ASG, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, out: result.stdout + result.stderr };
}

const execFileAsync = promisify(execFile);

let model: ScriptedModelServer;
let agent: AsgProcess | undefined;

beforeAll(async () => {
  model = await startScriptedModel();
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('asg init', () => {
  it('writes agent.yaml with its schema line, .env.example, a README and a .gitignore of .env and data/, and overwrites them only with --force', () => {
    const parent = tempDir();
    const dir = join(parent, 'My Agent');
    const made = asgIn(parent, 'init', 'My Agent');
    expect(made.code, made.out).toBe(0);
    expect(made.out).toContain(`Wrote agent.yaml, .env.example, README.md, .gitignore in ${dir}.`);
    const yaml = readFileSync(join(dir, 'agent.yaml'), 'utf8');
    const schema = /^# yaml-language-server: \$schema=(\S+)\n/.exec(yaml)?.[1];
    expect(schema).toMatch(/^file:\/\/.*\/config\/agent\.schema\.json$/);
    expect(existsSync(fileURLToPath(schema!))).toBe(true);
    expect(yaml).toContain('name: my-agent\n');
    expect(readFileSync(join(dir, '.env.example'), 'utf8')).toMatch(/^GEMINI_API_KEY=.*\n[\s\S]*^OPENAI_API_KEY=/m);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('asg approvals approve UUID');
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toEqual(['.env', 'data/', '']);

    writeFileSync(join(dir, 'README.md'), 'mine');
    const again = asgIn(dir, 'init');
    expect(again.code).toBe(1);
    expect(again.out).toContain(
      `${dir} already has agent.yaml, .env.example, README.md, .gitignore: nothing was written (--force overwrites them)`,
    );
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('mine');
    expect(asgIn(dir, 'init', '--force').code).toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('# my-agent');
  });

  it('makes an agent that `asg up` in its folder runs: a first turn answered with its tools, a destructive call stopped for approval and approved', async () => {
    const dir = tempDir();
    expect(asgIn(dir, 'init').code).toBe(0);
    expect(asgIn(dir, 'config', 'check')).toMatchObject({ code: 0, out: expect.stringContaining('agent.yaml: valid') });

    // No --config: `asg up` takes the agent.yaml of the folder it runs in.
    agent = spawnProcess(process.execPath, [ASG, 'up', '--port', '0'], testEnvironment(model.geminiBaseUrl), dir);
    const up = await agent.waitForLine(
      logLineWhere((line) => line.msg === 'agent up'),
      60_000,
    );
    const url = String(logLines(up)[0]!.url);

    const first = await post(`${url}/conversations`, { message: 'list resources' });
    expect(first.status).toBe(201);
    expect(first.body.result).toMatchObject({ waiting_approval: false, response: expect.stringContaining('Done. resources_list') });

    const change = await post(`${url}/conversations`, { message: 'add resource web-1 with value 5' });
    expect(change.status).toBe(201);
    expect(change.body.result).toMatchObject({
      waiting_approval: true,
      approval: { tool_name: 'resources_add', tool_args: { name: 'web-1', value: 5 } },
    });
    // Approved as its README says, from the command line.
    // Not spawnSync: the scripted model, in this process, answers the turn the approval resumes.
    const approved = await execFileAsync(process.execPath, [ASG, 'approvals', 'approve', change.body.result.approval.uuid, '--url', url], {
      cwd: dir,
      timeout: 30_000,
    });
    expect(approved.stdout).toContain('Done. resources_add');
    // The agent's data is in the folder asg init wrote, whatever folder started it.
    expect(resourceNames(join(dir, 'data', 'resources.db'))).toContain('web-1');
  });
});
