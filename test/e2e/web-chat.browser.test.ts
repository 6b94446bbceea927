/**
 * The web chat in a real browser (headless Debian chromium through playwright-core) against
 * real meshes with a scripted model: a destructive call stops at an approval card, Approve
 * runs it and Reject cancels it; a second person sees the approval appear in their pending
 * panel and go when the first one decides; a proxy approval shows the chain of agents; a
 * reload in the middle of a turn loses nothing; a decision someone else made first is an
 * error in the card; the chat fits a phone. Screenshots go to test/artifacts/.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { closeBrowser, openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { gates } from '../support/gates.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '../support/scripted-model.js';

/** The scripted model answers a message that says "slowly" once the test opens its gate: the turn runs until then. */
const gate = gates();
const SLOW_ANSWER = 'Here is my slow answer.';

/** Streamed word by word, slowly enough to watch it arrive. */
const STREAMED_ANSWER = 'Resources are named values that this agent can list, add and remove for you.';

/** agent-a hands resource work to agent-b (tool a2a_agent-b); everyone else is the resource agent. */
async function script(request: ModelRequest): Promise<ScriptedReply> {
  if (/You are agent-a\./.test(request.system) && request.tools.includes('a2a_agent-b')) {
    if (request.toolResults.length > 0) return { text: `agent-a reports: ${request.toolResults[0]!.output}` };
    return { toolCalls: [{ name: 'a2a_agent-b', args: { message: request.lastUserText } }] };
  }
  if (request.toolResults.length === 0 && /\bword by word\b/.test(request.lastUserText))
    return { text: STREAMED_ANSWER, stream: { delayMs: 150 } };
  if (request.toolResults.length === 0 && /\bslowly\b/.test(request.lastUserText)) {
    await gate(request.lastUserText).opened;
    return { text: SLOW_ANSWER };
  }
  return resourceAgentScript(request);
}

let model: ScriptedModelServer;
let agent: AgentProcess;
const browsers: BrowserSession[] = [];

async function browser(options?: Parameters<typeof openBrowser>[0]): Promise<BrowserSession> {
  const session = await openBrowser(options);
  browsers.push(session);
  return session;
}

beforeAll(async () => {
  model = await startScriptedModel(script);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
}, 120_000);

afterAll(async () => {
  await closeBrowser();
  await agent?.stop();
  await model?.close();
});
// A test's pages close with it: pages left open would go on taking live updates beside the next tests.
afterEach(async () => {
  await Promise.all(browsers.splice(0).map((session) => session.close()));
});

const resourcesDb = () => join(agent.dir, 'resources.db');

