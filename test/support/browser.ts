import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './agent-process.js';
import { installedInBackground } from './installing.js';

/**
 * The browser to drive: found or installed by the test set-up (test/support/global-setup.ts,
 * which reads and sets CHROMIUM_PATH); playwright-core downloads nothing of its own.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Headless, no sandbox (containers run as root), and nothing that reaches the network on its own. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where a test run leaves its screenshots (gitignored). */
const ARTIFACTS_DIR = join(REPO_ROOT, 'test', 'artifacts');

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and failed page scripts, for assertions and for failure messages. */
  pageErrors: string[];
  close(): Promise<void>;
}

/**
 * A browser of its own — one person at one screen: a chromium process with a fresh profile
 * (`--user-data-dir`, a new temporary directory, removed on close) and one page.
 */
export async function openBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<BrowserSession> {
  await installedInBackground('CHROMIUM_PATH');
  const profile = mkdtempSync(join(tmpdir(), 'asg-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: options.viewport ?? { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot of the page (or of one element) under test/artifacts/; returns its path. */
export async function saveScreenshot(target: Pick<Page, 'screenshot'>, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, name);
  await target.screenshot({ path });
  return path;
}
