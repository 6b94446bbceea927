import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { withContextPatch } from '../../services/common/context.js';
import type { Logger } from '../../services/common/log.js';
import type { AuthAudit } from './audit.js';
import { bearerToken, tokenCredential, type Authenticator, type Credential } from './authenticator.js';
import { allows, ANONYMOUS, anonymousPrincipal, withAuthScope, type Principal } from '../app/principal.js';
import { sendRefusal, type Refusal, type RefusalOptions } from './refusal.js';
import { VIA_HEADER } from '../app/decider.js';
import { requirementsOf, type Need, type RouteRequirements } from '../app/route-access.js';

/**
 * The one authentication check in front of every face (REST, the event streams, tRPC, /a2a,
 * /mcp), after the cross-site guard and before any router. It finds what the route needs
 * (routes.ts), reads the credential — `Authorization: Bearer …`, or on an event stream only the
 * `token` query parameter — verifies it, and either refuses (401, 403 or 503, in the face's shape:
 * refusal.ts; audited: audit.ts) or runs the routers with the principal in the request's async
 * context (principal.ts). Without `auth` every request is "anonymous" with every role.
 *
 * With `auth`, the caller's Authorization header is this gateway's credential: it is not passed
 * on to the services behind it, nor from there to MCP servers and A2A peers (it would hand the
 * caller's token to every tool server).
 */

export interface AuthGateOptions extends RefusalOptions {
  /** Undefined: `auth` is not configured. */
  authenticator?: Authenticator;
  audit?: AuthAudit;
  /** Whether a GET path is one of the web chat's files (open). */
  isStatic?: (path: string) => boolean;
  /** `metrics.public`: GET /metrics open to anyone (route-access.ts). */
  publicMetrics?: boolean;
  log: Logger;
}

function unmet(principal: Principal, needs: Need[]): Need | undefined {
  return needs.find((need) => need.kind === 'role' && !need.roles.some((role) => allows(principal, role)));
}

function credentialOf(req: Request, route: RouteRequirements): Credential {
  const header = bearerToken(req.get('authorization'));
  if (!('problem' in header && header.problem === 'missing') || !route.queryToken) return header;
  const query = req.query.token;
  if (query === undefined) return header;
  return typeof query === 'string' ? tokenCredential(query) : { problem: 'malformed' };
}

export function authGate(options: AuthGateOptions): RequestHandler {
  const { authenticator, audit, log } = options;
  const isStatic = options.isStatic ?? (() => false);

  const refuse = (req: Request, res: Response, route: RouteRequirements, refusal: Refusal, actor: string, needed?: string): void => {
    if (refusal.status !== 503) {
      audit?.record({ actor, via: route.face, subject: route.subject, reason: refusal.reason, ...(needed && { needed }) });
      log.info('request refused', { rule: 'auth', status: refusal.status, reason: refusal.reason, via: route.face, route: route.subject });
    }
    sendRefusal(req, res, route.face, refusal, options);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const route = requirementsOf(req.method, req.path, isStatic, req.get(VIA_HEADER), options.publicMetrics);
    if (!authenticator) {
      withAuthScope({ principal: anonymousPrincipal(route.face), subject: route.subject, authentication: false }, next);
      return;
    }
    if (route.needs.every((need) => need.kind === 'open')) {
      // Open routes decide nothing: an identity without roles.
      withAuthScope(
        { principal: { id: ANONYMOUS, name: ANONYMOUS, roles: [], via: route.face }, subject: route.subject, authentication: true },
        next,
      );
      return;
    }
    const credential = credentialOf(req, route);
    if ('problem' in credential) {
      refuse(req, res, route, { status: 401, reason: credential.problem }, ANONYMOUS);
      return;
    }
    authenticator.verify(credential.token).then(
      (verdict) => {
        if (verdict.kind === 'unverifiable') {
          log.warn('a JWT could not be checked: the issuer keys are unreachable', { error: verdict.detail });
          refuse(
            req,
            res,
            route,
            {
              status: 503,
              message: "the token cannot be checked now: the issuer's keys (auth.jwt.jwks_url) are unreachable; try again shortly",
            },
            ANONYMOUS,
          );
          return;
        }
        if (verdict.kind === 'refused') {
          refuse(req, res, route, { status: 401, reason: verdict.reason }, verdict.claimedPrincipal ?? ANONYMOUS);
          return;
        }
        const principal: Principal = { ...verdict.identity, via: route.face };
        const missing = unmet(principal, route.needs);
        if (missing?.kind === 'role') {
          const needed = missing.roles.join(' or ');
          const message = `${principal.name} may not do this: ${route.subject} needs the ${needed} role (${principal.name} has ${principal.roles.length ? principal.roles.join(', ') : 'none'})`;
          refuse(req, res, route, { status: 403, reason: 'role', message }, principal.id, needed);
          return;
        }
        withContextPatch({ authorization: undefined }, () =>
          withAuthScope({ principal, subject: route.subject, authentication: true }, next),
        );
      },
      (error: unknown) => next(error),
    );
  };
}
