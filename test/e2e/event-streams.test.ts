/**
 * The live event streams against a real mesh: the tRPC subscription `conversation.events`
 * (Node @trpc/client with the `eventsource` package, as the web chat uses it) and the same
 * stream as plain SSE at GET /conversations/:id/events. A watcher whose connection drops
 * comes back with its last stored event id and gets exactly the events it missed, in order,
 * each once — compared with a watcher that stayed connected the whole time.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConversationUpdate } from '../../gateway/app/conversation-updates.js';
import type { PendingApprovalUpdate } from '../../gateway/app/pending-approval-updates.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { startCuttableProxy, type CuttableProxy } from '../support/cuttable-proxy.js';
import { post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { openSse, type SseEvent } from '../support/sse-reader.js';
import { record, trpcClient, type Recording } from '../support/trpc-client.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
let proxy: CuttableProxy;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  proxy = await startCuttableProxy(agent.url);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await agent?.stop();
  await model?.close();
});

async function newConversation(): Promise<string> {
  const created = await post(`${agent.url}/conversations`, {});
  expect(created.status).toBe(201);
  return created.body.conversation.id;
}

/** The stored events a recording got: id and kind, in the order received. */
const storedOf = (recording: Recording<ConversationUpdate>) =>
  recording.items.filter((item) => item.id !== undefined).map((item) => `${item.id}:${item.data.kind}`);
const hasFinalAnswer = (recording: Recording<ConversationUpdate>, text: RegExp) =>
  recording.items.some(
    (item) =>
      item.data.kind === 'message_added' &&
      item.data.message.role === 'assistant' &&
      !item.data.message.tool_call &&
      text.test(item.data.message.content),
  );

