/**
 * The web chat shows what is happening, in a real browser (headless Debian chromium through
 * playwright-core) against real meshes with a scripted model: a provider that keeps failing
 * shows as an error with "Try again", which resends and works once the provider is back; the
 * steps of a slow turn (a tool call finished, the model thinking) show while it runs and stay
 * until it ends; an approval has one set of buttons on the screen, and its rejection a drawn mark;
 * a pending count of 0 is not an alert; an MCP server's question
 * (an approval of kind `input`) is answered in the page and the answer reaches the server.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startElicitingServer, type ElicitingServer } from '../fixtures/eliciting-mcp-server.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { closeBrowser, openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { gates } from '../support/gates.js';
import { get } from '../support/http.js';
import {
  resourceAgentScript,
  startScriptedModel,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '../support/scripted-model.js';

const gate = gates();
/** While true, the provider answers every request about an outage with 503, retries included. */
let providerDown = true;
const STEPS_ANSWER = 'I listed the resources and thought it over.';

async function script(request: ModelRequest): Promise<ScriptedReply> {
  const book = request.toolResults.find((tool) => tool.name === 'book_room');
  if (book) return { text: `tool said: ${book.output}` };
  if (/\bbook room\b/.test(request.lastUserText)) return { toolCalls: [{ name: 'book_room', args: { room: 'W1' } }] };
  if (/\boutage\b/.test(request.lastUserText))
    return providerDown ? { httpStatus: 503, message: 'the model is overloaded' } : { text: 'Back again: here is my answer.' };
  if (/\bin steps\b/.test(request.lastUserText)) {
    if (request.toolResults.length === 0) return { toolCalls: [{ name: 'resources_list', args: {} }] };
    await gate(request.lastUserText).opened;
    return { text: STEPS_ANSWER };
  }
  return resourceAgentScript(request);
}

let model: ScriptedModelServer;
let rooms: ElicitingServer;
let agent: AgentProcess;
const browsers: BrowserSession[] = [];

async function browser(): Promise<BrowserSession> {
  const session = await openBrowser();
  browsers.push(session);
  return session;
}

beforeAll(async () => {
  [model, rooms] = await Promise.all([startScriptedModel(script), startElicitingServer()]);
  const dir = tempDir('asg-web-progress-');
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    // The built-in resources server and a server that asks a question; book_room's question is its only stop.
    config: {
      mcp_servers: [resourcesServer(join(dir, 'resources.db')), { name: 'rooms', url: rooms.url, approval: { book_room: 'never' } }],
    },
    dir,
  });
}, 120_000);

afterAll(async () => {
  await closeBrowser();
  await agent?.stop();
  await Promise.all([model?.close(), rooms?.close()]);
});
// A test's pages close with it: pages left open would go on taking live updates beside the next tests.
afterEach(async () => {
  await Promise.all(browsers.splice(0).map((session) => session.close()));
});

