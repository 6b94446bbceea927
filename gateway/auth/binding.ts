import type { GatewayConfig } from '../../services/common/config/slices.js';
import type { Logger } from '../../services/common/log.js';
import { isLoopbackBinding } from '../http/cross-site.js';

/**
 * The bind rule: without `auth`, whoever reaches the port may approve anything, so a
 * gateway without `auth` listens on loopback only — unless the operator says `insecure: true`
 * (or `--insecure` on `asg up` / `asg serve gateway`), which starts it with a loud warning.
 * On loopback without `auth` one warning line says that nobody is authenticated.
 */

export class InsecureBindingError extends Error {
  constructor(host: string) {
    super(
      `refusing to listen on ${host} without authentication: anyone who can reach it could approve any tool call. ` +
        'Configure auth (auth.tokens or auth.jwt; see docs/security.md), listen on 127.0.0.1, ' +
        'or accept the risk with insecure: true in the config or --insecure on the command line',
    );
    this.name = 'InsecureBindingError';
  }
}

type BindingConfig = Pick<GatewayConfig, 'host' | 'port' | 'auth' | 'insecure'>;

/** Throws InsecureBindingError for a non-loopback host without `auth` or `insecure`. */
export function assertBindingAllowed(config: BindingConfig): void {
  if (!config.auth && !config.insecure && !isLoopbackBinding(config.host)) throw new InsecureBindingError(config.host);
}

/** The bind rule with its warnings (one line on loopback without auth; a loud one with insecure). */
export function checkBinding(config: BindingConfig, log: Logger): void {
  assertBindingAllowed(config);
  if (config.auth) return;
  if (isLoopbackBinding(config.host)) {
    log.warn("authentication is off: nobody is asked who they are; anyone who can reach this machine's loopback may chat and approve", {
      host: config.host,
      hint: 'configure auth to require tokens',
    });
    return;
  }
  log.warn(
    'INSECURE: listening beyond loopback without authentication; anyone who can reach this port may chat and approve every tool call',
    {
      host: config.host,
      port: config.port,
      hint: 'configure auth (auth.tokens or auth.jwt) and drop insecure',
    },
  );
}
