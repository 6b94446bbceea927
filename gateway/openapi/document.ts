import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { BODY_LIMIT_BYTES } from '../app/inputs.js';
import { requirementsOf, type Need } from '../app/route-access.js';
import { agentVersion } from '../app/version.js';
import { ROUTES, type RouteDoc } from './routes.js';
import { errorReply } from './shapes.js';
import { trpcRoutes } from './trpc.js';

/**
 * The gateway's OpenAPI 3.1 document (`GET /openapi.json`), made from the route list
 * (routes.ts, trpc.ts) and the zod schemas the routes validate with. Who may call each route
 * comes from the table the gateway enforces (app/route-access.ts): an operation that needs a
 * token has the bearer security requirement, its 401 and 403, the roles in its description and
 * in `x-asg-access`; an open one has `security: []`.
 */

/** The security schemes: a bearer token, and (event streams only) the same token as `?token=`. */
const BEARER = 'bearer';
const QUERY_TOKEN = 'query_token';

/** `/conversations/:id` → `/conversations/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(route: RouteDoc): string {
  const words = `${route.method} ${route.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1))).join('');
}

/** What `x-asg-access` says: the need, in words the table uses. */
interface Access {
  auth: 'none' | 'signed-in' | 'role';
  roles?: string[];
  /** Event streams: the token may come as ?token=, since EventSource cannot send headers. */
  query_token?: true;
}

function describeNeed(need: Need): string {
  if (need.kind === 'open') return 'anyone';
  if (need.kind === 'signed-in') return 'any signed-in caller';
  if (need.roles.every((role) => role === 'admin')) return 'role admin';
  return `role ${need.roles.join(' or ')} (or admin)`;
}

function accessOf(route: RouteDoc): { access: Access; text: string } {
  // Any value stands for a path parameter: the table matches the route's shape.
  const requirements = requirementsOf(route.method, route.path.replace(/:[A-Za-z0-9_]+/g, 'x'));
  const needs = requirements.needs;
  if (needs.every((need) => need.kind === 'open'))
    return { access: { auth: 'none' }, text: 'anyone, without a token, also when auth is configured' };
  const roleNeeds = needs.filter((need): need is Extract<Need, { kind: 'role' }> => need.kind === 'role');
  const access: Access =
    roleNeeds.length > 0 ? { auth: 'role', roles: [...new Set(roleNeeds.flatMap((need) => need.roles))] } : { auth: 'signed-in' };
  if (requirements.queryToken) access.query_token = true;
  return { access, text: `with auth configured: ${[...new Set(needs.map(describeNeed))].join(' and ')}; without auth: anyone` };
}

function response(reply: RouteDoc['responses'][number]): ZodOpenApiResponseObject {
  if (!reply.schema) return { description: reply.description };
  return {
    description: reply.description,
    content: {
      [reply.type ?? 'application/json']: { schema: reply.schema, ...(reply.example !== undefined && { example: reply.example }) },
    },
  };
}

const UNAUTHORIZED: ZodOpenApiResponseObject = {
  description:
    'auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which',
  headers: z.object({ 'WWW-Authenticate': z.string().meta({ example: 'Bearer realm="agent-stop-and-go", error="invalid_token"' }) }),
  content: { 'application/json': { schema: errorReply } },
};

const FORBIDDEN: ZodOpenApiResponseObject = {
  description: 'the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope")',
  content: { 'application/json': { schema: errorReply } },
};

function operation(route: RouteDoc): ZodOpenApiOperationObject {
  const { access, text } = accessOf(route);
  const params = Object.entries(route.pathParams ?? {});
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, reply] of Object.entries(route.responses)) responses[status] = response(reply);
  if (access.auth !== 'none') {
    responses['401'] = UNAUTHORIZED;
    if (access.auth === 'role') responses['403'] ??= FORBIDDEN;
  }
  const security: Record<string, string[]>[] =
    access.auth === 'none' ? [] : [{ [BEARER]: [] }, ...(access.query_token ? [{ [QUERY_TOKEN]: [] }] : [])];
  return {
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, `**Who may call**: ${text}.`, ...(route.onlyWhen ? [`Served only when ${route.onlyWhen}.`] : [])].join(
      '\n\n',
    ),
    security,
    'x-asg-access': access,
    requestParams: {
      ...(params.length > 0 && {
        path: z.object(Object.fromEntries(params.map(([name, description]) => [name, z.string().meta({ description })]))),
      }),
      ...(route.query && { query: route.query }),
      ...(route.headers && { header: route.headers }),
    },
    ...(route.queryJson && {
      parameters: [
        {
          name: route.queryJson.name,
          in: 'query',
          description: 'The input, as JSON.',
          content: { 'application/json': { schema: route.queryJson.schema } },
        },
      ],
    }),
    ...(route.body && {
      requestBody: {
        required: route.body.required,
        ...(route.body.description && { description: route.body.description }),
        content: {
          'application/json': {
            schema: route.body.schema,
            ...(Object.keys(route.body.examples).length > 0 && {
              examples: Object.fromEntries(Object.entries(route.body.examples).map(([name, value]) => [name, { value }])),
            }),
          },
        },
      },
    }),
    responses,
  };
}

