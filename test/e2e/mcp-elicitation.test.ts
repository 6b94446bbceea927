/**
 * End to end: an MCP server that asks for input during a tool call
 * (2026-07-28 `input_required`, test/fixtures/eliciting-mcp-server.ts) stops the turn with a
 * pending approval that names its question; the human's answer through POST /approvals/:uuid
 * reaches the server once and the model reads the tool's result; a rejection declines the
 * question (the server's decline path runs) and the model is told; a second decision is 409;
 * a restart while the question waits loses nothing. `asg approvals` shows the question and
 * answers it with --input; A2A answers it with a data part in the next message of the
 * input-required task (a rejection word, or {"approved": false}, declines).
 * book_room has no annotations, so `approval: never` makes the question the call's only stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOM_QUESTION, startElicitingServer, type ElicitingServer } from '../fixtures/eliciting-mcp-server.js';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { runAsg } from '../support/asg-cli.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ModelRequest, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

let rooms: ElicitingServer;
let model: ScriptedModelServer;
let agent: AgentProcess;
/** The same server with book_room destructive (no annotations, no rule): approval first, then the question. */
let gated: AgentProcess;

/** Books the room the message names ("book room 12"), then says what the tool answered. */
function script(request: ModelRequest) {
  const result = request.toolResults.find((tool) => tool.name === 'book_room');
  if (result) return { text: `tool said: ${result.output}` };
  const room = /room (\S+)/.exec(request.lastUserText)?.[1] ?? 'none';
  return { toolCalls: [{ name: 'book_room', args: { room } }] };
}

beforeAll(async () => {
  rooms = await startElicitingServer();
  model = await startScriptedModel(script);
  [agent, gated] = await Promise.all([
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { mcp_servers: [{ name: 'rooms', url: rooms.url, approval: { book_room: 'never' } }] },
      dir: tempDir('asg-elicitation-'),
    }),
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { mcp_servers: [{ name: 'rooms', url: rooms.url }] },
      dir: tempDir('asg-elicitation-gated-'),
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([agent?.stop(), gated?.stop()]);
  await model?.close();
  await rooms?.close();
});

async function askFor(room: string, of = agent) {
  const created = await post(`${of.url}/conversations`, { message: `book room ${room}` });
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return { id: created.body.conversation.id as string, uuid: created.body.result.approval.uuid as string, body: created.body };
}

describe("an MCP server's question becomes a pending approval", () => {
  it('stops the turn with an approval naming the question and the fields; the answer reaches the server once and the model reads the result', async () => {
    const { id, uuid, body } = await askFor('A1');
    expect(body.result.response).toContain(ROOM_QUESTION.message);
    const approval = await get(`${agent.url}/approvals/${uuid}`);
    expect(approval.status).toBe(200);
    expect(approval.body).toMatchObject({ status: 'pending', tool_name: 'book_room', tool_args: { room: 'A1' } });
    expect(approval.body.description).toContain('MCP server rooms asks for input to finish book_room: "Who is the room for?"');
    expect(approval.body.description).toContain('name (string, required, Guest name)');
    expect(approval.body).toMatchObject({
      kind: 'input',
      input_request: { server: 'rooms', questions: [ROOM_QUESTION.message], requested_schema: ROOM_QUESTION.requestedSchema },
    });
    expect(rooms.bookings).toEqual([]);

    // An answer that does not fit the requested schema decides nothing.
    const bad = await post(`${agent.url}/approvals/${uuid}`, { approved: true, input: { name: 42 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/input\/name must be string/);
    const missing = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    expect(missing.status).toBe(400);
    const edited = await post(`${agent.url}/approvals/${uuid}`, { approved: true, arguments: { room: 'B' } });
    expect(edited.status).toBe(400);
    expect(edited.body.error).toContain('answer with "input", not "arguments"');
    expect((await get(`${agent.url}/approvals/${uuid}`)).body.status).toBe('pending');

    const yes = await post(`${agent.url}/approvals/${uuid}`, { approved: true, input: { name: 'Ada' } });
    expect(yes.status).toBe(200);
    expect(yes.body.result.response).toBe('tool said: room A1 booked for Ada');
    expect(rooms.bookings).toEqual(['A1:Ada']);
    expect(rooms.states).toEqual(['room=A1']);
    const decided = await get(`${agent.url}/approvals/${uuid}`);
    expect(decided.body).toMatchObject({ status: 'approved', execution: 'done', edited_args: { name: 'Ada' } });
    expect(decided.body).not.toHaveProperty('kind');

    const again = await post(`${agent.url}/approvals/${uuid}`, { approved: true, input: { name: 'Bob' } });
    expect(again.status).toBe(409);
    expect(rooms.bookings).toEqual(['A1:Ada']);
    const conversation = await get(`${agent.url}/conversations/${id}`);
    expect(conversation.body.status).not.toBe('waiting_approval');
  });

  it('declines the question on a rejection: the server hears the decline once, books nothing, and the model is told', async () => {
    const { uuid } = await askFor('B2');
    const before = rooms.states.length;
    const no = await post(`${agent.url}/approvals/${uuid}`, { approved: false, reason: 'not now' });
    expect(no.status).toBe(200);
    expect(no.body.result.response).toMatch(
      /^Operation cancelled by user\.[\s\S]*tool said: book_room did not finish: a human declined to answer the question of MCP server rooms: not now\./,
    );
    await until('the decline at the server', () => rooms.states.length > before, 10_000);
    expect(rooms.states.slice(before)).toEqual(['room=B2']);
    expect(rooms.bookings).toEqual(['A1:Ada']);
    const again = await post(`${agent.url}/approvals/${uuid}`, { approved: true, input: { name: 'Eve' } });
    expect(again.status).toBe(409);
    expect(rooms.states.slice(before)).toEqual(['room=B2']);
  });

  it('a destructive tool: the approval of the call comes first; approved, the server asks and the question is a second approval of the same call', async () => {
    const { uuid } = await askFor('C3', gated);
    const first = await get(`${gated.url}/approvals/${uuid}`);
    expect(first.body.description).toBe('book_room on rooms with arguments {"room":"C3"}');
    expect(first.body).not.toHaveProperty('kind');
    const notAsked = await post(`${gated.url}/approvals/${uuid}`, { approved: true, input: { name: 'Cy' } });
    expect(notAsked.status).toBe(400);
    expect(notAsked.body.error).toBe(`approval ${uuid} does not ask for input: decide it without "input"`);
    const approved = await post(`${gated.url}/approvals/${uuid}`, { approved: true });
    expect(approved.status).toBe(200);
    expect(approved.body.result.waiting_approval).toBe(true);
    const question = approved.body.result.approval;
    expect(question.uuid).not.toBe(uuid);
    expect(question.description).toContain('MCP server rooms asks for input to finish book_room: "Who is the room for?"');
    expect(rooms.bookings).not.toContain('C3:Cy');
    const answered = await post(`${gated.url}/approvals/${question.uuid}`, { approved: true, input: { name: 'Cy' } });
    expect(answered.status).toBe(200);
    expect(answered.body.result.response).toBe('tool said: room C3 booked for Cy');
    expect(rooms.bookings.filter((booking) => booking.startsWith('C3:'))).toEqual(['C3:Cy']);
  });

  it('a restart while the question waits loses nothing: the restarted agent sends the answer with the stored request state', async () => {
    const config = { mcp_servers: [{ name: 'rooms', url: rooms.url, approval: { book_room: 'never' } }] };
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config, dir: tempDir('asg-elicitation-restart-') });
    let second: AgentProcess | undefined;
    try {
      const { uuid } = await askFor('D4', first);
      expect(await first.stop()).toBe(0);
      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config, dir: first.dir });
      expect((await get(`${second.url}/approvals/${uuid}`)).body).toMatchObject({ status: 'pending', kind: 'input' });
      const answered = await post(`${second.url}/approvals/${uuid}`, { approved: true, input: { name: 'Dee' } });
      expect(answered.status).toBe(200);
      expect(answered.body.result.response).toBe('tool said: room D4 booked for Dee');
      expect(rooms.bookings.filter((booking) => booking.startsWith('D4:'))).toEqual(['D4:Dee']);
      expect(rooms.states.filter((state) => state === 'room=D4')).toEqual(['room=D4']);
    } finally {
      await first.stop();
      await second?.stop();
    }
  }, 60_000);
});

