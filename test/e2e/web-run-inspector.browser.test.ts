/**
 * The run inspector of the web chat, in a real browser against one real agent (API tokens, a
 * three-node sequential tree, the real mcp-resources server, a scripted Gemini model per node).
 * Alice sends a message whose executor node calls the destructive resources_add and approves
 * it in the chat; from the conversation's runs she opens the run's inspector at
 * `#/runs/<run_id>`: every node started and finished (the executor twice: paused, then done),
 * the model calls with their tokens, the approval asked, her decision, and the approved call
 * with its arguments and outcome, each step with a bar on the run's time scale. Bob, another
 * chat user, is told the run is not found, as he is for a run nobody has.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { closeBrowser, openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { get } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { pipelineScript, pipelineTree } from '../support/pipeline-tree.js';
import { tokenAuth } from '../support/token-auth.js';

const TOKENS = { alice: 'inspector-alice-token-4c2e9a7b1d', bob: 'inspector-bob-token-8f1a3c5e7b' };
const alice = { authorization: `Bearer ${TOKENS.alice}` };

let model: ScriptedModelServer;
let agent: AgentProcess;
const browsers: BrowserSession[] = [];

beforeAll(async () => {
  model = await startScriptedModel(pipelineScript);
  const auth = tokenAuth({ alice: { token: TOKENS.alice, roles: ['chat', 'approve'] }, bob: { token: TOKENS.bob, roles: ['chat'] } });
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: auth.env, config: { ...auth.config, agent: pipelineTree } });
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

/** A browser of its own, signed in with `token` as `name`. */
async function signedIn(name: string, token: string): Promise<BrowserSession> {
  const session = await openBrowser({ viewport: { width: 1280, height: 1400 } });
  browsers.push(session);
  const { page } = session;
  await page.goto(agent.url);
  const identity = page.getByTestId('identity');
  await expect.poll(() => identity.getAttribute('data-state'), { timeout: 10_000 }).toBe('signed-out');
  await identity.getByLabel('API token').fill(token);
  await identity.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByTestId('identity-name').textContent(), { timeout: 15_000 }).toBe(name);
  return session;
}

const steps = (page: Page) => page.getByTestId('run-inspector').getByTestId('run-step');
const stepAt = (page: Page, index: number) => page.locator(`[data-testid="run-step"][data-index="${index}"]`);

