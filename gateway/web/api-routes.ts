import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { BODY_LIMIT_BYTES, JSON_BODY_TYPES } from '../app/inputs.js';

/**
 * The `/api/*` routes of the earlier stand-alone web chat server, kept for clients
 * written against it. Each is one REST call to the agent, answered with the agent's status
 * and body unchanged:
 *
 * - `POST /api/send` `{"message", "conversation_id"?}` → `POST /conversations` (a new
 *   conversation) or `POST /conversations/:id/messages`;
 * - `POST /api/approve` `{"uuid", "approved": bool}` (or `"action"` / `"answer"`, as REST
 *   takes them) → `POST /approvals/:uuid`;
 * - `GET /api/conversation/:id` → `GET /conversations/:id`.
 */

export interface AgentCall {
  method: 'GET' | 'POST';
  /** Path on the agent, already %-encoded. */
  path: string;
  body?: Record<string, unknown>;
}

export class ApiRequestError extends Error {}

const sendBody = z.object({
  message: z.string({ error: '"message" is required and must be a string' }),
  conversation_id: z.string().min(1, '"conversation_id" must not be empty; omit it to start a conversation').optional(),
});

const approveBody = z.looseObject({
  uuid: z.string({ error: '"uuid" is required: the approval to decide' }).min(1, '"uuid" must not be empty'),
});

function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiRequestError('the body must be a JSON object');
  const result = schema.safeParse(body);
  if (!result.success) throw new ApiRequestError(result.error.issues[0]?.message ?? 'invalid body');
  return result.data;
}

/** The agent call behind `POST /api/send`; the agent itself checks that the message is not empty. */
export function sendCall(body: unknown): AgentCall {
  const { message, conversation_id: id } = parsed(sendBody, body);
  return id === undefined
    ? { method: 'POST', path: '/conversations', body: { message } }
    : { method: 'POST', path: `/conversations/${encodeURIComponent(id)}/messages`, body: { message } };
}

/** The agent call behind `POST /api/approve`: the decision fields go through as REST reads them. */
export function approveCall(body: unknown): AgentCall {
  const { uuid, ...decision } = parsed(approveBody, body);
  return { method: 'POST', path: `/approvals/${encodeURIComponent(uuid)}`, body: decision };
}

export function conversationCall(id: string): AgentCall {
  return { method: 'GET', path: `/conversations/${encodeURIComponent(id)}` };
}

/** Request headers the agent should see: the caller's session id and credentials. */
const FORWARDED_HEADERS = ['x-session-id', 'authorization'];

export function apiRoutes(agentUrl: string): Router {
  const router = express.Router();
  // JSON only, as the agent's REST API; the cross-site guard has refused other types.
  const jsonBody = express.json({ limit: BODY_LIMIT_BYTES, type: JSON_BODY_TYPES, strict: false });

  const forward = (toCall: (req: Request) => AgentCall) => async (req: Request, res: Response) => {
    let call: AgentCall;
    try {
      call = toCall(req);
    } catch (error) {
      if (error instanceof ApiRequestError) {
        res.status(400).json({ error: error.message });
        return;
      }
      throw error;
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const name of FORWARDED_HEADERS) {
      const value = req.get(name);
      if (value) headers[name] = value;
    }
    if (call.body) headers['content-type'] = 'application/json';
    let answer: globalThis.Response;
    try {
      answer = await fetch(`${agentUrl}${call.path}`, { method: call.method, headers, body: call.body && JSON.stringify(call.body) });
    } catch (error) {
      res.status(502).json({
        error: `the agent at ${agentUrl} is unreachable: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
      });
      return;
    }
    const sessionId = answer.headers.get('x-session-id');
    if (sessionId) res.setHeader('X-Session-ID', sessionId);
    res
      .status(answer.status)
      .type(answer.headers.get('content-type') ?? 'application/json')
      .send(Buffer.from(await answer.arrayBuffer()));
  };

  router.post(
    '/api/send',
    jsonBody,
    forward((req) => sendCall(req.body)),
  );
  router.post(
    '/api/approve',
    jsonBody,
    forward((req) => approveCall(req.body)),
  );
  router.get(
    '/api/conversation/:id',
    forward((req) => conversationCall(String(req.params.id))),
  );
  // The body parser's own rejections (malformed JSON, too large) in the API's error shape.
  router.use('/api', (error: { status?: number; message?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent || typeof error?.status !== 'number' || error.status >= 500) return next(error);
    res.status(error.status).json({ error: `malformed request body: ${error.message ?? 'unreadable'}` });
  });
  return router;
}
