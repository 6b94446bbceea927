/**
 * Events end to end: a WatchEvents client on the conversation store of a real
 * mesh (`bin/asg up`) sees turns as they happen — the stored events (messages added, approval
 * requested and resolved, status changes) and, in between, the live ones the orchestrator
 * publishes (tool calls starting and finishing, the model's text as it streams).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalStatus,
  ConversationStatus,
  ConversationStoreServiceService,
  MessageRole,
  type ConversationEvent,
} from '../../gen/ts/asg/store/v1/store.js';
import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { logLines, logLineWhere } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
let store: PromiseClient<typeof ConversationStoreServiceService>;

beforeAll(async () => {
  // Streamed answers come a word at a time, paced, so that watchers see them while they come.
  model = await startScriptedModel(async (request) => ({ ...(await resourceAgentScript(request)), stream: { delayMs: 5 } }) as never);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
  // The mesh logs where each service listens; the store is reached directly over gRPC.
  const line = await agent.waitForLine(logLineWhere((candidate) => candidate.msg === 'conversation store listening'));
  store = createPromiseClient(ConversationStoreServiceService, String(logLines(line)[0]!.address), 'events-test', 60_000);
});

afterAll(async () => {
  store?.close();
  await agent?.stop();
  await model?.close();
});

/** An event in a few words: its kind and what identifies it. */
function describeEvent(event: ConversationEvent): string {
  if (event.messageAdded) return `message_added ${MessageRole[event.messageAdded.role].replace('MESSAGE_ROLE_', '').toLowerCase()}`;
  if (event.approvalRequested)
    return `approval_requested ${event.approvalRequested.toolName} ${ApprovalStatus[event.approvalRequested.status]}`;
  if (event.approvalResolved)
    return `approval_resolved ${event.approvalResolved.toolName} ${ApprovalStatus[event.approvalResolved.status]}`;
  if (event.statusChanged !== undefined) return `status_changed ${ConversationStatus[event.statusChanged]}`;
  if (event.toolCallStarted) return `tool_call_started ${event.toolCallStarted.name}`;
  if (event.toolCallFinished) return `tool_call_finished ${event.toolCallFinished.name}`;
  if (event.textDelta) return 'text_delta';
  if (event.turnStarted) return 'turn_started';
  if (event.turnEnded) return 'turn_ended';
  return JSON.stringify(event);
}

/** Consecutive text deltas as one entry, so the sequence does not depend on how the text was cut. */
const collapsed = (events: ConversationEvent[]) =>
  events.map(describeEvent).filter((kind, index, all) => kind !== 'text_delta' || all[index - 1] !== 'text_delta');

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The model's answer after a tool result (resource-agent script): the last event of a turn here. */
const isFinalAnswer = (event: ConversationEvent) =>
  event.messageAdded?.role === MessageRole.MESSAGE_ROLE_ASSISTANT && event.messageAdded.content.startsWith('Done.');

/**
 * Watches one conversation from its beginning, in the background, until `last` arrives:
 * after_id 1 replays its own events (the first event of the database may be another
 * conversation's), and once its system prompt came back the watch is live, so whatever
 * happens next is seen. (A pending read of a stream cannot be cancelled from outside, so the
 * reader itself stops at `last`.)
 */
async function watchConversation(id: string, last: (event: ConversationEvent) => boolean) {
  const events = store.watchEvents({ conversationId: id, afterId: 1, storedOnly: false, kinds: [] })[Symbol.asyncIterator]();
  const received: ConversationEvent[] = [];
  for (;;) {
    const { value } = await events.next();
    if (value?.event?.messageAdded?.role === MessageRole.MESSAGE_ROLE_SYSTEM) break;
  }
  let ended = false;
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await events.next();
        if (done) return;
        received.push(value.event!);
        if (last(value.event!)) return;
      }
    } finally {
      ended = true;
      await events.return?.();
    }
  })();
  return {
    received,
    /** Until the last event came (or the watch failed: its error). */
    finished: async () => {
      await until(() => ended, 'the last event of the watch');
      await reading;
    },
  };
}

