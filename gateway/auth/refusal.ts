import type { Request, Response } from 'express';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { bearerChallenge, type BearerError } from '../http/challenge.js';
import type { Face } from '../app/principal.js';
import { REFUSAL_MESSAGES, type FailureReason } from './verdict.js';

/**
 * How each face says "who are you?" (401), "not you" (403) and "cannot check now" (503), with
 * the challenge of http/challenge.ts, in the face's own error shape:
 *
 * - REST: `{"error": "…"}`;
 * - tRPC (the web chat): tRPC's error envelope with code UNAUTHORIZED/FORBIDDEN and the HTTP
 *   status in `data.httpStatus`, one per procedure for a batch, so the client reads it as any other error;
 * - A2A: a JSON-RPC error (code -32000, JSON-RPC's range for server errors; A2A defines none for
 *   this) inside the HTTP 401/403 — the A2A spec asks for the HTTP status and WWW-Authenticate;
 * - MCP: an OAuth error object (`{"error": "invalid_token", "error_description": "…"}`), as the MCP
 *   authorization spec's protected resource answers; with `auth.jwt` the challenge also names the
 *   protected-resource metadata (RFC 9728) that tells an MCP client where to sign in;
 * - OpenAI-compatible (`/v1/…`): OpenAI's `{"error": {"message", "type", "param", "code"}}`, which
 *   the openai clients raise as AuthenticationError / PermissionDeniedError.
 */

/**
 * The JSON-RPC code of an A2A refusal: a2a/jsonrpc.ts JsonRpcCode.ACCESS_DENIED (this layer
 * sits in front of the adapters and imports none of them; authentication.test.ts checks both answer it).
 */
const A2A_ACCESS_DENIED = -32000;

export type Refusal =
  | { status: 401; reason: Exclude<FailureReason, 'role'> }
  | { status: 403; reason: 'role'; message: string }
  | { status: 503; message: string };

function bearerError(refusal: Refusal): BearerError | undefined {
  if (refusal.status === 403) return 'insufficient_scope';
  if (refusal.status !== 401 || refusal.reason === 'missing') return undefined;
  return refusal.reason === 'malformed' ? 'invalid_request' : 'invalid_token';
}

function refusalMessage(refusal: Refusal): string {
  return refusal.status === 401 ? REFUSAL_MESSAGES[refusal.reason] : refusal.message;
}

function trpcEnvelope(refusal: Refusal, path: string) {
  const code = refusal.status === 401 ? 'UNAUTHORIZED' : refusal.status === 403 ? 'FORBIDDEN' : 'SERVICE_UNAVAILABLE';
  return {
    error: { message: refusalMessage(refusal), code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus: refusal.status, path } },
  };
}

function trpcBody(req: Request, refusal: Refusal): unknown {
  const paths = req.path.replace(/^\/trpc\//i, '');
  if (req.query.batch === '1') return paths.split(',').map((path) => trpcEnvelope(refusal, path));
  return trpcEnvelope(refusal, paths);
}

function mcpBody(refusal: Refusal) {
  const error = bearerError(refusal) ?? (refusal.status === 503 ? 'temporarily_unavailable' : 'invalid_token');
  return { error, error_description: refusalMessage(refusal) };
}

/**
 * OpenAI's error object, as openai/errors.ts writes it (this layer imports no adapter; the
 * OpenAI face's e2e test checks the openai client reads it): `invalid_api_key` for a key that is
 * missing or wrong.
 */
function openAiBody(refusal: Refusal) {
  const [type, code] =
    refusal.status === 401
      ? ['authentication_error', 'invalid_api_key']
      : refusal.status === 403
        ? ['permission_error', 'insufficient_role']
        : ['server_error', null];
  return { error: { message: refusalMessage(refusal), type, param: null, code } };
}

export interface RefusalOptions {
  /** With `auth.jwt`: the URL of this server's protected-resource metadata, for MCP's 401s. */
  resourceMetadataUrl?: (req: Request) => string | undefined;
}

/** Answers a refused request in its face's shape. */
export function sendRefusal(req: Request, res: Response, face: Face, refusal: Refusal, options: RefusalOptions = {}): void {
  const error = bearerError(refusal);
  if (refusal.status !== 503)
    res.setHeader('WWW-Authenticate', bearerChallenge(error, face === 'mcp' ? options.resourceMetadataUrl?.(req) : undefined));
  // Retry-After: the issuer's keys are fetched again on the next request.
  else res.setHeader('Retry-After', '5');
  res.status(refusal.status);
  switch (face) {
    case 'web':
      res.json(trpcBody(req, refusal));
      return;
    case 'a2a':
      res.json({ jsonrpc: '2.0', id: null, error: { code: A2A_ACCESS_DENIED, message: refusalMessage(refusal) } });
      return;
    case 'mcp':
      res.json(mcpBody(refusal));
      return;
    case 'openai':
      res.json(openAiBody(refusal));
      return;
    case 'rest':
    case 'cli':
      res.json({ error: refusalMessage(refusal) });
  }
}
