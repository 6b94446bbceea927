/**
 * Rejection with a reason, end to end: the real mesh, the real mcp-resources
 * server and a scripted Gemini model that records what it is sent. A "no" with a reason reaches
 * the model as the call's result, is stored on the tool message and the approval, and a call
 * that repeats a rejected one in the same run is refused at once instead of asking again.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ModelRequest, type ScriptedModelServer } from '../support/scripted-model.js';

const REJECTED = (reason: string) =>
  `Rejected by a human: ${reason}. The call was not executed. Do not retry it unless the user asks you to.`;

/** Tree prompts start with "You are the <node>."; simple mode has none. */
const nodeOf = (request: ModelRequest) => /You are the ([\w-]+)\./.exec(request.system)?.[1];

/** How often the model of a "repeat" request was told of a rejection, by its user text. */
const rejectionsSeen = new Map<string, number>();

/**
 * The resource agent, except that for a message with "repeat" in it, it asks for the rejected
 * call once more after the human's "no" (it must not reach the human again), then gives up.
 */
function script(request: ModelRequest) {
  const node = nodeOf(request);
  if (node === 'analyzer') return { text: `ANALYSIS(${request.lastUserText})` };
  if (node === 'reporter') return { text: 'reporter done' };
  const rejected = request.toolResults.some((result) => result.output.startsWith('Rejected by a human'));
  if (rejected && /\brepeat\b/.test(request.lastUserText)) {
    const seen = (rejectionsSeen.get(request.lastUserText) ?? 0) + 1;
    rejectionsSeen.set(request.lastUserText, seen);
    if (seen === 1) return resourceAgentScript({ ...request, toolResults: [] });
    return { text: `Understood: I will not add it (told ${seen} times).` };
  }
  return resourceAgentScript(request);
}

const tree = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', output_key: 'analysis', prompt: 'You are the analyzer. Analyze: {user_message}' },
    { name: 'executor', type: 'llm', output_key: 'result', prompt: 'You are the executor. Execute based on: {analysis}' },
    { name: 'reporter', type: 'llm', prompt: 'You are the reporter. Report on: {result}' },
  ],
};

let model: ScriptedModelServer;
let simple: AgentProcess;
let orchestrated: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(script);
  [simple, orchestrated] = await Promise.all([
    startAgent({ geminiBaseUrl: model.geminiBaseUrl }),
    startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { agent: tree } }),
  ]);
});

afterAll(async () => {
  await Promise.all([simple?.stop(), orchestrated?.stop()]);
  await model?.close();
});

async function stopAt(agent: AgentProcess, message: string) {
  const created = await post(`${agent.url}/conversations`, { message });
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return { id: created.body.conversation.id as string, uuid: created.body.result.approval.uuid as string };
}

const toolMessages = (conversation: any) => conversation.messages.filter((m: any) => m.role === 'tool');

