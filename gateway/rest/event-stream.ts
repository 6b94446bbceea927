import express, { type Request, type Response, type Router } from 'express';
import { invalidArgument } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import { openEventStream, type SseMessage } from '../../services/common/sse.js';
import { watchConversation, type ConversationSources, type ConversationUpdate } from '../app/conversation-updates.js';
import { isResumable } from '../app/events.js';
import { adoptSessionId, requestScope } from '../http/request-scope.js';
import { errorReply } from './error-reply.js';

/**
 * `GET /conversations/:id/events`: the conversation's events as plain server-sent events, for
 * REST clients (the tRPC subscription `conversation.events` is the same stream). Each
 * message is `event: <kind>` and `data: <JSON>` in the REST shapes; stored events also have
 * `id: <event id>`, so an EventSource that reconnects sends `Last-Event-ID` and gets exactly
 * the events it missed. Live-only events (text deltas, tool calls in flight) carry no `id:`
 * line, which leaves the client's last event id as it was (HTML SSE processing model).
 * Without `Last-Event-ID` the stream begins with `event: snapshot`, data `{"conversation": C}`.
 */

export const EVENTS_ROUTE = '/conversations/:id/events';

export function sseMessageOf(update: ConversationUpdate): SseMessage {
  if (update.kind === 'snapshot') return { event: 'snapshot', data: { conversation: update.conversation } };
  return isResumable(update) ? { id: String(update.id), event: update.kind, data: update } : { event: update.kind, data: update };
}

/** The id to resume after: absent or empty → 0 (a first connection). */
export function parseLastEventId(header: string | undefined): number {
  if (header === undefined || header.trim() === '') return 0;
  if (!/^\d{1,15}$/.test(header.trim()))
    throw invalidArgument(
      `Last-Event-ID must be the id of an event this stream sent (decimal digits), got ${JSON.stringify(header.slice(0, 40))}`,
    );
  return Number(header.trim());
}

export function eventStreamRouter(sources: ConversationSources, log: Logger): Router {
  const router = express.Router();
  router.get(EVENTS_ROUTE, async (req: Request, res: Response) => {
    requestScope(res).route = EVENTS_ROUTE;
    const closed = new AbortController();
    res.once('close', () => closed.abort());
    let watch: Awaited<ReturnType<typeof watchConversation>>;
    try {
      const afterId = parseLastEventId(req.get('last-event-id'));
      watch = await watchConversation(sources, { conversationId: String(req.params.id), afterId, signal: closed.signal });
    } catch (error) {
      const reply = errorReply(error);
      if (reply.unexpected) log.error('request failed', { route: EVENTS_ROUTE, error: reply.body.error });
      res.status(reply.status).json(reply.body);
      return;
    }
    if (!requestScope(res).sessionId) adoptSessionId(res, watch.sessionId);
    const stream = openEventStream(res);
    try {
      for await (const update of watch.updates) stream.send(sseMessageOf(update));
    } catch (error) {
      // Headers are gone: the failure is the stream's last message (not named "error", which
      // EventSource reserves for its own connection errors). The client reconnects
      // with its last event id and misses nothing.
      const reply = errorReply(error);
      if (reply.unexpected) log.error('event stream failed', { route: EVENTS_ROUTE, error: reply.body.error });
      stream.send({ event: 'stream_error', data: { ...reply.body, status: reply.status } });
    } finally {
      stream.end();
    }
  });
  return router;
}
