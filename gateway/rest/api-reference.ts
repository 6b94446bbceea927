import { ApprovalStatus, ApprovalTimeoutAction, ConversationStatus, MessageRole, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { DEFAULT_HISTORY_LIMIT } from '../app/agent.js';
import { approvalListReply, approvalReply, auditListReply, conversationListReply, conversationPageReply, conversationReply, toolListReply } from '../app/replies.js';
import { approvalRecordJson } from '../app/shapes.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../app/inputs.js';
import { requirementsOf, type Need } from '../app/route-access.js';
import { APPROVAL_BODY_EXPECTED } from './requests.js';

/**
 * `GET /docs`: the REST API reference as one self-contained HTML page (inline CSS and
 * script, no external assets), with a "try it" form per route. The response examples are
 * produced by the same mapping code as real responses, so they cannot drift from them.
 */

interface RouteDoc {
  method: 'GET' | 'POST';
  path: string;
  /** The path used by the example and prefilled in the "try it" form. */
  examplePath: string;
  purpose: string;
  request?: string;
  requestExample?: unknown;
  responseStatus: number;
  responseExample: unknown;
  statuses: [number, string][];
}

const CONVERSATION_ID = '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13';
const APPROVAL_UUID = 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47';
const SESSION_ID = '4be2a91c';
const at = (seconds: number) => new Date(Date.UTC(2025, 0, 15, 10, 2, seconds));

const exampleApproval: PendingApproval = {
  uuid: APPROVAL_UUID,
  conversationId: CONVERSATION_ID,
  toolName: 'delete_resource',
  toolArgs: { id: 'res-42' },
  description: 'delete_resource on resources with arguments {"id":"res-42"}',
  createdAt: at(3),
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
  argsHash: '',
  toolCallId: '',
  updatedAt: at(3),
  agentChain: [],
};

const waitingConversation: Conversation = {
  id: CONVERSATION_ID,
  sessionId: SESSION_ID,
  status: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL,
  messages: [
    { id: 'm1', role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'You manage resources.', createdAt: at(0), seq: 1 },
    { id: 'm2', role: MessageRole.MESSAGE_ROLE_USER, content: 'Delete resource res-42', createdAt: at(1), seq: 2 },
    {
      id: 'm3',
      role: MessageRole.MESSAGE_ROLE_ASSISTANT,
      content: '',
      toolCall: { id: 'call-1', name: 'delete_resource', arguments: { id: 'res-42' } },
      createdAt: at(3),
      seq: 3,
    },
  ],
  pendingApproval: exampleApproval,
  pendingApprovals: [exampleApproval],
  runRevision: 0,
  watched: false,
  createdAt: at(0),
  updatedAt: at(3),
  messageCount: 3,
  usage: { inputTokens: 0, outputTokens: 0 },
};

const completedConversation: Conversation = {
  ...waitingConversation,
  status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
  pendingApproval: undefined,
  pendingApprovals: [],
  messages: [
    ...waitingConversation.messages,
    {
      id: 'm4',
      role: MessageRole.MESSAGE_ROLE_TOOL,
      content: 'Resource res-42 deleted',
      toolCall: { id: 'call-1', name: 'delete_resource', arguments: { id: 'res-42' }, result: 'Resource res-42 deleted', isError: false },
      createdAt: at(40),
      seq: 4,
    },
    { id: 'm5', role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Resource res-42 has been deleted.', createdAt: at(41), seq: 5 },
  ],
  updatedAt: at(41),
  messageCount: 5,
  usage: { inputTokens: 0, outputTokens: 0 },
};

// Issue 15: the same approval once alice approved it with edited arguments, and a second one still pending.
const decidedApproval: PendingApproval = {
  ...exampleApproval,
  status: ApprovalStatus.APPROVAL_STATUS_DONE,
  decidedAt: at(40),
  decidedBy: 'alice',
  via: 'web',
  reason: 'the id was wrong',
  editedArgs: { id: 'res-43' },
  updatedAt: at(41),
};

const pendingApproval: PendingApproval = {
  ...exampleApproval,
  uuid: '9c7d2e10-4b5a-4f36-8d21-6e0a3b9c5f78',
  conversationId: 'a3d5e7f9-1b2c-4d6e-8f10-2a4c6e8b0d13',
  createdAt: at(50),
  updatedAt: at(50),
  expiresAt: new Date(Date.UTC(2025, 0, 15, 10, 32, 50)),
  onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
};

const waitingResult = { response: 'The action delete_resource needs your approval.', waitingApproval: true, approval: exampleApproval };

const routes: RouteDoc[] = [
  {
    method: 'GET',
    path: '/health',
    examplePath: '/health',
    purpose: 'Liveness of the gateway process. It calls no other service, and answers 200 also while the gateway stops (see /ready). Answered for any Host header.',
    responseStatus: 200,
    responseExample: { status: 'ok' },
    statuses: [[200, 'the gateway process is up']],
  },
  {
    method: 'GET',
    path: '/ready',
    examplePath: '/ready',
    purpose:
      'Readiness of the gateway: whether it can serve requests now. It asks the orchestrator and the conversation store for their gRPC health (grpc.health.v1) and is ready when both say SERVING and the gateway is not stopping. For load balancers and Kubernetes readiness probes; /health is the liveness probe. Like /health, it is answered for any Host header.',
    responseStatus: 200,
    responseExample: { status: 'ready' },
    statuses: [
      [200, '{"status":"ready"}: both backends are SERVING'],
      [503, '{"status":"not_ready","backends":{"orchestrator":"SERVING","conversation_store":"UNREACHABLE"},"error":"…"}: a backend is NOT_SERVING (stopping), UNREACHABLE, NO_ANSWER within 800 ms or has no health service'],
      [503, '{"status":"draining","error":"…"}: the gateway is stopping; /health still answers 200 until it exits'],
    ],
  },
  {
    method: 'GET',
    path: '/tools',
    examplePath: '/tools',
    purpose:
      'The tools the agent offers its model: every MCP server\'s tools and every A2A sub-agent as a tool named a2a_<name> with one string parameter "message". destructiveHint is the effective policy: true means a call stops for a human approval.',
    responseStatus: 200,
    responseExample: toolListReply([
      {
        name: 'delete_resource',
        description: 'Deletes a resource by id',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        destructive: true,
        server: 'resources',
      },
    ]),
    statuses: [
      [200, 'the tool list'],
      [503, 'the orchestrator or an MCP server is unreachable'],
      [504, 'listing took longer than its deadline'],
    ],
  },
  {
    method: 'POST',
    path: '/conversations',
    examplePath: '/conversations',
    purpose:
      'Creates a conversation. With a message, the agent runs a turn at once: the reply has "result", which may be an approval request instead of an answer.',
    request: 'optional: no body, {} or {"message": "<non-empty text>"}',
    requestExample: { message: 'Delete resource res-42' },
    responseStatus: 201,
    responseExample: conversationReply({ conversation: waitingConversation }, waitingResult),
    statuses: [
      [201, 'created; "result" is present when a message was given'],
      [400, 'malformed JSON or an empty / non-string "message"'],
      [413, 'body larger than 1 MB'],
      [503, 'a backend service is unreachable'],
      [504, 'the turn took longer than chat.turn_timeout'],
    ],
  },
  {
    method: 'GET',
    path: '/conversations',
    examplePath: `/conversations?limit=${DEFAULT_PAGE_SIZE}`,
    purpose: `Conversations, newest first, one page at a time, with counts by status over all of them (with auth: all those the caller may read — its own, or every one for approve and admin). Each item is a summary: the conversation without its messages, with "title" (the first words of the first user message), "message_count" and "pending_approvals" (a count). Query: limit (1..${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) and cursor. "next_cursor" is present when there is a next page: pass it back as ?cursor= to read it.`,
    responseStatus: 200,
    responseExample: conversationListReply({
      conversations: [{ ...completedConversation, messages: [], messageCount: 5, title: 'Delete resource res-42' }],
      pipelines: new Map(),
      summary: { total: 120, active: 97, waitingApproval: 3, completed: 20 },
      nextCursor: 'eyJiZWZvcmUiOiIyMDI1LTAxLTE1In0',
    }),
    statuses: [
      [200, 'one page'],
      [400, 'limit is not an integer from 1 to 500, or the cursor is not one this API gave out'],
      [503, 'the conversation store is unreachable, or the orchestrator that describes a stored agent-tree run'],
    ],
  },
  {
    method: 'GET',
    path: '/conversations/:id',
    examplePath: `/conversations/${CONVERSATION_ID}`,
    purpose: `One conversation with its messages (oldest first), its pending approval and its pipeline state. A history of up to ${DEFAULT_HISTORY_LIMIT} messages (and 8,000,000 characters) comes whole; a longer one comes as its newest page with "has_more_before": true. Query: limit (1..${DEFAULT_HISTORY_LIMIT}, default ${DEFAULT_HISTORY_LIMIT}) messages, and before or after (a message id, exclusive): ?before=<id of the first message shown> reads the page before it.`,
    responseStatus: 200,
    responseExample: conversationPageReply({ conversation: waitingConversation }),
    statuses: [
      [200, 'the conversation, with one page of its messages'],
      [400, 'limit is not an integer from 1 to 1000, before and after are both given, or before / after is not a message of this conversation'],
      [404, 'no conversation has this id (or, with auth, none the caller may read)'],
      [503, 'the conversation store is unreachable, or the orchestrator that describes a stored agent-tree run'],
    ],
  },
  {
    method: 'POST',
    path: '/conversations/:id/messages',
    examplePath: `/conversations/${CONVERSATION_ID}/messages`,
    purpose:
      'Sends a user message and runs a turn. While the conversation waits for an approval the message is not processed: result.waiting_approval is true and result.approval is the pending approval. A conversation runs one turn at a time: while one runs (the conversation shows "turn_running": true) the message is refused with 409; wait for the turn_ended event of GET /conversations/:id/events and send it again.',
    request: '{"message": "<non-empty text>"}',
    requestExample: { message: 'list resources' },
    responseStatus: 200,
    responseExample: conversationReply({ conversation: waitingConversation }, waitingResult),
    statuses: [
      [200, 'the turn ran (or the conversation still waits for an approval)'],
      [400, 'malformed JSON, or a missing or empty "message"'],
      [404, 'no conversation has this id (or, with auth, none the caller may read)'],
      [409, 'a turn is running on the conversation: {"error", "conversation_id"}, nothing stored'],
      [413, 'body larger than 1 MB'],
      [503, 'a backend service is unreachable'],
      [504, 'the turn took longer than chat.turn_timeout'],
    ],
  },
  {
    method: 'POST',
    path: '/approvals/:uuid',
    examplePath: `/approvals/${APPROVAL_UUID}`,
    purpose:
      'Approves or rejects a pending destructive call. Approving runs the stored call exactly as it was proposed and the agent goes on; rejecting cancels it: the model is told "Rejected by a human: <reason>" (or "Rejected by a human." without one) and that the call was not executed and must not be retried unless the user asks, and in simple mode it answers at once (the response starts with "Operation cancelled by user."); the same call asked again in that run is refused without asking. In an agent tree a rejection cancels the pipeline. Each approval is decided once: a second decision, concurrent or later, executes nothing and gets 409 with the first decision.',
    request:
      '{"approved": true|false}, {"action": "approve"|"reject"} or {"answer": "<word>"} where yes, y, true, approve, approved, ok, confirm approve and no, n, false, reject, rejected, deny, cancel reject (any case); each with an optional "reason" (a string of at most 2,000 characters), stored with the decision and shown on the tool message. Approving, an optional "arguments" (a JSON object) runs the call with these arguments instead of the ones the model asked for: they are checked against the tool\'s input schema first (400 when they do not fit), the record keeps both (tool_args and edited_args), and the model is told they were edited. The decision is recorded with who decided ("anonymous" without authentication), when and through which face (via "rest", or "cli" for asg approvals, which sends X-ASG-Via: cli).',
    requestExample: { approved: true, arguments: { id: 'res-43' }, reason: 'the id was wrong' },
    responseStatus: 200,
    responseExample: conversationReply({ conversation: completedConversation }, { response: 'Resource res-42 has been deleted.', waitingApproval: false }),
    statuses: [
      [200, 'decided; the reply has the turn that followed'],
      [400, `a body that says neither yes nor no: ${APPROVAL_BODY_EXPECTED}; or a "reason" that is not a string of at most 2,000 characters; or "arguments" that are not an object, come with a rejection, or do not fit the tool's input schema`],
      [404, 'no approval has this uuid'],
      [409, 'already decided, or expired; the body names the first decision and who made it (example below)'],
      [503, 'a backend service is unreachable'],
      [504, 'the resumed turn took longer than chat.turn_timeout'],
    ],
  },
  {
    method: 'GET',
    path: '/approvals',
    examplePath: '/approvals?status=pending',
    purpose: `Approvals as resources: every approval of every conversation, oldest first, one page at a time. Query: status (pending, approved, rejected or expired; several separated by commas; default every status), conversation_id (one conversation), limit (1..${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) and cursor ("next_cursor" of the previous page). "approved" is every approval said yes to, by a human or by an expiry that approves, whatever came of its call: "execution" says that (executing, done, failed, interrupted) once the call has started. "rejected" is a human's no; "expired" is an approval nobody decided before its expires_at whose on_timeout rejected it (decided_by "timeout").`,
    responseStatus: 200,
    responseExample: approvalListReply({ approvals: [pendingApproval], nextCursor: 'eyJhZnRlciI6IjljN2QyZTEwIn0' }),
    statuses: [
      [200, 'one page'],
      [400, 'status is not one of pending, approved, rejected, expired; limit is not an integer from 1 to 500; conversation_id or cursor is empty, given twice, or the cursor is not one this API gave out'],
      [503, 'the conversation store is unreachable'],
    ],
  },
  {
    method: 'GET',
    path: '/approvals/:uuid',
    examplePath: `/approvals/${APPROVAL_UUID}`,
    purpose:
      'One approval, whatever its status: the call as the model asked for it (tool_args), and its record — who decided (a token\'s name, a JWT\'s subject, "anonymous" without authentication, "timeout" for an expiry), when, through which face (via: rest, web, a2a, mcp, cli, timeout), the reason, the arguments the call ran with when they were edited (edited_args), and when it expires if nobody decides it.',
    responseStatus: 200,
    responseExample: approvalRecordJson(decidedApproval),
    statuses: [
      [200, 'the approval'],
      [404, 'no approval has this uuid'],
      [503, 'the conversation store is unreachable'],
    ],
  },
  {
    method: 'GET',
    path: '/audit',
    examplePath: '/audit?limit=20',
    purpose: `The audit trail, newest first, append-only: every decision (approval.decided, approval.expired), configuration load (config.loaded) and authentication failure (auth.failed), with who (actor), through which face (via), what it concerns (subject: an approval's uuid, a conversation, a configuration file) and the details (never a token). For admins once authentication is configured. Query: kind (one or several, separated by commas), limit (1..${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) and cursor.`,
    responseStatus: 200,
    responseExample: auditListReply({
      entries: [
        { id: 42, at: at(40), kind: 'approval.decided', actor: 'alice', via: 'web', subject: APPROVAL_UUID, detailJson: JSON.stringify({ decision: 'approved', reason: 'the id was wrong', edited: true, conversation_id: CONVERSATION_ID }) },
        { id: 41, at: at(2), kind: 'auth.failed', actor: '', via: 'rest', subject: '/approvals', detailJson: JSON.stringify({ cause: 'unknown token' }) },
      ],
      nextCursor: 'eyJiZWZvcmUiOjQxfQ',
    }),
    statuses: [
      [200, 'one page'],
      [400, 'kind is not an entry kind, limit is not an integer from 1 to 500, or the cursor is not one this API gave out'],
      [503, 'the conversation store is unreachable'],
    ],
  },
  {
    method: 'GET',
    path: '/docs',
    examplePath: '/docs',
    purpose: 'This page.',
    responseStatus: 200,
    responseExample: '<!doctype html>…',
    statuses: [[200, 'HTML']],
  },
];

const conflictExample = approvalReply(APPROVAL_UUID, {
  decided: false,
  approval: { ...exampleApproval, status: ApprovalStatus.APPROVAL_STATUS_DONE, decidedAt: at(40), decidedBy: 'alice', via: 'web' },
  decision: 'approved',
  decidedAt: at(40),
}).body;

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function json(value: unknown): string {
  return escapeHtml(typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

const EXAMPLE_ORIGIN = 'http://localhost:8080';

function curlExample(route: RouteDoc): string {
  const parts = [`curl -s`];
  if (route.method === 'POST') parts.push('-X POST', `-H 'Content-Type: application/json'`);
  if (route.requestExample !== undefined) parts.push(`-d '${JSON.stringify(route.requestExample)}'`);
  parts.push(`'${EXAMPLE_ORIGIN}${route.examplePath}'`);
  return escapeHtml(parts.join(' '));
}

/** Who may call a route with `auth` configured, read from the table the gateway enforces (auth/routes.ts). */
function accessOf(route: RouteDoc): { text: string; refusals: [number, string][] } {
  const needs = requirementsOf(route.method, route.examplePath.split('?')[0]!).needs;
  const describe = (need: Need): string => {
    if (need.kind === 'open') return 'anyone';
    if (need.kind === 'signed-in') return 'any signed-in caller';
    if (need.roles.every((role) => role === 'admin')) return 'role admin';
    return `role ${need.roles.join(' or ')} (or admin)`;
  };
  if (needs.every((need) => need.kind === 'open')) return { text: 'anyone, without a token, also when auth is configured', refusals: [] };
  const refusals: [number, string][] = [[401, 'auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired; WWW-Authenticate: Bearer says which)']];
  if (needs.some((need) => need.kind === 'role')) refusals.push([403, 'the token is valid but its roles do not allow this route']);
  return { text: `with auth configured: ${[...new Set(needs.map(describe))].join(' and ')}; without auth: anyone`, refusals };
}

function routeSection(route: RouteDoc, index: number): string {
  const access = accessOf(route);
  const statuses = [...route.statuses, ...access.refusals].map(([status, meaning]) => `<tr><td><code>${status}</code></td><td>${escapeHtml(meaning)}</td></tr>`).join('');
  const body = route.requestExample === undefined ? '' : `<textarea class="body" rows="3">${json(route.requestExample)}</textarea>`;
  return `
<section id="route-${index}">
  <h2><span class="method ${route.method.toLowerCase()}">${route.method}</span> <code>${escapeHtml(route.path)}</code></h2>
  <p>${escapeHtml(route.purpose)}</p>
  <p class="access">Who may call: ${escapeHtml(access.text)}</p>
  <h3>Request body</h3>
  <p>${escapeHtml(route.request ?? 'none')}</p>
  <h3>Response <code>${route.responseStatus}</code></h3>
  <pre>${json(route.responseExample)}</pre>
  ${route.method === 'POST' && route.path === '/approvals/:uuid' ? `<h3>Response <code>409</code></h3><pre>${json(conflictExample)}</pre>` : ''}
  <h3>Status codes</h3>
  <table>${statuses}</table>
  <h3>curl</h3>
  <pre class="curl">${curlExample(route)}</pre>
  <details class="try" data-method="${route.method}">
    <summary>Try it</summary>
    <input class="path" value="${escapeHtml(route.examplePath)}" aria-label="path">
    ${body}
    <button type="button">Send</button>
    <pre class="out"></pre>
  </details>
</section>`;
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
code,pre,textarea,input{font-family:ui-monospace,monospace;font-size:13px}
pre{background:#f4f5f8;padding:.75rem;overflow:auto;border-radius:4px}
section{border-top:1px solid #dde;margin-top:2rem}
h3{font-size:14px;margin:1rem 0 .25rem}
table{border-collapse:collapse}td{border:1px solid #dde;padding:.25rem .5rem;vertical-align:top}
.method{display:inline-block;padding:0 .5rem;border-radius:4px;color:#fff;font-size:14px}
.get{background:#2f7d4f}.post{background:#2f5d9d}
.try input,.try textarea{width:100%;box-sizing:border-box;margin:.25rem 0}
#settings input{width:20rem}`;

// Runs in the reader's browser: examples name this gateway's origin, and "try it" sends
// the request with the session id and Authorization typed into the settings.
const SCRIPT = `
for (const pre of document.querySelectorAll('pre.curl')) pre.textContent = pre.textContent.replace(${JSON.stringify(EXAMPLE_ORIGIN)}, location.origin);
for (const form of document.querySelectorAll('details.try')) {
  form.querySelector('button').addEventListener('click', async () => {
    const out = form.querySelector('.out');
    const headers = { 'Content-Type': 'application/json' };
    const sid = document.getElementById('sid').value.trim();
    const auth = document.getElementById('auth').value.trim();
    if (sid) headers['X-Session-ID'] = sid;
    if (auth) headers['Authorization'] = auth;
    const body = form.querySelector('.body');
    out.textContent = '…';
    try {
      const res = await fetch(form.querySelector('.path').value, { method: form.dataset.method, headers, body: body ? body.value : undefined });
      const text = await res.text();
      let shown = text;
      try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch {}
      out.textContent = res.status + ' ' + res.statusText + '\\nX-Session-ID: ' + (res.headers.get('X-Session-ID') || '') + '\\n\\n' + shown;
    } catch (error) {
      out.textContent = String(error);
    }
  });
}`;

export function apiReferencePage(): string {
  const toc = routes.map((route, index) => `<li><a href="#route-${index}"><code>${route.method} ${escapeHtml(route.path)}</code></a></li>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Stop and Go — REST API</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Agent Stop and Go — REST API</h1>
<p>An LLM agent that calls tools and stops before destructive ones until a human approves.
All bodies are JSON (at most 1 MB) with snake_case fields. Errors are <code>{"error": "…"}</code> with the status codes listed per route;
a path that is not listed here gets 404.</p>
<ul>${toc}</ul>

<h2>Conventions</h2>
<h3>Session id</h3>
<p>Every conversation has a session id of 8 lowercase hex characters; it appears in every log line about the conversation and in traces.
Send <code>X-Session-ID: 4be2a91c</code> to choose it (any case; anything that is not 8 hex characters is ignored).
Without it, <code>POST /conversations</code> makes a new one, and requests about an existing conversation use the one stored with it.
Every response that knows the effective id returns it in the <code>X-Session-ID</code> header.</p>
<h3>Authentication</h3>
<p>With <code>auth</code> configured every route needs <code>Authorization: Bearer &lt;token&gt;</code> — an API token of the config
or a JWT of the configured OIDC issuer — except <code>/health</code>, <code>/ready</code>, <code>/docs</code>, the agent card and the
OAuth protected-resource metadata. Without a valid token the answer is <code>401</code> with
<code>WWW-Authenticate: Bearer realm="agent-stop-and-go"</code> (and <code>error="invalid_token"</code> when one was sent);
a token whose roles do not allow the route gets <code>403</code> (<code>error="insufficient_scope"</code>). Roles: <code>chat</code>
(conversations, their events, tools, <code>/a2a</code>, <code>/mcp</code>), <code>approve</code> (everything under <code>/approvals</code>),
<code>admin</code> (everything, <code>/audit</code> included). Each route below says what it needs. Event streams also take the token as
<code>?token=</code>, since a browser's EventSource cannot send headers. Every 401 and 403 is an <code>auth.failed</code> entry of the audit.
<code>GET /auth/whoami</code> tells who a token is. Without <code>auth</code> everyone is <code>anonymous</code> with every role.
With <code>auth</code> a conversation belongs to whoever created it (its <code>"owner"</code>): <code>chat</code> reads and talks to its own only,
<code>approve</code> reads every conversation but talks only to its own, <code>admin</code> everything; someone else's conversation that the caller
may not read answers exactly as an unknown one (404, A2A -32001), and <code>GET /conversations</code> lists only the caller's own unless it may read all.</p>
<h3>Authorization</h3>
<p>Without <code>auth</code>, an <code>Authorization</code> header is forwarded as is to the services behind the gateway, and from there as a bearer token to
HTTP MCP servers and A2A sub-agents, so tools act with the caller's identity. With <code>auth</code> it is this agent's own credential and goes
no further. Either way it is never logged, stored or echoed.</p>
<h3>A2A</h3>
<p>The agent is also an A2A server: its card at <code>GET /.well-known/agent-card.json</code> (and <code>/.well-known/agent.json</code>),
JSON-RPC 2.0 at <code>POST /a2a</code> in the seed's dialect (<code>message/send</code>, <code>tasks/get</code>, parts <code>{"type":"text"}</code>),
A2A v0.3 (<code>message/send</code>, <code>message/stream</code>, <code>tasks/get</code>, <code>tasks/cancel</code>) and A2A v1.0
(<code>SendMessage</code>, <code>SendStreamingMessage</code>, <code>GetTask</code>, <code>CancelTask</code> with <code>A2A-Version: 1.0</code>).
Task id = conversation id; a waiting conversation is <code>input-required</code> with <code>Approval required (id: &lt;uuid&gt;): &lt;description&gt;</code>
and, in v0.3/v1.0, a data part <code>{"approval": {...}}</code>; a <code>message/send</code> with <code>taskId</code> and yes/no (or a data part
<code>{"approved": bool}</code>, with an optional <code>"reason"</code> for a rejection; a text answer is only the word) decides it. Errors: -32601 unknown method, -32602 bad params, -32001 unknown task.</p>
<h3>Deadlines</h3>
<p>A turn (creating a conversation with a message, sending a message, deciding an approval) may take up to the configured
<code>chat.turn_timeout</code>; reads of conversations up to 10 s (the store's read, and the orchestrator's description of the pipeline state of
conversations that have one). A deadline that passes gives 504; a service that cannot be reached gives 503.</p>
<h3>Requests from browsers, and other refusals on every route</h3>
<p>A request that changes state (POST, PUT, PATCH, DELETE) and carries a body must say <code>Content-Type: application/json</code>, else 415.
A <code>Host</code> the server does not answer for (<code>server.allowed_hosts</code>; on a loopback address the loopback names) gets 421,
so that a page using DNS rebinding cannot reach the API. A request with an <code>Origin</code> that is neither the server's own nor listed in
<code>server.cors.allowed_origins</code> gets 403 when it changes state; CORS headers are sent only to listed origins.
Clients that send no <code>Origin</code> (curl, SDKs) are unaffected. A path that is not valid %-encoding gets 400.
While the server stops (SIGTERM), new requests get 503 with <code>Retry-After</code>; requests in flight finish.</p>
<h3>Shapes</h3>
<pre>C = {"id", "session_id", "status": "active"|"waiting_approval"|"completed", "messages": [M...],
     "pending_approval"?: P, "pending_approvals"?: [P...], "pipeline_state"?: S, "owner"?, "created_at", "updated_at"}
M = {"id", "role": "system"|"user"|"assistant"|"tool", "content",
     "tool_call"?: {"name", "arguments", "result"?, "is_error"?, "rejected"?: true, "reason"?}, "created_at"}
P = {"uuid", "conversation_id", "tool_name", "tool_args", "description",
     "remote_task_id"?, "remote_agent_name"?, "agent_chain"?, "reason"?, "outcome_unknown"?, "replaces"?,
     "decided_by"?, "via"?, "expires_at"?, "on_timeout"?: "reject"|"approve", "created_at"}
A = {"uuid", "conversation_id", "tool_name", "tool_args", "description",
     "status": "pending"|"approved"|"rejected"|"expired", "execution"?: "executing"|"done"|"failed"|"interrupted",
     "requested_at", "decided_at"?, "decided_by"?, "via"?, "reason"?, "edited_args"?, "expires_at"?, "on_timeout"?,
     "remote_task_id"?, "remote_agent_name"?, "agent_chain"?, "outcome_unknown"?, "replaces"?}
E = {"id", "at", "kind", "actor", "via"?, "subject", "detail": {}}
S = {"paused_node_path": [int...], "paused_node_output_key", "session_state": {}, "user_message",
     "pauses": [{"approval_uuid", "paused_node_path": [int...], "paused_node_output_key", "loop_iterations": {}}...],
     "branch_outputs": {}}
R = {"response": string, "waiting_approval": bool, "approval"?: P}</pre>
<p>Fields marked ? are left out when they have no value. Times are ISO 8601 in UTC.
<code>remote_task_id</code>, <code>remote_agent_name</code> and <code>agent_chain</code> (the agents the call is held by, nearest first) are set when the approval was requested by an A2A sub-agent (a proxy approval: deciding it here sends the decision down the chain).
A tool message with <code>"rejected": true</code> is a call a human rejected (or a repeat of one in the same run): nothing ran; <code>reason</code> is the human's, when given; <code>is_error</code> is true too, for clients that know only that field.
<code>reason</code>, <code>decided_by</code> and <code>via</code> on P say who decided, why and through which face (in a 409's <code>approval</code>);
<code>expires_at</code> is when a pending approval expires if nobody decides it, and <code>on_timeout</code> what the expiry decides.
A is an approval as a resource (<code>GET /approvals</code>); E an entry of the audit trail (<code>GET /audit</code>).
<code>pending_approvals</code> lists every pending approval while the conversation waits, oldest first; <code>pending_approval</code> is the first.
There is more than one only when an agent tree waits at several nodes at once (branches of a parallel node).
In S, <code>pauses</code> names each node the pipeline waits at, one per pending approval, in the order they paused, with the iteration
(from 1) of each loop above it by the loop's path (<code>"0.1"</code>); <code>branch_outputs</code> holds, by branch path, the outputs of
branches of a parallel node that finished while a sibling waits.</p>

<h2>Settings for "try it"</h2>
<p id="settings"><label>X-Session-ID <input id="sid" placeholder="optional, 8 hex characters"></label><br>
<label>Authorization <input id="auth" placeholder="optional, e.g. Bearer …"></label></p>
${routes.map(routeSection).join('\n')}
<script>${SCRIPT}</script>
</body>
</html>
`;
}
