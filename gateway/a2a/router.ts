import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { withContextPatch } from '../../services/common/context.js';
import type { Logger } from '../../services/common/log.js';
import { newSessionId } from '../../services/common/session-id.js';
import { openEventStream } from '../../services/common/sse.js';
import { adoptSessionId, requestScope } from '../http/request-scope.js';
import { failureOf } from '../app/errors.js';
import { BODY_LIMIT_BYTES, JSON_BODY_TYPES } from '../app/inputs.js';
import type { TaskBackend } from './backend.js';
import { A2A_PATH, agentCard, CARD_PATHS, type CardSecurity } from './card.js';
import { cardUrlResolver, type CardUrlSettings } from './card-url.js';
import { failure, JsonRpcCode, JsonRpcError, parseEnvelope, toJsonRpcError } from './jsonrpc.js';
import { answerRpc } from './methods.js';
import { bearerChallenge } from '../http/challenge.js';
import { TaskService } from './tasks.js';
import type { PushSettings } from './push.js';
import { agentVersion } from '../app/version.js';

/**
 * The A2A server's HTTP face: the agent card at both well-known
 * paths, and `POST /a2a` for JSON-RPC 2.0 — JSON answers, or server-sent events for the
 * streaming methods. JSON-RPC errors are answered with HTTP 200, as the binding wants.
 *
 * The SDK's own server (DefaultRequestHandler + jsonRpcHandler) is not used: it keeps tasks
 * in its TaskStore and runs an AgentExecutor per request, while here a task is a stored
 * conversation that any replica continues, and it cannot speak the type-parts dialect nor answer
 * a `tasks/get` in the dialect its task was created in. Its types and ProtoJSON codecs
 * write the v1.0 answers (wire/v1_0.ts).
 */

export interface A2aRouterOptions {
  backend: TaskBackend;
  /** The card's name and description (the config's). */
  identity: { name: string; description: string };
  log: Logger;
  /** The card's version; the project's package.json version by default. */
  version?: string;
  /** With `auth`: the security scheme the card advertises. */
  security?: CardSecurity;
  /** Where the card says the endpoint is (`server.public_url`, `server.trusted_proxies`); the request's own Host by default. */
  cardUrl?: CardUrlSettings;
  /** Push notifications: where their configs are kept; without it they are not offered (-32003). */
  push?: PushSettings;
}

const A2A_VERSION_HEADER = 'A2A-Version';

// JSON-labelled bodies only (the cross-site guard refuses others with 415), read as
// text and parsed here so that malformed JSON is answered with -32700, not an HTTP 400.
const rawBody = express.text({ type: JSON_BODY_TYPES, limit: BODY_LIMIT_BYTES });

function markRoute(route: string) {
  return (_req: Request, res: Response, next: NextFunction) => {
    requestScope(res).route = route;
    next();
  };
}

export function a2aRouter(options: A2aRouterOptions): Router {
  const { backend, identity, log } = options;
  const version = options.version ?? agentVersion();
  const tasks = new TaskService(backend, log, options.push);
  const cardUrl = cardUrlResolver(options.cardUrl ?? { trustedProxies: [] });
  const router = express.Router();

  const serveCard = async (req: Request, res: Response) => {
    const scope = requestScope(res);
    // Listing the skills reaches every MCP server: work of its own, with a session id of its own.
    if (!scope.sessionId) adoptSessionId(res, newSessionId());
    try {
      const tools = await withContextPatch({ sessionId: scope.sessionId }, () => backend.listTools());
      const url = cardUrl({
        // The socket's own protocol: forwarded headers count only from a trusted proxy (card-url.ts).
        protocol: 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
        host: req.get('host') ?? `${req.socket.localAddress}:${req.socket.localPort}`,
        remoteAddress: req.socket.remoteAddress,
        forwardedProto: req.get('x-forwarded-proto'),
        forwardedHost: req.get('x-forwarded-host'),
      });
      res.json(
        agentCard({
          ...identity,
          version,
          endpointUrl: url,
          tools,
          pushNotifications: tasks.pushNotifications,
          ...(options.security && { security: options.security }),
        }),
      );
    } catch (error) {
      const failure = failureOf(error);
      if (failure.unexpected) log.error('agent card failed', { error: failure.message });
      res.status(failure.status).json({ error: failure.message });
    }
  };
  for (const path of CARD_PATHS) router.get(path, markRoute(path), serveCard);

  const serveRpc = async (req: Request, res: Response) => {
    const scope = requestScope(res);
    const envelope = parseEnvelope(typeof req.body === 'string' ? req.body : undefined);
    if (!envelope.ok) {
      res.json(failure(envelope.id, envelope.error));
      return;
    }
    const { request } = envelope;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const reply = await answerRpc({ request, versionHeader: req.get(A2A_VERSION_HEADER), signal: gone.signal }, tasks);
    if (reply.sessionId && !scope.sessionId) adoptSessionId(res, reply.sessionId);
    if (reply.kind === 'json') {
      if (reply.unexpected) log.error('a2a request failed', { method: request.method, error: reply.unexpected });
      // A decision the caller's role does not allow (auth/decisions.ts): HTTP 403, as the check in front answers.
      if ('error' in reply.body && reply.body.error.code === JsonRpcCode.ACCESS_DENIED)
        res.status(403).setHeader('WWW-Authenticate', bearerChallenge('insufficient_scope'));
      res.json(reply.body);
      return;
    }
    // Each event one `data:` line with a JSON-RPC answer, as A2A's streaming methods send them.
    const stream = openEventStream(res);
    try {
      // Read to the end even when the caller went away: the turn runs on and is stored,
      // and the task can be fetched later.
      for await (const event of reply.events) stream.send({ data: event });
    } catch (error) {
      const mapped = toJsonRpcError(error);
      if (mapped.unexpected) log.error('a2a stream failed', { method: request.method, error: mapped.error.message });
      stream.send({ data: failure(request.id, mapped.error) });
    } finally {
      stream.end();
    }
  };

  // Failures before the handler ran (a body over the limit, an unsupported charset).
  const bodyError = (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    const { message, unexpected } = failureOf(error);
    if (unexpected) log.error('a2a request failed', { error: message });
    const code = unexpected ? JsonRpcCode.INTERNAL_ERROR : JsonRpcCode.INVALID_REQUEST;
    res.json(failure(null, new JsonRpcError(code, unexpected ? message : `invalid request: ${message}`)));
  };

  router.post(A2A_PATH, markRoute(A2A_PATH), rawBody, serveRpc, bodyError);
  return router;
}