describe('the run inspector', () => {
  let runId: string;
  let conversationId: string;

  it("opens a tree run from its conversation's runs and shows every step: nodes, model calls with tokens, the approval, who decided, the approved call", async () => {
    const { page, pageErrors } = await signedIn('alice', TOKENS.alice);
    await page.getByLabel('Message').fill('add inspected with value 5');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('main.chat').getByTestId('approval-card');
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    await card.getByTestId('reject-reason').fill('looks right');
    await card.getByRole('button', { name: /^Approve/ }).click();
    conversationId = decodeURIComponent(/#\/c\/([^/]+)$/.exec(page.url())![1]!);
    const runsOf = async () => (await get(`${agent.url}/conversations/${conversationId}/runs`, alice)).body.runs as { status: string }[];
    await expect.poll(async () => (await runsOf()).map((run) => run.status), { timeout: 30_000 }).toEqual(['completed']);

    // The conversation's runs, newest first, each a link to its inspector.
    await page.getByTestId('runs-link').click();
    await expect.poll(() => page.url()).toContain(`#/c/${conversationId}/runs`);
    const item = page.getByTestId('runs-page').getByTestId('runs-item');
    await expect.poll(() => item.count(), { timeout: 15_000 }).toBe(1);
    expect(await item.getAttribute('data-status')).toBe('completed');
    runId = (await item.getAttribute('data-run'))!;
    await item.click();
    await expect.poll(() => page.url()).toContain(`#/runs/${runId}`);

    const inspector = page.getByTestId('run-inspector');
    await expect.poll(() => inspector.getAttribute('data-state'), { timeout: 15_000 }).toBe('loaded');
    expect(await inspector.getByTestId('run-status').getAttribute('data-status')).toBe('completed');
    // What the page shows is the journal, step for step.
    const journal = (await get(`${agent.url}/runs/${runId}`, alice)).body as {
      steps: { index: number; kind: string; node: string; input_tokens?: number; output_tokens?: number }[];
    };
    const shown = await steps(page).evaluateAll((items) =>
      items.map((li) => `${li.getAttribute('data-kind')} ${li.getAttribute('data-node')}`),
    );
    expect(shown).toEqual(journal.steps.map((step) => `${step.kind} ${step.node}`));
    expect(shown).toEqual([
      'node_started pipeline',
      'node_started pipeline/analyzer',
      'model_call pipeline/analyzer',
      'node_finished pipeline/analyzer',
      'node_started pipeline/executor',
      'model_call pipeline/executor',
      'approval pipeline/executor',
      'node_finished pipeline/executor',
      'node_finished pipeline',
      'decision pipeline/executor',
      'tool_call pipeline/executor',
      'node_started pipeline/executor',
      'model_call pipeline/executor',
      'node_finished pipeline/executor',
      'node_started pipeline/reporter',
      'model_call pipeline/reporter',
      'node_finished pipeline/reporter',
      'node_finished pipeline',
    ]);

    // The tree's nodes, each done now; the executor was entered twice (paused, then went on).
    const nodes = await inspector
      .getByTestId('run-node')
      .evaluateAll((items) => items.map((li) => [li.getAttribute('data-path'), li.getAttribute('data-status')]));
    expect(nodes).toEqual([
      ['pipeline', 'done'],
      ['pipeline/analyzer', 'done'],
      ['pipeline/executor', 'done'],
      ['pipeline/reporter', 'done'],
    ]);
    expect(await inspector.locator('[data-testid="run-node"][data-path="pipeline/executor"]').textContent()).toContain('entered 2 times');

    // Every model call with its tokens, as recorded.
    for (const call of journal.steps.filter((step) => step.kind === 'model_call')) {
      expect(call.input_tokens).toBeGreaterThan(0);
      expect(await stepAt(page, call.index).getByTestId('run-step-tokens').textContent()).toBe(
        `${call.input_tokens} input tokens · ${call.output_tokens} output tokens`,
      );
    }
    const asking = journal.steps.find((step) => step.kind === 'model_call' && step.node === 'pipeline/executor')!;
    expect(await stepAt(page, asking.index).getByTestId('run-step-text').textContent()).toBe(
      'gemini-2.5-flash · tool-calls · asked for resources_add',
    );

    // The approval asked, who decided it and why, and the approved call with its arguments and outcome.
    const text = async (kind: string) =>
      inspector.locator(`[data-testid="run-step"][data-kind="${kind}"] [data-testid="run-step-text"]`).textContent();
    expect(await text('approval')).toBe('asked to approve resources_add');
    expect(await text('decision')).toBe('approved by token:alice via web: “looks right”');
    expect(await text('tool_call')).toBe('resources_add on resources → ok (approved call)');
    const call = inspector.locator('[data-testid="run-step"][data-kind="tool_call"]');
    await call.locator('.run-step-arguments summary').click();
    expect(JSON.parse((await call.locator('.run-step-arguments pre').textContent())!)).toEqual({ name: 'inspected', value: 5 });
    expect(await inspector.locator('[data-testid="run-step"][data-kind="node_finished"][data-index="7"]').textContent()).toContain(
      'paused for an approval',
    );

    // Each bar lies on the run's line, from 0 to 100 %, in time order: the decision after the approval it answered, the call after it.
    const styles = await inspector
      .getByTestId('run-step-bar')
      .evaluateAll((spans) => spans.map((span) => span.getAttribute('style') ?? ''));
    const bars = styles.map((style) => ({
      left: Number(/left: ([\d.]+)%/.exec(style)?.[1]),
      width: Number(/width: ([\d.]+)%/.exec(style)?.[1]),
    }));
    expect(bars).toHaveLength(journal.steps.length);
    for (const bar of bars) {
      expect(bar.width).toBeGreaterThan(0);
      expect(bar.left).toBeGreaterThanOrEqual(0);
      expect(bar.left + bar.width).toBeLessThanOrEqual(100.01);
    }
    const leftOf = (kind: string) => bars[journal.steps.findIndex((step) => step.kind === kind)]!.left;
    expect(leftOf('approval')).toBeLessThan(leftOf('decision'));
    expect(leftOf('decision')).toBeLessThanOrEqual(leftOf('tool_call'));
    expect(bars[0]!.left).toBeLessThan(5);
    await saveScreenshot(page, 'run-inspector.png');

    // Its links lead back to the conversation.
    await inspector.getByRole('link', { name: 'the conversation' }).click();
    await expect.poll(() => page.url()).toMatch(new RegExp(`#/c/${conversationId}$`));
    expect(pageErrors).toEqual([]);
  });

  it("tells another chat user that the run is not found, as for a run nobody has, and lists none of the conversation's runs", async () => {
    expect(runId).toBeDefined();
    const { page, pageErrors } = await signedIn('bob', TOKENS.bob);
    await page.goto(`${agent.url}/#/runs/${runId}`);
    const inspector = page.getByTestId('run-inspector');
    await expect.poll(() => inspector.getAttribute('data-state'), { timeout: 15_000 }).toBe('not-found');
    expect(await inspector.getByTestId('not-found').textContent()).toMatch(/^Run not found/);
    expect(await steps(page).count()).toBe(0);

    await page.goto(`${agent.url}/#/runs/00000000-0000-4000-8000-000000000000`);
    await expect.poll(() => page.getByTestId('run-inspector').getAttribute('data-run')).toBe('00000000-0000-4000-8000-000000000000');
    await expect.poll(() => page.getByTestId('run-inspector').getAttribute('data-state'), { timeout: 15_000 }).toBe('not-found');

    await page.goto(`${agent.url}/#/c/${conversationId}/runs`);
    const runsPage = page.getByTestId('runs-page');
    await expect.poll(() => runsPage.getByTestId('not-found').count(), { timeout: 15_000 }).toBe(1);
    expect(await runsPage.getByTestId('runs-item').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
