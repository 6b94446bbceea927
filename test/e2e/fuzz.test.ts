/**
 * Hostile input, fuzzed: 20,000 seeded requests against one running agent
 * (4,000 on CI, where each weighted kind still gets dozens; ASG_TEST_SIZE=full for 20,000) —
 * malformed JSON, wrong types, deep nesting, huge and one-token strings, bad ids and UUIDs, path
 * traversal, wrong methods and content types, cross-site requests (foreign Origin, foreign Host),
 * bad JSON-RPC on /a2a and /mcp, bad tRPC inputs, JSON values nested 30 to 200 levels deep and
 * huge keys wherever a face takes JSON, TRACE and odd methods on every route family — spread
 * over REST, /a2a, /trpc, /mcp, /v1 and the static files, 16 at a time over loopback, under a
 * hard deadline. The agent runs the real
 * mesh with mcp-resources and a scripted OpenAI-family model (quick answers; "add X with value N"
 * stops at an approval, so real approvals exist to aim at).
 *
 * Asserts: no 5xx; no request left unanswered; the process stays up and GET /health answers
 * within 2 s of an idle process throughout (a liveness bound against a stall, not a speed figure); no API key,
 * bearer token, stack trace or absolute path of this machine in any answer or any log line
 * the agent writes during the run; the fixed cases behave as the rules ask (a 1,000,000
 * character one-token message is answered or refused with a 4xx, a text/plain or foreign-Origin
 * approval is refused and the tool does not run, `%zz` ids are 400 on every route, a foreign
 * Host is refused on every face, `GET /conversations?limit=500` is a bounded summary); a JSON
 * value that would be stored nested deeper than its limit (32 levels) is a 400, TRACE is a 405
 * everywhere, and every read of approvals still answers 200 after the run.
 *
 * The seed is fixed and printed; ASG_FUZZ_SEED replays another one. ASG_FUZZ_SKIP (comma-
 * separated kinds, e.g. `one-token`) leaves kinds out when chasing one failure. Counts by face
 * and status and the agent's RSS before and after go to the output and to
 * `$TMPDIR/asg-fuzz-results.json`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { base64url } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, TEST_BEARER, TEST_GEMINI_KEY, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { startTestIssuer, type TestIssuer, type TestKey } from '../support/jwks-issuer.js';
import { latePolls, probeLiveness } from '../support/liveness.js';
import { resourceNames } from '../support/resources-db.js';
import { asLogLine } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { prng, type Rng } from '../support/seeded-random.js';

const SEED = Number(process.env.ASG_FUZZ_SEED ?? 20_120_012);
const SKIP = new Set((process.env.ASG_FUZZ_SKIP ?? '').split(',').filter(Boolean));
const TOTAL = sized(4_000, 20_000);
const CONCURRENCY = 16;
/** The whole fuzz phase, sending included; past it the rest of the corpus is not sent and the test fails. */
const FUZZ_DEADLINE_MS = 150_000;
/** One request: far above any honest answer here, far below "the service is stalled". */
const REQUEST_TIMEOUT_MS = 30_000;
/** The liveness bound for GET /health during the run, beyond an idle process's answer time (test/support/liveness.ts). */
const HEALTH_BOUND_MS = 2_000;
const HEALTH_EVERY_MS = 250;
/** The gateway's body limit (gateway/app/inputs.ts BODY_LIMIT_BYTES) and the documented message limit. */
const BODY_LIMIT = 1024 * 1024;
const MESSAGE_LIMIT = 1_000_000;
/** A conversation summary in a list: id, status, a title, counts and times — well under this. */
const SUMMARY_BOUND_BYTES = 2048;
/** Log lines carrying user text are capped; a line longer than this was not. */
const LOG_LINE_BOUND = 16 * 1024;
/** Answers are scanned for leaks up to this size; larger ones are counted, not kept. */
const KEEP_BODY_BYTES = 4 * 1024 * 1024;
const RESULTS_FILE = join(tmpdir(), 'asg-fuzz-results.json');
/** A fake key in the agent's environment, shaped to be found if it ever leaks. */
const TEST_OPENAI_KEY = 'test-openai-key-7e6d5c4b3a2f1e0d';

type Face = 'rest' | 'a2a' | 'trpc' | 'mcp' | 'openai' | 'static';

interface FuzzCase {
  face: Face;
  /** What the case tries, for the failure report: "bad-id", "one-token", "cross-site", … */
  kind: string;
  method: string;
  /** Sent as it is: no normalisation, so `..` and `%zz` reach the server. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** What the rules ask of this case beyond "no 5xx"; a status outside it is a failure. */
  expect?: { statuses: (status: number) => boolean; why: string };
  /** A body over the limit: the server may answer early and close while the body is still being sent. */
  mayReset?: boolean;
  /** For a 200 list answer: the body must stay within SUMMARY_BOUND_BYTES per listed conversation. */
  summaryBound?: boolean;
  /** JSON-RPC over HTTP (the A2A binding) answers errors with HTTP 200: such an answer counts as a refusal. */
  rpcErrorIsRefusal?: boolean;
  /** Checks of a 200 answer (a file outside web/dist must never be served). */
  forbiddenInBody?: string[];
}

interface FuzzResult {
  c: FuzzCase;
  status: number | 'reset' | 'timeout' | 'error';
  ms: number;
  bytes: number;
  body: string;
  headers: IncomingHttpHeaders;
  error?: string;
}

// ---------------------------------------------------------------------------------------------
// The ingredients.

const FOREIGN_ORIGINS = ['http://evil.example', 'https://attacker.test:8443', 'null', 'http://127.0.0.1.evil.example', 'file://'];
const FOREIGN_HOSTS = [
  'evil.example',
  'evil.example:80',
  'attacker.test:8080',
  '127.0.0.1.nip.io',
  'localhost.evil.example',
  '0x7f000001.evil',
];

/** Ids as they appear in a path, already percent-encoded where a raw byte could not be sent. */
const BAD_IDS = [
  '%zz',
  '%',
  '%2',
  '%00',
  'abc%00def',
  '%ff%fe',
  '%C0%AE%C0%AE',
  '..',
  '.',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%5c..%5cetc%5cpasswd',
  'x'.repeat(5000),
  '%E2%98%83',
  '%F0%9F%92%A9',
  'caf\u00e9',
  '%ED%A0%80',
  'null',
  'undefined',
  '0',
  '-1',
  '1e309',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '%27%3B%20DROP%20TABLE%20conversations%3B--',
  '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
  '%7B%7B7*7%7D%7D',
  '%24%7Bjndi%3Aldap%3A%2F%2Fx%7D',
  '%0d%0aX-Injected%3A%201',
  '%20',
  '%2F',
];

const MALFORMED_JSON = [
  '{',
  '{"message": ',
  '{"message": "unterminated',
  '[',
  ']',
  'nul',
  'tru',
  '{"message":"a",}',
  "{'message':'a'}",
  '{message:"a"}',
  '{"message":"a"}}',
  '{"message":"a"} trailing',
  '\u0000',
  '\ufeff{"message":"a"}',
  '{"message":"\\u12"}',
  '{"message":"\\x41"}',
  'NaN',
  '{"a":1e99999}',
  '--',
  '<xml/>',
  'message=hi',
  '{"__proto__":{"admin":true},"message":"hi"}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"message":"a","message":{"nested":1}}',
  '"just a string"',
  '42',
  'null',
  '[]',
  '[{"message":"a"}]',
];

const CONTENT_TYPES_NOT_JSON = [
  'text/plain',
  'text/plain;charset=UTF-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'text/html',
  'application/jsonx',
  'application/octet-stream',
];

const WRONG_METHODS = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'FOO', 'CONNECTX'];

const TRAVERSALS = [
  '/assets/../../etc/passwd',
  '/assets/../../../../../../etc/passwd',
  '/../../etc/passwd',
  '/assets/..%2f..%2f..%2fetc%2fpasswd',
  '/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/assets/%252e%252e%252fetc%252fpasswd',
  '/assets/..%5c..%5c..%5cetc%5cpasswd',
  '/assets/....//....//....//etc/passwd',
  '/assets/..%00/etc/passwd',
  '/assets/index.js%00.png',
  '/assets/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd',
  '//etc/passwd',
  '/assets//etc/passwd',
  '/assets/../../package.json',
  '/assets/..%2f..%2fpackage.json',
  '/%2e%2e/package.json',
  '/../config/agent.yaml',
  '/assets/../../../proc/self/environ',
  '/..%2f..%2f..%2fproc%2fself%2fenviron',
  '/.env',
  '/.git/config',
  '/index.html/..%2f..%2fpackage.json',
  '/assets/%zz',
  '/%zz',
  '/assets/',
  '/assets',
  '/web/dist/index.html',
  '/dist/gateway/index.js',
];
/** Text of files outside web/dist: a 200 carrying any of these served what it must not. */
const OUTSIDE_FILES = ['root:x:0:0', '"name": "agent-stop-and-go"', 'GEMINI_API_KEY', '[core]', 'mcp_servers'];

const A2A_METHODS = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'CancelTask',
  'agent/getAuthenticatedExtendedCard',
  '',
  '__proto__',
  'constructor',
  'toString',
  'rpc.discover',
  'x'.repeat(3000),
];
const MCP_METHODS = [
  'initialize',
  'tools/list',
  'tools/call',
  'resources/list',
  'prompts/list',
  'ping',
  'notifications/initialized',
  'logging/setLevel',
  'completion/complete',
  '',
  '__proto__',
  'x'.repeat(3000),
];
const TRPC_PROCEDURES = [
  'conversations.list',
  'conversations.get',
  'conversations.create',
  'conversations.send',
  'approvals.resolve',
  'approvals.pending',
  'conversation.events',
  'tools.list',
];
const TRPC_MUTATIONS = new Set(['conversations.create', 'conversations.send', 'approvals.resolve']);
const JSONRPC_VERSIONS: unknown[] = ['2.0', '1.0', '2.1', 2, 2.0, null, '', true, ['2.0'], undefined];
const JSONRPC_IDS: unknown[] = [1, 0, -1, 1.5, 1e308, '', 'id', 'x'.repeat(10_000), null, {}, [], true, { nested: [1] }, undefined];

const A2A_VERSION_HEADERS = ['0.3', '1.0', '0.3.0', '99', '', 'garbage', '1.0, 0.3'];

const oneToken = (char: string, length: number) => char.repeat(length);
const words = (bytes: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes);
const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

interface Targets {
  port: number;
  /** Conversations the generic cases may read and write. */
  conversations: string[];
  /** Pending approvals the generic cases may poke with bad bodies (decided ones answer 409). */
  approvals: string[];
  /** Pending approvals that only cross-site cases touch: they must still be pending at the end. */
  victims: string[];
  /** Conversations of their own for the huge messages, so that the generic reads stay small. */
  heavy: string[];
  assets: string[];
}

const json = (value: unknown) => JSON.stringify(value);
const JSON_HEADERS = { 'content-type': 'application/json' };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const is4xx = (status: number) => status >= 400 && status < 500;
const isBadRequest = (status: number) => status === 400;
const EXPECT_ZZ = { statuses: isBadRequest, why: '%zz ids are 400 on every route' };
const EXPECT_4XX = (why: string) => ({ statuses: is4xx, why });

