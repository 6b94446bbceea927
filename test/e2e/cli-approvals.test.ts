/**
 * `asg approvals`: the real CLI (bin/asg, as built) against a real agent with a
 * scripted model. It lists the pending approvals of several conversations, shows one, approves
 * with edited arguments (the tool gets those), rejects with a reason, and says clearly — with
 * its documented exit codes — when the approval is unknown, decided already, or the agent is
 * not there. With `auth` configured it signs its calls with --token or ASG_TOKEN: 401 without
 * one, 403 for a chat-only token, and a decision by alice is recorded as her token's (token:alice).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { runAsg as asg } from '../support/asg-cli.js';
import { tokenAuth } from '../support/token-auth.js';
import { get, post } from '../support/http.js';
import { resourceNames, resourceValues } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { freePort } from '../support/ports.js';

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

/** A conversation that waits for the approval of `resources_add name value`; its approval's uuid. */
async function waitingFor(name: string, value: number): Promise<{ conversationId: string; uuid: string }> {
  const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value ${value}` });
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return { conversationId: created.body.conversation.id, uuid: created.body.result.approval.uuid };
}

const resourcesDb = () => join(agent.dir, 'resources.db');

describe('asg approvals against a running agent', () => {
  it('lists the pending approvals of several conversations, shows one, approves with edited arguments and rejects with a reason', async () => {
    const first = await waitingFor('cli-1', 5);
    const second = await waitingFor('cli-2', 6);

    const list = await asg(['approvals', 'list', '--url', agent.url]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^UUID\s+STATUS\s+TOOL\s+CONVERSATION\s+REQUESTED\s+DECIDED\s+ARGUMENTS/);
    for (const { uuid, conversationId } of [first, second]) {
      const line = list.stdout.split('\n').find((candidate) => candidate.startsWith(uuid));
      expect(line).toMatch(new RegExp(`^${uuid}\\s+pending\\s+resources_add\\s+${conversationId.slice(0, 8)}\\s`));
    }
    // The URL may come from ASG_URL; --json gives the agent's own answer.
    const json = await asg(['approvals', 'list', '--json', '--conversation', second.conversationId], { ASG_URL: agent.url });
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as { approvals: { uuid: string; status: string }[] };
    expect(listed.approvals.map((approval) => approval.uuid)).toEqual([second.uuid]);

    const show = await asg(['approvals', 'show', first.uuid, '--url', agent.url]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`Approval:     ${first.uuid}`);
    expect(show.stdout).toContain('Status:       pending');
    expect(show.stdout).toContain('Tool:         resources_add');
    expect(show.stdout).toMatch(/Arguments:\n {2}\{\n {4}"name": "cli-1",\n {4}"value": 5\n {2}\}/);

    const approve = await asg([
      'approvals',
      'approve',
      first.uuid,
      '--url',
      agent.url,
      '--arguments',
      '{"name": "cli-1", "value": 50}',
      '--reason',
      'five was a typo',
    ]);
    expect(approve.stderr).toBe('');
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain(`Approved ${first.uuid}.`);
    expect(approve.stdout).toContain('The agent answered: Done. resources_add:');
    // The tool received the edited arguments, not the model's.
    expect(resourceValues(resourcesDb())['cli-1']).toBe(50);

    const record = await get(`${agent.url}/approvals/${first.uuid}`);
    expect(record.body).toMatchObject({
      status: 'approved',
      decided_by: 'anonymous',
      via: 'cli',
      reason: 'five was a typo',
      tool_args: { name: 'cli-1', value: 5 },
      edited_args: { name: 'cli-1', value: 50 },
    });
    const shown = await asg(['approvals', 'show', first.uuid, '--url', agent.url]);
    expect(shown.stdout).toMatch(/Status:\s+approved \(done\)/);
    expect(shown.stdout).toMatch(/Decided by:\s+anonymous via cli/);
    expect(shown.stdout).toMatch(/Ran with edited arguments:\n {2}\{\n {4}"name": "cli-1",\n {4}"value": 50/);

    const reject = await asg(['approvals', 'reject', second.uuid, '--reason', 'not today'], { ASG_URL: agent.url });
    expect(reject.code).toBe(0);
    expect(reject.stdout).toContain(`Rejected ${second.uuid}.`);
    expect(resourceNames(resourcesDb())).not.toContain('cli-2');
    const rejected = await asg(['approvals', 'list', '--status', 'rejected', '--url', agent.url]);
    expect(rejected.stdout).toMatch(new RegExp(`^${second.uuid}\\s+rejected\\s+resources_add\\s+\\S+\\s+.*\\s+anonymous `, 'm'));
    const stillPending = await asg(['approvals', 'list', '--url', agent.url]);
    expect(stillPending.stdout).not.toContain(first.uuid);
    expect(stillPending.stdout).not.toContain(second.uuid);
  });

  it('says when the approval was decided already (6), is unknown (5), or the arguments are refused (2)', async () => {
    const { uuid } = await waitingFor('cli-3', 7);
    expect((await asg(['approvals', 'reject', uuid, '--url', agent.url])).code).toBe(0);
    const again = await asg(['approvals', 'approve', uuid, '--url', agent.url]);
    expect(again.code).toBe(6);
    expect(again.stderr).toMatch(new RegExp(`^asg approvals: approval ${uuid} was already rejected by anonymous at \\S+Z\\n$`));

    const unknown = await asg(['approvals', 'show', '00000000-0000-4000-8000-000000000000', '--url', agent.url]);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toMatch(/^asg approvals: .*00000000-0000-4000-8000-000000000000.*\n$/);

    const { uuid: another } = await waitingFor('cli-4', 8);
    // The tool's schema wants a number: the orchestrator refuses, and nothing runs.
    const misfit = await asg(['approvals', 'approve', another, '--url', agent.url, '--arguments', '{"name": "cli-4", "value": "eight"}']);
    expect(misfit.code).toBe(2);
    expect(misfit.stderr).toMatch(/^asg approvals: the agent refused the request: /);
    expect(resourceNames(resourcesDb())).not.toContain('cli-4');
    const pending = await get(`${agent.url}/approvals/${another}`);
    expect(pending.body.status).toBe('pending');
  });

  it('says when the agent cannot be reached (3) and refuses bad usage (2), never printing the token', async () => {
    const port = await freePort();
    const down = await asg(['approvals', 'list', '--url', `http://127.0.0.1:${port}`, '--token', 'secret-token-4f3e2d1c']);
    expect(down.code).toBe(3);
    expect(down.stderr).toBe(
      `asg approvals: cannot reach the agent at http://127.0.0.1:${port} (connection refused); is it running? Point --url or ASG_URL at it\n`,
    );
    expect(down.stdout + down.stderr).not.toContain('secret-token-4f3e2d1c');

    for (const args of [
      ['approve'],
      ['show', 'a', 'b'],
      ['approve', 'x', '--arguments', 'not json'],
      ['reject', 'x', '--arguments', '{}'],
      ['reject', 'x', '--input', '{}'],
      ['approve', 'x', '--input', '["Ada"]'],
      ['list', '--limit', '0'],
      ['list', '--url', 'ftp://x'],
      ['frobnicate'],
      ['list', '--bogus'],
    ]) {
      const run = await asg(['approvals', ...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^asg approvals: .+\nRun asg approvals --help for the options\.\n$/);
    }
    const help = await asg(['approvals', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes:');
    expect((await asg(['--help'])).stdout).toContain('approvals approve UUID [--arguments JSON | --input JSON] [--reason TEXT]');
  });
});

