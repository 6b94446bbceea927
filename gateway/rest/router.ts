import express, { type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import type { Agent } from '../app/agent.js';
import type { Readiness } from '../app/readiness.js';
import { mountEndpoint, restErrorHandler, type Endpoint } from './endpoint.js';
import { currentDecider, restFace, VIA_HEADER } from '../app/decider.js';
import {
  approvalListReply,
  approvalReply,
  auditListReply,
  conversationListReply,
  conversationPageReply,
  conversationReply,
  toolListReply,
} from '../app/replies.js';
import { approvalRecordJson } from '../app/shapes.js';
import { runJson, runListReply } from '../app/run-shapes.js';
import {
  parseApprovalDecision,
  parseApprovalQuery,
  parseFork,
  parseAuditQuery,
  parseHistoryPage,
  parseNewConversation,
  parseNewMessage,
  parsePageRequest,
} from './requests.js';

/**
 * The REST API, as thin handlers over the application layer. A route
 * added here is also listed in the OpenAPI document (gateway/openapi/routes.ts): its test fails
 * until it is. The document and /docs are served by gateway/openapi/.
 */
function restEndpoints(agent: Agent, readiness: Readiness): Endpoint[] {
  return [
    {
      method: 'get',
      path: '/health',
      session: 'none',
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'get',
      path: '/ready',
      session: 'none',
      handle: async () => {
        const report = await readiness.check();
        return { status: report.status === 'ready' ? 200 : 503, body: report };
      },
    },
    {
      method: 'get',
      path: '/tools',
      session: 'new',
      handle: async () => {
        const { tools, servers } = await agent.toolListing();
        return { status: 200, body: toolListReply(tools, servers) };
      },
    },
    {
      method: 'post',
      path: '/conversations',
      session: 'new',
      jsonBody: true,
      handle: async (req) => {
        const message = parseNewConversation(req.body);
        const created = await agent.createConversation(message);
        return { status: 201, body: conversationReply(created, created.result) };
      },
    },
    {
      method: 'get',
      path: '/conversations',
      session: 'new',
      handle: async (req) => ({ status: 200, body: conversationListReply(await agent.listConversations(parsePageRequest(req.query))) }),
    },
    {
      method: 'get',
      path: '/conversations/:id',
      session: 'conversation',
      handle: async (req) => {
        const page = parseHistoryPage(req.query);
        const view = await agent.viewConversation(String(req.params.id), page);
        return { status: 200, body: conversationPageReply(view), sessionId: view.conversation.sessionId };
      },
    },
    {
      method: 'delete',
      path: '/conversations/:id',
      session: 'conversation',
      handle: async (req) => {
        await agent.deleteConversation(String(req.params.id), currentDecider(restFace(req.get(VIA_HEADER))));
        return { status: 204, body: undefined };
      },
    },
    {
      method: 'get',
      path: '/conversations/:id/runs',
      session: 'new',
      handle: async (req) => ({
        status: 200,
        body: runListReply(await agent.listRuns(String(req.params.id), parsePageRequest(req.query))),
      }),
    },
    {
      method: 'get',
      path: '/runs/:run_id',
      session: 'new',
      handle: async (req) => ({ status: 200, body: runJson(await agent.getRun(String(req.params.run_id))) }),
    },
    {
      method: 'post',
      path: '/runs/:run_id/fork',
      session: 'new',
      jsonBody: true,
      handle: async (req) => {
        const { step, message } = parseFork(req.body);
        const forked = await agent.forkRun(String(req.params.run_id), step, message);
        return {
          status: 201,
          body: { ...conversationReply(forked, forked.result), copied_only: forked.copiedOnly },
          sessionId: forked.conversation.sessionId,
        };
      },
    },
    {
      method: 'post',
      path: '/conversations/:id/messages',
      session: 'conversation',
      jsonBody: true,
      handle: async (req) => {
        const message = parseNewMessage(req.body);
        const turn = await agent.sendMessage(String(req.params.id), message);
        return { status: 200, body: conversationReply(turn, turn.result), sessionId: turn.conversation.sessionId };
      },
    },
    {
      method: 'get',
      path: '/approvals',
      session: 'new',
      handle: async (req) => ({ status: 200, body: approvalListReply(await agent.listApprovals(parseApprovalQuery(req.query))) }),
    },
    {
      method: 'get',
      path: '/approvals/:uuid',
      session: 'conversation',
      handle: async (req) => {
        const { approval, sessionId, input } = await agent.getApproval(String(req.params.uuid));
        return { status: 200, body: approvalRecordJson(approval, input), sessionId };
      },
    },
    {
      method: 'post',
      path: '/approvals/:uuid',
      session: 'conversation',
      jsonBody: true,
      handle: async (req) => {
        const uuid = String(req.params.uuid);
        const { decision, reason, arguments: edited, input } = parseApprovalDecision(req.body);
        const decider = currentDecider(restFace(req.get(VIA_HEADER)));
        return approvalReply(
          uuid,
          await agent.resolveApproval(uuid, decision, { decider, reason, ...(edited && { arguments: edited }), ...(input && { input }) }),
        );
      },
    },
    {
      method: 'get',
      path: '/audit',
      session: 'new',
      handle: async (req) => ({ status: 200, body: auditListReply(await agent.listAudit(parseAuditQuery(req.query))) }),
    },
  ];
}

export function restRouter(agent: Agent, readiness: Readiness, log: Logger): Router {
  const router = express.Router();
  for (const endpoint of restEndpoints(agent, readiness)) mountEndpoint(router, endpoint, log);
  router.use(restErrorHandler(log));
  return router;
}