/** Every route of the document: routes.ts and the tRPC procedures. */
export function documentedRoutes(): RouteDoc[] {
  return [...ROUTES, ...trpcRoutes()];
}

const DESCRIPTION = `An LLM agent that calls tools and stops before destructive ones until a human approves.

All bodies are JSON (at most ${BODY_LIMIT_BYTES / 1024 / 1024} MB) with snake_case fields, and strict: a field a body does not take is refused with 400 naming it. Errors are \`{"error": "…"}\`; a path that is not listed here gets 404.

**Session id.** Every conversation has a session id of 8 lowercase hex characters, in every log line and trace about it. Send \`X-Session-ID\` to choose it; without it, work that starts anew gets a new one and requests about an existing conversation use the one stored with it. Responses that know it return it in \`X-Session-ID\`.

**Authentication.** With \`auth\` configured every route needs \`Authorization: Bearer <token>\` (an API token of the config or a JWT of the configured OIDC issuer) except those marked "anyone": without a valid token the answer is 401 with \`WWW-Authenticate: Bearer\`; a token whose roles do not allow the route gets 403. Roles: \`chat\` (conversations, their events, tools, /a2a, /mcp), \`approve\` (everything under /approvals, and reading conversations), \`admin\` (everything). Each operation says what it needs, and \`x-asg-access\` says it for programs. Event streams also take the token as \`?token=\`. Every 401 and 403 is an \`auth.failed\` entry of the audit. A conversation belongs to whoever created it: \`chat\` reads and talks to its own only, \`approve\` reads every conversation, \`admin\` everything; someone else's conversation answers exactly as an unknown one. Without \`auth\` everyone is \`anonymous\` with every role, and no token is needed.

**Authorization forwarding.** Without \`auth\`, an \`Authorization\` header is forwarded as is to the services behind the gateway and on to HTTP MCP servers and A2A sub-agents; with \`auth\` it is this agent's own credential and goes no further. It is never logged, stored or echoed.

**Deadlines.** A turn may take up to \`chat.turn_timeout\`; reads up to 10 s. A service that cannot be reached gives 503: nothing was done. A turn or a decision whose outcome is not known when it is answered gives 504 (503 with \`Retry-After\` when the replica stopped and handed it on) with \`"outcome": "unknown"\` and where to look: do not send it again. A read past its deadline gives 504.

**Refusals on every route.** A request that changes state and carries a body must say \`Content-Type: application/json\` (else 415). A \`Host\` the server does not answer for gets 421 (DNS rebinding). A state-changing request, or one that opens an event stream, with an \`Origin\` that is neither the server's own nor in \`server.cors.allowed_origins\` gets 403. A path that is not valid %-encoding gets 400. While the server stops, new requests get 503 with \`Retry-After\`.`;

let built: ReturnType<typeof createDocument> | undefined;

/** The document; built on first use (not at startup) and kept, since the routes do not change. */
export function openApiDocument(): ReturnType<typeof createDocument> {
  built ??= buildDocument();
  return built;
}

function buildDocument(): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of documentedRoutes()) {
    const path = openApiPath(route.path);
    const item = paths[path] ?? {};
    paths[path] = item;
    item[route.method] = operation(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: { title: 'Agent Stop and Go', version: agentVersion(), description: DESCRIPTION },
    tags: [
      { name: 'Conversations' },
      { name: 'Approvals' },
      { name: 'Tools' },
      { name: 'Audit' },
      { name: 'Auth' },
      { name: 'Probes' },
      { name: 'A2A', description: 'The agent as an A2A server.' },
      { name: 'MCP', description: 'The agent as an MCP server.' },
      { name: 'OpenAI', description: 'The agent as an OpenAI Chat Completions model: any OpenAI client can talk to it.' },
      { name: 'tRPC', description: "The web chat's face: REST's operations as tRPC procedures." },
      { name: 'Reference' },
    ],
    components: {
      securitySchemes: {
        [BEARER]: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token of auth.tokens, or a JWT of the configured OIDC issuer (auth.jwt). Needed only when auth is configured.',
        },
        [QUERY_TOKEN]: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: "The same token as ?token=, for event streams only (a browser's EventSource cannot send headers).",
        },
      },
    },
    paths,
  });
}