describe('watching a conversation while it runs', () => {
  it('sees a stop-and-go turn in order: stored events as they commit, tool calls and the streamed answer as they happen', async () => {
    const created = await post(`${agent.url}/conversations`, {});
    expect(created.status).toBe(201);
    const id = created.body.conversation.id as string;
    const watch = await watchConversation(id, isFinalAnswer);

    // Stop: the destructive call waits for an approval.
    const stop = await post(`${agent.url}/conversations/${id}/messages`, { message: 'add resource watched-1 with value 7' });
    expect(stop.body.result.waiting_approval).toBe(true);
    const uuid = stop.body.result.approval.uuid as string;
    await until(
      () => watch.received.some((event) => event.statusChanged === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL),
      'the conversation waits',
    );

    // Go: approved, the stored call runs, and the model answers, streamed.
    const go = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    expect(go.status).toBe(200);
    const answer = go.body.result.response as string;
    expect(answer).toMatch(/^Done\. resources_add: /);
    await watch.finished();

    const received = watch.received;
    expect(collapsed(received)).toEqual([
      'message_added user',
      // A turn runs from the message until it stops for the approval, and again from the approval.
      'turn_started',
      'message_added assistant',
      'approval_requested resources_add APPROVAL_STATUS_PENDING',
      'status_changed CONVERSATION_STATUS_WAITING_APPROVAL',
      'turn_ended',
      'approval_resolved resources_add APPROVAL_STATUS_APPROVED',
      'status_changed CONVERSATION_STATUS_ACTIVE',
      'turn_started',
      'tool_call_started resources_add',
      'tool_call_finished resources_add',
      'message_added tool',
      'text_delta',
      'message_added assistant',
    ]);
    // The approval is the one the REST API named; the call ran with the stored arguments.
    expect(received.find((event) => event.approvalRequested)?.approvalRequested?.uuid).toBe(uuid);
    const started = received.find((event) => event.toolCallStarted)!.toolCallStarted!;
    expect(started.name).toBe('resources_add');
    expect(JSON.parse(started.argumentsJson!)).toEqual({ name: 'watched-1', value: 7 });
    expect(started.result).toBeUndefined();
    const finished = received.find((event) => event.toolCallFinished)!.toolCallFinished!;
    expect(finished.isError).toBe(false);
    expect(received.find((event) => event.messageAdded?.role === MessageRole.MESSAGE_ROLE_TOOL)?.messageAdded?.content).toBe(
      finished.result,
    );
    // The answer streamed word by word, and the deltas joined are the stored answer.
    const deltas = received.filter((event) => event.textDelta);
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((event) => event.textDelta!.text).join('')).toBe(answer);
    expect(deltas.every((event) => event.id === 0 && event.textDelta!.node === undefined)).toBe(true);

    // Stored events have increasing ids; watching again from before them replays exactly those.
    const stored = received.filter((event) => event.id !== 0);
    expect(stored.every((event, index) => index === 0 || event.id > stored[index - 1]!.id)).toBe(true);
    const replay = store
      .watchEvents({ conversationId: id, afterId: stored[0]!.id - 1, storedOnly: false, kinds: [] })
      [Symbol.asyncIterator]();
    const replayed: ConversationEvent[] = [];
    while (replayed.length < stored.length) replayed.push((await replay.next()).value!.event!);
    await replay.return?.();
    expect(replayed).toEqual(stored);
  });

  it('sees a safe call run and the answer stream before the steps are stored together', async () => {
    const created = await post(`${agent.url}/conversations`, {});
    const id = created.body.conversation.id as string;
    const watch = await watchConversation(id, isFinalAnswer);
    const turn = await post(`${agent.url}/conversations/${id}/messages`, { message: 'list resources' });
    expect(turn.status).toBe(200);
    await watch.finished();
    expect(watch.received.at(-1)?.messageAdded?.content).toBe(turn.body.result.response);
    expect(collapsed(watch.received)).toEqual([
      'message_added user',
      'turn_started',
      'tool_call_started resources_list',
      'tool_call_finished resources_list',
      'text_delta',
      // The turn's steps and its answer are written in one transaction at its end.
      'message_added assistant',
      'message_added tool',
      'message_added assistant',
    ]);
  });
});
