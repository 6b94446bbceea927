import { capText } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import type { Face, Role } from './principal.js';

/**
 * What each route of the gateway needs: one table for every face, read by the one
 * check in front of all routers (auth/middleware.ts).
 *
 * - open: the probes, the agent card, the OAuth protected-resource metadata, the API reference
 *   (/docs and /openapi.json) and the web chat's files — they hold no data, and a browser loads
 *   the page before it can sign in;
 * - `chat`: conversations (create, list, read, send, their event streams), the tool list, and
 *   the A2A and MCP endpoints and the OpenAI-compatible face under /v1 (a decision made through those is checked again where it is made:
 *   app/decision-guard.ts);
 * - `chat` or `approve`: reading conversations (listing, reading one, its event stream) — an
 *   approver needs the context of what it decides. Which conversations a caller may read or
 *   write is the application layer's rule (app/ownership.ts): this table only says who may ask;
 * - `approve`: everything under /approvals (reading and deciding) and the tRPC `approvals.*`;
 * - `admin`: /audit, /metrics (what the agent does, summed over every caller —
 *   open instead when the configuration says `metrics.public: true`, for a scraper inside a
 *   trusted network), and any route this table does not know (new routes stay closed until
 *   they are listed here);
 * - signed in, any role: /auth/whoami and tRPC `auth.*`.
 *
 * Paths match as Express routes them: case-insensitively, one trailing slash ignored.
 */

/** `role`: any one of `roles` is enough (and `admin` always is). */
export type Need = { kind: 'open' } | { kind: 'signed-in' } | { kind: 'role'; roles: readonly Role[] };

const OPEN: Need = { kind: 'open' };
const SIGNED_IN: Need = { kind: 'signed-in' };
const role = (...names: Role[]): Need => ({ kind: 'role', roles: names });
/** Reading conversations: their owners (chat) and approvers (approve); app/ownership.ts says which. */
const READ_CONVERSATIONS = role('chat', 'approve');

interface PathRule {
  route: string;
  need: Need;
  /** What a GET or HEAD needs, when it is not `need`. */
  read?: Need;
  face?: Face;
  /** The route is an event stream on GET (the `token` query parameter is taken there). */
  stream?: boolean;
  /** Matches everything below the route too. */
  prefix?: boolean;
  /** Open instead of `need` when the configuration's `metrics.public` is true. */
  publicWithMetrics?: boolean;
}

export const AUTH_WHOAMI_PATH = '/auth/whoami';
export const METRICS_PATH = '/metrics';
export const PROTECTED_RESOURCE_PATHS = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'];

const PATH_RULES: PathRule[] = [
  { route: '/health', need: OPEN },
  { route: '/ready', need: OPEN },
  { route: '/docs', need: OPEN },
  { route: '/docs/scalar.js', need: OPEN },
  { route: '/openapi.json', need: OPEN },
  { route: '/.well-known/agent-card.json', need: OPEN, face: 'a2a' },
  { route: '/.well-known/agent.json', need: OPEN, face: 'a2a' },
  ...PROTECTED_RESOURCE_PATHS.map((route): PathRule => ({ route, need: OPEN, face: 'mcp' })),
  { route: AUTH_WHOAMI_PATH, need: SIGNED_IN },
  { route: '/tools', need: role('chat') },
  { route: '/conversations', need: role('chat'), read: READ_CONVERSATIONS },
  { route: '/conversations/:id', need: role('chat'), read: READ_CONVERSATIONS },
  { route: '/conversations/:id/messages', need: role('chat') },
  { route: '/conversations/:id/events', need: READ_CONVERSATIONS, stream: true },
  // A run's journal is read as its conversation is.
  { route: '/conversations/:id/runs', need: READ_CONVERSATIONS },
  { route: '/runs/:run_id', need: READ_CONVERSATIONS },
  // A fork is a new conversation of the caller's: chatting, of a run the caller may read.
  { route: '/runs/:run_id/fork', need: role('chat') },
  { route: '/approvals', need: role('approve') },
  { route: '/approvals/:uuid', need: role('approve') },
  // Whatever comes below them later, the same.
  { route: '/approvals', need: role('approve'), prefix: true },
  { route: '/audit', need: role('admin'), prefix: true },
  { route: METRICS_PATH, need: role('admin'), publicWithMetrics: true },
  { route: '/a2a', need: role('chat'), face: 'a2a' },
  { route: '/mcp', need: role('chat'), face: 'mcp' },
  // The OpenAI-compatible face: chatting, and the agent as a model; whatever else comes below /v1, the same.
  { route: '/v1', need: role('chat'), face: 'openai', prefix: true },
];

const TRPC_PREFIX = '/trpc/';

/** The routes the table names (not those it matches by prefix), for the check that the OpenAPI document lists each. */
export const LISTED_ROUTES: readonly string[] = [...new Set(PATH_RULES.filter((rule) => !rule.prefix).map((rule) => rule.route))];