async function startChat(page: Page, text: string): Promise<void> {
  await page.goto(agent.url);
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

const chat = (page: Page) => page.locator('main.chat');

describe('the web chat shows what is happening', () => {
  it('shows a provider that keeps failing as an error, and "Try again" resends and works once it is back', async () => {
    providerDown = true;
    const { page, pageErrors } = await browser();
    await startChat(page, 'answer despite the outage');
    // A favicon of its own, and a pending count of 0 that does not call for attention.
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
    const count = page.getByTestId('pending-panel').locator('.count');
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe('0');
    expect(await count.getAttribute('class')).not.toContain('waiting');
    // Drawn in another colour than a count that waits (the alert's --wait).
    const [own, alert] = await page.evaluate<[string, string]>(
      `(() => { const count = document.querySelector('[data-testid="pending-panel"] .count'); const probe = document.createElement('span'); probe.style.background = 'var(--wait)'; count.parentElement.append(probe); const colours = [getComputedStyle(count).backgroundColor, getComputedStyle(probe).backgroundColor]; probe.remove(); return colours; })()`,
    );
    expect(alert).not.toMatch(/^rgba\(0, 0, 0, 0\)$/);
    expect(own).not.toBe(alert);
    const failed = chat(page).locator('[data-testid="message"][data-error="true"]');
    await expect.poll(() => failed.count(), { timeout: 30_000 }).toBe(1);
    expect(await failed.getAttribute('role')).toBe('alert');
    expect(await failed.locator('.error-title').textContent()).toContain('The agent could not answer');
    expect(await failed.locator('.error-detail').textContent()).toMatch(/^The model could not answer \(/);
    // The stored message and REST say it is an error too.
    const id = decodeURIComponent(page.url().split('#/c/')[1]!);
    const stored = (await get(`${agent.url}/conversations/${id}`)).body.conversation.messages.at(-1);
    expect(stored).toMatchObject({ role: 'assistant', is_error: true });
    await saveScreenshot(page, 'chat-provider-error.png');

    providerDown = false;
    await failed.getByRole('button', { name: 'Try again' }).click();
    await expect
      .poll(() => chat(page).locator('[data-role="assistant"] .bubble').last().textContent(), { timeout: 30_000 })
      .toBe('Back again: here is my answer.');
    // The error stays where it happened, without its button: the conversation has moved on.
    expect(await failed.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    const users = (await get(`${agent.url}/conversations/${id}`)).body.conversation.messages.filter((m: any) => m.role === 'user');
    expect(users.map((m: any) => m.content)).toEqual(['answer despite the outage', 'answer despite the outage']);
    expect(pageErrors).toEqual([]);
  });

  it('shows the steps of a slow turn as they happen, a finished tool step staying until the turn ends', async () => {
    const { page } = await browser();
    const text = 'look around in steps';
    await startChat(page, text);
    const steps = chat(page).getByTestId('turn-step');
    // The tool ran and finished; the model is now thinking (held at the gate): both show.
    await expect
      .poll(() => steps.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-state'))), { timeout: 30_000 })
      .toEqual(['finished', 'thinking']);
    expect(await steps.first().textContent()).toContain('resources_list');
    expect(model.requests.filter((request) => request.lastUserText === text && request.toolResults.length > 0)).toHaveLength(1);
    await saveScreenshot(page, 'chat-steps.png');

    gate(text).open();
    await expect.poll(() => chat(page).getByText(STEPS_ANSWER).count(), { timeout: 30_000 }).toBe(1);
    // Over: the stored messages show the call, and the steps are gone.
    await expect.poll(() => chat(page).getByTestId('turn-progress').count(), { timeout: 10_000 }).toBe(0);
    expect(await chat(page).locator('[data-role="tool"]').count()).toBe(1);
  });

  it('has one set of Approve and Reject buttons per approval, and shows its arguments once', async () => {
    const { page } = await browser();
    await startChat(page, 'add resource once-1 with value 3');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    // The pending panel names it, without a second set of buttons.
    const item = page.getByTestId('pending-panel').getByTestId('pending-approval').filter({ hasText: 'resources_add' });
    await expect.poll(() => item.count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Reject', exact: true }).count()).toBe(1);
    // The arguments: once, in the card's editor (folded or not, nowhere else on the page).
    const editors = await page.evaluate<number>(
      "[...document.querySelectorAll('textarea')].filter((editor) => editor.value.includes('once-1')).length",
    );
    expect(editors).toBe(1);
    const textOutsideEditors = await page.evaluate<string>(
      "(() => { const copy = document.body.cloneNode(true); for (const editor of copy.querySelectorAll('textarea')) editor.remove(); return copy.textContent; })()",
    );
    expect(textOutsideEditors).not.toContain('"once-1"');
    await saveScreenshot(page, 'chat-one-approval.png');
    await card.getByRole('button', { name: 'Reject', exact: true }).click();
    await expect.poll(() => item.count(), { timeout: 30_000 }).toBe(0);
    // The rejection's mark is drawn: it needs no emoji font.
    const rejected = chat(page).locator('[data-role="tool"][data-outcome="rejected"]');
    await expect.poll(() => rejected.count(), { timeout: 30_000 }).toBe(1);
    expect(await rejected.locator('.tool-icon svg').count()).toBe(1);
    expect(await rejected.textContent()).not.toContain('✋');
  });

  it("answers an MCP server's question in the page: the answer reaches the server and the model reads the result", async () => {
    const { page, pageErrors } = await browser();
    await startChat(page, 'book room W1');
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.getByTestId('input-request').count(), { timeout: 30_000 }).toBe(1);
    expect(await card.locator('.input-question').textContent()).toBe('Who is the room for?');
    const send = card.getByRole('button', { name: 'Send answer' });
    // Nothing to send until the required field is filled.
    expect(await send.isDisabled()).toBe(true);
    await card.getByLabel('Guest name').fill('Grace');
    await saveScreenshot(page, 'chat-input-approval.png');
    await send.click();
    await expect
      .poll(() => chat(page).locator('[data-role="assistant"] .bubble').last().textContent(), { timeout: 30_000 })
      .toBe('tool said: room W1 booked for Grace');
    expect(rooms.bookings).toEqual(['W1:Grace']);
    expect(pageErrors).toEqual([]);
  });
});
