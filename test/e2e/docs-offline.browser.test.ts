/**
 * `GET /docs` in a real browser with the network cut: every request that does not go to the
 * agent on loopback is blocked, and the interactive reference still renders its list of
 * operations — its script comes from the package, served by the gateway, not from a CDN.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, openBrowser, type BrowserSession } from '../support/browser.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';

let agent: AgentProcess;
let session: BrowserSession;

beforeAll(async () => {
  // No turn runs: the model's address is never called.
  agent = await startAgent({ geminiBaseUrl: 'http://127.0.0.1:9' });
  session = await openBrowser();
}, 120_000);

afterAll(async () => {
  await closeBrowser();
  await agent?.stop();
});

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

describe('/docs with no network beyond the agent', () => {
  it('renders the list of operations', async () => {
    const { context, page, pageErrors } = session;
    const blocked: string[] = [];
    await context.route('**/*', async (route) => {
      const url = new URL(route.request().url());
      if (LOOPBACK.has(url.hostname)) return route.continue();
      blocked.push(url.href);
      return route.abort('internetdisconnected');
    });
    const answer = await page.goto(`${agent.url}/docs`);
    expect(answer?.status()).toBe(200);
    // The list is rendered from /openapi.json: the first group open with its operations, by
    // their summaries, and the other groups by their tags.
    for (const entry of ['Create a conversation', 'List conversations', 'Send a message', 'Approvals', 'Probes', 'OpenAI'])
      await expect.poll(async () => page.getByText(entry, { exact: true }).count(), { timeout: 30_000, message: entry }).toBeGreaterThan(0);
    // The loading note the page starts with is gone: Scalar mounted.
    expect(await page.getByText('Loading the API reference').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    // Nothing it needed was out there: it asked for nothing beyond the agent.
    expect(blocked).toEqual([]);
  }, 90_000);
});