/** Opens the chat (a new conversation, as there is none in the URL) and sends `text`. */
async function startChat(page: Page, url: string, text: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

const chat = (page: Page) => page.locator('main.chat');

describe('the web chat served by the agent at /', () => {
  it('stops at an approval card; Approve runs the call and shows the result', async () => {
    const { page, pageErrors } = await browser();
    await startChat(page, agent.url, 'add resource web-1 with value 5');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => card.locator('.approval-tool').textContent()).toBe('resources_add');
    expect(await card.locator('.approval-description').textContent()).toContain('resources_add');
    // Shown once, formatted, in the card's editor.
    expect(await card.getByTestId('arguments-editor').inputValue()).toContain('"name": "web-1"');
    await expect.poll(() => chat(page).locator('.chat-header .status').textContent()).toBe('waiting for approval');
    // The conversation list puts it first, marked as waiting.
    await expect.poll(() => page.getByTestId('conversation-item').first().getAttribute('data-status')).toBe('waiting_approval');
    expect(resourceNames(resourcesDb())).not.toContain('web-1');
    await saveScreenshot(page, 'chat-approval.png');

    await card.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => chat(page).getByTestId('approval-card').count(), { timeout: 30_000 }).toBe(0);
    await expect.poll(() => chat(page).locator('[data-role="tool"]').count()).toBe(1);
    expect(await chat(page).locator('[data-role="tool"] .tool-head').textContent()).toContain('resources_add returned');
    await expect.poll(() => chat(page).locator('.message-assistant .bubble').last().textContent()).toMatch(/^Done\. resources_add: /);
    await expect.poll(() => chat(page).locator('.chat-header .status').textContent()).toBe('active');
    // The user's message links to its run's page: the runs list's message_seq names the message.
    const conversationId = decodeURIComponent(new URL(page.url()).hash.replace('#/c/', ''));
    const runs = await get(`${agent.url}/conversations/${conversationId}/runs`);
    expect(runs.body.runs).toHaveLength(1);
    await expect
      .poll(() => chat(page).locator('[data-role="user"] [data-testid="run-link"]').getAttribute('href'))
      .toBe(`#/runs/${runs.body.runs[0].run_id}`);
    expect(resourceNames(resourcesDb())).toContain('web-1');
    // Tool arguments and output are there, folded.
    const output = chat(page).locator('[data-role="tool"] details');
    expect(await output.getAttribute('open')).toBeNull();
    await output.locator('summary').click();
    expect(await output.locator('pre').isVisible()).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it('Reject cancels the call: nothing runs, and the chat says so', async () => {
    const { page } = await browser();
    await startChat(page, agent.url, 'add resource web-2 with value 6');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await card.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => chat(page).getByTestId('approval-card').count(), { timeout: 30_000 }).toBe(0);
    // A rejection is shown as rejected, never as failed.
    await expect.poll(() => chat(page).locator('[data-role="tool"]').count()).toBe(1);
    expect(await chat(page).locator('[data-role="tool"] .tool-head').textContent()).toContain('resources_add rejected');
    expect(await chat(page).locator('[data-role="tool"]').getAttribute('data-outcome')).toBe('rejected');
    expect(resourceNames(resourcesDb())).not.toContain('web-2');
  });

  it('Reject with a reason: the chat shows "rejected" with the reason, never "failed"', async () => {
    const { page } = await browser();
    await startChat(page, agent.url, 'add resource web-3 with value 1000000000');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await card.getByTestId('reject-reason').fill('value too large');
    await card.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => chat(page).getByTestId('approval-card').count(), { timeout: 30_000 }).toBe(0);
    const tool = chat(page).locator('[data-role="tool"]');
    await expect.poll(() => tool.count()).toBe(1);
    const head = await tool.locator('.tool-head').textContent();
    expect(head).toContain('resources_add rejected: value too large');
    expect(head).not.toContain('failed');
    expect(await tool.getAttribute('class')).not.toContain('failed');
    expect(resourceNames(resourcesDb())).not.toContain('web-3');
  });

  it('a second person sees the approval appear in their pending panel, and go when the first one approves', async () => {
    const first = await browser();
    const second = await browser();
    await second.page.goto(agent.url);
    const panel = second.page.getByTestId('pending-panel');
    await expect.poll(() => panel.isVisible()).toBe(true);
    const before = await panel.getByTestId('pending-approval').count();

    await startChat(first.page, agent.url, 'add resource web-3 with value 7');
    const item = panel.getByTestId('pending-approval').filter({ hasText: 'web-3' });
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(1);
    expect(await item.locator('.approval-tool').textContent()).toBe('resources_add');
    await expect.poll(() => panel.locator('.count').first().textContent()).toBe(String(before + 1));
    await saveScreenshot(panel, 'pending-panel.png');

    const card = chat(first.page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(0);
    // The approval leaves pending when it is claimed; the call runs right after.
    await expect.poll(() => resourceNames(resourcesDb()), { timeout: 30_000 }).toContain('web-3');
  });

  it('streams the answer in while the model writes it, then shows it as a message', async () => {
    const { page } = await browser();
    await startChat(page, agent.url, 'explain resources word by word');
    const streaming = chat(page).getByTestId('streaming');
    await expect.poll(() => streaming.count(), { timeout: 15_000 }).toBe(1);
    const partial = (await streaming.locator('.bubble').textContent()) ?? '';
    expect(partial.length).toBeGreaterThan(0);
    expect(STREAMED_ANSWER.startsWith(partial), `partial text: ${JSON.stringify(partial)}`).toBe(true);
    expect(partial).not.toBe(STREAMED_ANSWER);
    await expect
      .poll(() => chat(page).locator('[data-role="assistant"] .bubble').last().textContent(), { timeout: 30_000 })
      .toBe(STREAMED_ANSWER);
    expect(await streaming.count()).toBe(0);
  });

  it('a reload in the middle of a turn loses nothing: the answer arrives, every message once', async () => {
    const { page } = await browser();
    await startChat(page, agent.url, 'tell me about resources slowly');
    // The turn has begun when the conversation is in the URL and the model is thinking.
    await expect.poll(() => page.url(), { timeout: 10_000 }).toMatch(/#\/c\/[0-9a-f-]{36}$/);
    await expect
      .poll(() => model.requests.filter((request) => request.lastUserText === 'tell me about resources slowly').length, { timeout: 10_000 })
      .toBe(1);
    const url = page.url();
    await page.reload();
    expect(page.url()).toBe(url);
    gate('tell me about resources slowly').open();
    await expect.poll(() => chat(page).getByText(SLOW_ANSWER).count(), { timeout: 30_000 }).toBe(1);
    const shown = await chat(page)
      .getByTestId('messages')
      .getByTestId('message')
      .evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-role'), node.querySelector('.bubble')?.textContent ?? '']));
    expect(shown).toEqual([
      ['system', ''],
      ['user', 'tell me about resources slowly'],
      ['assistant', SLOW_ANSWER],
    ]);
    // What the page shows is what the store has.
    const id = decodeURIComponent(url.split('#/c/')[1]!);
    expect((await get(`${agent.url}/conversations/${id}`)).body.conversation.messages.map((m: any) => m.content).slice(1)).toEqual([
      'tell me about resources slowly',
      SLOW_ANSWER,
    ]);
  });

  it('disables the message box while a turn runs, started from anywhere, and shows a 409 as an error', async () => {
    const created = await post(`${agent.url}/conversations`, {});
    const id = created.body.conversation.id as string;
    const { page } = await browser();
    await page.goto(`${agent.url}/#/c/${id}`);
    const box = chat(page).getByLabel('Message');
    await expect.poll(() => box.isEnabled(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => chat(page).getByTestId('live-status').count(), { timeout: 10_000 }).toBe(0);

    // A turn started by another client (REST): the page learns of it from turn_started and turn_ended.
    const turn = post(`${agent.url}/conversations/${id}/messages`, { message: 'explain resources slowly' });
    await expect.poll(() => box.isDisabled(), { timeout: 10_000 }).toBe(true);
    expect(await chat(page).locator('.composer-note').textContent()).toContain('The agent is working on this conversation');
    await saveScreenshot(page, 'chat-busy.png');
    gate('explain resources slowly').open();
    expect((await turn).status).toBe(200);
    await expect.poll(() => box.isEnabled(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => chat(page).getByText(SLOW_ANSWER).count()).toBe(1);

    // A page that hears nothing after its first read (events and later reads cut off) lets a
    // message through to a busy conversation: the 409 is shown as the send's error.
    const deaf = (await browser()).page;
    let reads = 0;
    await deaf.route('**/trpc/**', (route) => {
      const url = route.request().url();
      if (url.includes('conversation.events') || (url.includes('conversations.get') && reads++ > 0)) return route.abort();
      return route.continue();
    });
    await deaf.goto(`${agent.url}/#/c/${id}`);
    const deafBox = chat(deaf).getByLabel('Message');
    await expect.poll(() => deafBox.isEnabled(), { timeout: 10_000 }).toBe(true);
    const second = post(`${agent.url}/conversations/${id}/messages`, { message: 'once more, slowly' });
    await expect
      .poll(async () => (await get(`${agent.url}/conversations/${id}`)).body.conversation.turn_running, { timeout: 10_000 })
      .toBe(true);
    await deafBox.fill('me too');
    await chat(deaf).getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(
        () =>
          chat(deaf)
            .getByRole('alert')
            .filter({ hasText: `conversation ${id} is busy` })
            .count(),
        { timeout: 10_000 },
      )
      .toBe(1);
    gate('once more, slowly').open();
    expect((await second).status).toBe(200);
    const stored = (await get(`${agent.url}/conversations/${id}`)).body.conversation.messages.map((m: any) => m.content).slice(1);
    expect(stored).toEqual(['explain resources slowly', SLOW_ANSWER, 'once more, slowly', SLOW_ANSWER]);
  });

  it('shows a decision someone else made first as an error in the card', async () => {
    const { page } = await browser();
    // This page hears no live events (as behind a proxy that breaks streams) ...
    await page.route('**/trpc/conversation.events**', (route) => route.abort());
    await startChat(page, agent.url, 'add resource web-4 with value 8');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    // ... and from now on cannot read the conversation again either, so it still offers the decision.
    await page.route('**/trpc/**', (route) => (route.request().url().includes('approvals.resolve') ? route.continue() : route.abort()));
    const uuid = (await card.getAttribute('data-uuid'))!;
    expect((await post(`${agent.url}/approvals/${uuid}`, { approved: false })).status).toBe(200);
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => card.getByRole('alert').textContent(), { timeout: 10_000 })
      .toMatch(new RegExp(`^approval ${uuid} was already rejected by anonymous at `));
    expect(resourceNames(resourcesDb())).not.toContain('web-4');
  });

  it('fits a phone: one panel at a time, nothing wider than the screen', async () => {
    const { page } = await browser({ viewport: { width: 390, height: 844 } });
    await startChat(page, agent.url, 'add resource web-5 with value 9');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect(await card.getByRole('button', { name: 'Approve' }).isVisible()).toBe(true);
    expect(await page.locator('aside.sidebar').isVisible()).toBe(false);
    await saveScreenshot(page, 'chat-phone.png');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: /^Pending/ }).click();
    await expect.poll(() => page.getByTestId('pending-panel').isVisible()).toBe(true);
    expect(await chat(page).isVisible()).toBe(false);
  });
});

