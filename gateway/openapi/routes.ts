import { z } from 'zod';
import { DEFAULT_HISTORY_LIMIT } from '../app/agent.js';
import { BODY_LIMIT_BYTES, MAX_PAGE_SIZE } from '../app/inputs.js';
import { METHOD_NAMES } from '../a2a/dialect.js';
import { A2A_PATH, CARD_PATHS } from '../a2a/card.js';
import { JsonRpcCode } from '../a2a/jsonrpc.js';
import { MCP_PATH } from '../mcp/router.js';
import { COMPLETIONS_ROUTE, MODELS_ROUTE } from '../openai/router.js';
import { chatCompletionRequestSchema, CONVERSATION_HEADER, IGNORED_REQUEST_FIELDS } from '../openai/requests.js';
import { EVENTS_ROUTE } from '../rest/event-stream.js';
import { AUTH_WHOAMI_PATH, PROTECTED_RESOURCE_PATHS } from '../app/route-access.js';
import {
  APPROVAL_BODY_EXPECTED,
  approvalDecisionBody,
  approvalsQuery,
  auditQuery,
  historyQuery,
  listQuery,
  newConversationBody,
  newMessageBody,
  forkBody,
} from '../rest/requests.js';
import { CONVERSATION_ID, examples } from './examples.js';
import * as shapes from './shapes.js';

/**
 * Every HTTP route the gateway serves, as the OpenAPI document (document.ts) shows it: the one
 * place to add a route to the document. Who may call each route is not written here — the
 * document reads it from the table the gateway enforces (app/route-access.ts) — nor are the
 * tRPC procedures, which are read from the tRPC router itself (trpc.ts).
 *
 * `openapi.test.ts` fails when the gateway mounts a route that is not listed here.
 */

type Tag = 'Probes' | 'Conversations' | 'Approvals' | 'Audit' | 'Tools' | 'Auth' | 'A2A' | 'MCP' | 'OpenAI' | 'Reference' | 'tRPC';

interface ReplyDoc {
  description: string;
  schema?: z.ZodType;
  example?: unknown;
  /** application/json unless said. */
  type?: string;
}

export interface RouteDoc {
  method: 'get' | 'post' | 'delete';
  /** As Express mounts it: `/conversations/:id`. */
  path: string;
  tag: Tag;
  summary: string;
  description: string;
  /** Descriptions of the path's `:params`. */
  pathParams?: Record<string, string>;
  query?: z.ZodObject;
  /** A query parameter that carries JSON (tRPC's `input`), as JSON Schema. */
  queryJson?: { name: string; schema: Record<string, unknown> };
  headers?: z.ZodObject;
  body?: { schema: z.ZodType; examples: Record<string, unknown>; required: boolean; description?: string };
  responses: Record<number, ReplyDoc>;
  /** Mounted only with some configuration: said in the description. */
  onlyWhen?: string;
}

const CONVERSATION_PARAM = { id: 'The conversation id (a UUID).' };
const APPROVAL_PARAM = { uuid: 'The approval uuid.' };
const BODY_MB = `${BODY_LIMIT_BYTES / 1024 / 1024} MB`;

const json = (description: string, schema: z.ZodType, example?: unknown): ReplyDoc => ({
  description,
  schema,
  ...(example !== undefined && { example }),
});
const refusal = (description: string): ReplyDoc => ({ description, schema: shapes.errorReply });
const UNREACHABLE = refusal('a backend service is unreachable');
const unknownOutcome = (description: string): ReplyDoc => ({ description, schema: shapes.unknownOutcomeReply });
/** Turns and decisions: 503 says nothing was done, unless its body says the outcome is unknown. */
const TURN_UNAVAILABLE = refusal(
  'a backend service is unreachable and nothing was done; or, with "outcome": "unknown" and Retry-After, the replica is stopping and handed the turn to another replica, whose answer will be in the conversation named',
);
const TOO_LARGE = refusal(`the body is larger than ${BODY_MB}`);
const sessionHeader = z.object({
  'X-Session-ID': z
    .string()
    .optional()
    .meta({ description: 'Choose the session id (8 hex characters); anything else is ignored.', example: '4be2a91c' }),
});