/** Builds the corpus: fixed cases, then weighted random ones up to TOTAL. */
function buildCorpus(rng: Rng, t: Targets): FuzzCase[] {
  const values = fc.sample(fc.jsonValue({ maxDepth: 3 }), { seed: SEED, numRuns: 600 });
  const strings = fc.sample(fc.string({ unit: 'binary', maxLength: 60 }), { seed: SEED + 1, numRuns: 600 });
  const ownOrigin = `http://127.0.0.1:${t.port}`;
  const id = () => (rng.chance(0.5) ? rng.pick(t.conversations) : rng.pick(BAD_IDS));
  const uuid = () => (rng.chance(0.4) ? rng.pick(t.approvals) : rng.chance(0.5) ? crypto.randomUUID() : rng.pick(BAD_IDS));
  const wrongType = () => rng.pick<unknown>([rng.pick(values), 42, -0, true, null, [], {}, ['a'], { text: 'hi' }, 1e308, '']);
  // A JSON-RPC request with every part possibly missing or of the wrong type (the A2A and MCP faces).
  const jsonRpcRequest = (methods: readonly string[], params: () => unknown): Record<string, unknown> => {
    const request: Record<string, unknown> = {};
    const version = rng.pick(JSONRPC_VERSIONS);
    if (version !== undefined) request.jsonrpc = version;
    const rpcId = rng.pick(JSONRPC_IDS);
    if (rpcId !== undefined) request.id = rpcId;
    if (rng.chance(0.9)) request.method = rng.chance(0.8) ? rng.pick(methods) : wrongType();
    if (rng.chance(0.8)) request.params = rng.chance(0.6) ? params() : wrongType();
    return request;
  };
  const auth = (): Record<string, string> => (rng.chance(0.15) ? { authorization: `Bearer ${TEST_BEARER}` } : {});
  const fixed: FuzzCase[] = [];
  const random: FuzzCase[] = [];

  // --- The fixed cases (SIGTERM is covered by its own suite). ------------------------------------
  // 1. One-token messages: ~1 MB (under the documented limit) and 200 KB on every face that takes a message.
  for (const [i, size] of [MESSAGE_LIMIT, MESSAGE_LIMIT - 16, 200_000, 200_000, 200_000].entries()) {
    const text = oneToken(rng.pick(['a', 'z', '0', 'Q']), size);
    const heavy = t.heavy[i % t.heavy.length]!;
    const ok = {
      statuses: (s: number) => s === 200 || s === 201 || is4xx(s),
      why: 'a one-token message up to the limit is answered or refused with a 4xx',
    };
    fixed.push({
      face: 'rest',
      kind: 'one-token',
      method: 'POST',
      path: `/conversations/${heavy}/messages`,
      headers: JSON_HEADERS,
      body: json({ message: text }),
      expect: ok,
    });
    if (i < 2) {
      fixed.push({
        face: 'rest',
        kind: 'one-token',
        method: 'POST',
        path: '/conversations',
        headers: JSON_HEADERS,
        body: json({ message: text }),
        expect: ok,
      });
      fixed.push({
        face: 'trpc',
        kind: 'one-token',
        method: 'POST',
        path: '/trpc/conversations.send',
        headers: JSON_HEADERS,
        body: json({ conversationId: heavy, message: text }),
      });
      fixed.push({
        face: 'a2a',
        kind: 'one-token',
        method: 'POST',
        path: '/a2a',
        headers: JSON_HEADERS,
        body: json({
          jsonrpc: '2.0',
          id: i,
          method: 'message/send',
          params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] } },
        }),
      });
    }
  }
  // 2. Cross-site approvals: text/plain (a "simple" request, no preflight), a form, a foreign Origin, a foreign Host.
  for (const victim of t.victims) {
    const body = json({ approved: true });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      fixed.push({
        face: 'rest',
        kind: 'cross-site',
        method: 'POST',
        path: `/approvals/${victim}`,
        headers: { 'content-type': type },
        body: type.startsWith('application/x-www') ? 'approved=true' : body,
        expect: { statuses: (s) => s === 415, why: 'state-changing routes accept only application/json (415)' },
      });
    }
    for (const origin of FOREIGN_ORIGINS) {
      fixed.push({
        face: 'rest',
        kind: 'cross-site',
        method: 'POST',
        path: `/approvals/${victim}`,
        headers: { ...JSON_HEADERS, origin },
        body,
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      });
      fixed.push({
        face: 'trpc',
        kind: 'cross-site',
        method: 'POST',
        path: '/trpc/approvals.resolve',
        headers: { ...JSON_HEADERS, origin },
        body: json({ uuid: victim, approved: true }),
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      });
    }
    fixed.push({
      face: 'trpc',
      kind: 'cross-site',
      method: 'POST',
      path: '/trpc/approvals.resolve',
      headers: { 'content-type': 'text/plain' },
      body: json({ uuid: victim, approved: true }),
      expect: { statuses: (s) => s === 415, why: 'state-changing routes accept only application/json (415)' },
    });
    for (const host of FOREIGN_HOSTS) {
      fixed.push({
        face: 'rest',
        kind: 'cross-site',
        method: 'POST',
        path: `/approvals/${victim}`,
        headers: { ...JSON_HEADERS, host },
        body,
        expect: EXPECT_4XX('a foreign Host is refused on every face'),
      });
    }
  }
  // A foreign Host on every face (DNS rebinding reads the pending UUIDs from the list otherwise).
  for (const host of FOREIGN_HOSTS) {
    const why = 'a foreign Host is refused on REST, /a2a, /trpc and /mcp';
    fixed.push({ face: 'rest', kind: 'foreign-host', method: 'GET', path: '/conversations', headers: { host }, expect: EXPECT_4XX(why) });
    fixed.push({
      face: 'rest',
      kind: 'foreign-host',
      method: 'GET',
      path: `/conversations/${t.conversations[0]}`,
      headers: { host },
      expect: EXPECT_4XX(why),
    });
    fixed.push({
      face: 'trpc',
      kind: 'foreign-host',
      method: 'GET',
      path: `/trpc/conversations.list?input=${encodeURIComponent('{}')}`,
      headers: { host },
      expect: EXPECT_4XX(why),
    });
    fixed.push({
      face: 'a2a',
      kind: 'foreign-host',
      method: 'POST',
      path: '/a2a',
      headers: { ...JSON_HEADERS, host },
      body: json({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: t.conversations[0] } }),
      expect: EXPECT_4XX(why),
    });
    fixed.push({
      face: 'mcp',
      kind: 'foreign-host',
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, host },
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      expect: EXPECT_4XX(why),
    });
  }
  // 3. %zz on every route that takes an id.
  for (const suffix of ['', '/events', '/messages']) {
    const method = suffix === '/messages' ? 'POST' : 'GET';
    fixed.push({
      face: 'rest',
      kind: 'bad-id',
      method,
      path: `/conversations/%zz${suffix}`,
      headers: method === 'POST' ? JSON_HEADERS : {},
      body: method === 'POST' ? json({ message: 'hi' }) : undefined,
      expect: EXPECT_ZZ,
    });
  }
  fixed.push({
    face: 'rest',
    kind: 'bad-id',
    method: 'POST',
    path: '/approvals/%zz',
    headers: JSON_HEADERS,
    body: json({ approved: true }),
    expect: EXPECT_ZZ,
  });
  // 4. The size of a list: summaries, whatever the limit asked.
  for (const limit of ['500', '500', '100000', '1000']) {
    fixed.push({ face: 'rest', kind: 'list-size', method: 'GET', path: `/conversations?limit=${limit}`, summaryBound: true });
  }
  fixed.push({
    face: 'trpc',
    kind: 'list-size',
    method: 'GET',
    path: `/trpc/conversations.list?input=${encodeURIComponent(json({ limit: 500 }))}`,
    summaryBound: true,
  });

  // --- Bodies over the limit and other heavy ones: a small, fixed number. --------------------------
  for (const [face, path] of [
    ['rest', '/conversations'],
    ['rest', `/conversations/${t.conversations[1]}/messages`],
    ['a2a', '/a2a'],
    ['trpc', '/trpc/conversations.create'],
    ['mcp', '/mcp'],
  ] as const) {
    for (const extra of [1, 4096, BODY_LIMIT]) {
      const message = words(BODY_LIMIT + extra);
      const body =
        face === 'a2a' || face === 'mcp'
          ? json({ jsonrpc: '2.0', id: 1, method: face === 'a2a' ? 'message/send' : 'tools/call', params: { message } })
          : json({ message });
      fixed.push({
        face,
        kind: 'over-limit',
        method: 'POST',
        path,
        headers: face === 'mcp' ? MCP_HEADERS : JSON_HEADERS,
        body,
        mayReset: true,
        expect: EXPECT_4XX('a body over the 1 MiB limit is refused'),
        rpcErrorIsRefusal: face === 'a2a',
      });
    }
  }
  for (const depth of [1_000, 10_000, 100_000, 400_000]) {
    const deep = nested(depth);
    fixed.push({
      face: 'rest',
      kind: 'deep-nesting',
      method: 'POST',
      path: '/conversations',
      headers: JSON_HEADERS,
      body: `{"message":${deep}}`,
      mayReset: depth * 2 > BODY_LIMIT,
      expect: EXPECT_4XX('a message that is not a string is a 400'),
    });
    fixed.push({
      face: 'trpc',
      kind: 'deep-nesting',
      method: 'POST',
      path: '/trpc/conversations.send',
      headers: JSON_HEADERS,
      body: `{"conversationId":"${t.conversations[2]}","message":${deep}}`,
      mayReset: depth * 2 > BODY_LIMIT,
    });
    fixed.push({
      face: 'a2a',
      kind: 'deep-nesting',
      method: 'POST',
      path: '/a2a',
      headers: JSON_HEADERS,
      body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":${nested(depth, '{"a":', '}').replace(/\{"a":\}/, '{"a":1}')}}`,
      mayReset: depth * 6 > BODY_LIMIT,
    });
    fixed.push({
      face: 'mcp',
      kind: 'deep-nesting',
      method: 'POST',
      path: '/mcp',
      headers: MCP_HEADERS,
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":${deep}}}`,
      mayReset: depth * 2 > BODY_LIMIT,
    });
    fixed.push({
      face: 'trpc',
      kind: 'deep-nesting',
      method: 'GET',
      path: `/trpc/conversations.list?input=${encodeURIComponent(nested(Math.min(depth, 2000)))}`,
    });
  }
  fixed.push(...deepValueCases(rng, t), ...oddMethodCases(rng, t));
  for (const [face, path] of [
    ['rest', '/conversations'],
    ['a2a', '/a2a'],
    ['mcp', '/mcp'],
  ] as const) {
    const manyKeys = json(Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, i])));
    fixed.push({ face, kind: 'huge-object', method: 'POST', path, headers: face === 'mcp' ? MCP_HEADERS : JSON_HEADERS, body: manyKeys });
    fixed.push({
      face,
      kind: 'huge-string',
      method: 'POST',
      path,
      headers: face === 'mcp' ? MCP_HEADERS : JSON_HEADERS,
      body: json({ jsonrpc: '2.0', id: 'x'.repeat(500_000), method: 'x'.repeat(300_000), message: 5 }),
    });
  }

  // --- Random cases, by weight. -----------------------------------------------------------------------
  const generators: Array<[number, () => FuzzCase]> = [
    // REST: ids.
    [
      6,
      () => {
        const bad = rng.pick(BAD_IDS);
        return {
          face: 'rest',
          kind: 'bad-id',
          method: 'GET',
          path: `/conversations/${bad}`,
          headers: auth(),
          expect: bad === '%zz' ? EXPECT_ZZ : undefined,
        };
      },
    ],
    [
      4,
      () => {
        const bad = rng.pick(BAD_IDS);
        return {
          face: 'rest',
          kind: 'bad-id',
          method: 'GET',
          path: `/conversations/${bad}/events`,
          expect: bad === '%zz' ? EXPECT_ZZ : undefined,
        };
      },
    ],
    [
      4,
      () => ({
        face: 'rest',
        kind: 'bad-id',
        method: 'POST',
        path: `/conversations/${rng.pick(BAD_IDS)}/messages`,
        headers: { ...JSON_HEADERS, ...auth() },
        body: json({ message: 'list resources' }),
        expect: EXPECT_4XX('a message to an id that is no conversation is refused'),
      }),
    ],
    [
      4,
      () => ({
        face: 'rest',
        kind: 'bad-id',
        method: 'POST',
        path: `/approvals/${rng.pick(BAD_IDS)}`,
        headers: JSON_HEADERS,
        body: json({ approved: rng.chance(0.5) }),
        expect: EXPECT_4XX('an approval id that is no UUID is refused'),
      }),
    ],
    [
      2,
      () => ({
        face: 'rest',
        kind: 'bad-id',
        method: 'POST',
        path: `/approvals/${crypto.randomUUID()}`,
        headers: JSON_HEADERS,
        body: json({ approved: true }),
        expect: EXPECT_4XX('an unknown approval is refused'),
      }),
    ],
    // REST: bodies.
    [
      8,
      () => ({
        face: 'rest',
        kind: 'malformed-json',
        method: 'POST',
        path: rng.pick(['/conversations', `/conversations/${id()}/messages`, `/approvals/${uuid()}`]),
        headers: { ...JSON_HEADERS, ...auth() },
        body: rng.pick(MALFORMED_JSON),
      }),
    ],
    [
      8,
      () => ({
        face: 'rest',
        kind: 'wrong-type',
        method: 'POST',
        path: rng.pick([`/conversations/${rng.pick(t.conversations)}/messages`, `/approvals/${uuid()}`]),
        headers: JSON_HEADERS,
        body: json(rng.chance(0.5) ? { message: wrongType(), approved: wrongType() } : wrongType()),
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'wrong-type',
        method: 'POST',
        path: '/conversations',
        headers: JSON_HEADERS,
        body: json({ message: rng.pick([42, true, [], {}, ['list'], { text: 'x' }]) }),
        expect: EXPECT_4XX('a message that is not a string is a 400'),
      }),
    ],
    // Bodies are strict; a field a route does not take is a 400, whatever else the body says.
    [
      3,
      () => {
        const [path, body] = rng.pick<[string, Record<string, unknown>]>([
          ['/conversations', { message: rng.pick(strings) || 'hi' }],
          [`/conversations/${rng.pick([...t.conversations, crypto.randomUUID()])}/messages`, { message: 'list resources' }],
          [`/approvals/${rng.pick([...t.approvals, crypto.randomUUID()])}`, { approved: rng.chance(0.5) }],
        ]);
        const extra = rng.pick(['mesage', 'model', 'stream', 'comment', '__proto__x', 'x'.repeat(rng.int(1, 300)), '']);
        return {
          face: 'rest',
          kind: 'unknown-field',
          method: 'POST',
          path,
          headers: JSON_HEADERS,
          body: json({ ...body, [extra]: wrongType() }),
          expect: { statuses: (s) => s === 400, why: 'a body field the route does not take is a 400 naming it' },
        };
      },
    ],
    [
      2,
      () => ({
        face: 'rest',
        kind: 'turn',
        method: 'POST',
        path: `/conversations/${rng.pick(t.conversations)}/messages`,
        headers: { ...JSON_HEADERS, ...auth() },
        body: json({ message: rng.pick(['list resources', 'hello', rng.pick(strings) || 'hi', 'remove nothing-here']) }),
      }),
    ],
    [
      1,
      () => ({
        face: 'rest',
        kind: 'turn',
        method: 'POST',
        path: '/conversations',
        headers: JSON_HEADERS,
        body: json(rng.chance(0.5) ? {} : { message: rng.pick(strings) || 'hi' }),
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'unicode',
        method: 'POST',
        path: `/conversations/${rng.pick(t.conversations)}/messages`,
        headers: JSON_HEADERS,
        body: rng.pick([
          '{"message":"\\ud800"}',
          '{"message":"\\udfff\\ud800"}',
          '{"message":"\\u0000"}',
          '{"message":"\u202e\u0000\uffff"}',
          Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x7d]),
        ]),
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'huge-string',
        method: 'POST',
        path: `/approvals/${uuid()}`,
        headers: JSON_HEADERS,
        body: json({ approved: 'yes'.repeat(rng.int(1_000, 60_000)), answer: 'x'.repeat(rng.int(1, 50_000)) }),
      }),
    ],
    [
      6,
      () => {
        const type = rng.pick(CONTENT_TYPES_NOT_JSON);
        return {
          face: 'rest',
          kind: 'content-type',
          method: 'POST',
          path: rng.pick(['/conversations', `/conversations/${rng.pick(t.conversations)}/messages`, `/approvals/${rng.pick(t.approvals)}`]),
          headers: { 'content-type': type },
          body: json({ message: 'list resources', approved: false }),
          expect: { statuses: (s) => s === 415, why: 'state-changing routes accept only application/json (415)' },
        };
      },
    ],
    [
      2,
      () => ({
        face: 'rest',
        kind: 'content-type',
        method: 'POST',
        path: `/conversations/${rng.pick(t.conversations)}/messages`,
        headers: {
          'content-type': rng.pick([
            'application/json; charset=utf-16',
            'application/json; charset=latin1',
            'application/json; charset=bogus',
          ]),
        },
        body: json({ message: 'list resources' }),
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'cross-site',
        method: 'POST',
        path: rng.pick(['/conversations', `/conversations/${rng.pick(t.conversations)}/messages`]),
        headers: { ...JSON_HEADERS, origin: rng.pick(FOREIGN_ORIGINS) },
        body: json({ message: 'list resources' }),
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      }),
    ],
    [
      1,
      () => ({
        face: 'rest',
        kind: 'own-origin',
        method: 'POST',
        path: `/conversations/${rng.pick(t.conversations)}/messages`,
        headers: { ...JSON_HEADERS, origin: ownOrigin },
        body: json({ message: 'hello' }),
        expect: {
          statuses: (s) => s === 200 || s === 409,
          why: "the server's own origin (the web chat) keeps working (409: a turn of the conversation is still running)",
        },
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'foreign-host',
        method: rng.pick(['GET', 'POST']),
        path: rng.pick(['/conversations', '/tools', `/conversations/${rng.pick(t.conversations)}`]),
        headers: { ...JSON_HEADERS, host: rng.pick(FOREIGN_HOSTS) },
        body: '{}',
        expect: EXPECT_4XX('a foreign Host is refused on every face'),
      }),
    ],
    // REST: methods, queries, headers.
    [
      6,
      () => {
        const method = rng.pick(WRONG_METHODS);
        return {
          face: 'rest',
          kind: 'wrong-method',
          method,
          path: rng.pick([
            '/conversations',
            // DELETE of a conversation is a route: it is tried on ids nobody has, never on the
            // conversations the other requests use.
            `/conversations/${method === 'DELETE' ? uuid() : id()}`,
            `/conversations/${id()}/messages`,
            `/conversations/${id()}/events`,
            `/approvals/${uuid()}`,
            '/tools',
            '/health',
            '/docs',
          ]),
          headers: JSON_HEADERS,
          body: rng.chance(0.5) ? '{}' : undefined,
        };
      },
    ],
    [
      4,
      () => ({
        face: 'rest',
        kind: 'bad-query',
        method: 'GET',
        path: `/conversations?${rng.pick(['limit=-1', 'limit=0', 'limit=abc', 'limit=1e10', 'limit=1.5', 'limit[]=1', 'limit=1&limit=2', 'limit[a]=1', 'cursor=%zz', `cursor=${'x'.repeat(3000)}`, 'cursor=../../', 'before=%zz', 'after=-1', '__proto__[x]=1', 'limit=%00', `limit=2&cursor=${crypto.randomUUID()}`])}`,
      }),
    ],
    [
      3,
      () => ({
        face: 'rest',
        kind: 'read',
        method: 'GET',
        path: rng.pick([
          '/health',
          '/tools',
          '/docs',
          '/health?x=%zz',
          '/tools?verbose=1&verbose=2',
          `/conversations/${rng.pick(t.conversations)}`,
          '/conversations?limit=2',
        ]),
        headers: { ...auth(), accept: rng.pick(['application/json', 'text/html', '*/*', 'application/xml', '', 'garbage/!!']) },
      }),
    ],
    [
      2,
      () => ({
        face: 'rest',
        kind: 'bad-header',
        method: 'GET',
        path: rng.pick(['/tools', '/conversations?limit=1', `/conversations/${rng.pick(t.conversations)}`]),
        headers: rng.pick<Record<string, string>>([
          { 'x-session-id': 'x'.repeat(5000) },
          { 'x-session-id': '../../etc' },
          { 'x-session-id': '%zz' },
          { authorization: `Bearer ${'x'.repeat(8000)}` },
          { authorization: 'Basic %%%' },
          { traceparent: '00-zz-zz-zz' },
          { traceparent: 'x'.repeat(2000) },
          { 'accept-encoding': 'gzip;q=NaN' },
          { 'x-forwarded-for': '1.2.3.4, evil' },
          { cookie: 'a'.repeat(7000) },
        ]),
      }),
    ],
    [
      1,
      () => ({
        face: 'rest',
        kind: 'huge-url',
        method: 'GET',
        path: `/conversations/${'a'.repeat(rng.int(8_000, 90_000))}`,
        mayReset: true,
      }),
    ],
    [
      1,
      () => ({
        face: 'rest',
        kind: 'sse',
        method: 'GET',
        path: `/conversations/${rng.pick(t.conversations)}/events`,
        headers: { 'last-event-id': rng.pick(['-1', 'abc', '%zz', '1e309', 'x'.repeat(2000), '0']) },
      }),
    ],

    // A2A.
    [
      3,
      () => ({ face: 'a2a', kind: 'malformed-json', method: 'POST', path: '/a2a', headers: JSON_HEADERS, body: rng.pick(MALFORMED_JSON) }),
    ],
    [
      10,
      () => {
        const request = jsonRpcRequest(A2A_METHODS, () => a2aParams(rng, t, wrongType, strings));
        const headers: Record<string, string> = { ...JSON_HEADERS, ...auth() };
        if (rng.chance(0.3)) headers['a2a-version'] = rng.pick(A2A_VERSION_HEADERS);
        return { face: 'a2a', kind: 'json-rpc', method: 'POST', path: '/a2a', headers, body: json(request) };
      },
    ],
    [
      3,
      () => ({
        face: 'a2a',
        kind: 'batch',
        method: 'POST',
        path: '/a2a',
        headers: JSON_HEADERS,
        body: json(
          rng.pick<unknown>([
            [],
            [
              { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: rng.pick(t.conversations) } },
              { jsonrpc: '2.0', id: 2, method: 'tasks/get' },
            ],
            Array.from({ length: rng.int(2, 500) }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tasks/get', params: { id: id() } })),
            [1, 2, 3],
            [null],
            [[]],
          ]),
        ),
      }),
    ],
    [
      2,
      () => ({
        face: 'a2a',
        kind: 'content-type',
        method: 'POST',
        path: '/a2a',
        headers: { 'content-type': rng.pick(CONTENT_TYPES_NOT_JSON) },
        body: json({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: rng.pick(t.conversations) } }),
      }),
    ],
    [
      1,
      () => ({
        face: 'a2a',
        kind: 'cross-site',
        method: 'POST',
        path: '/a2a',
        headers: { ...JSON_HEADERS, origin: rng.pick(FOREIGN_ORIGINS) },
        body: json({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text: 'list resources' }] },
          },
        }),
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      }),
    ],
    [
      2,
      () => ({
        face: 'a2a',
        kind: 'wrong-method',
        method: rng.pick(['GET', ...WRONG_METHODS]),
        path: rng.pick([
          '/a2a',
          '/.well-known/agent-card.json',
          '/.well-known/agent.json',
          '/.well-known/%zz',
          '/.well-known/../../etc/passwd',
        ]),
      }),
    ],
    [
      1,
      () => ({
        face: 'a2a',
        kind: 'read',
        method: 'GET',
        path: rng.pick(['/.well-known/agent-card.json', '/.well-known/agent.json']),
        headers: auth(),
      }),
    ],

    // MCP.
    [
      3,
      () => ({ face: 'mcp', kind: 'malformed-json', method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rng.pick(MALFORMED_JSON) }),
    ],
    [
      10,
      () => {
        const request = jsonRpcRequest(MCP_METHODS, () => mcpParams(rng, wrongType, strings));
        const headers: Record<string, string> = rng.chance(0.8)
          ? { ...MCP_HEADERS }
          : { 'content-type': 'application/json', accept: rng.pick(['application/json', 'text/event-stream', '*/*', 'text/html']) };
        if (rng.chance(0.4))
          headers['mcp-protocol-version'] = rng.pick([
            '2025-03-26',
            '2025-06-18',
            '2025-11-25',
            '2026-07-28',
            '1999-01-01',
            '',
            'garbage',
            '%zz',
          ]);
        if (rng.chance(0.2))
          headers['mcp-session-id'] = rng.pick([crypto.randomUUID(), '', '%zz', '../../', 'x'.repeat(3000), '\u00e9t\u00e9']);
        Object.assign(headers, auth());
        return { face: 'mcp', kind: 'json-rpc', method: 'POST', path: '/mcp', headers, body: json(request) };
      },
    ],
    [
      3,
      () => ({
        face: 'mcp',
        kind: 'batch',
        method: 'POST',
        path: '/mcp',
        headers: MCP_HEADERS,
        body: json(
          rng.pick<unknown>([
            [],
            [
              { jsonrpc: '2.0', id: 1, method: 'ping' },
              { jsonrpc: '2.0', id: 2, method: 'tools/list' },
            ],
            Array.from({ length: rng.int(2, 300) }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })),
            [1, 'x'],
            [null],
            [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
          ]),
        ),
      }),
    ],
    [
      2,
      () => ({
        face: 'mcp',
        kind: 'wrong-method',
        method: rng.pick(['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD']),
        path: rng.pick(['/mcp', '/mcp?x=%zz', '/mcp/']),
        headers: rng.chance(0.5)
          ? ({ accept: 'text/event-stream', 'mcp-session-id': rng.pick([crypto.randomUUID(), '%zz', '']) } as Record<string, string>)
          : {},
      }),
    ],
    [
      2,
      () => ({
        face: 'mcp',
        kind: 'content-type',
        method: 'POST',
        path: '/mcp',
        headers: { 'content-type': rng.pick(CONTENT_TYPES_NOT_JSON), accept: 'application/json, text/event-stream' },
        body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    ],
    [
      1,
      () => ({
        face: 'mcp',
        kind: 'cross-site',
        method: 'POST',
        path: '/mcp',
        headers: { ...MCP_HEADERS, origin: rng.pick(FOREIGN_ORIGINS) },
        body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      }),
    ],

    // tRPC.
    [
      2,
      () => {
        const [procedure, input] = rng.pick<[string, Record<string, unknown>]>([
          ['conversations.create', { message: 'hi' }],
          ['conversations.send', { conversationId: rng.pick(t.conversations), message: 'hi' }],
          ['approvals.resolve', { uuid: rng.pick(t.approvals), approved: false }],
        ]);
        const extra = rng.pick(['mesage', 'reasons', 'stream', 'x'.repeat(rng.int(1, 300))]);
        return {
          face: 'trpc',
          kind: 'unknown-field',
          method: 'POST',
          path: `/trpc/${procedure}`,
          headers: JSON_HEADERS,
          body: json({ ...input, [extra]: wrongType() }),
          expect: { statuses: (s) => s === 400, why: 'an input field the procedure does not take is BAD_REQUEST' },
        };
      },
    ],
    [
      8,
      () => {
        const procedure = rng.chance(0.9)
          ? rng.pick(TRPC_PROCEDURES)
          : rng.pick([
              'nope',
              '%zz',
              '..%2f..%2fhealth',
              'conversations',
              'conversations.',
              '.list',
              'x'.repeat(2000),
              '__proto__.list',
              'constructor',
            ]);
        const input = rng.pick<string>([
          json(trpcInput(rng, t, procedure, wrongType)),
          json(wrongType()),
          '%zz',
          '{',
          'x'.repeat(rng.int(1, 5000)),
          encodeURIComponent(json({ id: '%zz' })),
          '',
        ]);
        const query = rng.chance(0.8)
          ? `?input=${encodeURIComponent(input)}`
          : rng.pick(['?input', '?input=', '?input=%zz', '?batch=1', '?batch=x&input=1', '']);
        return { face: 'trpc', kind: 'bad-input', method: 'GET', path: `/trpc/${procedure}${query}`, headers: auth() };
      },
    ],
    [
      4,
      () => {
        const procedures = Array.from({ length: rng.int(1, 4) }, () => rng.pick(TRPC_PROCEDURES));
        const inputs = Object.fromEntries(
          procedures.map((p, i) => [
            rng.chance(0.9) ? String(i) : rng.pick(['-1', 'x', '99', '__proto__']),
            trpcInput(rng, t, p, wrongType),
          ]),
        );
        const input = rng.chance(0.85)
          ? json(inputs)
          : rng.pick(['[1,2]', '{', json(wrongType()), json(Array.from({ length: 200 }, () => ({})))]);
        const method = procedures.some((p) => TRPC_MUTATIONS.has(p)) && rng.chance(0.5) ? 'POST' : 'GET';
        return method === 'GET'
          ? { face: 'trpc', kind: 'batch', method, path: `/trpc/${procedures.join(',')}?batch=1&input=${encodeURIComponent(input)}` }
          : { face: 'trpc', kind: 'batch', method, path: `/trpc/${procedures.join(',')}?batch=1`, headers: JSON_HEADERS, body: input };
      },
    ],
    [
      8,
      () => {
        const procedure = rng.pick([...TRPC_MUTATIONS, 'conversations.list', 'approvals.pending']);
        const body = rng.pick<string | Buffer>([
          json(trpcInput(rng, t, procedure, wrongType)),
          json(wrongType()),
          rng.pick(MALFORMED_JSON),
          '',
          json({ conversationId: id(), message: rng.pick(strings) || 'hi' }),
          json({ uuid: uuid(), approved: wrongType() }),
        ]);
        return {
          face: 'trpc',
          kind: 'mutation',
          method: 'POST',
          path: `/trpc/${procedure}`,
          headers: { ...JSON_HEADERS, ...auth() },
          body,
        };
      },
    ],
    [
      2,
      () => ({
        face: 'trpc',
        kind: 'content-type',
        method: 'POST',
        path: `/trpc/${rng.pick([...TRPC_MUTATIONS])}`,
        headers: { 'content-type': rng.pick(CONTENT_TYPES_NOT_JSON) },
        body: json({ conversationId: rng.pick(t.conversations), message: 'hello' }),
        expect: { statuses: (s) => s === 415, why: 'state-changing routes accept only application/json (415)' },
      }),
    ],
    [
      1,
      () => ({
        face: 'trpc',
        kind: 'cross-site',
        method: 'POST',
        path: '/trpc/conversations.send',
        headers: { ...JSON_HEADERS, origin: rng.pick(FOREIGN_ORIGINS) },
        body: json({ conversationId: rng.pick(t.conversations), message: 'hello' }),
        expect: { statuses: (s) => s === 403, why: 'a foreign Origin on a state-changing route is 403' },
      }),
    ],
    [
      2,
      () => ({
        face: 'trpc',
        kind: 'wrong-method',
        method: rng.pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'GET']),
        path: `/trpc/${rng.pick([...TRPC_MUTATIONS])}?input=${encodeURIComponent('{}')}`,
      }),
    ],

    // Static files.
    [
      5,
      () => ({
        face: 'static',
        kind: 'traversal',
        method: rng.pick(['GET', 'GET', 'HEAD']),
        path: rng.pick(TRAVERSALS),
        forbiddenInBody: OUTSIDE_FILES,
      }),
    ],
    [
      3,
      () => ({
        face: 'static',
        kind: 'read',
        method: 'GET',
        path: rng.pick([
          '/',
          '/index.html',
          `/assets/${rng.pick(t.assets)}`,
          `/assets/${rng.pick(t.assets)}?v=%zz`,
          '/favicon.ico',
          '/assets/nope.js',
        ]),
        headers: rng.pick<Record<string, string>>([
          {},
          { range: rng.pick(['bytes=0-10', 'bytes=-1', 'bytes=999999999-', 'bytes=5-1', 'bytes=x', 'bytes=0-1,2-3,4-5']) },
          { 'if-none-match': rng.pick(['*', '"x"', 'W/"%zz"']) },
          { 'if-modified-since': 'not a date' },
          { 'accept-encoding': 'br, gzip, x'.repeat(100) },
        ]),
      }),
    ],
    [
      2,
      () => ({
        face: 'static',
        kind: 'wrong-method',
        method: rng.pick(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']),
        path: rng.pick(['/', '/index.html', `/assets/${rng.pick(t.assets)}`]),
        headers: JSON_HEADERS,
        body: '{}',
      }),
    ],
  ];
  const weights = generators.map(([w]) => w);
  const sum = weights.reduce((a, b) => a + b, 0);
  while (fixed.length + random.length < TOTAL) {
    let r = rng.next() * sum;
    const generator =
      generators.find(([w]) => {
        r -= w;
        return r < 0;
      })?.[1] ?? generators[0]![1];
    random.push(generator());
  }
  // The fixed cases spread over the run, so that a stall they cause meets the other traffic.
  const corpus = rng.shuffle([...fixed, ...random]);
  return corpus.filter((c) => !SKIP.has(c.kind));
}

