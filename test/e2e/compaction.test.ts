/**
 * History compaction end to end: a small token budget, strategy
 * partial-summary, the summary made by the (scripted) model, recorded in the conversation,
 * and the model's later requests carrying the summary instead of the old turns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';

const SUMMARY = 'SUMMARY-OF-EARLIER: the user listed the resources several times; there were none.';
const summarizing: ModelScript = (request) =>
  request.system.startsWith('Summarize the conversation') ? { text: SUMMARY } : resourceAgentScript(request);

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(summarizing);
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { chat: { max_tokens: 1500, compaction_strategy: 'partial-summary' } },
  });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('partial-summary compaction', () => {
  it('summarizes the oldest turns with the model, records it, and sends the summary instead of them', async () => {
    const id = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
    let conversation: any;
    for (let turn = 1; turn <= 14; turn++) {
      const response = await post(`${agent.url}/conversations/${id}/messages`, { message: `list resources (turn ${turn})` });
      expect(response.status).toBe(200);
      conversation = response.body.conversation;
    }
    const notices = conversation.messages.filter((m: any) => m.role === 'system' && m.content.startsWith('History compacted'));
    expect(notices.length).toBeGreaterThanOrEqual(1);
    expect(notices[0].content).toContain('chat.compaction_strategy partial-summary');
    expect(notices[0].content).toContain(SUMMARY);
    // The summary call's tokens are counted with the conversation's.
    expect(notices[0].usage.input_tokens).toBeGreaterThan(0);

    const summaryRequest = model.requests.find((r) => r.system.startsWith('Summarize the conversation'))!;
    expect(JSON.stringify(summaryRequest.body)).toContain('list resources (turn 1)');
    expect(summaryRequest.tools).toEqual([]);

    // Every message is still stored (append-only) …
    expect(conversation.messages.filter((m: any) => m.role === 'user')).toHaveLength(14);
    // … but the model's latest request has the summary and not the first turns.
    const last = model.requests.at(-1)!;
    expect(last.system).toContain(SUMMARY);
    expect(last.system.startsWith('You manage resources.')).toBe(true);
    const sent = JSON.stringify(last.body);
    expect(sent).not.toContain('(turn 1)');
    expect(sent).toContain('(turn 14)');
  });
});
