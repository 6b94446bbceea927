/**
 * Waits for what the test set-up installs in the background (requirements.ts,
 * `installsInBackgroundTo`): the file named by `${env}_INSTALLING` exists once the install is
 * done. Nothing to wait for when the machine had it already.
 */
import { existsSync } from 'node:fs';
import { until } from './until.js';

/** apt-get's own bound in the set-up (global-setup.ts), and a little more. */
const INSTALL_BOUND_MS = 11 * 60_000;

export async function installedInBackground(env: string): Promise<void> {
  const done = process.env[`${env}_INSTALLING`];
  if (done === undefined) return;
  await until(`the test set-up's install of ${env} (it ends the run if it fails)`, () => existsSync(done), INSTALL_BOUND_MS, 500);
}
