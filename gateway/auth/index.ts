import type { RequestHandler, Router } from 'express';
import type { GatewayConfig } from '../../services/common/config/slices.js';
import type { Logger } from '../../services/common/log.js';
import type { Agent } from '../app/agent.js';
import { AuthAudit, type AuditSink } from './audit.js';
import { Authenticator } from './authenticator.js';
import { checkBinding } from './binding.js';
import { guardDecisions } from '../app/decision-guard.js';
import { guardConversations } from '../app/ownership.js';
import type { JwksOptions } from './jwt.js';
import { authGate } from './middleware.js';
import { authRouter, resourceMetadataUrl } from './router.js';

/**
 * Authentication at the gateway, assembled from the config: the bind rule, the
 * check in front of every router, the decision guard of the application layer, the
 * gateway's own auth routes, and what the agent card advertises.
 */

export interface GatewayAuth {
  /** Whether `auth` is configured. */
  enabled: boolean;
  /** Whether JWTs are taken (the card says bearerFormat JWT; MCP 401s name the resource metadata). */
  jwt: boolean;
  /** The check in front of every router; `isStatic` says whether a GET path is one of the web chat's files. */
  gate(isStatic?: (path: string) => boolean): RequestHandler;
  /**
   * `agent` whose decisions need the approve role and whose conversations obey who owns them
   * (app/ownership.ts); unchanged without `auth`.
   */
  guard(agent: Agent): Agent;
  /** GET /auth/whoami and the protected-resource metadata. */
  router: Router;
  /** What the agent card advertises (a2a/card.ts CardSecurity); undefined without `auth`. */
  card?: { bearerFormat?: string; description: string };
}

export interface GatewayAuthOptions {
  config: Pick<GatewayConfig, 'name' | 'host' | 'port' | 'auth' | 'insecure'> & Partial<Pick<GatewayConfig, 'metrics'>>;
  /** Where "auth.failed" entries are appended (the store client). */
  audit: AuditSink;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  jwks?: JwksOptions;
}

/** Throws InsecureBindingError (a non-loopback host without auth or insecure) or AuthConfigError (a token variable unset). */
export function setUpAuth(options: GatewayAuthOptions): GatewayAuth {
  const { config, log } = options;
  checkBinding(config, log);
  const auth = config.auth;
  const authenticator = auth ? Authenticator.fromConfig(auth, log, { env: options.env, jwks: options.jwks }) : undefined;
  const audit = auth ? new AuthAudit(options.audit, log) : undefined;
  const jwt = Boolean(auth?.jwt);
  return {
    enabled: Boolean(auth),
    jwt,
    gate: (isStatic) =>
      authGate({
        authenticator,
        audit,
        isStatic,
        log,
        publicMetrics: config.metrics?.public ?? false,
        ...(jwt && { resourceMetadataUrl }),
      }),
    guard: (agent) =>
      auth
        ? guardConversations(
            guardDecisions(agent, (scope, uuid) =>
              audit?.record({
                actor: scope.principal.id,
                via: scope.principal.via,
                subject: `${scope.subject} (approval ${uuid})`,
                reason: 'role',
                needed: 'approve',
              }),
            ),
          )
        : agent,
    router: authRouter({ issuer: auth?.jwt?.issuer, name: config.name }),
    ...(auth && { card: cardSecurityOf(auth.tokens.length > 0, jwt) }),
  };
}

function cardSecurityOf(tokens: boolean, jwt: boolean): NonNullable<GatewayAuth['card']> {
  const what = [tokens && 'an API token of this agent', jwt && 'a JWT from its identity provider'].filter(Boolean).join(' or ');
  return { ...(jwt && !tokens && { bearerFormat: 'JWT' }), description: `${what || 'a token'}, sent as "Authorization: Bearer <token>"` };
}
