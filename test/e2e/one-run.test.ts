/**
 * One active run per conversation, through the whole mesh. A message sent
 * while a turn of its conversation runs is refused on every face (REST 409 with the
 * conversation id, A2A -32004, tRPC CONFLICT, an MCP tool error); the turn that runs is never interleaved with
 * another; and a turn that fails (a provider error, a turn past chat.turn_timeout) does not
 * leave the conversation busy.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TRPCClientError } from '@trpc/client';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { gates } from '../support/gates.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ModelRequest, type ScriptedModelServer, type ScriptedReply } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { openSse } from '../support/sse-reader.js';
import { trpcClient } from '../support/trpc-client.js';
import { until } from '../support/until.js';

const TURN_TIMEOUT_MS = 6000;
/** Races of two messages on one conversation: each round is a fresh race of the one rule. */
const ROUNDS = sized(25, 50);

let model: ScriptedModelServer;
let agent: AgentProcess;

/** Answers the test lets go (test/support/gates.ts): a turn waiting at the model for one is surely running until then. */
const gate = gates();

/**
 * The model answers "answer to: <message>", for "round …" and "slow …" messages once their gate
 * opens; "fail …" gets a provider error (400, not retried) and "hang …" no answer at all (the
 * turn runs past chat.turn_timeout).
 */
async function script(request: ModelRequest): Promise<ScriptedReply> {
  const adder = /You are the adder-(\w+)\./.exec(request.system)?.[1];
  if (adder) {
    // Agent-tree branches: each adds a resource (gated), then answers; adder-a once its gate opens.
    if (request.toolResults.length === 0)
      return { toolCalls: [{ name: 'resources_add', args: { name: `${adder}-${request.lastUserText}`, value: 1 } }] };
    if (adder === 'a') await gate(`adder-a ${request.lastUserText}`).opened;
    return { text: `ADDED ${adder}` };
  }
  if (/You are the summarizer\./.test(request.system)) return { text: 'SUMMARY' };
  if (request.lastUserText.startsWith('fail')) return { httpStatus: 400, message: 'scripted provider failure' };
  if (request.lastUserText.startsWith('hang')) return { hang: true };
  if (request.lastUserText.startsWith('approve-me')) {
    // A destructive call that stops for approval; once approved and run, the continuation, once its gate opens.
    if (request.toolResults.length === 0) return { toolCalls: [{ name: 'resources_add', args: { name: 'busy-1', value: 1 } }] };
    await gate('approve-me').opened;
    return { text: 'added it' };
  }
  if (/^(round|slow) /.test(request.lastUserText)) await gate(request.lastUserText).opened;
  return { text: `answer to: ${request.lastUserText}` };
}

beforeAll(async () => {
  model = await startScriptedModel(script);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { chat: { turn_timeout: `${TURN_TIMEOUT_MS}ms` } } });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

async function newConversation(): Promise<string> {
  const created = await post(`${agent.url}/conversations`, {});
  expect(created.status).toBe(201);
  return created.body.conversation.id;
}

const send = (id: string, message: string) => post(`${agent.url}/conversations/${id}/messages`, { message });
const conversation = async (id: string) => (await get(`${agent.url}/conversations/${id}`)).body.conversation;
const transcript = async (id: string): Promise<string[]> =>
  (await conversation(id)).messages.filter((m: any) => m.role !== 'system').map((m: any) => `${m.role}: ${m.content}`);

/** Sends a slow message without waiting for its answer (wrapped: an async function would wait for a promise it returns), once its turn runs; it answers once its gate opens. */
async function slowTurn(id: string, message: string) {
  const answer = send(id, message);
  await vi.waitFor(async () => expect((await conversation(id)).turn_running).toBe(true), { timeout: 10_000, interval: 20 });
  return { answer };
}