const readiness = z
  .object({
    status: z.string().meta({ description: 'ready, not_ready or draining.' }),
    backends: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: 'Not ready: what each backend said (SERVING, NOT_SERVING, UNREACHABLE, NO_ANSWER, NO_HEALTH_SERVICE).' }),
    error: z.string().optional().meta({ description: 'Not ready or draining: which dependency is down, in words.' }),
    warning: z.string().optional().meta({
      description: 'Ready, but an MCP server is unavailable: which, in words (the agent answers without its tools while it is retried).',
    }),
    mcp_servers: z.array(shapes.readyServer).optional().meta({
      description:
        'Ready: each configured MCP server and whether its tools are available (an optional server that is down does not make the agent unready); why one is not is in the log and GET /tools.',
    }),
  })
  .meta({ id: 'Readiness' });

const jsonRpcId = z.union([z.string(), z.number(), z.null()]);
const jsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId,
    result: z.unknown().optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .meta({ id: 'JsonRpcResponse', description: 'A JSON-RPC 2.0 answer: `result`, or `error`.' });

const a2aRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId,
    method: z.enum(METHOD_NAMES as [string, ...string[]]),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'A2aRequest', description: 'A JSON-RPC 2.0 request of A2A.' });

const mcpRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.optional().meta({ description: 'Absent for a notification.' }),
    method: z.string().meta({ description: 'initialize, tools/list, tools/call, notifications/initialized, ping, …' }),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'McpRequest', description: 'A JSON-RPC 2.0 message of MCP.' });

const agentCard = z
  .record(z.string(), z.unknown())
  .meta({ id: 'AgentCard', description: 'The A2A agent card: name, description, url, version, capabilities, skills (one per tool).' });

// The OpenAI-compatible face (gateway/openai/): its answers in OpenAI's shapes, with the agent's extra fields.
const openAiError = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) })
  .meta({ id: 'OpenAiError', description: "OpenAI's error shape." });
const openAiModel = z
  .object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })
  .meta({ id: 'OpenAiModel' });
const openAiApproval = z
  .looseObject({ uuid: z.string() })
  .meta({ description: 'The approval the turn waits for (the approval resource of GET /approvals/:uuid).' });
const chatCompletion = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: z.string(),
      }),
    ),
    usage: z
      .object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() })
      .meta({ description: "The tokens of the turn's model calls, as the providers counted them." }),
    conversation_id: z.string().meta({ description: 'The conversation this turn ran in (also the X-Conversation-Id header).' }),
    approval: openAiApproval.optional(),
  })
  .meta({ id: 'ChatCompletion' });
const openAiErrors = (extra: Record<number, string>): Record<number, ReplyDoc> =>
  Object.fromEntries(
    Object.entries({
      400: 'a body that is not a valid request (the field is named in param)',
      404: 'a model other than the agent',
      ...extra,
    }).map(([status, description]) => [Number(status), { description, schema: openAiError }]),
  );

