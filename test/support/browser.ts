import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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

/** The chromium process a test file's sessions share, started with the first. */
let shared: Promise<Browser> | undefined;

/**
 * A browser of its own — one person at one screen: a browser context with its own cookies,
 * storage and cache (as a fresh profile), and one page. A file's sessions share one chromium
 * process (a process each costs seconds of a loaded machine and holds nothing a context does
 * not); the file closes it with closeBrowser() when it is done.
 */
export async function openBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<BrowserSession> {
  await installedInBackground('CHROMIUM_PATH');
  shared ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  const context = await (await shared).newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { context, page, pageErrors, close: () => context.close() };
}

/** Closes the chromium process the file's sessions shared (and with it any session still open). */
export async function closeBrowser(): Promise<void> {
  const browser = shared;
  shared = undefined;
  await (await browser?.catch(() => undefined))?.close();
}

/** Saves a screenshot of the page (or of one element) under test/artifacts/; returns its path. */
export async function saveScreenshot(target: Pick<Page, 'screenshot'>, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, name);
  await target.screenshot({ path });
  return path;
}
