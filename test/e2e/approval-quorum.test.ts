/**
 * Quorums of approvers end to end over REST, with token authentication: the real mesh, the real
 * mcp-resources server and a scripted Gemini model. A rule asks for two distinct people holding
 * the approve role, neither of them the requester. The requester's own vote is 403 (and
 * audited), a vote without the role 403; the first vote answers 202 with the count and runs
 * nothing; the same person again is 409; the second person's vote answers as a decision does
 * and the call runs exactly once. An edit by a voter replaces the arguments and restarts the
 * count; the call runs with the edited arguments.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames, resourceValues } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { tokenAuth } from '../support/token-auth.js';

const TOKENS = {
  rita: 'rita-token-0123456789abcdef00',
  alice: 'alice-token-0123456789abcdef0',
  bob: 'bob-token-0123456789abcdef000',
  carol: 'carol-token-0123456789abcdef0',
};
const auth = tokenAuth({
  // The requester may decide approvals in general, but not this one's quorum (not_requester).
  rita: { token: TOKENS.rita, roles: ['chat', 'approve'] },
  alice: { token: TOKENS.alice, roles: ['approve'] },
  bob: { token: TOKENS.bob, roles: ['approve'] },
  // An admin does not stand in for the quorum's role.
  carol: { token: TOKENS.carol, roles: ['admin'] },
});
const as = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: auth.env,
    config: {
      ...auth.config,
      approvals: {
        policies: [
          { name: 'four-eyes', tools: ['resources_add'], when: 'args.value >= 1000', require: { approvals: 2, not_requester: true } },
        ],
      },
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

const db = () => join(agent.dir, 'resources.db');
const count = (name: string) => resourceNames(db()).filter((each) => each === name).length;

/** Rita asks for a big add; the call waits for its quorum. */
async function waitingAdd(name: string): Promise<string> {
  const created = await post(`${agent.url}/conversations`, { message: `add ${name} with value 5000` }, as('rita'));
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return created.body.result.approval.uuid as string;
}

const vote = (uuid: string, who: keyof typeof TOKENS, body: Record<string, unknown> = { approved: true }) =>
  post(`${agent.url}/approvals/${uuid}`, body, as(who));

describe('a quorum of two, not the requester', () => {
  it("the requester's vote is 403; alice's is 202 and nothing runs; alice again 409; bob's 200 and the call runs once", async () => {
    const uuid = await waitingAdd('big-1');

    const own = await vote(uuid, 'rita');
    expect(own.status).toBe(403);
    expect(own.body.error).toContain('not_requester');
    const admin = await vote(uuid, 'carol');
    expect(admin.status).toBe(403);
    expect(admin.body.error).toContain('role approve');

    const first = await vote(uuid, 'alice');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ status: 'pending', votes: 1, required: 2 });
    expect(count('big-1')).toBe(0);

    const read = await get(`${agent.url}/approvals/${uuid}`, as('alice'));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 'pending',
      required: 2,
      role: 'approve',
      not_requester: true,
      requested_by: 'token:rita',
      votes: [{ voter: 'token:alice', via: 'rest', at: expect.any(String) }],
    });
    const listed = await get(`${agent.url}/approvals?status=pending`, as('alice'));
    expect(listed.body.approvals.find((each: { uuid: string }) => each.uuid === uuid)).toMatchObject({
      required: 2,
      votes: [{ voter: 'token:alice' }],
    });

    // Who may still vote: bob; not alice (voted), not rita (her own request), not carol (not of the role).
    const needing = async (who: keyof typeof TOKENS) =>
      (await get(`${agent.url}/approvals?needs_my_vote=true`, as(who))).body.approvals.map((each: { uuid: string }) => each.uuid);
    expect(await needing('bob')).toContain(uuid);
    expect(await needing('alice')).not.toContain(uuid);
    expect(await needing('rita')).not.toContain(uuid);
    expect(await needing('carol')).not.toContain(uuid);

    const again = await vote(uuid, 'alice');
    expect(again.status).toBe(409);
    expect(again.body.error).toContain('already voted');
    expect(count('big-1')).toBe(0);

    const second = await vote(uuid, 'bob');
    expect(second.status).toBe(200);
    expect(second.body.conversation.status).not.toBe('waiting_approval');
    expect(count('big-1')).toBe(1);

    const decided = await get(`${agent.url}/approvals/${uuid}`, as('bob'));
    expect(decided.body).toMatchObject({ status: 'approved', decided_by: 'token:bob' });
    expect(decided.body.votes.map((each: { voter: string }) => each.voter)).toEqual(['token:alice', 'token:bob']);
    // Once decided, a further vote is the 409 of any decided approval, and nothing runs again.
    expect((await vote(uuid, 'carol')).status).toBe(409);
    expect(count('big-1')).toBe(1);

    // The refused vote of the requester is in the audit.
    const audit = await get(`${agent.url}/audit?kind=approval.vote_refused`, as('carol'));
    expect(audit.body.entries).toMatchObject([{ actor: 'token:rita', subject: uuid }]);
  });

  it('an edit by the first voter restarts the count, and the call runs with the edited arguments', async () => {
    const uuid = await waitingAdd('big-2');
    expect((await vote(uuid, 'alice')).body).toEqual({ status: 'pending', votes: 1, required: 2 });
    // Alice changes her mind about the value: her vote is now for the edited arguments, and the count starts again.
    const edit = await vote(uuid, 'alice', { approved: true, arguments: { name: 'big-2', value: 2000 } });
    expect(edit.status).toBe(202);
    expect(edit.body).toEqual({ status: 'pending', votes: 1, required: 2 });
    const read = await get(`${agent.url}/approvals/${uuid}`, as('alice'));
    expect(read.body).toMatchObject({ edited_args: { name: 'big-2', value: 2000 }, votes: [{ voter: 'token:alice' }] });
    expect(read.body.votes).toHaveLength(1);
    expect(count('big-2')).toBe(0);

    const second = await vote(uuid, 'bob');
    expect(second.status).toBe(200);
    expect(count('big-2')).toBe(1);
    expect(resourceValues(db())['big-2']).toBe(2000);
    // The model is told who edited the arguments and what ran.
    const result = second.body.conversation.messages.find(
      (message: { role: string; tool_call?: { name: string } }) => message.role === 'tool' && message.tool_call?.name === 'resources_add',
    );
    expect(result.content).toContain('token:alice');
  });

  it('a rejection by one voter decides at once', async () => {
    const uuid = await waitingAdd('big-3');
    expect((await vote(uuid, 'alice')).status).toBe(202);
    const no = await vote(uuid, 'bob', { approved: false, reason: 'too big' });
    expect(no.status).toBe(200);
    expect((await get(`${agent.url}/approvals/${uuid}`, as('bob'))).body).toMatchObject({ status: 'rejected', decided_by: 'token:bob' });
    expect(count('big-3')).toBe(0);
  });
});
