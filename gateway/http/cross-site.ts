import { isIP } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AgentConfig } from '../../services/common/config/schema.js';
import { capText, type Logger } from '../../services/common/log.js';
import { isEventStreamRoute } from '../app/route-access.js';

/**
 * The one guard in front of every face of an HTTP server (REST, events, /a2a, /trpc, /mcp, the
 * web app). A local API without authentication must not be steerable by a web
 * page its operator merely visits. Three rules, after Ollama's allowed-hosts/OLLAMA_ORIGINS
 * middleware and the MCP SDK's DNS-rebinding protection:
 *
 * 1. `Host` must be one this server answers for, else **421 Misdirected Request** (RFC 9110
 *    §15.5.20: "not able to produce a response for this host"). DNS rebinding points a name the
 *    attacker controls at 127.0.0.1; the browser then sends that name as `Host`. On a loopback
 *    address the names answered for are the loopback names, the host of `server.public_url` and
 *    `server.allowed_hosts`. On another address with `allowed_hosts` empty any Host is taken
 *    (a warning at startup says so); with `allowed_hosts` set, those, the public URL's host, the
 *    loopback names and IP addresses (rebinding needs a name, so an IP literal cannot be one).
 *    `GET /health` and `GET /ready` are exempt: probes address a pod by its IP or a name nobody configured.
 * 2. A request with an `Origin` that is neither this server's own (`scheme://Host` of the
 *    request, or the origin of `server.public_url`) nor in `server.cors.allowed_origins` (`*`:
 *    all) is refused with **403** when its method changes state or when it opens an event
 *    stream, and its preflight is refused. An event stream is a GET of a stream route (the
 *    route table's: `/conversations/:id/events`, the tRPC subscriptions) or any GET that asks
 *    for `text/event-stream`: a page on another origin cannot read one, yet each would hold a
 *    subscription open on the server (a browser's EventSource reconnects on its own, for ever).
 *    CORS headers go only to allowed foreign origins. Without `Origin` (curl, SDKs, servers)
 *    nothing changes.
 * 3. A state-changing request with a body must say `Content-Type: application/json` (or
 *    `application/*+json`), else **415**: `text/plain`, form and multipart posts are what a page
 *    can send cross-site without a preflight.
 *
 * Every refusal is `{"error": "…"}` naming the setting to change.
 */

export interface CrossSiteSettings {
  /** The address the server listens on (`host` of the config). */
  host: string;
  server: Pick<AgentConfig['server'], 'allowed_hosts' | 'public_url' | 'cors'>;
}

/** The policy when a server is built without settings (tests, tools): loopback, nothing extra. */
export const LOOPBACK_SETTINGS: CrossSiteSettings = { host: '127.0.0.1', server: { allowed_hosts: [], cors: { allowed_origins: [] } } };

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a request opens an event stream (rule 2): a stream route, or a GET that asks for one. */
function opensEventStream(req: Pick<Request, 'method' | 'path' | 'headers'>): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (isEventStreamRoute(req.method, req.path)) return true;
  return req.headers.accept?.toLowerCase().includes('text/event-stream') === true;
}

/** Request headers a browser page on an allowed origin may send (the preflight's answer). */
const CORS_ALLOWED_HEADERS = [
  'content-type',
  'authorization',
  'x-session-id',
  'a2a-version',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'trpc-accept',
];
const CORS_ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** Response headers such a page may read: the session ids the faces hand out. */
const CORS_EXPOSED_HEADERS = 'X-Session-ID, Mcp-Session-Id, Mcp-Protocol-Version';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Routes whose Host is not checked: liveness and readiness probes address pods by IP. They answer only a status. */
export const HOST_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/health', '/ready']);

interface HostName {
  /** Lowercase, without a trailing dot; IPv6 in brackets ("[::1]"). */
  name: string;
  port?: string;
}

