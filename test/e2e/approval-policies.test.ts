/**
 * Approval policies end to end: the real mesh, the real mcp-resources server and a scripted
 * Gemini model. A rule that approves runs the call without a stop and audits it as
 * `policy:<name>`; a rule that rejects keeps the call from running and the model reads its
 * reason; a call no rule matches stops as without policies; a condition that fails at run time
 * stops for a human with its error in the approval. Then the offline tools over the same kind
 * of file: `asg config check` names each bad condition's file:line:column, and `asg policy test`
 * checks a table of cases.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { runAsg } from '../support/asg-cli.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { tokenAuth } from '../support/token-auth.js';
import { until } from '../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const REASON = 'production resources are never removed by the agent';

const POLICIES = [
  { name: 'tiny-adds', tools: ['resources_add'], when: 'args.value < 10', decide: 'approve' },
  {
    name: 'prod-deletes',
    tools: ['resources_remove', 'delete_*'],
    when: "args.pattern.contains('prod-')",
    decide: 'reject',
    reason: REASON,
  },
  // Fails at run time for value 777 (no "owner" argument); false, without an error, for any other value.
  { name: 'owned-adds', tools: ['resources_add'], when: "args.value == 777 && args.owner == 'ops'", decide: 'approve' },
  { name: 'big-adds', tools: ['resources_add'], when: 'args.value >= 1000', require: { approvals: 1 } },
];

let model: ScriptedModelServer;
let agent: AgentProcess;
let receiver: WebhookReceiver;
const SECRET = `whsec_${Buffer.from('a policy webhook secret, 32 byte').toString('base64')}`;

beforeAll(async () => {
  model = await startScriptedModel();
  receiver = await startWebhookReceiver(SECRET);
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: { ASG_WEBHOOK_SECRET: SECRET },
    config: {
      approvals: { policies: POLICIES },
      webhooks: [{ url: receiver.url, secret_env: 'ASG_WEBHOOK_SECRET', events: ['approval.decided'] }],
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await receiver?.close();
  await model?.close();
});

/** The approval.decided webhook of the policy rule's decision in a conversation. */
const policyHook = (rule: string, conversationId: string) =>
  until(`the approval.decided webhook of policy:${rule}`, () =>
    receiver.deliveries.find(
      (delivery) =>
        delivery.payload?.type === 'approval.decided' &&
        delivery.payload.data.decided_by === `policy:${rule}` &&
        delivery.payload.data.conversation_id === conversationId,
    ),
  );

const db = () => join(agent.dir, 'resources.db');