/** The limit of a stored JSON value (services/common/json-value.ts): deeper is refused where it would be stored. */
const STORED_JSON_DEPTH = 32;

/** JSON text of a value `depth` levels deep: objects (`{"a":{"a":1}}`) or arrays (`[[1]]`). */
function deepValue(depth: number, shape: 'objects' | 'arrays'): string {
  const [open, close] = shape === 'objects' ? ['{"a":', '}'] : ['[', ']'];
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

/**
 * JSON values nested 30 to 200 levels deep (around the depth where a stored value once became
 * unreadable, and far past it) and huge keys, on every face that takes a JSON value: edited
 * arguments and answers (REST, tRPC), A2A data parts, MCP tool arguments, OpenAI messages, a
 * REST message. Where the value would be stored (wrapped one level deeper than `depth`), past
 * the limit is a 400; below it the body is still wrong (arguments that do not fit the tool, an
 * approval decided meanwhile): a 4xx, never a decision. Every depth in full size, a spread of
 * them in CI.
 */
function deepValueCases(rng: Rng, t: Targets): FuzzCase[] {
  const step = sized(10, 1);
  const depths = [...new Set([31, 32, 33, 34, ...Array.from({ length: Math.floor(170 / step) + 1 }, (_, i) => 30 + i * step)])];
  const cases: FuzzCase[] = [];
  const stored = (depth: number) =>
    depth + 1 > STORED_JSON_DEPTH
      ? { statuses: isBadRequest, why: `a value to store nested deeper than ${STORED_JSON_DEPTH} levels is a 400` }
      : EXPECT_4XX('arguments that do not fit the tool (or an approval decided meanwhile) are refused');
  const values = (depth: number) => (['objects', 'arrays'] as const).map((shape) => ({ shape, value: deepValue(depth, shape) }));
  for (const depth of depths) {
    for (const { shape, value } of values(depth)) {
      const kind = `deep-${shape}`;
      const approval = rng.pick(t.approvals);
      const waiting = rng.pick(t.conversations);
      cases.push(
        {
          face: 'rest',
          kind,
          method: 'POST',
          path: `/approvals/${approval}`,
          headers: JSON_HEADERS,
          body: `{"approved":true,"arguments":{"deep":${value}}}`,
          expect: stored(depth),
        },
        {
          face: 'rest',
          kind,
          method: 'POST',
          path: `/approvals/${approval}`,
          headers: JSON_HEADERS,
          body: `{"approved":true,"input":{"deep":${value}}}`,
          expect: stored(depth),
        },
        {
          face: 'trpc',
          kind,
          method: 'POST',
          path: '/trpc/approvals.resolve',
          headers: JSON_HEADERS,
          body: `{"uuid":"${approval}","approved":true,"arguments":{"deep":${value}}}`,
          expect: stored(depth),
        },
        {
          face: 'rest',
          kind,
          method: 'POST',
          path: `/conversations/${waiting}/messages`,
          headers: JSON_HEADERS,
          body: `{"message":${value}}`,
          expect: EXPECT_4XX('a message that is not a string is a 400'),
        },
        {
          face: 'a2a',
          kind,
          method: 'POST',
          path: '/a2a',
          headers: JSON_HEADERS,
          body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"${crypto.randomUUID()}","taskId":"${waiting}","parts":[{"kind":"data","data":{"deep":${value}}}],"metadata":{"deep":${value}}}}}`,
          rpcErrorIsRefusal: true,
        },
        {
          face: 'mcp',
          kind,
          method: 'POST',
          path: '/mcp',
          headers: MCP_HEADERS,
          body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"deep":${value}}}}`,
        },
        {
          face: 'openai',
          kind,
          method: 'POST',
          path: '/v1/chat/completions',
          headers: JSON_HEADERS,
          body: `{"model":"test-agent","messages":[{"role":"user","content":${value}}]}`,
          expect: EXPECT_4XX('a message content that is no text is refused'),
        },
      );
    }
  }
  for (const size of [1_000, 100_000, sized(600_000, 900_000)]) {
    const key = json('k'.repeat(size));
    const approval = rng.pick(t.approvals);
    cases.push(
      {
        face: 'rest',
        kind: 'huge-key',
        method: 'POST',
        path: `/approvals/${approval}`,
        headers: JSON_HEADERS,
        body: `{"approved":true,"arguments":{${key}:1}}`,
        expect: EXPECT_4XX('arguments that do not fit the tool are refused'),
      },
      {
        face: 'trpc',
        kind: 'huge-key',
        method: 'POST',
        path: '/trpc/approvals.resolve',
        headers: JSON_HEADERS,
        body: `{"uuid":"${approval}","approved":true,"arguments":{${key}:1}}`,
        expect: EXPECT_4XX('arguments that do not fit the tool are refused'),
      },
      {
        face: 'a2a',
        kind: 'huge-key',
        method: 'POST',
        path: '/a2a',
        headers: JSON_HEADERS,
        body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"data","data":{${key}:1}}]}}}`,
        rpcErrorIsRefusal: true,
      },
      {
        face: 'mcp',
        kind: 'huge-key',
        method: 'POST',
        path: '/mcp',
        headers: MCP_HEADERS,
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{${key}:1}}}`,
      },
      {
        face: 'openai',
        kind: 'huge-key',
        method: 'POST',
        path: '/v1/chat/completions',
        headers: JSON_HEADERS,
        body: `{"model":"test-agent","messages":[{"role":"user","content":"hi",${key}:1}]}`,
      },
    );
  }
  return cases;
}