describe('a proxy approval from a chain of two agents', () => {
  let b: AgentProcess;
  let a: AgentProcess;

  beforeAll(async () => {
    b = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { name: 'agent-b', prompt: 'You are agent-b.' } });
    a = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { name: 'agent-a', prompt: 'You are agent-a.', a2a: [{ name: 'agent-b', url: `${b.url}/a2a` }] },
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('shows the chain of agents on the card; Approve runs the call on agent-b and the answer comes back', async () => {
    const { page } = await browser();
    await startChat(page, a.url, 'add resource chain-1 with value 9');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect(await card.locator('.approval-tool').textContent()).toBe('a2a_agent-b');
    expect(await card.getByTestId('agent-chain').textContent()).toBe('held by agent-b');
    expect(await card.locator('.approval-description').textContent()).toMatch(/^agent-b asks for approval: resources_add/);
    await saveScreenshot(page, 'chat-proxy-approval.png');

    await card.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => chat(page).getByTestId('approval-card').count(), { timeout: 30_000 }).toBe(0);
    await expect
      .poll(() => chat(page).locator('.message-assistant .bubble').last().textContent(), { timeout: 30_000 })
      .toMatch(/^agent-a reports: Done\. resources_add: /);
    expect(resourceNames(join(b.dir, 'resources.db'))).toContain('chain-1');
  });
});
