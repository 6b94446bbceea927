/**
 * Approvals in the web chat, in a real browser against a real agent with a scripted model: the
 * approval card shows a call's arguments once and lets them be edited before approving (the
 * tool receives the edited ones; text that is not a JSON object cannot be approved), the
 * decision's trace appears under the call ("approved by anonymous via web · just now", with the reason),
 * and the approvals page lists the pending approvals of every conversation, live, and the
 * decisions made. Against an agent with `auth`, the chat signs in with a token (kept in the
 * tab's session storage), shows who is signed in, streams live with it, and a decision is
 * alice's in the trace and in the record.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { runAsg } from '../support/asg-cli.js';
import { tokenAuth } from '../support/token-auth.js';
import { closeBrowser, openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { get, post } from '../support/http.js';
import { resourceNames, resourceValues } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let agent: AgentProcess;
const browsers: BrowserSession[] = [];

async function browser(): Promise<BrowserSession> {
  const session = await openBrowser();
  browsers.push(session);
  return session;
}

beforeAll(async () => {
  model = await startScriptedModel();
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
const chat = (page: Page) => page.locator('main.chat');

/** A conversation that waits for the approval of `resources_add name value`, made over REST. */
async function waitingFor(name: string, value: number): Promise<{ conversationId: string; uuid: string }> {
  const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value ${value}` });
  expect(created.body.result?.waiting_approval).toBe(true);
  return { conversationId: created.body.conversation.id, uuid: created.body.result.approval.uuid };
}

describe('the approval card', () => {
  it('shows the arguments once and editable; what is not a JSON object cannot be approved; the tool receives the edited arguments; the trace says who decided', async () => {
    const { page, pageErrors } = await browser();
    await page.goto(agent.url);
    // No authentication configured: decisions are anonymous, and the top bar says so.
    await expect.poll(() => page.getByTestId('identity-name').textContent(), { timeout: 10_000 }).toBe('anonymous');
    await page.getByLabel('Message').fill('add resource edit-1 with value 5');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);

    // Once: in the card's editor, not again on the call it waits for.
    const editor = card.getByTestId('arguments-editor');
    expect(JSON.parse(await editor.inputValue())).toEqual({ name: 'edit-1', value: 5 });
    expect(await editor.inputValue()).toBe('{\n  "name": "edit-1",\n  "value": 5\n}');
    await expect.poll(() => chat(page).getByTestId('call-awaiting').count()).toBe(1);
    expect(await chat(page).locator('[data-role="tool-call"] .tool-arguments').count()).toBe(0);

    const approve = card.getByRole('button', { name: /^Approve/ });
    await editor.fill('{"name": "edit-1", "value": ');
    await expect.poll(() => approve.isDisabled()).toBe(true);
    expect(await card.getByTestId('arguments-problem').textContent()).toMatch(
      /^The arguments are not valid JSON: .*Approve is disabled until they are\.$/,
    );
    await editor.fill('[1, 2]');
    expect(await card.getByTestId('arguments-problem').textContent()).toContain('The arguments must be a JSON object');
    await editor.fill('{"name": "edit-1", "value": 55}');
    await expect.poll(() => approve.isEnabled()).toBe(true);
    expect(await card.getByTestId('arguments-edited').textContent()).toContain('approving runs the call with these arguments');
    await card.getByTestId('reject-reason').fill('the value was off by ten');
    await saveScreenshot(card, 'approval-card-edited.png');
    const uuid = (await card.getAttribute('data-uuid'))!;
    await approve.click();

    await expect.poll(() => chat(page).getByTestId('approval-card').count(), { timeout: 30_000 }).toBe(0);
    // The tool received the edited arguments, and the record keeps both.
    await expect.poll(() => resourceValues(resourcesDb())['edit-1'], { timeout: 30_000 }).toBe(55);
    const record = (await get(`${agent.url}/approvals/${uuid}`)).body;
    expect(record).toMatchObject({
      status: 'approved',
      decided_by: 'anonymous',
      via: 'web',
      reason: 'the value was off by ten',
      tool_args: { name: 'edit-1', value: 5 },
      edited_args: { name: 'edit-1', value: 55 },
    });

    // The trace under the call.
    const trace = chat(page).locator(`[data-testid="decision-trace"][data-uuid="${uuid}"]`);
    await expect.poll(() => trace.count(), { timeout: 15_000 }).toBe(1);
    expect(await trace.locator('.decision-text').textContent()).toMatch(/^approved by anonymous via web · (just now|\d+ (s|min) ago)$/);
    expect(await trace.locator('.decision-reason').textContent()).toBe(': “the value was off by ten”');
    await trace.locator('.decision-edited summary').click();
    expect(JSON.parse((await trace.locator('.decision-edited pre').textContent())!)).toEqual({ name: 'edit-1', value: 55 });
    // It sits under the call it decided, whose arguments are shown again now that nothing waits.
    expect(await chat(page).locator(`[data-role="tool-call"] [data-testid="decision-trace"][data-uuid="${uuid}"]`).count()).toBe(1);
    await expect.poll(() => chat(page).getByTestId('call-awaiting').count()).toBe(0);
    await saveScreenshot(page, 'approval-trace.png');

    // A reload reads the trace from the approvals of the conversation.
    await page.reload();
    await expect
      .poll(() => chat(page).locator(`[data-testid="decision-trace"][data-uuid="${uuid}"] .decision-text`).textContent(), {
        timeout: 15_000,
      })
      .toMatch(/^approved by anonymous/);
    expect(pageErrors).toEqual([]);
  });

  it('approves unedited arguments as the model asked, and rejects with a reason shown in the trace', async () => {
    const { page } = await browser();
    await page.goto(agent.url);
    await page.getByLabel('Message').fill('add resource edit-2 with value 6');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    // Reformatted, not edited: nothing is sent as arguments.
    await card.getByTestId('arguments-editor').fill('{"value": 6, "name": "edit-2"}');
    expect(await card.getByTestId('arguments-edited').count()).toBe(0);
    const uuid = (await card.getAttribute('data-uuid'))!;
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => resourceValues(resourcesDb())['edit-2'], { timeout: 30_000 }).toBe(6);
    expect((await get(`${agent.url}/approvals/${uuid}`)).body).not.toHaveProperty('edited_args');

    await page.getByLabel('Message').fill('add resource edit-3 with value 7');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    const rejected = (await card.getAttribute('data-uuid'))!;
    await card.getByTestId('reject-reason').fill('not this one');
    await card.getByRole('button', { name: 'Reject' }).click();
    const trace = chat(page).locator(`[data-testid="decision-trace"][data-uuid="${rejected}"]`);
    await expect
      .poll(() => trace.locator('.decision-text').textContent(), { timeout: 30_000 })
      .toMatch(/^rejected by anonymous via web · /);
    expect(await trace.getAttribute('data-outcome')).toBe('rejected');
    expect(await trace.locator('.decision-reason').textContent()).toBe(': “not this one”');
    expect(resourceNames(resourcesDb())).not.toContain('edit-3');
  });
});

describe('the approvals page', () => {
  it('lists the pending approvals of every conversation, live, decides them, and shows the decisions made', async () => {
    const { page, pageErrors } = await browser();
    await page.goto(agent.url);
    // Linked from the sidebar.
    await page.getByTestId('approvals-link').click();
    await expect.poll(() => page.url()).toMatch(/#\/approvals$/);
    const list = page.getByTestId('approvals-page');
    await expect.poll(() => list.isVisible()).toBe(true);

    // Two conversations start waiting while the page is open: both appear without a reload.
    const first = await waitingFor('page-1', 1);
    const second = await waitingFor('page-2', 2);
    const third = await waitingFor('page-3', 3);
    const itemOf = (conversationId: string) => list.locator(`[data-testid="approvals-item"][data-conversation="${conversationId}"]`);
    await expect.poll(() => itemOf(first.conversationId).count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => itemOf(second.conversationId).count(), { timeout: 15_000 }).toBe(1);
    expect(await itemOf(first.conversationId).getAttribute('data-uuid')).toBe(first.uuid);
    expect(await itemOf(second.conversationId).getAttribute('data-status')).toBe('pending');
    // Oldest first: the one waiting longest is on top.
    const order = await list.getByTestId('approvals-item').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-uuid')));
    expect(order.indexOf(first.uuid)).toBeLessThan(order.indexOf(second.uuid));
    await saveScreenshot(page, 'approvals-page.png');

    // Decided here, with a reason: it leaves the pending list.
    const card = itemOf(first.conversationId).getByTestId('approval-card');
    await card.getByTestId('reject-reason').fill('page says no');
    await card.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => itemOf(first.conversationId).count(), { timeout: 30_000 }).toBe(0);
    // Decided elsewhere (REST): it leaves too, live.
    expect((await post(`${agent.url}/approvals/${second.uuid}`, { approved: true })).status).toBe(200);
    await expect.poll(() => itemOf(second.conversationId).count(), { timeout: 15_000 }).toBe(0);
    // Decided from the CLI: it leaves too, and its trace names the CLI.
    const cli = await runAsg(['approvals', 'approve', third.uuid, '--url', agent.url]);
    expect(cli.code, cli.stderr).toBe(0);
    await expect.poll(() => itemOf(third.conversationId).count(), { timeout: 15_000 }).toBe(0);
    expect(resourceNames(resourcesDb())).toContain('page-2');
    expect(resourceNames(resourcesDb())).not.toContain('page-1');

    // The decisions, by status.
    await list.getByRole('button', { name: 'Rejected' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/approvals\/rejected$/);
    const rejected = itemOf(first.conversationId);
    await expect
      .poll(() => rejected.getByTestId('decision-trace').locator('.decision-text').textContent(), { timeout: 15_000 })
      .toMatch(/^rejected by anonymous via web · /);
    expect(await rejected.locator('.decision-reason').textContent()).toBe(': “page says no”');
    await list.getByRole('button', { name: 'Approved' }).click();
    await expect
      .poll(() => itemOf(second.conversationId).getByTestId('decision-trace').locator('.decision-text').textContent(), { timeout: 15_000 })
      .toMatch(/^approved by anonymous via rest · /);
    expect(await itemOf(second.conversationId).textContent()).toContain('(done)');
    await expect
      .poll(() => itemOf(third.conversationId).getByTestId('decision-trace').locator('.decision-text').textContent(), { timeout: 15_000 })
      .toMatch(/^approved by anonymous via cli · /);

    // An item opens its conversation.
    await itemOf(second.conversationId)
      .getByRole('button', { name: /^Conversation / })
      .click();
    await expect.poll(() => page.url()).toContain(`#/c/${second.conversationId}`);
    expect(pageErrors).toEqual([]);
  });
});

