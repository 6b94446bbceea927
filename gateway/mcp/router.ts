import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { createMcpHandler, isLegacyRequest, legacyStatelessFallback } from '@modelcontextprotocol/server';
import type { AgentConfig } from '../../services/common/config/schema.js';
import type { Logger } from '../../services/common/log.js';
import { agentVersion } from '../app/version.js';
import { adoptSessionId, requestScope } from '../http/request-scope.js';
import { BODY_LIMIT_BYTES } from '../app/inputs.js';
import { runInExchange, type McpExchange } from './exchange.js';
import { jsonRpcErrorResponse, sendWebResponse, toWebRequest } from './http-bridge.js';
import { createAgentMcpServer, type AgentMcpServerOptions } from './server.js';
import { LegacySessions } from './sessions.js';
import type { TurnAgent } from './turns.js';

/**
 * The MCP face of the gateway: the agent served as an MCP server at
 * `/mcp` over Streamable HTTP, speaking both protocol generations the SDK serves —
 * 2026-07-28 statelessly (each request stands alone; any replica answers), and the 2025
 * revisions with sessions (see sessions.ts for why). With `serve_mcp.enabled: false` nothing
 * is mounted and `/mcp` is the gateway's ordinary 404. Host and Origin are checked for every
 * face alike in front of this router (gateway/http/cross-site.ts), not here.
 */

export const MCP_PATH = '/mcp';

export interface McpRouterOptions {
  agent: TurnAgent;
  config: Pick<AgentConfig, 'name' | 'description' | 'serve_mcp' | 'chat'>;
  log: Logger;
  /** The server's version; the project's package.json version by default. */
  version?: string;
  /** How long a 2025-era session may go unused (tests); by default longer than any one call may take. */
  sessionIdleMs?: number;
}

const MIN_SESSION_IDLE_MS = 30 * 60_000;

export function mcpRouter(options: McpRouterOptions): Router {
  const { config, log } = options;
  const router = express.Router();
  if (!config.serve_mcp.enabled) return router;

  const serverOptions: AgentMcpServerOptions = {
    agent: options.agent,
    identity: { name: config.name, description: config.description, version: options.version ?? agentVersion() },
    tool: config.serve_mcp.tool,
    turnTimeoutMs: config.chat.turn_timeout,
    log,
  };
  // Built once now, so that a tool configuration the server cannot serve fails at startup.
  createAgentMcpServer(serverOptions, 'modern');

  // The SDK reports requests it refused (a client's mistake, answered with a JSON-RPC error).
  const onerror = (error: Error) => log.info('mcp request refused', { error: error.message });
  const modern = createMcpHandler(() => createAgentMcpServer(serverOptions, 'modern'), {
    legacy: 'reject',
    onerror,
    maxRequestBodySize: BODY_LIMIT_BYTES,
  });
  const sessions = new LegacySessions(
    () => createAgentMcpServer(serverOptions, 'legacy'),
    legacyStatelessFallback(() => createAgentMcpServer(serverOptions, 'legacy'), onerror, { maxRequestBodySize: BODY_LIMIT_BYTES }),
    {
      maxSessions: config.serve_mcp.sessions.max,
      maxPerPrincipal: config.serve_mcp.sessions.max_per_principal,
      // Longer than any one call may take, so that a session is never closed under a call.
      idleMs: options.sessionIdleMs ?? Math.max(MIN_SESSION_IDLE_MS, 2 * config.chat.turn_timeout),
      maxRequestBodySize: BODY_LIMIT_BYTES,
    },
    log,
  );
  const route = async (request: globalThis.Request): Promise<globalThis.Response> => {
    // The SDK's own classification: a request with the 2026-07-28 envelope is modern, anything else 2025-era.
    if (await isLegacyRequest(request, undefined, { maxRequestBodySize: BODY_LIMIT_BYTES })) return sessions.handle(request);
    return modern.fetch(request);
  };

  const serve = async (req: Request, res: Response, next: NextFunction) => {
    const scope = requestScope(res);
    scope.route = MCP_PATH;
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const exchange: McpExchange = {
      // The caller's X-Session-ID stands; without one, the conversation's, learnt by the tool call.
      adoptSessionId(sessionId) {
        if (!scope.sessionId) adoptSessionId(res, sessionId);
      },
    };
    let response: globalThis.Response;
    try {
      response = await runInExchange(exchange, () => route(toWebRequest(req, gone.signal)));
    } catch (error) {
      // The caller went away (or its connection broke, e.g. on bytes after a body it did not frame): nobody to answer.
      if (gone.signal.aborted || req.destroyed) return;
      const message = error instanceof Error ? error.message : String(error);
      log.error('mcp request failed', { error: message });
      response = jsonRpcErrorResponse(500, -32603, `internal error: ${message}`);
    }
    try {
      await sendWebResponse(response, res);
    } catch (error) {
      next(error);
    }
  };

  router.all(MCP_PATH, serve);
  return router;
}