describe('one active run per conversation', () => {
  it(`of two concurrent messages on an idle conversation exactly one runs, the other is 409 — ${ROUNDS} rounds, no interleaving`, async () => {
    const id = await newConversation();
    const before = model.requests.length;
    const expected: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Both sent at once; the one that runs waits at the model until the other has had its answer.
      let answered = 0;
      const counted = (answer: ReturnType<typeof send>) =>
        answer.finally(() => {
          answered += 1;
        });
      const sent = [counted(send(id, `round ${round} a`)), counted(send(id, `round ${round} b`))] as const;
      await until(`an answer in round ${round}`, () => answered > 0, 10_000);
      for (const message of [`round ${round} a`, `round ${round} b`]) gate(message).open();
      const [a, b] = await Promise.all(sent);
      const statuses = [a.status, b.status].sort();
      expect(statuses, `round ${round}`).toEqual([200, 409]);
      const [won, lost] = a.status === 200 ? [a, b] : [b, a];
      expect(lost.body).toEqual({ error: expect.stringContaining(`conversation ${id} is busy`), conversation_id: id });
      expect(lost.body.error).toContain(`GET /conversations/${id}/events`);
      const message = a.status === 200 ? `round ${round} a` : `round ${round} b`;
      expect(won.body.result).toMatchObject({ response: `answer to: ${message}`, waiting_approval: false });
      expected.push(`user: ${message}`, `assistant: answer to: ${message}`);
    }
    // In order, each answer right after its own message: the refused messages were never stored nor sent to the model.
    expect(await transcript(id)).toEqual(expected);
    expect(model.requests.length - before).toBe(ROUNDS);
    expect((await conversation(id)).turn_running).toBeUndefined();
  }, 60_000);

  it('says on the events stream when a turn starts and ends', async () => {
    const id = await newConversation();
    const events = await openSse(`${agent.url}/conversations/${id}/events`);
    try {
      expect((await send(id, 'watch me')).status).toBe(200);
      const kinds = () => events.events.map((event) => event.event);
      await vi.waitFor(() => expect(kinds()).toContain('turn_ended'), { timeout: 10_000 });
      const turn = kinds().filter((kind) => kind === 'turn_started' || kind === 'turn_ended' || kind === 'message_added');
      expect(turn).toEqual(['message_added', 'turn_started', 'message_added', 'turn_ended']);
    } finally {
      events.close();
    }
  });

  it('a turn that fails with a provider error does not leave the conversation busy', async () => {
    const id = await newConversation();
    const failed = await send(id, 'fail please');
    expect(failed.status).toBe(200);
    expect(failed.body.result.response).toContain('The model could not answer');
    const next = await send(id, 'and now?');
    expect(next.status).toBe(200);
    expect(next.body.result.response).toBe('answer to: and now?');
  });

  // At the deadline the run stops (the machine's timer): no new call starts, and its last write,
  // made outside the expired deadline (run/driver.ts), records the note or the model's timeout
  // and clears the mark; a run that ends without that write clears it itself (turn-end.ts; the
  // superseded pipeline run below takes that path every time).
  it('a turn past chat.turn_timeout (504) does not leave the conversation busy', async () => {
    const id = await newConversation();
    const timedOut = await send(id, 'hang forever');
    expect(timedOut.status).toBe(504);
    // The orchestrator ends the turn as soon as its deadline passes; far sooner than the stale limit (turn_timeout + 60 s).
    await vi.waitFor(async () => expect((await conversation(id)).turn_running).toBeUndefined(), { timeout: 5_000, interval: 50 });
    const next = await send(id, 'still there?');
    expect(next.status).toBe(200);
    expect(next.body.result.response).toBe('answer to: still there?');
  });

  it("keeps the waiting answer while an approval is pending, and is busy while the approved call's continuation runs", async () => {
    const id = await newConversation();
    const stop = await send(id, 'approve-me please');
    expect(stop.body.result.waiting_approval).toBe(true);
    const uuid = stop.body.result.approval.uuid as string;
    const waiting = await send(id, 'hello?');
    expect(waiting.status).toBe(200);
    expect(waiting.body.result).toMatchObject({ waiting_approval: true, approval: { uuid } });

    const go = post(`${agent.url}/approvals/${uuid}`, { approved: true });
    await vi.waitFor(async () => expect((await conversation(id)).turn_running).toBe(true), { timeout: 10_000, interval: 20 });
    const refused = await send(id, 'me too');
    expect(refused.status).toBe(409);
    expect(refused.body.conversation_id).toBe(id);
    gate('approve-me').open();
    expect((await go).status).toBe(200);
    const roles = (await conversation(id)).messages
      .filter((m: any) => m.role !== 'system')
      .map((m: any) => `${m.role}: ${m.tool_call ? m.tool_call.name : m.content}`);
    expect(roles).toEqual(['user: approve-me please', 'assistant: resources_add', 'tool: resources_add', 'assistant: added it']);
  });

  it('answers a busy A2A message/send continuing the task with -32004, and tasks/get shows it working', async () => {
    const id = await newConversation();
    const running = await slowTurn(id, 'slow one');
    const continued = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { taskId: id, message: { role: 'user', parts: [{ type: 'text', text: 'me too' }] } },
    });
    const task = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id } });
    gate('slow one').open();
    expect((await running.answer).status).toBe(200);
    expect(continued.status).toBe(200);
    expect(continued.body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32004, message: expect.stringContaining(`task ${id} is busy`) },
    });
    expect(task.body.result.status.state).toBe('working');
    expect(await transcript(id)).toEqual(['user: slow one', 'assistant: answer to: slow one']);
  });

  it('answers a busy tRPC conversations.send with CONFLICT', async () => {
    const id = await newConversation();
    const running = await slowTurn(id, 'slow two');
    const error = await trpcClient(agent.url)
      .conversations.send.mutate({ conversationId: id, message: 'me too' })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    gate('slow two').open();
    expect((await running.answer).status).toBe(200);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<any>).data?.code).toBe('CONFLICT');
    expect((error as TRPCClientError<any>).message).toContain(`conversation ${id} is busy`);
    expect(await transcript(id)).toEqual(['user: slow two', 'assistant: answer to: slow two']);
  });

  it('answers a busy message on the MCP face with a tool error saying so', async () => {
    const id = await newConversation();
    const client = new Client({ name: 'one-run-e2e', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
    try {
      const running = await slowTurn(id, 'slow three');
      const result = await client.callTool({ name: 'ask', arguments: { message: 'me too', conversation_id: id } });
      gate('slow three').open();
      expect((await running.answer).status).toBe(200);
      expect(result.isError).toBe(true);
      expect((result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n')).toContain(`conversation ${id} is busy`);
      expect(await transcript(id)).toEqual(['user: slow three', 'assistant: answer to: slow three']);
    } finally {
      await client.close();
    }
  });
});

describe('a pipeline run superseded by a rejection frees its conversation', () => {
  let tree: AgentProcess;

  beforeAll(async () => {
    const agentTree = {
      name: 'pipeline',
      type: 'sequential',
      agents: [
        {
          name: 'fanout',
          type: 'parallel',
          approvals: 'required',
          agents: [
            { name: 'adder-a', type: 'llm', output_key: 'first', prompt: 'You are the adder-a.' },
            { name: 'adder-b', type: 'llm', output_key: 'second', prompt: 'You are the adder-b.' },
          ],
        },
        { name: 'summarizer', type: 'llm', prompt: 'You are the summarizer.' },
      ],
    };
    tree = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { agent: agentTree, chat: { turn_timeout: `${TURN_TIMEOUT_MS}ms` } },
    });
  });

  afterAll(async () => {
    await tree?.stop();
  });

  it('approve one branch, reject the other while the first resumes: the resumed run stops, and the next message runs', async () => {
    const created = await post(`${tree.url}/conversations`, { message: 'run1' });
    expect(created.status).toBe(201);
    const id = created.body.conversation.id as string;
    const [a, b] = (created.body.conversation.pending_approvals as { uuid: string; tool_args: { name: string } }[]).sort((x, y) =>
      x.tool_args.name.localeCompare(y.tool_args.name),
    );
    expect([a!.tool_args.name, b!.tool_args.name]).toEqual(['a-run1', 'b-run1']);

    const resumed = post(`${tree.url}/approvals/${a!.uuid}`, { approved: true });
    await vi.waitFor(async () => expect((await get(`${tree.url}/conversations/${id}`)).body.conversation.turn_running).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    expect((await post(`${tree.url}/approvals/${b!.uuid}`, { approved: false })).status).toBe(200);
    gate('adder-a run1').open();
    const stopped = await resumed;
    expect(stopped.status).toBe(200);
    expect(stopped.body.result.response).toContain('This run of the pipeline stopped');

    // No write of the superseded run ended its turn; the orchestrator did, so the conversation takes the next message.
    expect((await get(`${tree.url}/conversations/${id}`)).body.conversation.turn_running).toBeUndefined();
    const next = await post(`${tree.url}/conversations/${id}/messages`, { message: 'run2' });
    expect(next.status).toBe(200);
    expect(next.body.result.waiting_approval).toBe(true);
  });
});