/** "name", "name:port", "[v6]" or "[v6]:port" as a Host header or allowed_hosts entry carries it. */
export function parseHost(value: string): HostName | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]/\\\s@?#]+)(?::(\d{1,5}))?$/.exec(value.trim().toLowerCase());
  if (!match) return undefined;
  return { name: match[1]!.replace(/\.$/, ''), port: match[2] };
}

function isIpLiteral(name: string): boolean {
  return name.startsWith('[') ? isIP(name.slice(1, -1)) === 6 : isIP(name) === 4;
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || (isIP(name) === 4 && name.startsWith('127.'));
}

/** Whether the listening address is loopback-only ("0.0.0.0" and "::" are every interface). */
export function isLoopbackBinding(host: string): boolean {
  const name = host.trim().toLowerCase();
  return isLoopbackName(name) || name === '::1';
}

interface HostPattern {
  /** Exact name, or the suffix ".example.com" for "*.example.com" (subdomains only). */
  name: string;
  wildcard: boolean;
  port?: string;
}

function hostPattern(entry: string): HostPattern {
  const wildcard = entry.trim().startsWith('*.');
  const parsed = parseHost(wildcard ? entry.trim().slice(2) : entry);
  if (!parsed || parsed.name === '') {
    throw new Error(`server.allowed_hosts: ${JSON.stringify(entry)} is not a host: expected "name", "name:port" or "*.domain"`);
  }
  return { name: wildcard ? `.${parsed.name}` : parsed.name, wildcard, port: parsed.port };
}

function matches(pattern: HostPattern, host: HostName, defaultPort: string): boolean {
  if (pattern.port !== undefined && pattern.port !== (host.port ?? defaultPort)) return false;
  return pattern.wildcard ? host.name.endsWith(pattern.name) : host.name === pattern.name;
}

/** "scheme://host[:port]" lowercased, default port dropped; undefined for "null" and junk. */
export function normalizeOrigin(value: string): string | undefined {
  if (!/^https?:\/\/[^/?#\s]+$/i.test(value.trim())) return undefined;
  try {
    return new URL(value.trim()).origin;
  } catch {
    return undefined;
  }
}

export interface CrossSitePolicy {
  /** Why the Host is refused, or undefined when it is one the server answers for. */
  hostRefusal(req: Pick<Request, 'method' | 'path' | 'headers'> & { secure: boolean }): string | undefined;
  /** 'own' (same origin), 'allowed' (a listed foreign origin) or 'foreign'. */
  classifyOrigin(origin: string, req: Pick<Request, 'headers'> & { secure: boolean }): 'own' | 'allowed' | 'foreign';
}

export function crossSitePolicy(settings: CrossSiteSettings): CrossSitePolicy {
  const { server } = settings;
  const loopback = isLoopbackBinding(settings.host);
  const patterns = server.allowed_hosts.map(hostPattern);
  const publicUrl = server.public_url === undefined ? undefined : new URL(server.public_url);
  if (publicUrl) patterns.push({ name: publicUrl.hostname.toLowerCase(), wildcard: false });
  // Not loopback and nothing listed: the operator has said nothing about names; any is taken.
  const anyHost = !loopback && server.allowed_hosts.length === 0;
  const allowAll = server.cors.allowed_origins.some((entry) => entry.trim() === '*');
  const allowedOrigins = new Set(
    server.cors.allowed_origins.map((entry) => normalizeOrigin(entry)).filter((origin): origin is string => origin !== undefined),
  );
  const publicOrigin = publicUrl?.origin;

  return {
    hostRefusal(req) {
      if (anyHost) return undefined;
      if ((req.method === 'GET' || req.method === 'HEAD') && HOST_EXEMPT_PATHS.has(req.path)) return undefined;
      const header = req.headers.host;
      // HTTP/1.0 without Host: not a browser, which always sends one.
      if (header === undefined) return undefined;
      const host = parseHost(header);
      if (host) {
        if (isLoopbackName(host.name)) return undefined;
        if (!loopback && isIpLiteral(host.name)) return undefined;
        const defaultPort = req.secure ? '443' : '80';
        if (patterns.some((pattern) => matches(pattern, host, defaultPort))) return undefined;
      }
      return (
        `this server does not answer for Host ${JSON.stringify(capText(header, 100))} (refused against DNS rebinding); ` +
        'add the name clients use to server.allowed_hosts, or set server.public_url'
      );
    },
    classifyOrigin(origin, req) {
      const normalized = normalizeOrigin(origin);
      if (normalized === undefined) return allowAll ? 'allowed' : 'foreign';
      const host = req.headers.host;
      const own = host === undefined ? undefined : normalizeOrigin(`${req.secure ? 'https' : 'http'}://${host}`);
      if (normalized === own || normalized === publicOrigin) return 'own';
      return allowAll || allowedOrigins.has(normalized) ? 'allowed' : 'foreign';
    },
  };
}

/** Whether a request carries a body: `Transfer-Encoding`, or a `Content-Length` above zero. */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? '0');
  return !Number.isFinite(length) || length > 0;
}