describe('conversation.events over tRPC', () => {
  it('a subscriber whose connection dropped resumes from its last event id and misses nothing', async () => {
    const id = await newConversation();
    const steady = record<ConversationUpdate>((callbacks) =>
      trpcClient(agent.url).conversation.events.subscribe({ conversationId: id }, callbacks),
    );
    const dropping = record<ConversationUpdate>((callbacks) =>
      trpcClient(proxy.url).conversation.events.subscribe({ conversationId: id }, callbacks),
    );
    try {
      await vi.waitFor(() => expect([steady.items[0]?.data.kind, dropping.items[0]?.data.kind]).toEqual(['snapshot', 'snapshot']), {
        timeout: 10_000,
      });

      expect((await post(`${agent.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(() => expect(hasFinalAnswer(dropping, /^Done\. resources_list/)).toBe(true), { timeout: 10_000 });
      // The turn's last event (turn_ended) follows its final answer; both watchers must have it
      // before the cut, or it would count as missed while away.
      await vi.waitFor(() => expect(storedOf(dropping).some((entry) => entry.endsWith(':turn_ended'))).toBe(true), { timeout: 10_000 });
      await vi.waitFor(() => expect(storedOf(dropping)).toEqual(storedOf(steady)), { timeout: 10_000 });
      const beforeDrop = storedOf(dropping).length;
      expect(beforeDrop).toBeGreaterThan(0);

      proxy.cut();
      // While it is away: a turn that stops for an approval.
      const stop = await post(`${agent.url}/conversations/${id}/messages`, { message: 'add resource web-1 with value 5' });
      expect(stop.body.result.waiting_approval).toBe(true);
      await vi.waitFor(() => expect(steady.items.some((item) => item.data.kind === 'approval_requested')).toBe(true), { timeout: 10_000 });
      // The link waits before reconnecting, so all of that happened while it was gone.
      expect(storedOf(dropping)).toHaveLength(beforeDrop);

      await vi.waitFor(() => expect(storedOf(dropping)).toEqual(storedOf(steady)), { timeout: 15_000 });
      expect(dropping.items.filter((item) => item.data.kind === 'snapshot')).toHaveLength(1);

      // And it stays live after the resume.
      expect((await post(`${agent.url}/approvals/${stop.body.result.approval.uuid}`, { approved: true })).status).toBe(200);
      await vi.waitFor(() => expect(hasFinalAnswer(dropping, /^Done\. resources_add/)).toBe(true), { timeout: 10_000 });
      await vi.waitFor(() => expect(storedOf(dropping)).toEqual(storedOf(steady)), { timeout: 10_000 });
      const ids = storedOf(steady).map((entry) => Number(entry.split(':')[0]));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      expect(storedOf(steady).map((entry) => entry.split(':')[1])).toEqual(
        expect.arrayContaining(['message_added', 'approval_requested', 'approval_resolved', 'status_changed']),
      );
    } finally {
      steady.stop();
      dropping.stop();
    }
  }, 60_000);

  it('approvals.pending: an approval appears and disappears, also across a dropped connection', async () => {
    const watcher = record<PendingApprovalUpdate>((callbacks) => trpcClient(proxy.url).approvals.pending.subscribe(undefined, callbacks));
    try {
      await vi.waitFor(() => expect(watcher.items[0]?.data.kind).toBe('snapshot'), { timeout: 10_000 });
      const id = await newConversation();
      const stop = await post(`${agent.url}/conversations/${id}/messages`, { message: 'add resource web-2 with value 6' });
      const uuid = stop.body.result.approval.uuid;
      await vi.waitFor(
        () => expect(watcher.items.some((item) => item.data.kind === 'approval_requested' && item.data.approval.uuid === uuid)).toBe(true),
        { timeout: 10_000 },
      );
      proxy.cut();
      expect((await post(`${agent.url}/approvals/${uuid}`, { approved: false })).status).toBe(200);
      await vi.waitFor(
        () => expect(watcher.items.some((item) => item.data.kind === 'approval_resolved' && item.data.approval.uuid === uuid)).toBe(true),
        { timeout: 15_000 },
      );
      const resolved = watcher.items.find((item) => item.data.kind === 'approval_resolved' && item.data.approval.uuid === uuid)!;
      expect(resolved.data).toMatchObject({ decision: 'rejected' });
      expect(watcher.items.filter((item) => item.data.kind === 'snapshot')).toHaveLength(1);
    } finally {
      watcher.stop();
    }
  }, 60_000);
});

describe('GET /conversations/:id/events (plain SSE)', () => {
  const stored = (events: SseEvent[]) => events.filter((event) => event.id !== undefined).map((event) => `${event.id}:${event.event}`);

  it('with Last-Event-ID, a reconnecting reader gets exactly the stored events after it, in order', async () => {
    const id = await newConversation();
    const steady = await openSse(`${agent.url}/conversations/${id}/events`);
    const first = await openSse(`${agent.url}/conversations/${id}/events`);
    try {
      expect(first.status).toBe(200);
      await vi.waitFor(() => expect(first.events[0]?.event).toBe('snapshot'), { timeout: 10_000 });
      expect(JSON.parse(first.events[0]!.data).conversation).toMatchObject({ id, status: 'active' });

      expect((await post(`${agent.url}/conversations/${id}/messages`, { message: 'list resources' })).status).toBe(200);
      await vi.waitFor(
        () =>
          expect(
            first.events.some((event) => event.event === 'message_added' && JSON.parse(event.data).message.content.startsWith('Done.')),
          ).toBe(true),
        { timeout: 10_000 },
      );
      first.close();
      const lastSeen = stored(first.events).at(-1)!.split(':')[0]!;

      // While it is away.
      const stop = await post(`${agent.url}/conversations/${id}/messages`, { message: 'add resource web-3 with value 7' });
      await post(`${agent.url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
      await vi.waitFor(() => expect(steady.events.some((event) => event.event === 'approval_resolved')).toBe(true), { timeout: 10_000 });

      const resumed = await openSse(`${agent.url}/conversations/${id}/events`, { 'Last-Event-ID': lastSeen });
      try {
        const missed = () => stored(steady.events).filter((entry) => Number(entry.split(':')[0]) > Number(lastSeen));
        await vi.waitFor(() => expect(stored(resumed.events)).toEqual(missed()), { timeout: 10_000 });
        expect(missed().length).toBeGreaterThanOrEqual(4);
        expect(resumed.events.some((event) => event.event === 'snapshot')).toBe(false);
        // The data is the JSON of the event, with its id and REST shapes inside.
        const approval = resumed.events.find((event) => event.event === 'approval_requested')!;
        expect(JSON.parse(approval.data)).toMatchObject({
          id: Number(approval.id),
          conversation_id: id,
          kind: 'approval_requested',
          approval: { tool_name: 'resources_add', tool_args: { name: 'web-3', value: 7 } },
        });
      } finally {
        resumed.close();
      }
    } finally {
      steady.close();
      first.close();
    }
  }, 60_000);

  it('answers an unknown conversation with 404 and JSON', async () => {
    const unknown = await openSse(`${agent.url}/conversations/6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13/events`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text!)).toEqual({ error: expect.stringContaining('not found') });
  });
});
