import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { withContextPatch } from '../../services/common/context.js';
import { capText, type Logger } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import type { EventFeed } from '../app/event-feed.js';
import { BODY_LIMIT_BYTES, JSON_BODY_TYPES } from '../app/inputs.js';
import { adoptSessionId, requestScope } from '../http/request-scope.js';
import {
  answerText,
  completionJson,
  modelJson,
  openTarget,
  recordShownHistory,
  requireModel,
  runTurn,
  type AgentModel,
  type TurnsAgent,
  type TurnTarget,
} from './completions.js';
import { openAiErrorBody, openAiFailureOf } from './errors.js';
import { CONVERSATION_HEADER, parseChatCompletionRequest, type ChatCompletionRequest } from './requests.js';
import { streamTurn } from './stream.js';

/**
 * The OpenAI-compatible face, beside REST: `POST /v1/chat/completions` and
 * `GET /v1/models`, over the application layer. Who may call is the route table's
 * (app/route-access.ts: the chat role); every answer, errors included, is in OpenAI's shapes.
 */

const OPENAI_PREFIX = '/v1';
export const COMPLETIONS_ROUTE = '/v1/chat/completions';
export const MODELS_ROUTE = '/v1/models';

export interface OpenAiParts {
  agent: TurnsAgent;
  feed: EventFeed;
  model: AgentModel;
  log: Logger;
}

const jsonBody = express.json({ limit: BODY_LIMIT_BYTES, type: JSON_BODY_TYPES, strict: false });

function sendFailure(res: Response, error: unknown, log: Logger, route: string): void {
  const failure = openAiFailureOf(error);
  if (failure.unexpected) log.error('request failed', { route, error: failure.body.error.message });
  res.status(failure.status).json(failure.body);
}

/**
 * Records the history the client was shown before it gets the answer, so that its next
 * request finds the conversation. A failure loses only that: the answer still goes out, and
 * the client's next request starts a new conversation unless it names this one.
 */
function historyRecorder(agent: TurnsAgent, log: Logger, request: ChatCompletionRequest, target: TurnTarget) {
  return (answer: string) =>
    recordShownHistory(agent, request, target, answer).catch((error: unknown) => {
      log.warn('the history shown could not be recorded; a resent history will not find this conversation', {
        conversation: target.conversationId,
        error: error instanceof Error ? error.message : String(error),
      });
    });
}

const mark = (route: string) => (_req: Request, res: Response, next: NextFunction) => {
  requestScope(res).route = route;
  next();
};

export function openAiRouter(parts: OpenAiParts): Router {
  const { agent, feed, model, log } = parts;
  const router = express.Router();

  router.get(MODELS_ROUTE, mark(MODELS_ROUTE), (_req, res) => {
    res.json({ object: 'list', data: [modelJson(model)] });
  });

  router.get(`${MODELS_ROUTE}/:model`, mark(`${MODELS_ROUTE}/:model`), (req, res) => {
    try {
      requireModel(model, String(req.params.model));
      res.json(modelJson(model));
    } catch (error) {
      sendFailure(res, error, log, `${MODELS_ROUTE}/:model`);
    }
  });

  router.post(COMPLETIONS_ROUTE, mark(COMPLETIONS_ROUTE), jsonBody, async (req: Request, res: Response) => {
    try {
      const request = parseChatCompletionRequest(req.body, req.get(CONVERSATION_HEADER));
      requireModel(model, request.model);
      const target = await withContextPatch({ sessionId: requestScope(res).sessionId }, () =>
        openTarget(agent, request, requestScope(res).sessionId),
      );
      if (!requestScope(res).sessionId) adoptSessionId(res, target.sessionId);
      res.setHeader(CONVERSATION_HEADER, target.conversationId);
      const recordShown = historyRecorder(agent, log, request, target);
      if (request.stream) {
        await streamTurn(res, { agent, feed, log }, request, target, recordShown);
        return;
      }
      const outcome = await runTurn(agent, target, request.input);
      await recordShown(answerText(outcome, target.conversationId));
      res.status(200).json(completionJson(request, target, outcome));
    } catch (error) {
      sendFailure(res, error, log, COMPLETIONS_ROUTE);
    }
  });

  // Anything else under /v1, and failures before a handler ran (an unreadable body), in OpenAI's shape.
  router.use(OPENAI_PREFIX, (req: Request, res: Response) => {
    const known = [COMPLETIONS_ROUTE, MODELS_ROUTE].some(
      (route) => req.originalUrl.split('?')[0]!.toLowerCase().replace(/\/$/, '') === route,
    );
    const status = known ? 405 : 404;
    const message = known
      ? `${req.method} is not allowed on ${req.baseUrl}${req.path}`
      : `no route for ${req.method} ${req.baseUrl}${req.path}; this face serves POST ${COMPLETIONS_ROUTE} and GET ${MODELS_ROUTE}`;
    res
      .status(status)
      .json(openAiErrorBody(status, redactSecrets(capText(message, 300)), null, known ? 'method_not_allowed' : 'unknown_url'));
  });
  router.use(OPENAI_PREFIX, (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    sendFailure(res, error, log, OPENAI_PREFIX);
  });
  return router;
}
