import express, { type Request, type Response, type Router } from 'express';
import { requestScope } from '../http/request-scope.js';
import { currentWhoami } from '../app/decider.js';
import { AUTH_WHOAMI_PATH, PROTECTED_RESOURCE_PATHS } from '../app/route-access.js';

/**
 * The gateway's own authentication routes:
 *
 * - `GET /auth/whoami`: who the caller is — `{"principal", "name", "roles", "authentication": "on"|"off"}` —
 *   so that a client (the web chat) can show who is signed in and check a token before use;
 * - with `auth.jwt`, `GET /.well-known/oauth-protected-resource[/mcp]`: the OAuth
 *   protected-resource metadata (RFC 9728) of `/mcp`, naming the issuer as its authorization
 *   server, which an MCP client reads from a 401's `resource_metadata` to learn where to sign in.
 */

/** The origin the caller used to reach this request (as the agent card's endpoint URL is built). */
function requestOrigin(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? `${req.socket.localAddress}:${req.socket.localPort}`}`;
}

export function resourceMetadataUrl(req: Request): string {
  return `${requestOrigin(req)}${PROTECTED_RESOURCE_PATHS[1]}`;
}

export function authRouter(options: { issuer?: string; name: string }): Router {
  const router = express.Router();
  router.get(AUTH_WHOAMI_PATH, (_req: Request, res: Response) => {
    requestScope(res).route = AUTH_WHOAMI_PATH;
    res.json(currentWhoami());
  });
  const { issuer } = options;
  if (issuer) {
    for (const path of PROTECTED_RESOURCE_PATHS) {
      router.get(path, (req: Request, res: Response) => {
        requestScope(res).route = path;
        res.json({
          resource: `${requestOrigin(req)}/mcp`,
          resource_name: options.name,
          authorization_servers: [issuer],
          bearer_methods_supported: ['header'],
        });
      });
    }
  }
  return router;
}