describe('the question answered through the CLI and A2A, as through REST', () => {
  it('asg approvals shows the question and answers it with --input; an answer that does not fit is refused (2)', async () => {
    const { uuid } = await askFor('E5');
    const shown = await runAsg(['approvals', 'show', uuid, '--url', agent.url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Question of MCP server rooms:\n  Who is the room for?');
    expect(shown.stdout).toContain('Answer with approve --input JSON, fitting:');

    const misfit = await runAsg(['approvals', 'approve', uuid, '--url', agent.url, '--input', '{"name": 7}']);
    expect(misfit.code).toBe(2);
    expect(misfit.stderr).toMatch(/input\/name must be string/);
    const answered = await runAsg(['approvals', 'approve', uuid, '--url', agent.url, '--input', '{"name": "Eve"}']);
    expect(answered.code, answered.stderr).toBe(0);
    expect(rooms.bookings).toContain('E5:Eve');
    const decided = await get(`${agent.url}/approvals/${uuid}`);
    expect(decided.body).toMatchObject({ status: 'approved', via: 'cli', edited_args: { name: 'Eve' } });
  });

  /** An A2A v0.3 `message/send`; `taskId` continues a task. */
  async function a2aSend(parts: Record<string, unknown>[], taskId?: string) {
    const response = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts, ...(taskId && { taskId }) } },
    });
    expect(response.status).toBe(200);
    expect(response.body.error).toBeUndefined();
    return response.body.result;
  }

  it('A2A: the input-required task is answered by the next message with the data; words do not answer it', async () => {
    const task = await a2aSend([{ kind: 'text', text: 'book room F6' }]);
    expect(task.status.state).toBe('input-required');
    const unclear = await a2aSend([{ kind: 'text', text: 'yes' }], task.id);
    expect(unclear.status.state).toBe('input-required');
    expect(JSON.stringify(unclear.status.message)).toContain('does not answer the question');
    expect(rooms.bookings.some((booking) => booking.startsWith('F6:'))).toBe(false);

    const refused = await post(`${agent.url}/a2a`, {
      jsonrpc: '2.0',
      id: 2,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ kind: 'data', data: { name: 7 } }],
          taskId: task.id,
        },
      },
    });
    expect(refused.body.error).toMatchObject({ code: -32602 });
    expect(refused.body.error.message).toMatch(/input\/name must be string/);

    const done = await a2aSend([{ kind: 'data', data: { name: 'Fay' } }], task.id);
    expect(done.status.state).toBe('completed');
    expect(JSON.stringify(done.artifacts)).toContain('tool said: room F6 booked for Fay');
    expect(rooms.bookings).toContain('F6:Fay');
  });

  it('A2A: a rejection word declines the question; the server hears the decline and books nothing', async () => {
    const task = await a2aSend([{ kind: 'text', text: 'book room G7' }]);
    expect(task.status.state).toBe('input-required');
    const declined = await a2aSend([{ kind: 'text', text: 'no' }], task.id);
    expect(declined.status.state).toBe('canceled');
    expect(rooms.bookings.some((booking) => booking.startsWith('G7:'))).toBe(false);
  });
});