/** TRACE (a 405 on every path) and methods no route serves, on every route family, some with a body. */
function oddMethodCases(rng: Rng, t: Targets): FuzzCase[] {
  const id = rng.pick(t.conversations);
  const paths: Array<[Face, string]> = [
    ['rest', '/conversations'],
    ['rest', `/conversations/${id}`],
    ['rest', `/conversations/${id}/messages`],
    ['rest', `/conversations/${id}/events`],
    ['rest', '/approvals'],
    ['rest', `/approvals/${rng.pick(t.approvals)}`],
    ['rest', '/tools'],
    ['rest', '/health'],
    ['rest', '/ready'],
    ['rest', '/docs'],
    ['rest', '/openapi.json'],
    ['rest', '/metrics'],
    ['rest', '/audit'],
    ['rest', '/auth/whoami'],
    ['a2a', '/a2a'],
    ['a2a', '/.well-known/agent-card.json'],
    ['a2a', '/.well-known/agent.json'],
    ['trpc', '/trpc/conversations.list'],
    ['trpc', '/trpc/approvals.resolve'],
    ['trpc', '/trpc/conversation.events'],
    ['mcp', '/mcp'],
    ['openai', '/v1/chat/completions'],
    ['openai', '/v1/models'],
    ['static', '/'],
    ['static', '/index.html'],
    ['static', `/assets/${rng.pick(t.assets)}`],
  ];
  const cases: FuzzCase[] = [];
  for (const [face, path] of paths) {
    cases.push({
      face,
      kind: 'trace',
      method: 'TRACE',
      path,
      expect: { statuses: (s) => s === 405, why: 'TRACE is a 405 on every route' },
    });
    for (const method of ['PROPFIND', 'PURGE', 'MKCOL', 'SEARCH', 'LINK', 'PUT', 'PATCH', 'DELETE']) {
      // DELETE of a conversation is a route, not an odd method: it would delete one the other requests use.
      if (method === 'DELETE' && path === `/conversations/${id}`) continue;
      const withBody = rng.chance(0.5);
      cases.push({ face, kind: 'odd-method', method, path, headers: withBody ? JSON_HEADERS : {}, body: withBody ? '{"a":1}' : undefined });
    }
  }
  // DELETE /mcp with a body: with a session id or without, and a body in any case.
  for (const headers of [
    MCP_HEADERS,
    { ...MCP_HEADERS, 'mcp-session-id': crypto.randomUUID() },
    { ...MCP_HEADERS, 'mcp-protocol-version': '2025-03-26' },
  ]) {
    cases.push({
      face: 'mcp',
      kind: 'delete-body',
      method: 'DELETE',
      path: '/mcp',
      headers,
      body: json({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
  }
  return cases;
}

function a2aParams(rng: Rng, t: Targets, wrongType: () => unknown, strings: string[]): unknown {
  const text = rng.chance(0.3) ? rng.pick(['list resources', 'hello', 'add fuzz-a2a with value 1']) : rng.pick(strings);
  const part = rng.pick<unknown>([
    { kind: 'text', text },
    { text },
    { kind: 'file', file: { uri: 'file:///etc/passwd' } },
    { kind: 'data', data: wrongType() },
    wrongType(),
  ]);
  const message = rng.pick<unknown>([
    { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [part] },
    { role: 'ROLE_USER', messageId: crypto.randomUUID(), content: [part] },
    { kind: 'message', role: rng.pick(['agent', 'system', '', 42]), messageId: wrongType(), parts: wrongType() },
    { kind: 'message', role: 'user', parts: [part], contextId: rng.pick([...t.conversations, ...BAD_IDS]), taskId: rng.pick(BAD_IDS) },
    wrongType(),
  ]);
  return rng.pick<unknown>([
    { message },
    { id: rng.pick([...t.conversations, ...BAD_IDS]), historyLength: wrongType() },
    { id: wrongType() },
    { message, configuration: { blocking: wrongType(), acceptedOutputModes: wrongType() } },
    { name: rng.pick(['tasks/../x', '%zz', `tasks/${rng.pick(t.conversations)}`]) },
  ]);
}

function mcpParams(rng: Rng, wrongType: () => unknown, strings: string[]): unknown {
  return rng.pick<unknown>([
    {
      protocolVersion: rng.pick(['2025-03-26', '2025-06-18', '2026-07-28', 'x', 42]),
      capabilities: wrongType(),
      clientInfo: rng.pick([{ name: 'fuzz', version: '1' }, wrongType()]),
    },
    {
      name: rng.pick(['chat', 'resources_add', '', '../x', 'x'.repeat(2000), 42]),
      arguments: rng.pick<unknown>([{ message: rng.pick(strings) }, wrongType(), { message: wrongType() }]),
    },
    { _meta: wrongType(), cursor: rng.pick(['%zz', 'x'.repeat(3000), 42]) },
    { level: rng.pick(['debug', 'nope', 42]) },
    { ref: wrongType(), argument: wrongType() },
  ]);
}

function trpcInput(rng: Rng, t: Targets, procedure: string, wrongType: () => unknown): unknown {
  const id = rng.chance(0.5) ? rng.pick(t.conversations) : rng.pick([...BAD_IDS, 'x'.repeat(20_000)]);
  switch (procedure) {
    case 'conversations.list':
      return rng.pick<unknown>([
        { limit: rng.pick([-1, 0, 1.5, 1e9, '10', null]) },
        { cursor: rng.pick(['%zz', 42, 'x'.repeat(3000)]) },
        wrongType(),
      ]);
    case 'conversations.get':
    case 'conversation.events':
      return rng.pick<unknown>([{ id }, { conversationId: id, lastEventId: wrongType() }, { id: wrongType() }, wrongType()]);
    case 'conversations.send':
      return rng.pick<unknown>([
        { conversationId: id, message: wrongType() },
        { conversationId: wrongType(), message: 'hi' },
        { conversationId: id, message: 'x'.repeat(rng.int(1, 20_000)) },
        wrongType(),
      ]);
    case 'approvals.resolve':
      return rng.pick<unknown>([
        { uuid: rng.pick([...t.approvals, ...BAD_IDS]), approved: wrongType() },
        { uuid: wrongType(), approved: false },
        wrongType(),
      ]);
    default:
      return wrongType();
  }
}

// ---------------------------------------------------------------------------------------------
// Sending.

const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });

/**
 * Sends one case. A reset is sent once more on a fresh connection: on a reused keep-alive
 * connection it is the client's race with the server closing an idle socket (Node's documented
 * caveat), and on a loaded machine a fresh connection was seen reset about once in 20,000
 * requests, never twice in a row. A reset the request itself causes happens again, so the
 * second answer is the one judged.
 */
async function send(port: number, c: FuzzCase, agent: HttpAgent | false = keepAlive, timeoutMs = REQUEST_TIMEOUT_MS): Promise<FuzzResult> {
  const started = Date.now();
  const first = await sendOnce(port, c, agent, timeoutMs);
  const result = first.status === 'reset' ? await sendOnce(port, c, false, timeoutMs) : first;
  return { ...result, ms: Date.now() - started };
}

function sendOnce(
  port: number,
  c: FuzzCase,
  agent: HttpAgent | false,
  timeoutMs: number,
): Promise<FuzzResult & { reusedSocket?: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: Omit<FuzzResult, 'c' | 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ c, ms: 0, ...result, reusedSocket: req?.reusedSocket });
    };
    const headers: Record<string, string> = { ...c.headers };
    if (c.body !== undefined) headers['content-length'] = String(Buffer.byteLength(c.body));
    let req: ReturnType<typeof httpRequest> | undefined;
    try {
      req = httpRequest({ host: '127.0.0.1', port, method: c.method, path: c.path, headers, agent });
    } catch (error) {
      // The client refused to send it (a header Node will not put on the wire): a corpus mistake.
      done({ status: 'error', bytes: 0, body: '', headers: {}, error: `client refused the request: ${(error as Error).message}` });
      return;
    }
    const sent = req;
    const timer = setTimeout(() => {
      done({ status: 'timeout', bytes: 0, body: '', headers: {} });
      sent.destroy();
    }, timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const finish = () => done({ status: res.statusCode ?? 0, bytes, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
      // A stream stays open by design: its status and first event are the answer.
      const streaming = String(res.headers['content-type'] ?? '').includes('text/event-stream');
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes <= KEEP_BODY_BYTES) chunks.push(chunk);
        if (streaming) {
          finish();
          res.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
      if (streaming) {
        setTimeout(() => {
          finish();
          res.destroy();
        }, 1_000);
      }
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reset = error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === 'HPE_INVALID_CONSTANT';
      done({ status: reset ? 'reset' : 'error', bytes: 0, body: '', headers: {}, error: `${error.code ?? ''} ${error.message}` });
    });
    req.end(c.body);
  });
}

