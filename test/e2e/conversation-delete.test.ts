/**
 * Deleting a conversation, end to end: `bin/asg up` with API tokens, the real mesh over gRPC, the real mcp-resources
 * server and a scripted model. Its owner deletes it (204) while it waits for an approval and a live event stream of it
 * is open: the approval is rejected ("conversation deleted") and audited, the stream ends with conversation_deleted,
 * and every face answers the id as unknown — REST, tRPC, A2A (-32001), the OpenAI-compatible `/v1`. Another chat user
 * gets exactly the answer of an unknown conversation and deletes nothing; `asg conversations delete` deletes too.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAsg } from '../support/asg-cli.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { openSse } from '../support/sse-reader.js';
import { trpcClient } from '../support/trpc-client.js';

const TOKENS = {
  ALICE_TOKEN: 'e2e-del-alice-token-3b7e1c9a5f2d',
  BOB_TOKEN: 'e2e-del-bob-token-8c2f6a4d0e9b',
  ROOT_TOKEN: 'e2e-del-root-token-1d5a9e3c7b4f',
};
const AUTH = {
  tokens: [
    { name: 'alice', token_env: 'ALICE_TOKEN', roles: ['chat'] },
    { name: 'bob', token_env: 'BOB_TOKEN', roles: ['chat'] },
    { name: 'root', token_env: 'ROOT_TOKEN', roles: ['admin'] },
  ],
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alice = bearer(TOKENS.ALICE_TOKEN);
const bob = bearer(TOKENS.BOB_TOKEN);
const root = bearer(TOKENS.ROOT_TOKEN);

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: TOKENS, config: { auth: AUTH } });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

const remove = (id: string, headers: Record<string, string>) => request(`${agent.url}/conversations/${id}`, 'DELETE', undefined, headers);

/** What a face answers for `id`, with the id itself written as <id>. */
const withoutId = (text: string, id: string) => text.replaceAll(id, '<id>');

describe('DELETE /conversations/:id', () => {
  it('deletes a waiting conversation for its owner: its approval rejected and audited, its stream ended, unknown on every face', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'add e2e-deleted with value 3' }, alice);
    expect(created.status).toBe(201);
    expect(created.body.result.waiting_approval).toBe(true);
    const id = created.body.conversation.id as string;
    const uuid = created.body.result.approval.uuid as string;
    const stream = await openSse(`${agent.url}/conversations/${id}/events?token=${TOKENS.ALICE_TOKEN}`);
    await vi.waitFor(() => expect(stream.events[0]?.event).toBe('snapshot'));

    // Bob gets what an unknown id gets, and nothing is deleted.
    const unknown = randomUUID();
    const strangers = await remove(id, bob);
    const nobodys = await remove(unknown, bob);
    expect({ status: strangers.status, error: withoutId(strangers.body.error, id) }).toEqual({
      status: 404,
      error: withoutId(nobodys.body.error, unknown),
    });
    expect((await get(`${agent.url}/conversations/${id}`, alice)).status).toBe(200);

    const deleted = await remove(id, alice);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');

    await vi.waitFor(() => expect(stream.ended).toBe(true), { timeout: 10_000 });
    expect(stream.events.at(-1)?.event).toBe('conversation_deleted');

    // REST, tRPC, A2A and /v1: unknown.
    const read = await get(`${agent.url}/conversations/${id}`, alice);
    expect(read.status).toBe(404);
    expect((await get(`${agent.url}/approvals/${uuid}`, root)).status).toBe(404);
    expect((await remove(id, alice)).status).toBe(404);
    await expect(trpcClient(agent.url, alice).conversations.get.query({ id })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
    const task = await post(`${agent.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id } }, alice);
    expect(task.body.error).toEqual({ code: -32001, message: `task not found: ${id}` });
    const completion = await post(
      `${agent.url}/v1/chat/completions`,
      { model: 'agent', messages: [{ role: 'user', content: 'and now?' }] },
      { ...alice, 'x-conversation-id': id },
    );
    expect(completion.status).toBe(404);

    // The audit keeps the decision and says who deleted what.
    const audit = (await get(`${agent.url}/audit?kind=approval.decided,conversation.deleted&limit=500`, root)).body.entries as {
      kind: string;
      actor: string;
      via: string;
      subject: string;
      detail: Record<string, unknown>;
    }[];
    const decision = audit.find((entry) => entry.kind === 'approval.decided' && entry.subject === uuid);
    expect(decision).toMatchObject({ actor: 'token:alice', via: 'rest' });
    expect(decision?.detail).toMatchObject({ conversation_id: id, status: 'rejected', reason: 'conversation deleted' });
    const deletion = audit.filter((entry) => entry.kind === 'conversation.deleted' && entry.subject === id);
    expect(deletion).toHaveLength(1);
    expect(deletion[0]).toMatchObject({ actor: 'token:alice', via: 'rest' });
    stream.close();
  });

  it('deletes over tRPC and with asg conversations delete, as an admin', async () => {
    const first = (await post(`${agent.url}/conversations`, { message: 'hello' }, alice)).body.conversation.id as string;
    const second = (await post(`${agent.url}/conversations`, { message: 'hello again' }, alice)).body.conversation.id as string;

    expect(await trpcClient(agent.url, alice).conversations.delete.mutate({ id: first })).toEqual({ deleted: true });
    expect((await get(`${agent.url}/conversations/${first}`, alice)).status).toBe(404);

    const cli = await runAsg(['conversations', 'delete', second, '--url', agent.url], { ASG_TOKEN: TOKENS.ROOT_TOKEN });
    expect(cli).toMatchObject({ code: 0, stdout: `conversation ${second} deleted\n` });
    expect((await get(`${agent.url}/conversations/${second}`, alice)).status).toBe(404);
    const again = await runAsg(['conversations', 'delete', second, '--url', agent.url], { ASG_TOKEN: TOKENS.ROOT_TOKEN });
    expect(again.code).toBe(5);

    const audit = (await get(`${agent.url}/audit?kind=conversation.deleted&limit=500`, root)).body.entries as {
      subject: string;
      actor: string;
      via: string;
    }[];
    expect(audit.find((entry) => entry.subject === first)).toMatchObject({ actor: 'token:alice', via: 'web' });
    expect(audit.find((entry) => entry.subject === second)).toMatchObject({ actor: 'token:root', via: 'cli' });
  });
});