describe('signed in with a token', () => {
  const TOKENS = { alice: 'alice-token-0b9c8d7e', chatty: 'chatty-token-1f2e3d4c' };
  let secured: AgentProcess;

  beforeAll(async () => {
    secured = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      ...tokenAuth({ alice: { token: TOKENS.alice, roles: ['chat', 'approve'] }, chatty: { token: TOKENS.chatty, roles: ['chat'] } }),
    });
  }, 120_000);

  afterAll(async () => {
    await secured?.stop();
  });

  it('asks for a token, refuses a bad one, signs alice in, and her decision is "approved by token:alice"', async () => {
    const { page, pageErrors } = await browser();
    await page.goto(secured.url);
    const identity = page.getByTestId('identity');
    await expect.poll(() => identity.getAttribute('data-state'), { timeout: 10_000 }).toBe('signed-out');
    // Before sign-in: a prompt in words a person understands, nothing of the API's wording.
    expect(await page.getByTestId('sign-in-prompt').getByRole('heading').textContent()).toBe('Sign in to use this agent');
    const before = (await page.locator('body').textContent()) ?? '';
    for (const apiWording of ['Authorization', 'Bearer', 'authentication required', 'Unknown error'])
      expect(before).not.toContain(apiWording);
    await saveScreenshot(page, 'signed-out.png');
    const token = identity.getByLabel('API token');

    await token.fill('not-a-token');
    await identity.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => identity.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/^The token was refused/);
    expect(await page.evaluate<string | null>("window.sessionStorage.getItem('asg.token')")).toBeNull();

    await token.fill(`Bearer ${TOKENS.alice}`);
    await identity.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('identity-name').textContent(), { timeout: 15_000 }).toBe('alice');
    expect(await identity.textContent()).toContain('Signed in as alice');
    // Kept for this tab only, without its scheme.
    expect(await page.evaluate<string | null>("window.sessionStorage.getItem('asg.token')")).toBe(TOKENS.alice);

    await page.getByLabel('Message').fill('add resource alice-1 with value 4');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    // The live streams carry the token too: the approval reached the pending panel without a reload.
    await expect.poll(() => page.getByTestId('pending-panel').getByTestId('pending-approval').count(), { timeout: 15_000 }).toBe(1);
    const uuid = (await card.getAttribute('data-uuid'))!;
    await card.getByRole('button', { name: /^Approve/ }).click();
    const trace = chat(page).locator(`[data-testid="decision-trace"][data-uuid="${uuid}"] .decision-text`);
    await expect.poll(() => trace.textContent(), { timeout: 30_000 }).toMatch(/^approved by token:alice via web · /);
    expect((await get(`${secured.url}/approvals/${uuid}`, { authorization: `Bearer ${TOKENS.alice}` })).body).toMatchObject({
      decided_by: 'token:alice',
      via: 'web',
    });
    await saveScreenshot(page, 'signed-in-trace.png');

    // Signing out forgets the token: the chat asks for one again.
    await identity.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByTestId('identity').getAttribute('data-state'), { timeout: 15_000 }).toBe('signed-out');
    expect(await page.evaluate<string | null>("window.sessionStorage.getItem('asg.token')")).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it('a chat-only token may talk but not decide: the card says why', async () => {
    const { page } = await browser();
    await page.goto(secured.url);
    const identity = page.getByTestId('identity');
    await expect.poll(() => identity.getAttribute('data-state'), { timeout: 10_000 }).toBe('signed-out');
    await identity.getByLabel('API token').fill(TOKENS.chatty);
    await identity.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('identity-name').textContent(), { timeout: 15_000 }).toBe('chatty');
    await page.getByLabel('Message').fill('add resource chatty-1 with value 2');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => card.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/approve/);
    expect(resourceNames(join(secured.dir, 'resources.db'))).not.toContain('chatty-1');
  });
});

