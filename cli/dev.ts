import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { AgentConfig } from '../services/common/config/schema.js';
import { configureLogging, createLogger } from '../services/common/log.js';
import { initTelemetry } from '../services/common/telemetry.js';
import type { StartOptions } from './agent.js';
import { collectGarbageOnSignal } from './gc-signal.js';
import type { Mesh } from './mesh.js';
import { checkStart, readConfig } from './read-config.js';
import { stopOnSignal } from './stop.js';

/**
 * `asg dev`: the agent of `asg up`, restarted whenever its configuration file changes. The new
 * file gets the whole check of a start first; one with errors is printed and the running agent
 * is left alone, so a half-typed edit never takes the agent down. A restart stops the whole mesh
 * (its MCP servers too) and starts it again on the same data_dir, so conversations and pending
 * approvals carry over.
 */

const log = createLogger('asg');

/** Editors write a file in several steps (truncate, write, rename): one restart after they are done. */
const SETTLE_MS = 200;

interface Running {
  mesh: Mesh;
  config: AgentConfig;
  /** The file's text this mesh was started from: saving it unchanged restarts nothing. */
  text: string;
}

const readText = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // replaced right now: the event of its new version follows
  }
};

const upFields = (file: string, mesh: Mesh) => ({
  config: file,
  url: mesh.url,
  services: mesh.services.map((s) => `${s.name}@${s.address}`).join(','),
});

export async function dev(configFile: string, options: StartOptions): Promise<void> {
  const file = resolve(configFile);
  // The first start is `asg up`'s: a bad file exits 1 before anything starts.
  const text = readText(file) ?? '';
  const config = await readConfig(configFile, options);
  configureLogging(config.log);
  initTelemetry('agent-stop-and-go');
  const { startMesh } = await import('./mesh.js');
  let running: Running = { mesh: await startMesh(config, (service) => createLogger(service)), config, text };
  log.info('agent up', { ...upFields(configFile, running.mesh), watching: file });

  /** The file's text last checked, good or bad: a repeat of the same text is neither restarted nor reported again. */
  let checkedText = text;
  const restart = async (): Promise<void> => {
    const changed = readText(file);
    if (changed === undefined || changed === checkedText) return;
    checkedText = changed;
    const { config: next, problems } = await checkStart(configFile, options);
    if (problems) process.stderr.write(`${problems}\n`);
    if (!next) {
      log.error('the changed configuration has errors: the agent keeps running with the last good one', { config: configFile });
      return;
    }
    if (changed === running.text) return; // back to what runs
    log.info('the configuration changed: restarting the agent', { config: configFile });
    await running.mesh.stop(Date.now() + running.config.shutdown_grace);
    try {
      running = { mesh: await startMesh(next, (service) => createLogger(service)), config: next, text: changed };
    } catch (error) {
      log.error('the changed configuration did not start: starting the last good one again', {
        config: configFile,
        error: error instanceof Error ? error.message : String(error),
      });
      running = { ...running, mesh: await startMesh(running.config, (service) => createLogger(service)) };
      // It may fail for a passing reason (a port taken, a database away): saving it again tries again.
      checkedText = running.text;
    }
    log.info('agent restarted', upFields(configFile, running.mesh));
  };

  // One restart at a time, in the order of the changes.
  let restarts = Promise.resolve();
  let settle: NodeJS.Timeout | undefined;
  let stopping = false;
  // The folder, not the file: an editor that saves by renaming a new file over it would end a watch of the old one.
  const watcher: FSWatcher = watch(dirname(file), (_event, name) => {
    if (stopping || (name !== null && name !== basename(file))) return;
    clearTimeout(settle);
    settle = setTimeout(() => {
      restarts = restarts.then(restart).catch((error: unknown) => {
        log.error('the restart failed; stopping', { error: error instanceof Error ? error.message : String(error) });
        process.kill(process.pid, 'SIGTERM');
      });
    }, SETTLE_MS);
  });

  stopOnSignal(
    async (deadline) => {
      stopping = true;
      clearTimeout(settle);
      watcher.close();
      await restarts;
      await running.mesh.stop(deadline);
    },
    log,
    config.shutdown_grace,
  );
  collectGarbageOnSignal(log);
}
