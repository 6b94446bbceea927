import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import type { Logger } from '../../services/common/log.js';
import { FakeEventFeed } from '../../test/support/fake-event-feed.js';
import type { Agent } from '../app/agent.js';
import { LISTED_ROUTES } from '../app/route-access.js';
import { setUpAuth } from '../auth/index.js';
import { createGatewayApp } from '../index.js';
import { documentedRoutes, openApiDocument, openApiPath } from './document.js';
import { examples } from './examples.js';
import * as shapes from './shapes.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

type Operation = {
  security?: Record<string, string[]>[];
  description?: string;
  'x-asg-access'?: { auth: string; roles?: string[]; query_token?: boolean };
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { examples?: Record<string, unknown> }> };
};

const document = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> };

function operationOf(method: string, path: string): Operation {
  const operation = document.paths[openApiPath(path)]?.[method];
  if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return operation;
}

/**
 * The gateway application as startGateway builds it, with every optional face on (auth with a
 * JWT issuer mounts the protected-resource metadata; MCP is on by default). Nothing is called:
 * only the routes it mounts are read.
 */
function fullGatewayApp(): Express {
  const config = configSlice(
    configSchema.parse({
      host: '127.0.0.1',
      port: 0,
      auth: {
        tokens: [{ name: 'alice', token_env: 'OPENAPI_TEST_TOKEN', roles: ['admin'] }],
        jwt: { issuer: 'https://issuer.invalid', audience: 'asg', jwks_url: 'https://issuer.invalid/jwks' },
      },
    }),
    'gateway',
  );
  const auth = setUpAuth({ config, audit: { appendAudit: async () => ({}) }, log: quiet, env: { OPENAPI_TEST_TOKEN: 'x'.repeat(32) } });
  return createGatewayApp({
    config,
    log: quiet,
    auth,
    agent: {} as Agent,
    feed: new FakeEventFeed(),
    readiness: { check: async () => ({ status: 'ready' }) },
  });
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  rawPath?: string | string[];
  handle: { stack?: Layer[] };
}