describe('a rejection with a reason (simple mode)', () => {
  it('tells the model "Rejected by a human: <reason>" and records it on the tool message and the approval', async () => {
    const { id, uuid } = await stopAt(simple, 'add big-1 with value 1000000000');
    const before = model.requests.length;
    const no = await post(`${simple.url}/approvals/${uuid}`, { approved: false, reason: 'value too large' });
    expect(no.status).toBe(200);
    expect(resourceNames(join(simple.dir, 'resources.db'))).not.toContain('big-1');

    // The next model request carries the reason in the call's result.
    const next = model.requests.slice(before);
    expect(next).toHaveLength(1);
    expect(next[0]!.toolResults).toEqual([{ name: 'resources_add', output: REJECTED('value too large') }]);

    // The visible answer still says the operation was cancelled, then the model's.
    expect(no.body.result.waiting_approval).toBe(false);
    expect(no.body.result.response).toBe(`Operation cancelled by user.\n\nDone. resources_add: ${REJECTED('value too large')}`);
    const conversation = no.body.conversation;
    expect(conversation.status).toBe('active');
    expect(conversation.pending_approval).toBeUndefined();
    expect(toolMessages(conversation)).toEqual([
      expect.objectContaining({
        content: REJECTED('value too large'),
        tool_call: {
          name: 'resources_add',
          arguments: { name: 'big-1', value: 1000000000 },
          result: REJECTED('value too large'),
          is_error: true,
          rejected: true,
          reason: 'value too large',
        },
      }),
    ]);
    // Stored, not only answered: a later read shows the same.
    const read = await get(`${simple.url}/conversations/${id}`);
    expect(toolMessages(read.body.conversation)[0].tool_call).toMatchObject({ rejected: true, reason: 'value too large' });

    // A second decision is a 409 that shows the first one with its reason.
    const again = await post(`${simple.url}/approvals/${uuid}`, { approved: true });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ decision: 'rejected', approval: { uuid, reason: 'value too large' } });
  });

  it('says only "Rejected by a human." without a reason', async () => {
    const { uuid } = await stopAt(simple, 'add big-2 with value 5');
    const before = model.requests.length;
    const no = await post(`${simple.url}/approvals/${uuid}`, { action: 'reject' });
    expect(no.status).toBe(200);
    const told = 'Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.';
    expect(model.requests[before]!.toolResults).toEqual([{ name: 'resources_add', output: told }]);
    const [tool] = toolMessages(no.body.conversation);
    expect(tool.tool_call).toMatchObject({ rejected: true, result: told });
    expect(tool.tool_call).not.toHaveProperty('reason');
  });

  it('refuses a reason over 2,000 characters or not a string with 400, and the approval stays pending', async () => {
    const { id, uuid } = await stopAt(simple, 'add big-3 with value 5');
    const long = await post(`${simple.url}/approvals/${uuid}`, { answer: 'no', reason: 'x'.repeat(2001) });
    expect(long.status).toBe(400);
    expect(long.body.error).toBe('"reason" is 2001 characters long; at most 2000 are accepted');
    const number = await post(`${simple.url}/approvals/${uuid}`, { approved: false, reason: 42 });
    expect(number.status).toBe(400);
    expect(number.body.error).toMatch(/"reason" must be a string/);
    const read = await get(`${simple.url}/conversations/${id}`);
    expect(read.body.conversation).toMatchObject({ status: 'waiting_approval', pending_approval: { uuid } });
    expect((await post(`${simple.url}/approvals/${uuid}`, { answer: 'no', reason: 'x'.repeat(2000) })).status).toBe(200);
  });

  it('answers a repeat of the rejected call with the same rejection, without a second approval', async () => {
    const db = join(simple.dir, 'resources.db');
    const { id, uuid } = await stopAt(simple, 'repeat: add big-4 with value 1000000000');
    const before = model.requests.length;
    const no = await post(`${simple.url}/approvals/${uuid}`, { approved: false, reason: 'value too large' });
    expect(no.status).toBe(200);
    // The human's no, the model's repeat, its instant refusal, the model's answer.
    const requests = model.requests.slice(before);
    expect(requests).toHaveLength(2);
    expect(requests.map((request) => request.toolResults)).toEqual([
      [{ name: 'resources_add', output: REJECTED('value too large') }],
      [{ name: 'resources_add', output: REJECTED('value too large') }],
    ]);
    expect(no.body.result).toMatchObject({
      waiting_approval: false,
      response: 'Operation cancelled by user.\n\nUnderstood: I will not add it (told 2 times).',
    });
    const conversation = no.body.conversation;
    expect(conversation.status).toBe('active');
    expect(conversation.pending_approval).toBeUndefined();
    expect(conversation.pending_approvals ?? []).toEqual([]);
    const calls = conversation.messages.filter((m: any) => m.role === 'assistant' && m.tool_call);
    expect(calls).toHaveLength(2);
    expect(toolMessages(conversation).map((m: any) => m.tool_call)).toEqual([
      expect.objectContaining({ name: 'resources_add', rejected: true, reason: 'value too large' }),
      expect.objectContaining({ name: 'resources_add', rejected: true, reason: 'value too large' }),
    ]);
    expect(resourceNames(db)).not.toContain('big-4');

    // A new user message ends the run: asked again, the call goes to a human again.
    const asked = await post(`${simple.url}/conversations/${id}/messages`, { message: 'add big-4 with value 1000000000' });
    expect(asked.body.result.waiting_approval).toBe(true);
    expect(asked.body.result.approval.uuid).not.toBe(uuid);
    expect((await post(`${simple.url}/approvals/${asked.body.result.approval.uuid}`, { approved: false })).status).toBe(200);
  });
});

describe('a rejection with a reason (agent tree, sequential)', () => {
  it("records the reason on the node's tool message and cancels the pipeline", async () => {
    const { id, uuid } = await stopAt(orchestrated, 'add tree-big with value 1000000000');
    const before = model.requests.length;
    const no = await post(`${orchestrated.url}/approvals/${uuid}`, { answer: 'no', reason: 'value too large' });
    expect(no.status).toBe(200);
    expect(no.body.result).toEqual({ response: 'Operation cancelled by user.', waiting_approval: false });
    // The pipeline is cancelled (docs/configuration.md, "The agent tree"): no node runs after the rejection.
    expect(model.requests.length).toBe(before);
    const conversation = (await get(`${orchestrated.url}/conversations/${id}`)).body.conversation;
    expect(conversation.pipeline_state).toBeUndefined();
    expect(conversation.messages.at(-1)).toMatchObject({
      role: 'tool',
      node: 'executor',
      content: REJECTED('value too large'),
      tool_call: { name: 'resources_add', is_error: true, rejected: true, reason: 'value too large' },
    });
    expect(resourceNames(join(orchestrated.dir, 'resources.db'))).not.toContain('tree-big');
  });
});
