/**
 * Forking a run end to end: `bin/asg up` in simple mode with API tokens, the real mesh over
 * gRPC, the real mcp-resources server (its `resources_add` is destructive) and a scripted
 * Gemini model. One run adds a resource after an approval; forks of it are made at its steps
 * through REST: before the add, the fork stops for an approval of its own (a new UUID) and the
 * resource is added again only once that one is approved; after it, the recorded result is
 * reused (the model reads it, the tool does not run); with a message, the message is the fork's
 * next turn. The original conversation is never changed; another chat user's token gets 404.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { runAsg } from '../support/asg-cli.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { trpcClient } from '../support/trpc-client.js';

const TOKENS = {
  ALICE_TOKEN: 'e2e-fork-alice-token-7c1e5a9d3f2b',
  BOB_TOKEN: 'e2e-fork-bob-token-2f8b4d6a0e3c',
  CAROL_TOKEN: 'e2e-fork-carol-token-9d3a7f1c5e8b',
};
const AUTH = {
  tokens: [
    { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] },
    { name: 'bob', token_env: 'BOB_TOKEN', roles: ['chat'] },
    { name: 'carol', token_env: 'CAROL_TOKEN', roles: ['approve'] },
  ],
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alice = bearer(TOKENS.ALICE_TOKEN);
const bob = bearer(TOKENS.BOB_TOKEN);
const carol = bearer(TOKENS.CAROL_TOKEN);

let model: ScriptedModelServer;
let agent: AgentProcess;
let db: string;

interface Step {
  index: number;
  kind: string;
  message_seq: number | null;
}

/** How many resources are named `name`: what resources_add really did. */
const added = (name: string) => resourceNames(db).filter((candidate) => candidate === name).length;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: TOKENS, config: { auth: AUTH } });
  db = join(agent.dir, 'resources.db');
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('a fork of a run whose destructive call was approved and ran', () => {
  let conversationId: string;
  let runId: string;
  let originalApproval: string;
  let steps: Step[];
  let original: { messages: unknown[]; status: string };

  beforeAll(async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'add alpha with value 1' }, alice);
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(true);
    conversationId = created.body.conversation.id;
    originalApproval = created.body.result.approval.uuid;
    const approved = await post(`${agent.url}/approvals/${originalApproval}`, { approved: true }, carol);
    expect(approved.status).toBe(200);
    expect(added('alpha')).toBe(1);
    const listed = await get(`${agent.url}/conversations/${conversationId}/runs`, alice);
    expect(listed.body.runs).toHaveLength(1);
    runId = listed.body.runs[0].run_id;
    const read = await get(`${agent.url}/runs/${runId}`, alice);
    expect(read.status).toBe(200);
    steps = read.body.steps;
    const conversation = await get(`${agent.url}/conversations/${conversationId}`, alice);
    original = conversation.body.conversation;
    // The run's user message maps it to the conversation (the web chat's link from a message to its run).
    const userMessage = (conversation.body.conversation.messages as { seq: number; role: string }[]).find(
      (message) => message.role === 'user',
    );
    expect(listed.body.runs[0].message_seq).toBe(userMessage!.seq);
  });

  /** The original conversation is exactly as it was. */
  async function originalUnchanged() {
    const now = await get(`${agent.url}/conversations/${conversationId}`, alice);
    expect(now.body.conversation.messages).toEqual(original.messages);
    expect(now.body.conversation.status).toBe(original.status);
  }

  it('records where each step stands in the conversation (journal format 2)', () => {
    expect(steps.map((step) => step.kind)).toEqual(['model_call', 'approval', 'decision', 'tool_call', 'model_call']);
    const [asked, approval, decision, call, answered] = steps.map((step) => step.message_seq!);
    // The user's message, then the model's call of resources_add, then its result.
    expect(approval).toBe(asked! + 1);
    expect([decision, call]).toEqual([approval, approval]);
    expect(answered).toBe(call! + 1);
  });

  it('from a step before the call, stops for a new approval and adds the resource only once that one is approved', async () => {
    for (const at of [steps.findIndex((step) => step.kind === 'model_call'), steps.findIndex((step) => step.kind === 'tool_call')]) {
      const before = added('alpha');
      const forked = await post(`${agent.url}/runs/${runId}/fork`, { step: at }, alice);
      expect(forked.status).toBe(201);
      expect(forked.body.copied_only).toBe(false);
      expect(forked.body.conversation.id).not.toBe(conversationId);
      expect(forked.body.result.waiting_approval).toBe(true);
      const approval = forked.body.result.approval.uuid as string;
      expect(approval).not.toBe(originalApproval);
      // Nothing of the original's decision came with the copy: only the new approval waits.
      expect(forked.body.conversation.pending_approvals.map((pending: { uuid: string }) => pending.uuid)).toEqual([approval]);
      expect(added('alpha')).toBe(before);
      const approved = await post(`${agent.url}/approvals/${approval}`, { approved: true }, carol);
      expect(approved.status).toBe(200);
      expect(added('alpha')).toBe(before + 1);
    }
    await originalUnchanged();
  });

  it('from the answer after the call, reuses the recorded result: the model reads it and the tool does not run', async () => {
    const before = added('alpha');
    const asked = model.requests.length;
    const forked = await post(`${agent.url}/runs/${runId}/fork`, { step: steps.length - 1 }, alice);
    expect(forked.status).toBe(201);
    expect(forked.body.result.waiting_approval).toBe(false);
    expect(forked.body.result.response).toMatch(/^Done\. resources_add: /);
    const seen = model.requests.slice(asked);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.toolResults.map((result) => result.name)).toEqual(['resources_add']);
    expect(added('alpha')).toBe(before);
    expect(forked.body.conversation.owner).toBe('token:alice');
    await originalUnchanged();
  });

  it('after the last step, is only the copy; with a message, the message is its next turn', async () => {
    const asked = model.requests.length;
    const copied = await post(`${agent.url}/runs/${runId}/fork`, { step: steps.length }, alice);
    expect(copied.status).toBe(201);
    expect(copied.body.copied_only).toBe(true);
    expect(copied.body.conversation.messages).toHaveLength(original.messages.length);
    expect(model.requests.length).toBe(asked);

    const withMessage = await post(`${agent.url}/runs/${runId}/fork`, { step: steps.length, message: 'list resources' }, alice);
    expect(withMessage.status).toBe(201);
    expect(withMessage.body.copied_only).toBe(false);
    expect(withMessage.body.result.response).toMatch(/^Done\. resources_list: .*alpha/);
    const messages = withMessage.body.conversation.messages as { role: string; content: string }[];
    expect(messages.slice(0, original.messages.length)).toEqual(
      (original.messages as { role: string; content: string }[]).map((message) =>
        expect.objectContaining({ role: message.role, content: message.content }),
      ),
    );
    expect(messages[original.messages.length]).toMatchObject({ role: 'user', content: 'list resources' });
    await originalUnchanged();
  });

  it("answers 404 for another chat user's run or an unknown one, 400 for a bad body and 409 for a step outside the run", async () => {
    const stranger = await post(`${agent.url}/runs/${runId}/fork`, { step: 0 }, bob);
    expect(stranger.status).toBe(404);
    const unknown = await post(`${agent.url}/runs/00000000-0000-4000-8000-000000000000/fork`, { step: 0 }, alice);
    expect(unknown.status).toBe(404);
    for (const body of [{}, { step: -1 }, { step: 1.5 }, { step: 0, message: '' }, { step: 0, extra: true }]) {
      const refused = await post(`${agent.url}/runs/${runId}/fork`, body, alice);
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    const outside = await post(`${agent.url}/runs/${runId}/fork`, { step: steps.length + 1 }, alice);
    expect(outside.status).toBe(409);
    expect(outside.body.error).toContain(`step ${steps.length + 1} is outside run ${runId}`);
    await originalUnchanged();
  });

  it('forks the same through tRPC and asg runs fork', async () => {
    const viaTrpc = await trpcClient(agent.url, alice).runs.fork.mutate({ runId, step: steps.length });
    expect(viaTrpc).toMatchObject({ copied_only: true, conversation: { owner: 'token:alice' } });
    expect(viaTrpc.conversation.id).not.toBe(conversationId);

    const env = { ASG_URL: agent.url, ASG_TOKEN: TOKENS.ALICE_TOKEN };
    const asJson = await runAsg(['runs', 'fork', runId, '--step', String(steps.length), '--json'], env);
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ copied_only: true });
    const asText = await runAsg(['runs', 'fork', runId, '--step', '0'], env);
    expect(asText.code).toBe(0);
    expect(asText.stdout).toMatch(
      new RegExp(`^Forked run ${runId} at step 0: conversation [0-9a-f-]{36}\nWaits for approval [0-9a-f-]{36} \\(resources_add\\)`),
    );
    expect((await runAsg(['runs', 'fork', runId], env)).code).toBe(2);
    expect((await runAsg(['runs', 'fork', runId, '--step', 'two'], env)).code).toBe(2);
    expect((await runAsg(['runs', 'fork', runId, '--step', '99'], env)).code).toBe(6);
    expect((await runAsg(['runs', 'fork', runId, '--step', '0'], { ...env, ASG_TOKEN: TOKENS.BOB_TOKEN })).code).toBe(5);
    await originalUnchanged();
  });
});