// ---------------------------------------------------------------------------------------------
// Leaks.

function leakPatterns(agent: AgentProcess): Array<[string, RegExp]> {
  const literal = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return [
    ['API key', literal(TEST_GEMINI_KEY)],
    ['API key', literal(TEST_OPENAI_KEY)],
    ['bearer token', literal(TEST_BEARER)],
    ['stack frame', /\n\s+at .+(?::\d+:\d+\)?$|\(native\))/m],
    ['stack frame', /\bat (?:async )?\S+ \((?:file:\/\/)?\/[^)]+:\d+:\d+\)/],
    ['error with a file path', /Error:[^\n]*\s\/[\w./-]+\.(?:[cm]?js|ts):\d+/],
    ['repository path', literal(REPO_ROOT)],
    ['agent directory', literal(agent.dir)],
    ['temp path', /(?<![\w.])\/tmp\/[\w.-]/],
    ['home path', /(?<![\w.])\/(?:root|home\/[\w.-]+)(?:\/|\b)/],
  ];
}

/** Pids of the agent's process tree: the node process that runs `bin/asg up --config FILE`, and its children. */
function agentProcessTree(configFile: string): { main?: number; all: number[] } {
  const parents = new Map<number, number>();
  let main: number | undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (cmdline.includes('up') && cmdline.includes(configFile) && cmdline[0]!.endsWith('node')) main = Number(entry);
    } catch {
      /* gone meanwhile */
    }
  }
  const all = main === undefined ? [] : [main];
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (all.includes(parent) && !all.includes(pid)) {
        all.push(pid);
        grew = true;
      }
    }
  }
  return { main, all };
}