describe('an approval that needs a quorum', () => {
  const TOKENS = { alice: 'alice-token-5a6b7c8d', bob: 'bob-token-9e8d7c6b5a' };
  let quorate: AgentProcess;

  beforeAll(async () => {
    const auth = tokenAuth({ alice: { token: TOKENS.alice, roles: ['chat', 'approve'] }, bob: { token: TOKENS.bob, roles: ['approve'] } });
    quorate = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      env: auth.env,
      config: {
        ...auth.config,
        approvals: { policies: [{ name: 'four-eyes', tools: ['resources_add'], require: { approvals: 2, not_requester: true } }] },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await quorate?.stop();
  });

  it('the card says where the quorum stands and that the requester cannot approve; "Needs my vote" leaves it out for her', async () => {
    const { page, pageErrors } = await browser();
    await page.goto(quorate.url);
    const identity = page.getByTestId('identity');
    await expect.poll(() => identity.getAttribute('data-state'), { timeout: 10_000 }).toBe('signed-out');
    await identity.getByLabel('API token').fill(TOKENS.alice);
    await identity.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('identity-name').textContent(), { timeout: 15_000 }).toBe('alice');
    await page.getByLabel('Message').fill('add resource quorum-web with value 5000');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = chat(page).getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    const standing = card.getByTestId('approval-quorum');
    await expect.poll(() => standing.textContent(), { timeout: 10_000 }).toBe('0 of 2 approvals; you cannot approve your own request');
    // Her own vote is refused, and the card says why.
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => card.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/not_requester/);

    // Bob votes over REST; the card, read again, counts his vote.
    const uuid = (await card.getAttribute('data-uuid'))!;
    const vote = await post(`${quorate.url}/approvals/${uuid}`, { approved: true }, { authorization: `Bearer ${TOKENS.bob}` });
    expect(vote.status).toBe(202);
    await page.reload();
    await expect
      .poll(() => chat(page).getByTestId('approval-quorum').textContent(), { timeout: 15_000 })
      .toMatch(/^1 of 2 approvals — bob approved (just now|\d+ s ago); you cannot approve your own request$/);

    await page.goto(`${quorate.url}/#/approvals/mine`);
    await expect.poll(() => page.locator('.placeholder').textContent(), { timeout: 15_000 }).toBe('Nothing waits for your vote.');
    expect(resourceNames(join(quorate.dir, 'resources.db'))).not.toContain('quorum-web');
    expect(pageErrors).toEqual([]);
  });
});