const openAiRoutes: RouteDoc[] = [
  {
    method: 'get',
    path: MODELS_ROUTE,
    tag: 'OpenAI',
    summary: 'The agent as a model',
    description: "One model: the agent, with the configuration's `name` as its id.",
    responses: { 200: json('the list', z.object({ object: z.literal('list'), data: z.array(openAiModel) })) },
  },
  {
    method: 'get',
    path: `${MODELS_ROUTE}/:model`,
    tag: 'OpenAI',
    summary: 'The agent as a model, by id',
    description: "The agent, when `model` is its id; 404 in OpenAI's shape otherwise.",
    pathParams: { model: "The agent's name." },
    responses: { 200: json('the model', openAiModel), 404: { description: 'not the agent', schema: openAiError } },
  },
  {
    method: 'post',
    path: COMPLETIONS_ROUTE,
    tag: 'OpenAI',
    summary: 'A turn as a chat completion',
    description: `The last user message is the turn's input; the conversation is the one named by the ${CONVERSATION_HEADER} header, else by \`user\`, else the caller's own conversation whose history the request resends (the user and assistant messages before the last user message, as the previous answer left them; white space does not count), else a new one (its id in the ${CONVERSATION_HEADER} header and \`conversation_id\`). \`usage\` counts the tokens of the turn's model calls. With \`stream: true\` the answer is server-sent \`chat.completion.chunk\` events ending with \`data: [DONE]\` (with \`stream_options.include_usage\`, a chunk with the usage and no choices before it). A turn that stops for approval answers with a text naming the approval uuid and how to decide it (POST /approvals/:uuid), and the approval in \`approval\` (on the last chunk when streaming). Fields accepted and ignored: ${IGNORED_REQUEST_FIELDS.join(', ')}; any other unknown field is a 400.`,
    headers: z.object({
      [CONVERSATION_HEADER]: z.string().optional().meta({ description: 'The conversation to continue; wins over `user`.' }),
    }),
    body: {
      schema: chatCompletionRequestSchema,
      required: true,
      examples: { 'a new conversation': { model: 'resource-agent', messages: [{ role: 'user', content: 'list resources' }] } },
    },
    responses: {
      200: { description: 'the completion, or (stream: true) an event stream of chunks', schema: chatCompletion },
      ...openAiErrors({
        409: 'the conversation is busy with another turn, or waits for an approval decision',
        503: 'a backend service is unreachable',
      }),
    },
  },
];