/** tRPC procedures that need other than their router: the reads of conversations. */
const TRPC_PROCEDURES: Record<string, Need> = {
  'conversations.list': READ_CONVERSATIONS,
  'conversations.get': READ_CONVERSATIONS,
  'conversation.events': READ_CONVERSATIONS,
  'runs.list': READ_CONVERSATIONS,
  'runs.get': READ_CONVERSATIONS,
  // A fork is a new conversation of the caller's, as REST's POST /runs/:run_id/fork.
  'runs.fork': role('chat'),
};

/** The tRPC routers and what their procedures need; a procedure of any other router needs admin. */
const TRPC_ROUTERS: Record<string, Need> = {
  conversations: role('chat'),
  conversation: role('chat'),
  tools: role('chat'),
  approvals: role('approve'),
  runs: READ_CONVERSATIONS,
  audit: role('admin'),
  auth: SIGNED_IN,
};

/** tRPC subscriptions (SSE): where the `token` query parameter is taken. */
const TRPC_SUBSCRIPTIONS: ReadonlySet<string> = new Set(['approvals.pending', 'conversation.events']);

function compile(rule: PathRule): RegExp {
  const body = rule.route
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}${rule.prefix ? '(?:/.*)?' : '/?'}$`, 'i');
}

const COMPILED = PATH_RULES.map((rule) => ({ rule, pattern: compile(rule) }));

export interface RouteRequirements {
  /** Every one of them must be met (a tRPC batch has one per procedure). */
  needs: Need[];
  /** The face the request comes through: the `via` of a decision it makes. */
  face: Face;
  /** "POST /approvals/:uuid": the audit entry's subject for a refusal. */
  subject: string;
  /**
   * The token may come as the `token` query parameter: event streams only, since a browser's
   * EventSource cannot send an Authorization header.
   */
  queryToken: boolean;
}

/** What a request needs; `isStatic` says whether a GET path is one of the web chat's files. */
export function requirementsOf(
  method: string,
  path: string,
  isStatic: (path: string) => boolean = () => false,
  viaHeader?: string,
  publicMetrics = false,
): RouteRequirements {
  const route = routeRequirements(method, path, isStatic, publicMetrics);
  return route.face === 'rest' && viaHeader?.trim().toLowerCase() === 'cli' ? { ...route, face: 'cli' } : route;
}

function routeRequirements(method: string, path: string, isStatic: (path: string) => boolean, publicMetrics: boolean): RouteRequirements {
  const upper = method.toUpperCase();
  const reading = upper === 'GET' || upper === 'HEAD';
  if (path.toLowerCase().startsWith(TRPC_PREFIX)) return trpcRequirements(upper, path);
  for (const { rule, pattern } of COMPILED) {
    if (pattern.test(path)) {
      const need = publicMetrics && rule.publicWithMetrics ? OPEN : reading && rule.read ? rule.read : rule.need;
      return {
        needs: [need],
        face: rule.face ?? 'rest',
        subject: `${upper} ${rule.route}`,
        queryToken: Boolean(rule.stream) && upper === 'GET',
      };
    }
  }
  const subject = `${upper} ${redactSecrets(capText(path, 200))}`;
  if (reading && isStatic(path)) return { needs: [OPEN], face: 'rest', subject, queryToken: false };
  return { needs: [role('admin')], face: 'rest', subject, queryToken: false };
}

/**
 * Whether a GET (or HEAD) opens one of the gateway's event streams: a route the table marks as
 * a stream, or a tRPC call that names a subscription (alone, or in a batch). The cross-site
 * guard refuses these to foreign origins (http/cross-site.ts).
 */
export function isEventStreamRoute(method: string, path: string): boolean {
  const upper = method.toUpperCase();
  if (upper !== 'GET' && upper !== 'HEAD') return false;
  if (path.toLowerCase().startsWith(TRPC_PREFIX)) return trpcProcedures(path).some((name) => TRPC_SUBSCRIPTIONS.has(name));
  return COMPILED.some(({ rule, pattern }) => rule.stream === true && pattern.test(path));
}

/** A table's own entry: a name like "constructor" finds nothing, not Object's. */
function ownEntry(table: Record<string, Need>, name: string): Need | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** The procedures a `/trpc/…` path names: tRPC decodes the path and splits a batch at ",", and so does every check. */
function trpcProcedures(path: string): string[] {
  try {
    return decodeURIComponent(path.slice(TRPC_PREFIX.length)).split(',');
  } catch {
    return [];
  }
}

function trpcRequirements(method: string, path: string): RouteRequirements {
  const procedures = trpcProcedures(path);
  // A batch needs what each of its procedures needs.
  const needs = procedures.map((name) => ownEntry(TRPC_PROCEDURES, name) ?? ownEntry(TRPC_ROUTERS, name.split('.')[0]!) ?? role('admin'));
  return {
    needs: needs.length > 0 ? needs : [role('admin')],
    face: 'web',
    subject: `${method} /trpc/${redactSecrets(capText(procedures.join(','), 200))}`,
    queryToken: method === 'GET' && procedures.length === 1 && TRPC_SUBSCRIPTIONS.has(procedures[0]!),
  };
}
