/**
 * Lists are summaries, paged: `GET /conversations` (and the tRPC list the web chat
 * reads) answers summaries — no messages — and `GET /conversations/:id` pages long histories.
 * The real mesh (`bin/asg up`) with a scripted model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { openSqliteStorage } from '../../services/conversation-store/sqlite/driver.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { trpcClient } from '../support/trpc-client.js';

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

/** About 60 KB of ordinary words (many tokens, as a long paste is). */
const sixtyKb = (n: number) =>
  `Report ${n}: ${'the quarterly numbers look steady and the team is on track '.repeat(1000)}`.slice(0, 60_000);

async function bodyBytes(url: string): Promise<{ status: number; bytes: number; body: any }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  return { status: response.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) };
}

describe('GET /conversations lists summaries', () => {
  const ids: string[] = [];

  beforeAll(async () => {
    for (let n = 0; n < 10; n++) {
      const created = await post(`${agent.url}/conversations`, { message: sixtyKb(n) });
      expect(created.status).toBe(201);
      ids.push(created.body.conversation.id);
    }
  });

  it('answers ten conversations of 60 KB each in under 100 KB, with title and counts', async () => {
    const { status, bytes, body } = await bodyBytes(`${agent.url}/conversations?limit=10`);
    expect(status).toBe(200);
    expect(bytes).toBeLessThan(100_000);
    expect(body.conversations.map((item: any) => item.id).sort()).toEqual([...ids].sort());
    for (const item of body.conversations) {
      expect(item).not.toHaveProperty('messages');
      expect(item).toMatchObject({
        status: 'active',
        message_count: 3,
        pending_approvals: 0,
        session_id: expect.stringMatching(/^[0-9a-f]{8}$/),
      });
      expect(item.title).toMatch(/^Report \d: the quarterly numbers look steady and the team\b.*…$/);
      expect([...item.title].length).toBeLessThanOrEqual(60);
    }
    expect(body.summary).toMatchObject({ total: 10, active: 10, waiting_approval: 0, completed: 0 });
  });

  it('counts pending approvals and keeps pending_approval', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'delete resource web-1' });
    expect(created.body.result.waiting_approval).toBe(true);
    const { body } = await bodyBytes(`${agent.url}/conversations?limit=1`);
    expect(body.conversations[0]).toMatchObject({
      id: created.body.conversation.id,
      status: 'waiting_approval',
      title: 'delete resource web-1',
      pending_approvals: 1,
      pending_approval: { uuid: created.body.result.approval.uuid, tool_name: 'resources_remove' },
    });
    expect(body.next_cursor).toEqual(expect.any(String));
    const next = await bodyBytes(`${agent.url}/conversations?limit=1&cursor=${encodeURIComponent(body.next_cursor)}`);
    expect(next.body.conversations[0].id).not.toBe(created.body.conversation.id);
    await post(`${agent.url}/approvals/${created.body.result.approval.uuid}`, { approved: false });
  });

  it('gives the web chat the same summaries over tRPC', async () => {
    const page = await trpcClient(agent.url).conversations.list.query({ limit: 3 });
    expect(page.conversations).toHaveLength(3);
    for (const item of page.conversations) {
      expect(item).not.toHaveProperty('messages');
      expect(item).toEqual(
        expect.objectContaining({ title: expect.any(String), message_count: expect.any(Number), pending_approvals: expect.any(Number) }),
      );
    }
    expect(page.summary.total).toBe(11);
  });
});

describe('GET /conversations/:id pages long histories', () => {
  let id: string;

  beforeAll(async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'hello there' });
    id = created.body.conversation.id;
    // 1,200 more messages, written as a second process sharing the store's database (WAL):
    // six hundred turns through a model would only make the test slow.
    const storage = openSqliteStorage({ dataDir: agent.dataDir });
    try {
      await storage.appendMessages({
        conversationId: id,
        messages: Array.from({ length: 1200 }, (_, index) => ({
          role: index % 2 ? MessageRole.MESSAGE_ROLE_ASSISTANT : MessageRole.MESSAGE_ROLE_USER,
          content: `line ${index + 1}`,
        })),
        status: 0,
        returnConversation: false,
      });
    } finally {
      await storage.close();
    }
  });

  it('answers a short history whole, in the documented shape', async () => {
    const created = await post(`${agent.url}/conversations`, { message: 'list resources' });
    const { body } = await get(`${agent.url}/conversations/${created.body.conversation.id}`);
    expect(body.conversation.messages.map((message: any) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(body).toMatchObject({ has_more_before: false, has_more_after: false });
  });

  it('answers the newest 1,000 messages of a longer one, and says there are more', async () => {
    const { status, body } = await get(`${agent.url}/conversations/${id}`);
    expect(status).toBe(200);
    expect(body.conversation.messages).toHaveLength(1000);
    expect(body.conversation.messages.at(-1).content).toBe('line 1200');
    expect(body).toMatchObject({ has_more_before: true, has_more_after: false });
  });

  it('walks the whole history back with ?before= and forward with ?after=', async () => {
    const seen: string[] = [];
    let page = (await get(`${agent.url}/conversations/${id}?limit=500`)).body;
    seen.unshift(...page.conversation.messages.map((message: any) => message.content));
    while (page.has_more_before) {
      page = (await get(`${agent.url}/conversations/${id}?limit=500&before=${page.conversation.messages[0].id}`)).body;
      expect(page.has_more_after).toBe(true);
      seen.unshift(...page.conversation.messages.map((message: any) => message.content));
    }
    expect(seen).toHaveLength(1203);
    expect(seen.slice(0, 3)).toEqual(['You manage resources.', 'hello there', 'I can list, add and remove resources.']);
    expect(seen.slice(3)).toEqual(Array.from({ length: 1200 }, (_, index) => `line ${index + 1}`));

    const first = page.conversation.messages[0].id;
    const after = (await get(`${agent.url}/conversations/${id}?after=${first}&limit=2`)).body;
    expect(after.conversation.messages.map((message: any) => message.content)).toEqual([
      'hello there',
      'I can list, add and remove resources.',
    ]);
    expect(after).toMatchObject({ has_more_before: true, has_more_after: true });
  });

  it('refuses bad paging with a 400 that says what is expected', async () => {
    const other = (await post(`${agent.url}/conversations`)).body.conversation;
    const cases: [string, RegExp][] = [
      ['limit=0', /"limit" must be an integer from 1 to 1000/],
      ['limit=1001', /"limit" must be an integer from 1 to 1000/],
      ['limit=abc', /"limit" must be an integer/],
      ['limit=1&limit=2', /"limit" must be given once/],
      ['before=%zz', /"before" must be the id of a message/],
      [`before=${other.messages[0].id}&after=${other.messages[0].id}`, /"before" and "after" cannot be used together/],
      [`before=${other.messages[0].id}`, /before_message_id: .* is not a message of conversation/],
      ['after=00000000-0000-4000-8000-000000000000', /after_message_id: .* is not a message of conversation/],
    ];
    for (const [query, message] of cases) {
      const response = await get(`${agent.url}/conversations/${id}?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error, query).toMatch(message);
    }
  });
});