export const ROUTES: RouteDoc[] = [
  {
    method: 'get',
    path: '/health',
    tag: 'Probes',
    summary: 'Liveness',
    description:
      'Liveness of the gateway process. It calls no other service, and answers 200 also while the gateway stops (see /ready). Answered for any Host header.',
    responses: { 200: json('the gateway process is up', z.object({ status: z.literal('ok') }), { status: 'ok' }) },
  },
  {
    method: 'get',
    path: '/ready',
    tag: 'Probes',
    summary: 'Readiness',
    description:
      'Whether the gateway can serve requests now: the orchestrator and the conversation store answer their gRPC health check (grpc.health.v1) with SERVING — the store only while its database answers — and the gateway is not stopping. For load balancers and readiness probes; /health is the liveness probe. Open to all and answered for any Host header, so it tells states and which dependency is down, in words: why (an error, a stack trace, a path) is in the log.',
    responses: {
      200: json('ready', readiness, { status: 'ready' }),
      503: json('a backend is not SERVING, unreachable or silent, or the gateway is draining', readiness, {
        status: 'not_ready',
        backends: { orchestrator: 'SERVING', conversation_store: 'UNREACHABLE' },
        error: 'not ready: the conversation store cannot be reached; the log says why',
      }),
    },
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Probes',
    summary: 'Prometheus metrics',
    description:
      "Every metric of this process in Prometheus' text format (text/plain; version=0.0.4): turns and their latency histogram, model calls and tokens by provider and model, tool calls by tool and outcome, approvals pending and decided, errors by kind (docs/operations.md, Metrics). In `asg up` every service's, once. With auth: the admin role, or anyone when metrics.public is true.",
    responses: {
      200: {
        description: 'the metrics',
        type: 'text/plain',
        schema: z.string(),
        example: '# TYPE asg_turns_total counter\nasg_turns_total{outcome="completed"} 1\n',
      },
      500: refusal('the metrics could not be collected'),
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'Reference',
    summary: 'This document',
    description: 'The OpenAPI 3.1 document of every route, generated from the schemas the routes validate with.',
    responses: { 200: json('the OpenAPI document', z.record(z.string(), z.unknown())) },
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'Reference',
    summary: 'Interactive reference',
    description:
      "The interactive API reference (Scalar) over /openapi.json. The page loads Scalar's script from the gateway itself (/docs/scalar.js), so it works with no network.",
    responses: { 200: { description: 'HTML', type: 'text/html', schema: z.string() } },
  },
  {
    method: 'get',
    path: '/docs/scalar.js',
    tag: 'Reference',
    summary: "The reference page's script",
    description:
      "Scalar's standalone browser bundle (@scalar/api-reference), copied into the build and served from it, so that /docs needs no CDN.",
    responses: {
      200: { description: 'JavaScript', type: 'text/javascript', schema: z.string() },
      404: refusal('the build has no bundle (npm run build makes it)'),
    },
  },
  {
    method: 'get',
    path: AUTH_WHOAMI_PATH,
    tag: 'Auth',
    summary: 'Who the caller is',
    description:
      'Who the token is: its name (a token\'s name or a JWT\'s subject), its roles, and whether authentication is on. Without `auth` everyone is "anonymous" with every role.',
    responses: {
      200: json('the caller', shapes.whoami, { principal: 'token:alice', name: 'alice', roles: ['chat', 'approve'], authentication: 'on' }),
    },
  },
  ...PROTECTED_RESOURCE_PATHS.map(
    (path): RouteDoc => ({
      method: 'get',
      path,
      tag: 'Auth',
      summary: 'OAuth protected-resource metadata',
      description:
        "The OAuth protected-resource metadata (RFC 9728) of /mcp, naming the OIDC issuer as its authorization server: an MCP client reads it from a 401's `resource_metadata` to learn where to sign in.",
      onlyWhen: 'auth.jwt is configured',
      responses: {
        200: json(
          'the metadata',
          z.object({
            resource: z.string(),
            resource_name: z.string(),
            authorization_servers: z.array(z.string()),
            bearer_methods_supported: z.array(z.string()),
          }),
        ),
      },
    }),
  ),
  {
    method: 'get',
    path: '/tools',
    tag: 'Tools',
    summary: 'The tools the agent offers its model',
    description:
      'Every MCP server\'s tools and every A2A sub-agent as a tool named a2a_<name> with one string parameter "message". destructiveHint is the effective policy: true means a call stops for a human approval.',
    headers: sessionHeader,
    responses: {
      200: json('the tool list', shapes.toolListReply, examples.tools),
      503: refusal('the orchestrator or an MCP server is unreachable'),
      504: refusal('listing took longer than its deadline'),
    },
  },
  {
    method: 'post',
    path: '/conversations',
    tag: 'Conversations',
    summary: 'Create a conversation',
    description:
      'Creates a conversation. With a message, the agent runs a turn at once: the reply has "result", which may be an approval request instead of an answer.',
    headers: sessionHeader,
    body: {
      schema: newConversationBody,
      required: false,
      description: 'Optional: no body, {} or a first message.',
      examples: { 'with a message': { message: 'Delete resource res-42' }, empty: {} },
    },
    responses: {
      201: json('created; "result" is present when a message was given', shapes.conversationReply, examples.created),
      400: refusal('malformed JSON, an empty or non-string "message", or a field the body does not take (named)'),
      413: TOO_LARGE,
      503: TURN_UNAVAILABLE,
      504: unknownOutcome(
        'the outcome is not known: the turn had not finished by chat.turn_timeout, or went on from what is stored without this replica; the conversation named shows it',
      ),
    },
  },
  {
    method: 'get',
    path: '/conversations',
    tag: 'Conversations',
    summary: 'List conversations',
    description: `Conversations, newest first, one page at a time, with counts by status over all of them (with auth: those the caller may read — its own, or every one for approve and admin). Each item is a summary without messages. "next_cursor" is present when there is a next page: pass it back as ?cursor=. Other query parameters are ignored.`,
    query: listQuery,
    responses: {
      200: json('one page', shapes.conversationListReply, examples.conversationList),
      400: refusal(`limit is not an integer from 1 to ${MAX_PAGE_SIZE}, or the cursor is not one this API gave out`),
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    path: '/conversations/:id',
    tag: 'Conversations',
    summary: 'Read a conversation',
    description: `One conversation with its messages (oldest first), its pending approvals and its pipeline state. A history of up to ${DEFAULT_HISTORY_LIMIT} messages comes whole; a longer one comes as its newest page with "has_more_before": true: ?before=<id of the first message shown> reads the page before it.`,
    pathParams: CONVERSATION_PARAM,
    query: historyQuery,
    responses: {
      200: json('the conversation, with one page of its messages', shapes.conversationPageReply, examples.conversationPage),
      400: refusal(
        `limit is not an integer from 1 to ${DEFAULT_HISTORY_LIMIT}, before and after are both given, or before / after is not a message of this conversation`,
      ),
      404: refusal('no conversation has this id (or, with auth, none the caller may read)'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'delete',
    path: '/conversations/:id',
    tag: 'Conversations',
    summary: 'Delete a conversation',
    description:
      'Deletes the conversation with its messages, events, run, approvals and push-notification configs, in one transaction. A pending approval of it is rejected first with the reason "conversation deleted" (audited); the audit trail keeps its entries and gets a conversation.deleted entry. Afterwards every face answers the id as unknown, and a live event stream of it ends with a conversation_deleted event. Its owner or an admin may delete it.',
    pathParams: CONVERSATION_PARAM,
    responses: {
      204: { description: 'deleted; no body' },
      404: refusal('no conversation has this id (or, with auth, none the caller may read)'),
      409: refusal('an approved call of the conversation has no outcome yet; delete it once the call has finished'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    path: '/conversations/:id/runs',
    tag: 'Conversations',
    summary: "A conversation's runs",
    description:
      'The runs of a conversation as their journal keeps them, newest first, a page at a time (?limit= and ?cursor= / next_cursor): each with its status, start, end (null while it runs) and how many steps it recorded. GET /runs/{run_id} reads one with its steps.',
    pathParams: CONVERSATION_PARAM,
    query: listQuery,
    responses: {
      200: json('one page of runs', shapes.runListReply, examples.runs),
      400: refusal(`limit is not an integer from 1 to ${MAX_PAGE_SIZE}, or the cursor is not one this API gave out`),
      404: refusal('no conversation has this id (or, with auth, none the caller may read)'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    path: '/runs/:run_id',
    tag: 'Conversations',
    summary: 'Read a run, step by step',
    description:
      "A run with every step of its journal in order: each node started and finished (agent trees), each model call (model, provider, duration, tokens, finish reason), each tool call (tool, server, arguments with secrets redacted, their hash, outcome and the result's first characters), each approval asked and decision made (who, through which face, why, edited arguments), each A2A delegation and history compaction.",
    pathParams: { run_id: 'The run id (a UUID), as GET /conversations/{id}/runs lists it.' },
    responses: {
      200: json('the run and its steps', shapes.runReply, examples.run),
      404: refusal('no run has this id (or, with auth, it is of a conversation the caller may not read)'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'post',
    path: '/runs/:run_id/fork',
    tag: 'Conversations',
    summary: 'Fork a run at a step',
    description:
      "A new conversation, owned by the caller, with the run's conversation's messages before the step (the steps' message_seq), which goes on from there: calls the model asked for whose results come after the step run again — read-only ones at once, destructive ones only after a new approval of their own (nothing of the original's approvals or decisions is copied) — then the model answers; with \"message\", the message is sent as the next user message instead. A history that ends with a complete answer is only copied (copied_only). Results recorded before the step are reused, not recomputed. The original conversation is unchanged. Runs of an agent tree cannot be forked yet.",
    pathParams: { run_id: 'The run id (a UUID), as GET /conversations/{id}/runs lists it.' },
    headers: sessionHeader,
    body: {
      schema: forkBody,
      required: true,
      examples: { 'from a step': { step: 1 }, 'with a message': { step: 3, message: 'Use res-43 instead' } },
    },
    responses: {
      201: json('forked; "result" says how the fork went on', shapes.forkReply, examples.forked),
      400: refusal('malformed JSON, a missing or negative "step", an empty "message", or a field the body does not take (named)'),
      404: refusal('no run has this id (or, with auth, it is of a conversation the caller may not read)'),
      409: refusal(
        'the step is outside the run, the run is of an agent tree, or it was recorded in journal format 1 (its steps do not record their place in the conversation)',
      ),
      413: TOO_LARGE,
      503: TURN_UNAVAILABLE,
      504: unknownOutcome("the fork's turn had not finished by chat.turn_timeout; the conversation named shows it"),
    },
  },
  {
    method: 'post',
    path: '/conversations/:id/messages',
    tag: 'Conversations',
    summary: 'Send a message',
    description:
      'Sends a user message and runs a turn. While the conversation waits for an approval the message is not processed: result.waiting_approval is true and result.approval is the pending approval. A conversation runs one turn at a time: while one runs ("turn_running": true) the message is refused with 409; wait for the turn_ended event of the event stream and send it again.',
    pathParams: CONVERSATION_PARAM,
    headers: sessionHeader,
    body: { schema: newMessageBody, required: true, examples: { message: { message: 'list resources' } } },
    responses: {
      200: json('the turn ran (or the conversation still waits for an approval)', shapes.conversationReply, examples.turn),
      400: refusal('malformed JSON, a missing or empty "message", or a field the body does not take (named)'),
      404: refusal('no conversation has this id (or, with auth, none the caller may read)'),
      409: json('a turn is running on the conversation; nothing stored', z.object({ error: z.string(), conversation_id: z.string() })),
      413: TOO_LARGE,
      503: TURN_UNAVAILABLE,
      504: unknownOutcome(
        'the outcome is not known: the turn had not finished by chat.turn_timeout, or went on from what is stored without this replica; the conversation named shows it',
      ),
    },
  },
  {
    method: 'get',
    path: EVENTS_ROUTE,
    tag: 'Conversations',
    summary: 'Event stream of a conversation',
    description:
      'The conversation\'s events as server-sent events (the tRPC subscription conversation.events is the same stream). Each message is `event: <kind>` and `data: <JSON>` in the REST shapes; stored events also carry `id:`, so an EventSource that reconnects sends Last-Event-ID and gets exactly the events it missed. Without Last-Event-ID the stream begins with `event: snapshot`, data {"conversation": C}. A failure after the stream began is its last message, `event: stream_error`.',
    pathParams: CONVERSATION_PARAM,
    headers: z.object({ 'Last-Event-ID': z.string().optional().meta({ description: 'Resume after this event id (decimal digits).' }) }),
    responses: {
      200: {
        description: 'the event stream',
        type: 'text/event-stream',
        schema: z.string(),
        example: 'event: snapshot\ndata: {"conversation":{…}}\n\nid: 17\nevent: message_added\ndata: {…}\n\n',
      },
      400: refusal('Last-Event-ID is not an event id'),
      404: refusal('no conversation has this id (or, with auth, none the caller may read)'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    path: '/approvals',
    tag: 'Approvals',
    summary: 'List approvals',
    description:
      'Every approval of every conversation, oldest first, one page at a time. "approved" is every approval said yes to (by a human or an expiry that approves), whatever came of its call: "execution" says that once the call has started. "rejected" is a human\'s no; "expired" an approval nobody decided before its expires_at whose on_timeout rejected it (decided_by "timeout"). Other query parameters are ignored.',
    query: approvalsQuery,
    responses: {
      200: json('one page', shapes.approvalListReply, examples.approvalList),
      400: refusal(
        `status is not one of pending, approved, rejected, expired; limit is not an integer from 1 to ${MAX_PAGE_SIZE}; conversation_id or cursor is empty or the cursor is not one this API gave out`,
      ),
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    path: '/approvals/:uuid',
    tag: 'Approvals',
    summary: 'Read an approval',
    description:
      'One approval, whatever its status: the call as the model asked for it (tool_args) and its record — who decided, when, through which face, the reason, the arguments the call ran with when they were edited (edited_args), and when it expires if nobody decides it.',
    pathParams: APPROVAL_PARAM,
    responses: {
      200: json('the approval', shapes.approvalRecord, examples.approval),
      404: refusal('no approval has this uuid'),
      503: UNREACHABLE,
    },
  },
  {
    method: 'post',
    path: '/approvals/:uuid',
    tag: 'Approvals',
    summary: 'Approve or reject',
    description:
      'Approves or rejects a pending destructive call. Approving runs the stored call (or, with "arguments", the call with the edited arguments) and the agent goes on; rejecting cancels it: the model is told "Rejected by a human: <reason>" and that the call must not be retried unless the user asks. In an agent tree a rejection cancels the pipeline. Each approval is decided once: a second decision, concurrent or later, runs nothing and gets 409 naming the first. The decision is recorded with who decided, when and through which face (via "rest", or "cli" with X-ASG-Via: cli). An approval whose description says that an MCP server asks for input is answered the same way: approving with "input" sends that answer to the server and the call goes on; rejecting declines the question.',
    pathParams: APPROVAL_PARAM,
    headers: z.object({
      'X-ASG-Via': z
        .literal('cli')
        .optional()
        .meta({ description: 'Set by `asg approvals`: the decision records via "cli" (a label, not a credential).' }),
    }),
    body: {
      schema: approvalDecisionBody,
      required: true,
      description: `${APPROVAL_BODY_EXPECTED}. Every form the body uses must say the same thing.`,
      examples: {
        approve: { approved: true },
        'approve with edited arguments': { approved: true, arguments: { id: 'res-43' }, reason: 'the id was wrong' },
        'reject with a reason': { action: 'reject', reason: 'not this one' },
        "answer an MCP server's question": { approved: true, input: { name: 'Ada' } },
        answer: { answer: 'yes' },
      },
    },
    responses: {
      200: json(
        'decided (for an approval with a quorum: the vote that completed it, or any rejection); the reply has the turn that followed',
        shapes.conversationReply,
        examples.decided,
      ),
      202: json(
        "an approving vote of an approval with a quorum (an approval policy's require) that does not complete it: recorded, nothing ran",
        shapes.voteRecordedReply,
        { status: 'pending', votes: 1, required: 2 },
      ),
      400: refusal(
        'a body that says neither yes nor no (or both); a "reason" that is not a string of at most 2,000 characters; "arguments" that are not an object, come with a rejection, or do not fit the tool\'s input schema; "input" that is not an object, comes with a rejection, is given to an approval that asks for none, is missing when approving one that does, or does not fit the schema the server requested; or a field the body does not take (named)',
      ),
      403: refusal(
        "the caller may not decide approvals (the approve role), or, for an approval with a quorum, does not hold the quorum's role (or, once escalated, the escalation's), or asked for the call and the quorum says not_requester (audited as approval.vote_refused)",
      ),
      404: refusal('no approval has this uuid'),
      409: json(
        'already decided, or expired; the body names the first decision and who made it. For an approval with a quorum, also a second vote of one voter for the same arguments (`{"error"}` only)',
        z.union([shapes.approvalConflictReply, shapes.errorReply]),
        examples.conflict,
      ),
      413: TOO_LARGE,
      503: TURN_UNAVAILABLE,
      504: unknownOutcome(
        'the outcome is not known: the decision was (or may have been) recorded, and what followed had not finished by chat.turn_timeout or went on without this replica; the approval and conversation named show it',
      ),
    },
  },
  {
    method: 'get',
    path: '/audit',
    tag: 'Audit',
    summary: 'The audit trail',
    description:
      'Newest first, append-only: every decision (approval.decided, approval.expired), configuration load (config.loaded) and authentication failure (auth.failed), with who (actor), through which face (via), what it concerns (subject) and the details (never a token).',
    query: auditQuery,
    responses: {
      200: json('one page', shapes.auditListReply, examples.audit),
      400: refusal(
        `kind is not an entry kind, limit is not an integer from 1 to ${MAX_PAGE_SIZE}, or the cursor is not one this API gave out`,
      ),
      503: UNREACHABLE,
    },
  },
  ...CARD_PATHS.map(
    (path): RouteDoc => ({
      method: 'get',
      path,
      tag: 'A2A',
      summary: path.endsWith('agent-card.json') ? 'A2A agent card' : 'A2A agent card (older path)',
      description:
        'The agent card: the agent as an A2A server, its endpoint (/a2a), its skills (its tools) and, with auth, its security scheme.',
      responses: { 200: json('the card', agentCard), 503: UNREACHABLE },
    }),
  ),
  {
    method: 'post',
    path: A2A_PATH,
    tag: 'A2A',
    summary: 'A2A JSON-RPC endpoint',
    description:
      'JSON-RPC 2.0 in three dialects: type-parts, the early one (message/send, tasks/get, parts {"type":"text"}), A2A v0.3 (message/send, message/stream, tasks/get, tasks/list, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/set|get|list|delete) and A2A v1.0 (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, Create/Get/List/DeleteTaskPushNotificationConfig(s), with the header A2A-Version: 1.0). A message to a terminal task is -32004 and starts no turn; a contextId that is not the task\'s is -32602; blocking: false (v0.3) / returnImmediately (v1.0) answers the task at once while the turn runs. Task id = conversation id; a waiting conversation is input-required with "Approval required (id: <uuid>): <description>" and, in v0.3/v1.0, a data part {"approval": {...}}; a message/send with taskId and yes/no (or a data part {"approved": bool}, with an optional "reason") decides it. JSON-RPC errors are answered with HTTP 200: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 bad params, -32001 unknown task, -32004 unsupported operation. The streaming methods answer with server-sent events, each data a JSON-RPC answer.',
    headers: z.object({
      'A2A-Version': z.string().optional().meta({ description: '1.0 or 0.3; absent: the method name and parts decide.' }),
    }),
    body: {
      schema: a2aRequest,
      required: true,
      examples: {
        'message/send (v0.3)': {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              role: 'user',
              messageId: '0d9f6a4e-1c2b-4f3a-9e8d-7c6b5a4f3e2d',
              parts: [{ kind: 'text', text: 'list resources' }],
            },
          },
        },
        'tasks/get': { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: CONVERSATION_ID } },
        'SendMessage (v1.0)': {
          jsonrpc: '2.0',
          id: 3,
          method: 'SendMessage',
          params: { message: { role: 'ROLE_USER', messageId: '5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d', parts: [{ text: 'hello' }] } },
        },
      },
    },
    responses: {
      200: { description: 'a JSON-RPC answer (errors too), or for the streaming methods an event stream', schema: jsonRpcResponse },
      403: {
        description: `a decision the caller's role does not allow (JSON-RPC error ${JsonRpcCode.ACCESS_DENIED})`,
        schema: jsonRpcResponse,
      },
    },
  },
  ...(['post', 'get', 'delete'] as const).map(
    (method): RouteDoc => ({
      method,
      path: MCP_PATH,
      tag: 'MCP',
      summary: { post: 'MCP JSON-RPC endpoint', get: 'MCP server-to-client stream', delete: 'End an MCP session' }[method],
      description: {
        post: 'The agent as an MCP server over Streamable HTTP: one tool that runs a turn, and approvals asked back through elicitation. Both protocol generations the SDK serves: 2026-07-28 statelessly (any replica answers), and the 2025 revisions with sessions (Mcp-Session-Id). Answers are JSON or server-sent events, as the client accepts (send Accept: application/json, text/event-stream).',
        get: "The 2025 revisions' stream of server-to-client messages of a session (Mcp-Session-Id).",
        delete: 'Ends a 2025-revision session (Mcp-Session-Id).',
      }[method],
      onlyWhen: 'serve_mcp.enabled is true (the default)',
      headers: z.object({
        'Mcp-Session-Id': z.string().optional().meta({ description: '2025 revisions: the session, after initialize.' }),
        'Mcp-Protocol-Version': z.string().optional(),
      }),
      ...(method === 'post' && {
        body: {
          schema: mcpRequest,
          required: true,
          examples: {
            initialize: {
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
            },
            'tools/list': { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          },
        },
      }),
      responses: {
        200: { description: 'a JSON-RPC answer, or an event stream', schema: jsonRpcResponse },
        400: { description: 'not a valid MCP message, or a session header where none may be', schema: jsonRpcResponse },
        404: { description: 'the session is unknown or has ended', schema: jsonRpcResponse },
      },
    }),
  ),
  ...openAiRoutes,
];
