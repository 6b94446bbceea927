import type { Logger } from '../services/common/log.js';
import { shutdownTelemetry } from '../services/common/telemetry.js';

/** The default of `shutdown_grace` (config/schema.ts), for commands that read no agent config. */
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/**
 * One signal can arrive twice: Ctrl-C (or a supervisor's group kill) signals every process of
 * the group, and `npm start` also forwards it to its child (@npmcli/run-script's
 * signal-manager). A repeat this soon after the first is taken as that echo, not as the
 * operator's "stop now".
 */
const SAME_SIGNAL_MS = 500;
/** Past the grace, closing files, children and connections gets this long before the process exits anyway. */
const STOP_OVERRUN_MS = 5_000;
/** After a clean stop the event loop should be empty; if something still holds it, exit after this long regardless. */
const EXIT_FALLBACK_MS = 1_000;
/** How often a process started by npm checks that npm is still its parent. */
const PARENT_CHECK_MS = 1_000;

export type Stop = (deadline: number) => Promise<void>;

/**
 * The clean stop of a long-running command. SIGTERM or SIGINT: `stop`
 * gets `graceMs` for the work in flight, telemetry is flushed, and the process exits 0: once
 * nothing is left on its event loop, or at once when the grace ran out and work was cut. A
 * second signal exits at once with 130. A stop that hangs past the grace exits 1 after a
 * bounded overrun.
 *
 * Under npm (`npm start`) the process also stops when npm goes away: npm that is killed
 * with SIGKILL forwards nothing, and this process would otherwise keep the port.
 */
export function stopOnSignal(stop: Stop, log: Logger, graceMs = DEFAULT_SHUTDOWN_GRACE_MS): void {
  let firstSignalAt: number | undefined;
  const begin = (reason: string) => {
    firstSignalAt = Date.now();
    const deadline = firstSignalAt + graceMs;
    log.info('stopping', { reason, grace_ms: graceMs });
    setTimeout(() => {
      log.error('the stop did not finish within the grace period and its overrun; exiting anyway', {
        grace_ms: graceMs,
        overrun_ms: STOP_OVERRUN_MS,
      });
      process.exit(1);
    }, graceMs + STOP_OVERRUN_MS).unref();
    void stop(deadline)
      .then(shutdownTelemetry)
      .then(
        () => {
          const graceRanOut = Date.now() >= deadline;
          log.info('stopped', { ms: Date.now() - firstSignalAt!, grace_ran_out: graceRanOut });
          // Work cut at the deadline may still have a call out (a model or tool call whose
          // handler takes no cancellation); leaving it behind is what the cut means.
          if (graceRanOut) process.exit(0);
          exitWhenIdle(log);
        },
        (error: unknown) => {
          log.error('stop failed', { error: error instanceof Error ? error.message : String(error) });
          process.exit(1);
        },
      );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt === undefined) return begin(signal);
    if (Date.now() - firstSignalAt < SAME_SIGNAL_MS) return;
    log.warn('second signal: exiting at once', { signal });
    process.exit(130);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  watchNpmParent(() => {
    if (firstSignalAt === undefined) begin('npm, the parent process, is gone');
  });
}

/**
 * Exit code 0, by letting the event loop run dry: every server, client, child and timer has
 * been closed or unref'd. Should something still hold it, say what and exit regardless.
 */
function exitWhenIdle(log: Logger): void {
  process.exitCode = 0;
  setTimeout(() => {
    log.warn('something still holds the event loop after the stop; exiting anyway', {
      resources: process.getActiveResourcesInfo().join(','),
    });
    process.exit(0);
  }, EXIT_FALLBACK_MS).unref();
}

/**
 * `npm start` runs the start script as `sh -c "exec node bin/asg up …"` (package.json): the
 * `exec` makes this process npm's child, so npm's forwarded SIGTERM reaches it. (Without it
 * npm signals the shell, dash dies on SIGTERM without passing it on, and this process is left
 * running under init, holding the port.) Only npm dying without forwarding (SIGKILL) remains:
 * then this process is re-parented, which this notices.
 */
function watchNpmParent(gone: () => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, PARENT_CHECK_MS);
  timer.unref();
}