describe('asg approvals against an agent with authentication', () => {
  const TOKENS = { alice: 'alice-token-6c1d9e2f', chatty: 'chatty-token-3a7b8c9d' };
  let secured: AgentProcess;

  beforeAll(async () => {
    secured = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      ...tokenAuth({ alice: { token: TOKENS.alice, roles: ['chat', 'approve'] }, chatty: { token: TOKENS.chatty, roles: ['chat'] } }),
    });
  }, 120_000);

  afterAll(async () => {
    await secured?.stop();
  });

  it('is 401 without a token (4), 403 with a chat-only one (4), and records a decision by alice as hers', async () => {
    const created = await post(
      `${secured.url}/conversations`,
      { message: 'add resource auth-1 with value 3' },
      { authorization: `Bearer ${TOKENS.chatty}` },
    );
    expect(created.status).toBe(201);
    const uuid = created.body.result.approval.uuid as string;

    const anonymous = await asg(['approvals', 'list', '--url', secured.url]);
    expect(anonymous.code).toBe(4);
    expect(anonymous.stderr).toMatch(/^asg approvals: not signed in: .+; pass a token with --token or ASG_TOKEN\n$/);
    const chatty = await asg(['approvals', 'approve', uuid, '--url', secured.url], { ASG_TOKEN: TOKENS.chatty });
    expect(chatty.code).toBe(4);
    expect(chatty.stderr).toMatch(/^asg approvals: not allowed: .+\n$/);
    expect(chatty.stdout + chatty.stderr).not.toContain(TOKENS.chatty);
    expect((await get(`${secured.url}/approvals/${uuid}`, { authorization: `Bearer ${TOKENS.alice}` })).body.status).toBe('pending');

    const listed = await asg(['approvals', 'list', '--url', secured.url, '--token', TOKENS.alice]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(uuid);
    const approved = await asg(['approvals', 'approve', uuid, '--reason', 'looks right'], {
      ASG_URL: secured.url,
      ASG_TOKEN: TOKENS.alice,
    });
    expect(approved.code).toBe(0);
    const shown = await asg(['approvals', 'show', uuid, '--url', secured.url], { ASG_TOKEN: TOKENS.alice });
    expect(shown.stdout).toMatch(/Decided by:\s+token:alice via cli\n/);
    expect(shown.stdout).toMatch(/Reason:\s+looks right\n/);
    expect(resourceNames(join(secured.dir, 'resources.db'))).toContain('auth-1');
  });
});