describe('approval policies in a running agent', () => {
  /** The decision steps of the conversation's one run, from its journal. */
  async function decisionSteps(conversationId: string): Promise<Array<Record<string, unknown>>> {
    const runs = await get(`${agent.url}/conversations/${conversationId}/runs`);
    expect(runs.status).toBe(200);
    expect(runs.body.runs).toHaveLength(1);
    const run = await get(`${agent.url}/runs/${runs.body.runs[0].run_id}`);
    expect(run.status).toBe(200);
    return run.body.steps.filter((step: { kind: string }) => step.kind === 'decision');
  }

  it('a call the rule approves runs without a stop and is audited as decided by policy:tiny-adds', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'add tiny-1 with value 5' });
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(false);
    expect(resourceNames(db())).toContain('tiny-1');
    const audit = await get(`${agent.url}/audit?kind=approval.decided`);
    expect(audit.status).toBe(200);
    const entry = audit.body.entries.find((each: any) => each.actor === 'policy:tiny-adds');
    expect(entry).toMatchObject({
      kind: 'approval.decided',
      via: 'policy',
      subject: created.body.conversation.id,
      detail: { tool_name: 'resources_add', approved: true, status: 'approved', policy: 'tiny-adds' },
    });
    // Told to webhooks as a human's decision is.
    const hook = await policyHook('tiny-adds', created.body.conversation.id);
    expect(hook.payload!.data).toMatchObject({
      status: 'approved',
      via: 'policy',
      tool_name: 'resources_add',
      tool_args: { name: 'tiny-1', value: 5 },
    });
    // And kept in the run's journal as a decision nobody was asked for.
    expect(await decisionSteps(created.body.conversation.id)).toEqual([
      expect.objectContaining({ approval_uuid: '', approved: true, decided_by: 'policy:tiny-adds', via: 'policy' }),
    ]);
  });

  it('a removal the rule rejects does not run, and the model is told the rule and its reason', async () => {
    const before = model.requests.length;
    const created = await post(`${agent.url}/conversations`, { message: 'delete prod-db' });
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(false);
    const told = `Rejected by policy "prod-deletes": ${REASON}. The call was not executed. Do not retry it unless the user asks you to.`;
    // The model's next request carries the rejection as the call's result.
    expect(model.requests.slice(before).at(-1)!.toolResults).toEqual([{ name: 'resources_remove', output: told }]);
    const tool = created.body.conversation.messages.find((message: any) => message.role === 'tool');
    expect(tool.tool_call).toMatchObject({ name: 'resources_remove', rejected: true, reason: REASON, result: told });
    const audit = await get(`${agent.url}/audit?kind=approval.decided`);
    expect(audit.body.entries.find((each: any) => each.actor === 'policy:prod-deletes')).toMatchObject({
      detail: { tool_name: 'resources_remove', approved: false, status: 'rejected', reason: REASON },
    });
    const hook = await policyHook('prod-deletes', created.body.conversation.id);
    expect(hook.payload!.data).toMatchObject({ status: 'rejected', via: 'policy', reason: REASON, tool_name: 'resources_remove' });
    expect(await decisionSteps(created.body.conversation.id)).toEqual([
      expect.objectContaining({ approved: false, decided_by: 'policy:prod-deletes', via: 'policy', reason: REASON }),
    ]);
  });

  it('a call no rule matches stops as without policies; one a rule requires stops too', async () => {
    const plain = await post(`${agent.url}/conversations`, { message: 'add mid-1 with value 50' });
    expect(plain.body.result).toMatchObject({ waiting_approval: true, approval: { tool_name: 'resources_add' } });
    expect(plain.body.result.approval.description).toBe('resources_add on resources with arguments {"name":"mid-1","value":50}');
    const big = await post(`${agent.url}/conversations`, { message: 'add big-1 with value 5000' });
    expect(big.body.result.waiting_approval).toBe(true);
    expect(big.body.result.approval.description).toContain('(policy "big-adds" asks a human)');
    expect(resourceNames(db())).not.toContain('mid-1');
    // Approving goes on as for any approval.
    const yes = await post(`${agent.url}/approvals/${big.body.result.approval.uuid}`, { approved: true });
    expect(yes.status).toBe(200);
    expect(resourceNames(db())).toContain('big-1');
  });

  it('a condition that fails at run time stops for a human, with the error in GET /approvals/:uuid', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'add odd-1 with value 777' });
    expect(created.body.result.waiting_approval).toBe(true);
    const uuid = created.body.result.approval.uuid;
    const read = await get(`${agent.url}/approvals/${uuid}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'pending', tool_name: 'resources_add' });
    expect(read.body.description).toContain('policy "owned-adds" could not be evaluated, so a human decides');
    expect(read.body.description).toContain('owner');
    expect(resourceNames(db())).not.toContain('odd-1');
  });
});

describe('the requester is who sent the message, as the gateway authenticated them', () => {
  const auth = tokenAuth({
    alice: { token: 'alice-token-0123456789abcdef', roles: ['chat', 'approve'] },
    bob: { token: 'bob-token-0123456789abcdef00', roles: ['chat'] },
  });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  let guarded: AgentProcess;

  beforeAll(async () => {
    guarded = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      env: auth.env,
      config: {
        ...auth.config,
        approvals: {
          policies: [
            {
              name: 'approvers-add',
              tools: ['resources_add'],
              when: "requester.name == 'token:alice' && 'approve' in requester.roles && conversation.owner == requester.name",
              decide: 'approve',
            },
          ],
        },
      },
    });
  });

  afterAll(async () => {
    await guarded?.stop();
  });

  it("alice's add runs by the rule; bob's stops for a human", async () => {
    const alice = await post(`${guarded.url}/conversations`, { message: 'add alice-1 with value 3' }, as('alice-token-0123456789abcdef'));
    expect(alice.status).toBe(201);
    expect(alice.body.result.waiting_approval).toBe(false);
    const bob = await post(`${guarded.url}/conversations`, { message: 'add bob-1 with value 3' }, as('bob-token-0123456789abcdef00'));
    expect(bob.status).toBe(201);
    expect(bob.body.result.waiting_approval).toBe(true);
    expect(resourceNames(join(guarded.dir, 'resources.db'))).toEqual(['alice-1']);
  });
});

describe('the offline tools', () => {
  const dir = tempDir('asg-policy-');
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : stringify(content));
    return path;
  };

  it('asg config check names the file:line:column of a syntax error and of a type error in a condition', async () => {
    const config = file(
      'broken.yaml',
      [
        'llm:',
        '  model: gemini-2.5-flash',
        'approvals:',
        '  policies:',
        '    - name: syntax',
        '      tools: [resources_add]',
        '      when: "args.value < 10 +"',
        '      decide: approve',
        '    - name: types',
        '      tools: [resources_add]',
        '      when: tool < 10',
        '      decide: approve',
        '',
      ].join('\n'),
    );
    const checked = await runAsg(['config', 'check', config], { GEMINI_API_KEY: 'test-key' });
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain(`${config}:7:30: approvals.policies[0].when: syntax error: found + but expecting end of input`);
    expect(checked.stderr).toContain(
      `${config}:11:18: approvals.policies[1].when: found no matching overload for '_<_' applied to '(string, int)'`,
    );
  });

  it('asg policy test: one call, then a table of cases (0 when all match, 1 naming each that differs)', async () => {
    const config = file('agent.yaml', { llm: { model: 'gemini-2.5-flash' }, approvals: { policies: POLICIES } });
    const one = await runAsg(['policy', 'test', '--config', config, '--tool', 'resources_add', '--args', '{"value": 5000}']);
    expect(one.code).toBe(0);
    expect(one.stdout).toBe('resources_add {"value":5000}: require by rule "big-adds" (stops for a human)\n');

    const matching = file('cases.yaml', [
      { tool: 'resources_add', args: { value: 5 }, expect: 'approve', rule: 'tiny-adds' },
      { name: 'prod removal', tool: 'resources_remove', args: { pattern: '^prod-db$' }, expect: 'reject' },
      { tool: 'resources_add', args: { value: 50 }, expect: 'none' },
      { tool: 'resources_add', args: { value: 777 }, expect: 'require', rule: 'owned-adds' },
    ]);
    const allMatch = await runAsg(['policy', 'test', '--config', config, '--file', matching]);
    expect(allMatch.code).toBe(0);
    expect(allMatch.stdout).toContain('4 case(s), all as expected');

    const differing = file('wrong.yaml', {
      cases: [
        { name: 'big is approved', tool: 'resources_add', args: { value: 5000 }, expect: 'approve' },
        { name: 'tiny by another rule', tool: 'resources_add', args: { value: 1 }, expect: 'approve', rule: 'big-adds' },
        { name: 'list is free', tool: 'resources_list', expect: 'none' },
      ],
    });
    const someDiffer = await runAsg(['policy', 'test', '--config', config, '--file', differing]);
    expect(someDiffer.code).toBe(1);
    expect(someDiffer.stderr).toContain('2 of 3 case(s) differ: big is approved; tiny by another rule');
    expect(someDiffer.stdout).toContain('differs big is approved: expected approve, got require by rule "big-adds"');

    const usage = await runAsg(['policy', 'test', '--config', config]);
    expect(usage.code).toBe(2);
  });
});