/** application/json or application/<anything>+json, parameters (charset) allowed. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const media = header.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(media);
}

function refuse(res: Response, status: number, error: string): void {
  res.status(status).json({ error });
}

function addVary(res: Response, value: string): void {
  const existing = res.getHeader('Vary');
  res.setHeader('Vary', existing ? `${String(existing)}, ${value}` : value);
}

/**
 * The guard middleware; `settings` are the server's `host` and `server` config. Logs one warning
 * now when the server listens beyond loopback with no `allowed_hosts`.
 */
export function crossSiteGuard(settings: CrossSiteSettings, log: Logger): RequestHandler {
  const policy = crossSitePolicy(settings);
  if (!isLoopbackBinding(settings.host) && settings.server.allowed_hosts.length === 0) {
    log.warn('any Host header is accepted: the server listens beyond loopback and server.allowed_hosts is empty', {
      host: settings.host,
      hint: 'list the names clients use in server.allowed_hosts to guard against DNS rebinding',
    });
  }

  return (req: Request, res: Response, next: NextFunction) => {
    const hostProblem = policy.hostRefusal(req);
    if (hostProblem) {
      log.info('request refused', { rule: 'host', method: req.method, host: req.headers.host });
      return refuse(res, 421, hostProblem);
    }

    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (origin !== undefined) {
      addVary(res, 'Origin');
      const kind = policy.classifyOrigin(origin, req);
      if (kind === 'foreign' && (preflight || STATE_CHANGING.has(req.method) || opensEventStream(req))) {
        log.info('request refused', { rule: 'origin', method: req.method, origin });
        return refuse(
          res,
          403,
          `cross-origin request refused: Origin ${JSON.stringify(capText(origin, 100))} is not this server's own; ` +
            'a page on another origin may call this API only when its origin is listed in server.cors.allowed_origins',
        );
      }
      if (kind === 'allowed') {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
      }
      if (preflight) {
        if (kind === 'allowed') {
          res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
          res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
          res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
          addVary(res, 'Access-Control-Request-Method, Access-Control-Request-Headers');
        }
        // A same-origin page never sends a preflight; answered all the same, without CORS headers.
        res.status(204).end();
        return;
      }
    }

    if (STATE_CHANGING.has(req.method) && hasBody(req) && !isJsonContentType(req.headers['content-type'])) {
      const given = req.headers['content-type'];
      log.info('request refused', { rule: 'content-type', method: req.method, content_type: given });
      return refuse(
        res,
        415,
        `unsupported content type ${given === undefined ? '(none)' : JSON.stringify(capText(given, 100))}: ` +
          `${req.method} takes a JSON body sent with Content-Type: application/json`,
      );
    }
    next();
  };
}