function rssKb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

function memory(configFile: string) {
  const { main, all } = agentProcessTree(configFile);
  if (main === undefined) throw new Error('the agent process was not found in /proc');
  return {
    agentRssMb: Math.round(rssKb(main) / 1024),
    treeRssMb: Math.round(all.reduce((sum, pid) => sum + rssKb(pid), 0) / 1024),
    processes: all.length,
  };
}

// ---------------------------------------------------------------------------------------------

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  // An OpenAI-family model: its token counting is the real tokenizer (services/orchestrator/domain/tokens.ts),
  // the one whose byte-pair merge is quadratic in a one-token message unless bounded; other
  // providers are counted by an estimate that no input can slow down.
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { llm: { model: 'openai-gpt-4o-mini', retry: { initial_backoff: '10ms', max_backoff: '50ms' } } },
    env: { OPENAI_BASE_URL: model.openaiBaseUrl, OPENAI_API_KEY: TEST_OPENAI_KEY },
  });
});

afterAll(async () => {
  keepAlive.destroy();
  await agent?.stop();
  await model?.close();
});

describe('fuzz', () => {
  it(`${TOTAL} seeded hostile requests: no 5xx, no stall, no leak`, { timeout: 240_000 }, async () => {
    const port = Number(new URL(agent.url).port);
    const start = async (message: string) => (await post(`${agent.url}/conversations`, { message })).body;
    const conversations: string[] = [];
    const approvals: string[] = [];
    const victims: string[] = [];
    const heavy: string[] = [];
    for (let i = 0; i < 12; i++) conversations.push((await start(i % 2 ? 'list resources' : 'hello')).conversation.id);
    for (let i = 0; i < 8; i++) {
      const body = await start(`add fuzz-pool-${i} with value ${i}`);
      conversations.push(body.conversation.id);
      approvals.push(body.result.approval.uuid);
    }
    for (let i = 0; i < 3; i++) victims.push((await start(`add fuzz-victim-${i} with value ${i}`)).result.approval.uuid);
    for (let i = 0; i < 4; i++) heavy.push((await start('hello')).conversation.id);
    // Ten conversations of 60 KB each: the list must stay a summary of them (under 100 KB).
    for (let i = 0; i < 10; i++) await start(`${words(60_000)} ${i}`);
    const assets = readdirSync(join(REPO_ROOT, 'web', 'dist', 'assets'));

    const rng = prng(SEED);
    const corpus = buildCorpus(rng, { port, conversations, approvals, victims, heavy, assets });
    console.log(
      `fuzz: seed ${SEED} (ASG_FUZZ_SEED to replay), ${corpus.length} requests, ${CONCURRENCY} at a time${SKIP.size ? `, skipping ${[...SKIP].join(', ')}` : ''}`,
    );
    // Fuzz inputs never carry what the leak checks look for: a hit is the server's own text.
    const patterns = leakPatterns(agent);
    for (const c of corpus) {
      const sent = `${c.path}\n${json(c.headers ?? {})}\n${typeof c.body === 'string' ? c.body.slice(0, 200_000) : ''}`;
      for (const [what, pattern] of patterns)
        if (!c.headers?.authorization?.includes(TEST_BEARER) || what !== 'bearer token')
          expect(pattern.test(sent), `the corpus itself carries a ${what}`).toBe(false);
    }

    const before = memory(agent.configFile);
    const logOffset = agent.output().length;

    // /health throughout, beside an idle process's answer (a stall is the agent's own delay, not the machine's).
    const liveness = await probeLiveness(agent.url, { everyMs: HEALTH_EVERY_MS });

    const results: FuzzResult[] = [];
    const started = Date.now();
    const deadline = started + FUZZ_DEADLINE_MS;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < corpus.length && Date.now() < deadline) {
          const c = corpus[next++]!;
          results.push(await send(port, c, keepAlive, Math.min(REQUEST_TIMEOUT_MS, Math.max(1, deadline - Date.now()))));
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const polls = await liveness.stop();
    const health = {
      polls: polls.length,
      slowestMs: Math.max(0, ...polls.map((poll) => poll.ms)),
      late: latePolls(polls, HEALTH_BOUND_MS),
    };

    // The process is up and answers.
    const alive = agentProcessTree(agent.configFile).main !== undefined;
    // Bounded like every request here: a stalled agent must fail the test with its report, not hang it.
    const healthAfter = alive
      ? await send(port, { face: 'rest', kind: 'health', method: 'GET', path: '/health' }, false, 5_000)
      : undefined;
    const after = alive ? memory(agent.configFile) : undefined;

    // The table: face × status.
    const table = new Map<string, Map<string, number>>();
    for (const r of results) {
      const row = table.get(r.c.face) ?? new Map<string, number>();
      row.set(String(r.status), (row.get(String(r.status)) ?? 0) + 1);
      table.set(r.c.face, row);
    }
    const statuses = [...new Set(results.map((r) => String(r.status)))].sort();
    const lines = [['face', ...statuses, 'total'].map((s) => s.padStart(8)).join('')];
    for (const [face, row] of [...table].sort())
      lines.push(
        [face, ...statuses.map((s) => String(row.get(s) ?? 0)), String([...row.values()].reduce((a, b) => a + b, 0))]
          .map((s) => s.padStart(8))
          .join(''),
      );
    console.log(
      `fuzz: ${results.length} of ${corpus.length} requests in ${seconds.toFixed(1)} s; /health polled ${health.polls} times, slowest ${health.slowestMs} ms\n${lines.join('\n')}\nagent RSS before ${before.agentRssMb} MB, after ${after?.agentRssMb ?? '?'} MB (process tree: ${before.treeRssMb} → ${after?.treeRssMb ?? '?'} MB)`,
    );

    // Failures, grouped by what they are, with one sample request each.
    const failures = new Map<string, { count: number; sample: string }>();
    const fail = (group: string, r: FuzzResult | undefined, detail = '') => {
      const entry = failures.get(group) ?? {
        count: 0,
        sample: r
          ? `${r.c.method} ${r.c.path.slice(0, 160)}${r.c.headers ? ` ${json(r.c.headers).slice(0, 160)}` : ''}${r.c.body !== undefined ? ` body(${Buffer.byteLength(r.c.body)} B) ${String(r.c.body).slice(0, 80)}` : ''} → ${r.status} ${r.body.slice(0, 200)}${detail}`
          : detail,
      };
      entry.count++;
      failures.set(group, entry);
    };
    const route = (c: FuzzCase) =>
      `${c.face} ${c.method} ${c.path
        .split('?')[0]!
        .replace(/\/(?:[0-9a-f-]{36}|%zz|x{100,})(?=\/|$)/g, '/:id')
        .slice(0, 60)}`;
    for (const r of results) {
      const where = `${route(r.c)} [${r.c.kind}]`;
      if (typeof r.status === 'number' && r.status >= 500) fail(`5xx ${r.status}: ${where}`, r);
      if (r.status === 'timeout') fail(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s: ${where}`, r);
      // Node's HTTP parser answers 400 to a raw non-ASCII request target and closes, maybe while the body is still going out.
      const mayReset = r.c.mayReset || /\P{ASCII}/u.test(r.c.path);
      if (r.status === 'error' || (r.status === 'reset' && !mayReset)) fail(`connection ${r.status}: ${where}`, r, ` ${r.error ?? ''}`);
      const refusedByRpc = r.status === 200 && r.c.rpcErrorIsRefusal && /^\{"jsonrpc":"2\.0",[\s\S]*"error":\{"code":-32\d{3}/.test(r.body);
      if (typeof r.status === 'number' && r.c.expect && !r.c.expect.statuses(r.status) && !refusedByRpc)
        fail(`${r.c.expect.why}: ${where} answered ${r.status}`, r);
      if (r.status === 200 && r.c.forbiddenInBody?.some((text) => r.body.includes(text)))
        fail(`served a file outside web/dist: ${where}`, r);
      if (r.status === 200 && r.c.summaryBound) {
        let items: unknown;
        try {
          const listed = JSON.parse(r.body) as { conversations?: unknown[]; result?: { data?: { conversations?: unknown[] } } };
          items = listed.conversations ?? listed.result?.data?.conversations;
        } catch {
          /* over KEEP_BODY_BYTES, cut: far over any bound of summaries anyway */
        }
        const count = Array.isArray(items) ? items.length : 1;
        if (r.bytes > SUMMARY_BOUND_BYTES * Math.max(1, count))
          fail(`a list is summaries (≤ ${SUMMARY_BOUND_BYTES} B each): ${where}`, r, ` — ${r.bytes} bytes for ${count} conversations`);
      }
      const answer = `${json(r.headers)}\n${r.body}`;
      for (const [what, pattern] of patterns)
        if (pattern.test(answer)) fail(`${what} in an answer: ${where}`, r, ` — ${pattern.exec(answer)![0].slice(0, 120)}`);
    }
    if (results.length < corpus.length)
      fail(
        `deadline: ${corpus.length - results.length} of ${corpus.length} requests not sent within ${FUZZ_DEADLINE_MS / 1000} s`,
        undefined,
      );
    for (const poll of health.late)
      fail(
        `GET /health did not answer 200 within ${HEALTH_BOUND_MS} ms of an idle process`,
        undefined,
        `${poll.status} after ${poll.ms} ms (the idle process: ${poll.controlMs} ms)`,
      );
    if (!alive || healthAfter?.status !== 200) fail('the agent process is gone or does not answer /health after the run', undefined);

    // The log lines the agent wrote during the run.
    const log = agent.output().slice(logOffset).split('\n');
    for (const line of log) {
      const shown = line.slice(0, 300);
      for (const [what, pattern] of patterns) if (pattern.test(line)) fail(`${what} in a log line`, undefined, shown);
      if (line.length > LOG_LINE_BOUND)
        fail(`a log line longer than ${LOG_LINE_BOUND} characters`, undefined, `${line.length} chars: ${shown}`);
      const parsed = asLogLine(line);
      if (parsed?.level === 'error') fail(`an error-level log line during the run (${parsed.msg})`, undefined, shown);
    }

    // The cross-site approvals decided nothing: still pending, and the tool never ran.
    const ran = resourceNames(join(agent.dir, 'resources.db')).filter((name) => name.startsWith('fuzz-victim-'));
    if (ran.length > 0) fail('a cross-site approval ran the tool', undefined, ran.join(', '));
    for (const victim of victims) {
      const decided = await send(
        port,
        {
          face: 'rest',
          kind: 'check',
          method: 'POST',
          path: `/approvals/${victim}`,
          headers: JSON_HEADERS,
          body: json({ approved: false }),
        },
        false,
        5_000,
      );
      if (decided.status !== 200)
        fail(
          'a cross-site request decided a pending approval (or the agent did not answer)',
          undefined,
          `${victim} → ${decided.status} ${decided.body.slice(0, 200)}`,
        );
    }

    // Nothing the run sent was stored in a form that a read of approvals cannot answer.
    for (const path of [
      '/approvals',
      '/approvals?status=approved',
      '/approvals?status=pending',
      `/trpc/approvals.list?input=${encodeURIComponent('{}')}`,
    ]) {
      const read = await send(port, { face: 'rest', kind: 'check', method: 'GET', path }, false, 5_000);
      if (read.status !== 200)
        fail('every read of approvals answers 200 after the run', undefined, `${path} → ${read.status} ${read.body.slice(0, 200)}`);
    }

    const byKind: Record<string, { count: number; meanMs: number; maxMs: number }> = {};
    for (const r of results) {
      const key = `${r.c.face} ${r.c.kind}`;
      const k = byKind[key] ?? { count: 0, meanMs: 0, maxMs: 0 };
      byKind[key] = k;
      k.meanMs = (k.meanMs * k.count + r.ms) / (k.count + 1);
      k.count++;
      k.maxMs = Math.max(k.maxMs, r.ms);
    }
    const report = {
      seed: SEED,
      requests: results.length,
      planned: corpus.length,
      seconds,
      concurrency: CONCURRENCY,
      byFace: Object.fromEntries([...table].map(([face, row]) => [face, Object.fromEntries(row)])),
      health: { polls: health.polls, slowestMs: health.slowestMs, failures: health.late.length },
      rss: { before, after },
      byKind,
      failures: Object.fromEntries(failures),
    };
    writeFileSync(RESULTS_FILE, JSON.stringify(report, null, 2));
    console.log(`fuzz: results in ${RESULTS_FILE}`);
    const summary = [...failures].map(([group, { count, sample }]) => `${count} × ${group}\n    e.g. ${sample}`).join('\n');
    expect(failures.size, `fuzz failures (seed ${SEED}):\n${summary}`).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Credentials. A second agent, with `auth` (API tokens and JWTs of an issuer on
// 127.0.0.1), gets seeded garbage in the Authorization header and the `token` query parameter on
// every route: malformed schemes, near-miss tokens, forged, tampered, expired and oversized JWTs,
// and honest credentials with too few roles. Asserts: no 5xx; a bad credential is 401 with a
// WWW-Authenticate challenge wherever one is needed, a missing role 403, the right one neither;
// open routes stay open; no token or JWT (nor any part of one) in an answer, a log line or the
// audit; no error-level log line.

const AUTH_TOTAL = sized(1_500, 4_000);
const AUTH_DEADLINE_MS = 120_000;
const AUTH_ENV = {
  FUZZ_CHAT_TOKEN: 'fuzz-chat-token-1d3f5b7a9c2e4f60',
  FUZZ_APPROVE_TOKEN: 'fuzz-approve-token-8e6c4a2f0d1b3957',
  FUZZ_ADMIN_TOKEN: 'fuzz-admin-token-5b7d9f1e3c2a4068',
};

type Grant = 'chat' | 'approve' | 'admin';

/** A credential as sent, and what it is worth: null for one that must be refused (401). */
interface FuzzCredential {
  kind: string;
  /** The Authorization header value, if any. */
  header?: string;
  /** The `token` query parameter, already %-encoded, if any. */
  query?: string;
  /** The roles an honest credential carries; null: refused. */
  grants: Grant[] | null;
  /** What must never come back in an answer, a log line or the audit. */
  secrets: string[];
  /** Over Node's 16 KiB header limit: 431 before any route. */
  oversized?: boolean;
}

/** A list of grants: any one of them is enough (reading conversations: chat or approve). */
type Need = 'open' | 'signed-in' | Grant | readonly Grant[];
/** Reading conversations: their owners and the approvers; which ones is the ownership rule's. */
const READ_CONVERSATIONS: readonly Grant[] = ['chat', 'approve'];

interface AuthRoute {
  face: Face;
  method: string;
  path: () => string;
  need: Need;
  /** An event stream: the only routes where the `token` query parameter counts. */
  stream?: boolean;
  /**
   * Writes to a conversation of fuzz-admin's: a credential that may read it but not write it
   * (approve, without admin) is refused by the ownership rule with 403.
   */
  writesAdminsConversation?: boolean;
  body?: () => string;
  headers?: Record<string, string>;
  weight: number;
}

/** Long enough and varied enough that finding it in a text means it leaked. */
const isDistinctive = (text: string) => text.length >= 16 && new Set(text).size >= 8;

function authRoutes(rng: Rng, t: { conversations: string[]; approvals: string[] }): AuthRoute[] {
  const trpcInput = (value: unknown) => `input=${encodeURIComponent(json(value))}`;
  return [
    { face: 'rest', method: 'GET', path: () => '/health', need: 'open', weight: 2 },
    {
      face: 'a2a',
      method: 'GET',
      path: () => rng.pick(['/.well-known/agent-card.json', '/.well-known/agent.json']),
      need: 'open',
      weight: 1,
    },
    {
      face: 'mcp',
      method: 'GET',
      path: () => rng.pick(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']),
      need: 'open',
      weight: 1,
    },
    { face: 'rest', method: 'GET', path: () => '/auth/whoami', need: 'signed-in', weight: 3 },
    { face: 'rest', method: 'GET', path: () => '/tools', need: 'chat', weight: 3 },
    {
      face: 'rest',
      method: 'GET',
      path: () => rng.pick(['/conversations?limit=3', `/conversations/${rng.pick(t.conversations)}`]),
      need: READ_CONVERSATIONS,
      weight: 5,
    },
    {
      face: 'rest',
      method: 'POST',
      path: () => `/conversations/${rng.pick(t.conversations)}/messages`,
      need: 'chat',
      writesAdminsConversation: true,
      body: () => json({ message: 'hello' }),
      headers: JSON_HEADERS,
      weight: 1,
    },
    {
      face: 'rest',
      method: 'GET',
      path: () => `/conversations/${rng.pick(t.conversations)}/events`,
      need: READ_CONVERSATIONS,
      stream: true,
      weight: 5,
    },
    {
      face: 'rest',
      method: 'GET',
      path: () => rng.pick(['/approvals?status=pending', '/approvals?limit=2', `/approvals/${rng.pick(t.approvals)}`]),
      need: 'approve',
      weight: 5,
    },
    {
      face: 'rest',
      method: 'POST',
      path: () => `/approvals/${rng.pick(t.approvals)}`,
      need: 'approve',
      body: () => json({ approved: false, reason: 'fuzz' }),
      headers: JSON_HEADERS,
      weight: 4,
    },
    { face: 'rest', method: 'GET', path: () => '/audit?limit=3', need: 'admin', weight: 3 },
    {
      face: 'rest',
      method: rng.pick(['GET', 'POST']),
      path: () => rng.pick(['/nothing-here', '/webhooks', '/approvalsx']),
      need: 'admin',
      weight: 2,
    },
    {
      face: 'a2a',
      method: 'POST',
      path: () => '/a2a',
      need: 'chat',
      body: () => json({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: rng.pick(t.conversations) } }),
      headers: JSON_HEADERS,
      weight: 5,
    },
    {
      face: 'mcp',
      method: 'POST',
      path: () => '/mcp',
      need: 'chat',
      body: () => json({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: MCP_HEADERS,
      weight: 4,
    },
    { face: 'trpc', method: 'GET', path: () => '/trpc/tools.list', need: 'chat', weight: 2 },
    { face: 'trpc', method: 'GET', path: () => `/trpc/conversations.list?${trpcInput({ limit: 2 })}`, need: READ_CONVERSATIONS, weight: 2 },
    { face: 'trpc', method: 'GET', path: () => `/trpc/approvals.list?${trpcInput({})}`, need: 'approve', weight: 3 },
    {
      face: 'trpc',
      method: 'POST',
      path: () => '/trpc/approvals.resolve',
      need: 'approve',
      body: () => json({ uuid: rng.pick(t.approvals), approved: false }),
      headers: JSON_HEADERS,
      weight: 3,
    },
    { face: 'trpc', method: 'GET', path: () => `/trpc/approvals.pending?${trpcInput({})}`, need: 'approve', stream: true, weight: 3 },
    {
      face: 'trpc',
      method: 'GET',
      path: () => `/trpc/conversation.events?${trpcInput({ conversationId: rng.pick(t.conversations) })}`,
      need: READ_CONVERSATIONS,
      stream: true,
      weight: 3,
    },
    { face: 'trpc', method: 'GET', path: () => '/trpc/auth.whoami', need: 'signed-in', weight: 2 },
  ];
}

/** The JWTs of the run, made once: honest ones with each set of roles, and every forgery. */
async function jwtPool(issuer: TestIssuer, key: TestKey, rng: Rng): Promise<FuzzCredential[]> {
  const now = Math.floor(Date.now() / 1000);
  const stranger = await issuer.newKey('ES256', key.kid, false);
  const parts = (jwt: string) => jwt.split('.');
  const secretsOf = (jwt: string) => [jwt, ...parts(jwt).filter(isDistinctive)];
  const b64 = (value: unknown) => base64url.encode(typeof value === 'string' ? value : json(value));
  const pool: FuzzCredential[] = [];
  const add = (kind: string, jwt: string, grants: Grant[] | null) =>
    pool.push({ kind, header: `Bearer ${jwt}`, grants, secrets: secretsOf(jwt) });
  const ROLE_SETS: Grant[][] = [['chat'], ['approve'], ['admin'], ['chat', 'approve'], []];
  for (let i = 0; i < 20; i++) {
    const roles = rng.pick(ROLE_SETS);
    add('jwt-honest', await issuer.sign(key, { sub: `fuzz-user-${i}`, roles: rng.chance(0.5) ? roles : roles.join(' ') }), roles);
  }
  add('jwt-audience-list', await issuer.sign(key, { aud: ['someone', issuer.audience], roles: ['chat'] }), ['chat']);
  for (let i = 0; i < 5; i++) {
    add('jwt-expired', await issuer.sign(key, { exp: now - rng.int(60, 100_000), iat: now - 200_000 }), null);
    add(
      'jwt-audience',
      await issuer.sign(key, { aud: rng.pick(['other', '', 'agent-stop-and-go-2', issuer.audience.toUpperCase()]) }),
      null,
    );
    add('jwt-issuer', await issuer.sign(key, { iss: rng.pick(['https://evil.test', `${issuer.issuer}/`, '']) }), null);
    add('jwt-not-yet', await issuer.sign(key, { nbf: now + rng.int(3600, 100_000) }), null);
    add('jwt-bad-signature', await issuer.sign(stranger), null);
    add('jwt-none', issuer.unsigned({ roles: ['admin'] }), null);
    add('jwt-hs256-public-key', await issuer.hmacWithPublicKey(key, { roles: ['admin'] }), null);
    add('jwt-no-sub', await issuer.sign(key, { sub: undefined }), null);
    add(
      'jwt-odd-sub',
      await issuer.sign(key, {
        sub: rng.pick<unknown>([42, '', 'a\u0000b', 'x'.repeat(300), ['alice'], { name: 'a' }, '\u202e\u200b']) as string,
      }),
      null,
    );
    add('jwt-no-exp', await issuer.sign(key, { exp: undefined }), null);
    add('jwt-exp-string', await issuer.sign(key, { exp: String(now + 3600) as unknown as number }), null);
    add(
      'jwt-unknown-kid',
      await issuer.sign(key, {}, { kid: rng.pick(['nope', '../../etc/passwd', 'x'.repeat(2000), '', '%zz', '\u00e9']) }),
      null,
    );
    const honest = await issuer.sign(key, { roles: ['chat'] });
    const [header, payload, signature] = parts(honest) as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    add('jwt-tampered-payload', `${header}.${b64({ ...claims, sub: 'root', roles: ['admin'] })}.${signature}`, null);
    add(
      'jwt-tampered-alg',
      `${b64({ alg: rng.pick(['none', 'HS256', 'RS256', 'ES512', 'NONE', '']), kid: key.kid })}.${payload}.${signature}`,
      null,
    );
    add(
      'jwt-jku',
      `${b64({ alg: 'ES256', kid: 'evil', jku: 'http://127.0.0.1:1/keys', x5u: 'http://127.0.0.1:1/x5u' })}.${payload}.${signature}`,
      null,
    );
    add('jwt-crit', `${b64({ alg: 'ES256', kid: key.kid, crit: ['exp'] })}.${payload}.${signature}`, null);
    add('jwt-truncated', honest.slice(0, rng.int(10, honest.length - 2)), null);
    add('jwt-extra-segment', `${honest}.${signature}`, null);
    add('jwt-empty-signature', `${header}.${payload}.`, null);
    add(
      'jwt-garbage-segments',
      `${b64(rng.pick(['{', '[]', 'null', '"x"', '{"alg":{}}']))}.${b64(rng.pick(['{', '[]', '{"sub":1e999}', nested(500, '{"a":', '}')]))}.${b64('sig')}`,
      null,
    );
    // Under the 8 KiB a token may have: honest, with no role this agent knows.
    add(
      'jwt-big-claims',
      await issuer.sign(key, { roles: Array.from({ length: 200 }, (_, n) => `role-${n}`), pad: 'p'.repeat(rng.int(500, 2_000)) }),
      [],
    );
  }
  return pool;
}

function tokenCredentials(rng: Rng): Array<() => FuzzCredential> {
  const tokens: Array<[string, Grant[]]> = [
    [AUTH_ENV.FUZZ_CHAT_TOKEN, ['chat']],
    [AUTH_ENV.FUZZ_APPROVE_TOKEN, ['approve']],
    [AUTH_ENV.FUZZ_ADMIN_TOKEN, ['admin']],
  ];
  const refused = (kind: string, header: string, secrets: string[] = []): FuzzCredential => ({ kind, header, grants: null, secrets });
  const printable = () => Array.from({ length: rng.int(1, 80) }, () => String.fromCharCode(rng.int(0x21, 0x7e))).join('');
  return [
    () => ({ kind: 'none', grants: null, secrets: [] }),
    () => {
      const [token, grants] = rng.pick(tokens);
      return {
        kind: 'token',
        header: `${rng.pick(['Bearer', 'bearer', 'BEARER'])}${rng.pick([' ', '  '])}${token}`,
        grants,
        secrets: [token],
      };
    },
    () => {
      const [token] = rng.pick(tokens);
      const near = rng.pick([
        `${token}x`,
        token.slice(0, -1),
        token.toUpperCase(),
        ` ${token}x`,
        `${token.slice(0, 8)} ${token.slice(8)}`,
        `${token}${token}`,
        `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`,
      ]);
      return refused('token-near-miss', `Bearer ${near}`, [token]);
    },
    () => {
      const [token] = rng.pick(tokens);
      return refused(
        'scheme',
        `${rng.pick(['Basic', 'Token', 'Digest', 'Bearer:', 'Bearer,', 'Bear', 'BearerX', 'Negotiate', ''])} ${token}`,
        [token],
      );
    },
    () =>
      refused(
        'garbage',
        rng.pick([
          'Bearer',
          'Bearer ',
          'Bearer  \t',
          'Bearer a b',
          `Bearer ${printable()}`,
          printable(),
          'Bearer %zz',
          'Bearer ..',
          'Bearer null',
          'Bearer undefined',
          'Bearer eyJ',
          'Bearer ...',
          'Bearer a.b.c',
          `Bearer ${'\u00e9'.repeat(10)}`,
          'Bearer \u00ff\u00fe',
        ]),
      ),
    () => refused('long', `Bearer ${'y'.repeat(rng.int(8_193, 15_000))}`),
    () => ({ ...refused('oversized', `Bearer ${'z'.repeat(rng.int(17_000, 40_000))}`), oversized: true }),
    () => {
      const [token, grants] = rng.pick(tokens);
      return { kind: 'query-token', query: encodeURIComponent(token), grants, secrets: [token] };
    },
    () => ({
      kind: 'query-garbage',
      query: rng.pick([
        '',
        '%zz',
        encodeURIComponent(printable()),
        `${encodeURIComponent(AUTH_ENV.FUZZ_CHAT_TOKEN)}&token=x`,
        'a%00b',
        encodeURIComponent('x'.repeat(9000)),
      ]),
      grants: null,
      secrets: [AUTH_ENV.FUZZ_CHAT_TOKEN],
    }),
  ];
}

function allows(grants: Grant[], need: Need): boolean {
  if (need === 'open' || need === 'signed-in') return true;
  const anyOf: readonly Grant[] = typeof need === 'string' ? [need] : need;
  return grants.includes('admin') || anyOf.some((grant) => grants.includes(grant));
}

const needText = (need: Need): string => (typeof need === 'string' ? need : need.join(' or '));

function buildAuthCorpus(
  rng: Rng,
  t: { conversations: string[]; approvals: string[] },
  jwts: FuzzCredential[],
): Array<FuzzCase & { credential: FuzzCredential }> {
  const routes = authRoutes(rng, t);
  const makers = tokenCredentials(rng);
  const weights = routes.map((route) => route.weight);
  const sum = weights.reduce((a, b) => a + b, 0);
  const corpus: Array<FuzzCase & { credential: FuzzCredential }> = [];
  while (corpus.length < AUTH_TOTAL) {
    let r = rng.next() * sum;
    const route =
      routes.find((candidate) => {
        r -= candidate.weight;
        return r < 0;
      }) ?? routes[0]!;
    const credential = rng.chance(0.45) ? rng.pick(jwts) : rng.pick(makers)();
    // A query token on a route that is no stream is ignored: no credential at all.
    const counts = credential.query === undefined || route.stream;
    const worth = counts ? credential.grants : null;
    const path = route.path();
    const withQuery = credential.query === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}token=${credential.query}`;
    let expected: FuzzCase['expect'];
    if (credential.oversized) expected = { statuses: (s) => s === 431, why: 'a header over the limit is refused before any route (431)' };
    else if (route.need === 'open') expected = { statuses: (s) => s !== 401 && s !== 403, why: 'open routes answer without a credential' };
    else if (worth === null) expected = { statuses: (s) => s === 401, why: 'a missing or bad credential is 401' };
    else if (!allows(worth, route.need))
      expected = { statuses: (s) => s === 403, why: `a credential without the ${needText(route.need)} role is 403` };
    else if (route.writesAdminsConversation && worth.includes('approve') && !worth.includes('admin')) {
      expected = { statuses: (s) => s === 403, why: "an approver may read another's conversation but not write to it (403)" };
    } else expected = { statuses: (s) => s !== 401 && s !== 403, why: 'a credential with the role passes' };
    const headers: Record<string, string> = { ...route.headers };
    if (credential.header !== undefined) headers.authorization = credential.header;
    if (rng.chance(0.05)) headers['x-asg-via'] = rng.pick(['cli', 'CLI', 'web', 'a2a', 'x'.repeat(500)]);
    corpus.push({
      face: route.face,
      kind: `auth-${credential.kind}`,
      method: route.method,
      path: withQuery,
      headers,
      body: route.body?.(),
      expect: expected,
      rpcErrorIsRefusal: false,
      credential,
      mayReset: credential.oversized,
    });
  }
  return corpus;
}

describe('fuzz: credentials', () => {
  let issuer: TestIssuer;
  let key: TestKey;
  let secured: AgentProcess;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    key = await issuer.newKey('ES256', 'fuzz-key');
    secured = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: {
        llm: { model: 'openai-gpt-4o-mini', retry: { initial_backoff: '10ms', max_backoff: '50ms' } },
        auth: {
          tokens: [
            { name: 'fuzz-chat', token_env: 'FUZZ_CHAT_TOKEN', roles: ['chat'] },
            { name: 'fuzz-approve', token_env: 'FUZZ_APPROVE_TOKEN', roles: ['approve'] },
            { name: 'fuzz-admin', token_env: 'FUZZ_ADMIN_TOKEN', roles: ['admin'] },
          ],
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwks_url: issuer.jwksUrl },
        },
      },
      env: { OPENAI_BASE_URL: model.openaiBaseUrl, OPENAI_API_KEY: TEST_OPENAI_KEY, ...AUTH_ENV },
    });
  }, 120_000);

  afterAll(async () => {
    await secured?.stop();
    await issuer?.close();
  });

  it(`${AUTH_TOTAL} seeded credentials on every route: 401/403 as the roles say, no 5xx, no token anywhere`, {
    timeout: 240_000,
  }, async () => {
    const port = Number(new URL(secured.url).port);
    const admin = { authorization: `Bearer ${AUTH_ENV.FUZZ_ADMIN_TOKEN}` };
    const conversations: string[] = [];
    const approvals: string[] = [];
    for (let i = 0; i < 4; i++)
      conversations.push((await post(`${secured.url}/conversations`, { message: 'hello' }, admin)).body.conversation.id);
    for (let i = 0; i < 6; i++) {
      const body = (await post(`${secured.url}/conversations`, { message: `add fuzz-auth-${i} with value ${i}` }, admin)).body;
      conversations.push(body.conversation.id);
      approvals.push(body.result.approval.uuid);
    }
    const rng = prng(SEED + 15);
    const jwts = await jwtPool(issuer, key, rng);
    const corpus = buildAuthCorpus(rng, { conversations, approvals }, jwts);
    console.log(
      `fuzz: credentials, seed ${SEED + 15}, ${corpus.length} requests (${jwts.length} JWTs in the pool), ${CONCURRENCY} at a time`,
    );
    const logOffset = secured.output().length;

    const results: Array<FuzzResult & { c: (typeof corpus)[number] }> = [];
    const deadline = Date.now() + AUTH_DEADLINE_MS;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < corpus.length && Date.now() < deadline) {
          const c = corpus[next++]!;
          results.push({ ...(await send(port, c, keepAlive, Math.min(REQUEST_TIMEOUT_MS, Math.max(1, deadline - Date.now())))), c });
        }
      }),
    );

    const failures = new Map<string, { count: number; sample: string }>();
    const fail = (group: string, sample: string) => {
      const entry = failures.get(group) ?? { count: 0, sample };
      entry.count++;
      failures.set(group, entry);
    };
    const configured = Object.values(AUTH_ENV);
    const describeCase = (r: (typeof results)[number]) =>
      `${r.c.method} ${r.c.path.slice(0, 100)} [${r.c.credential.kind}] → ${r.status} ${r.body.slice(0, 160)}`;
    const byStatus = new Map<string, number>();
    for (const r of results) {
      byStatus.set(String(r.status), (byStatus.get(String(r.status)) ?? 0) + 1);
      const where = `${r.c.face} ${r.c.method} ${r.c.path.split('?')[0]!.replace(/\/[0-9a-f-]{36}(?=\/|$)/g, '/:id')} [${r.c.kind}]`;
      if (typeof r.status === 'number' && r.status >= 500) fail(`5xx: ${where}`, describeCase(r));
      if (r.status === 'timeout' || r.status === 'error' || (r.status === 'reset' && !r.c.mayReset))
        fail(`${r.status}: ${where}`, describeCase(r));
      if (typeof r.status === 'number' && r.c.expect && !r.c.expect.statuses(r.status))
        fail(`${r.c.expect.why}: ${where}`, describeCase(r));
      if (r.status === 401 && !String(r.headers['www-authenticate'] ?? '').startsWith('Bearer realm="agent-stop-and-go"'))
        fail(`401 without the challenge: ${where}`, describeCase(r));
      const answer = `${json(r.headers)}\n${r.body}`;
      for (const secret of [...configured, ...r.c.credential.secrets.filter(isDistinctive)])
        if (answer.includes(secret)) fail(`a credential in an answer: ${where}`, describeCase(r));
    }
    if (results.length < corpus.length)
      fail('deadline', `${corpus.length - results.length} of ${corpus.length} requests not sent within ${AUTH_DEADLINE_MS / 1000} s`);

    // Every credential the run sent, and the configured ones: none in a log line or the audit.
    const sent = new Set<string>(configured);
    for (const c of corpus) for (const secret of c.credential.secrets) if (isDistinctive(secret)) sent.add(secret);
    const logLines = secured.output().slice(logOffset).split('\n');
    for (const line of logLines) {
      for (const secret of sent) if (line.includes(secret)) fail('a credential in a log line', line.slice(0, 300));
      if (asLogLine(line)?.level === 'error') fail('an error-level log line', line.slice(0, 300));
    }
    const audit: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 6; page++) {
      const answer = await get(`${secured.url}/audit?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, admin);
      expect(answer.status).toBe(200);
      audit.push(...answer.body.entries.map((entry: unknown) => json(entry)));
      cursor = answer.body.next_cursor;
      if (!cursor) break;
    }
    expect(audit.some((entry) => entry.includes('"auth.failed"'))).toBe(true);
    for (const entry of audit)
      for (const secret of sent) if (entry.includes(secret)) fail('a credential in the audit', entry.slice(0, 300));

    console.log(
      `fuzz: credentials, ${results.length} answers: ${[...byStatus]
        .sort()
        .map(([status, count]) => `${status}×${count}`)
        .join(' ')}; ${audit.length} audit entries read`,
    );
    const summary = [...failures].map(([group, { count, sample }]) => `${count} × ${group}\n    e.g. ${sample}`).join('\n');
    expect(failures.size, `credential fuzz failures (seed ${SEED + 15}):\n${summary}`).toBe(0);
  });
});