/** Every (method, path) the application mounts; `*` for a route of every method, a trailing `/*` for a prefix. */
function mountedRoutes(stack: Layer[], prefix = ''): string[] {
  const found: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths = [layer.route.path].flat();
      const methods = Object.keys(layer.route.methods).map((method) => (method === '_all' ? '*' : method));
      for (const path of paths) for (const method of methods) found.push(`${method} ${prefix}${path}`);
    } else if (layer.handle.stack) {
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      found.push(...mountedRoutes(layer.handle.stack, prefix + mount));
    } else if (typeof layer.rawPath === 'string' && layer.rawPath !== '/') {
      // Middleware under a path (tRPC): it answers everything below it.
      found.push(`* ${prefix}${layer.rawPath}/*`);
    }
  }
  return found;
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument() as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every route the gateway mounts', () => {
    const mounted = mountedRoutes((fullGatewayApp() as unknown as { router: { stack: Layer[] } }).router.stack);
    // A walk that finds nothing would prove nothing.
    expect(mounted).toEqual(
      expect.arrayContaining([
        'get /health',
        'post /approvals/:uuid',
        'get /conversations/:id/events',
        'post /a2a',
        '* /mcp',
        '* /trpc/*',
        'get /.well-known/oauth-protected-resource/mcp',
      ]),
    );
    for (const entry of mounted) {
      const [method, path] = entry.split(' ') as [string, string];
      if (path.endsWith('/*')) {
        const below = Object.keys(document.paths).filter((documented) => documented.startsWith(path.slice(0, -1)));
        expect(below.length, `${entry}: nothing below it is documented`).toBeGreaterThan(0);
        continue;
      }
      const item = document.paths[openApiPath(path)];
      expect(item, `${entry} is mounted but not in the document (gateway/openapi/routes.ts)`).toBeDefined();
      if (method === '*') expect(Object.keys(item!), entry).toContain('post');
      else expect(Object.keys(item!), `${entry} is mounted but not in the document`).toContain(method);
    }
    // And the other way: nothing documented that the gateway does not serve.
    for (const route of documentedRoutes().filter((route) => route.tag !== 'tRPC')) {
      expect(
        mounted.includes(`${route.method} ${route.path}`) || mounted.includes(`* ${route.path}`),
        `${route.method} ${route.path} is documented but not mounted`,
      ).toBe(true);
    }
  });

  it('lists every route of the access table, and every tRPC procedure', () => {
    for (const route of LISTED_ROUTES) expect(document.paths[openApiPath(route)], route).toBeDefined();
    for (const procedure of [
      'conversations.create',
      'conversations.send',
      'approvals.resolve',
      'approvals.pending',
      'conversation.events',
      'tools.list',
      'auth.whoami',
    ]) {
      expect(document.paths[`/trpc/${procedure}`], procedure).toBeDefined();
    }
  });

  it('says who may call each route, from the table the gateway enforces', () => {
    const decide = operationOf('post', '/approvals/:uuid');
    expect(decide.security).toEqual([{ bearer: [] }]);
    expect(decide['x-asg-access']).toEqual({ auth: 'role', roles: ['approve'] });
    expect(decide.description).toContain('**Who may call**: with auth configured: role approve (or admin); without auth: anyone.');
    expect(Object.keys(decide.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '409']));

    const read = operationOf('get', '/conversations/:id');
    expect(read['x-asg-access']).toEqual({ auth: 'role', roles: ['chat', 'approve'] });
    expect(operationOf('post', '/conversations/:id/messages')['x-asg-access']).toEqual({ auth: 'role', roles: ['chat'] });
    expect(operationOf('get', '/audit')['x-asg-access']).toEqual({ auth: 'role', roles: ['admin'] });
    expect(operationOf('post', '/trpc/approvals.resolve')['x-asg-access']).toEqual({ auth: 'role', roles: ['approve'] });

    const whoami = operationOf('get', '/auth/whoami');
    expect(whoami['x-asg-access']).toEqual({ auth: 'signed-in' });
    expect(Object.keys(whoami.responses)).toContain('401');
    expect(Object.keys(whoami.responses)).not.toContain('403');

    // Event streams take the token as ?token= too.
    const events = operationOf('get', '/conversations/:id/events');
    expect(events.security).toEqual([{ bearer: [] }, { query_token: [] }]);

    for (const open of ['/health', '/ready', '/docs', '/openapi.json', '/.well-known/agent-card.json']) {
      const operation = operationOf('get', open);
      expect(operation.security, open).toEqual([]);
      expect(operation['x-asg-access'], open).toEqual({ auth: 'none' });
      expect(Object.keys(operation.responses), open).not.toContain('401');
    }
  });

  it('has an example for every JSON request body of the REST, A2A and MCP routes', () => {
    for (const route of documentedRoutes().filter((route) => route.body && route.tag !== 'tRPC')) {
      const content = operationOf(route.method, route.path).requestBody?.content['application/json'];
      expect(Object.keys(content?.examples ?? {}).length, `${route.method} ${route.path}`).toBeGreaterThan(0);
    }
  });

  it('describes request bodies as strict, as the routes parse them', () => {
    const body = operationOf('post', '/conversations/:id/messages').requestBody?.content['application/json'] as {
      schema: { additionalProperties?: boolean };
    };
    expect(body.schema.additionalProperties).toBe(false);
  });

  it('shows response examples the mapping code made, which fit the documented schemas exactly', () => {
    const cases: [string, { parse(value: unknown): unknown }, unknown][] = [
      ['tools', shapes.toolListReply, examples.tools],
      ['created', shapes.conversationReply, examples.created],
      ['conversationList', shapes.conversationListReply, examples.conversationList],
      ['conversationPage', shapes.conversationPageReply, examples.conversationPage],
      ['decided', shapes.conversationReply, examples.decided],
      ['conflict', shapes.approvalConflictReply, examples.conflict],
      ['approvalList', shapes.approvalListReply, examples.approvalList],
      ['approval', shapes.approvalRecord, examples.approval],
      ['audit', shapes.auditListReply, examples.audit],
    ];
    // The schemas are strict: a field the mapping code adds and the schema lacks fails here.
    for (const [name, schema, example] of cases) expect(() => schema.parse(example), name).not.toThrow();
    expect(() => shapes.conversation.parse({ ...examples.created.conversation, surprise: 1 })).toThrow(/surprise/);
  });
});
