/**
 * `GET /ready` is open to anyone, so over every failure state it can meet — a backend
 * unreachable, silent, not serving, answering with an error that carries a stack trace and the
 * machine's paths; MCP servers down with their stderr; the tool listing itself failing; a stop
 * under way — its answer says which dependency is down in words and never shows a path or a
 * stack frame; the error behind a backend's state goes to the log. The health clients here
 * answer as the real ones do in each state (ready.test.ts and test/e2e/mcp-unavailable.test.ts
 * reach some of the same states with real services); what is fuzzed is the text of the answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import type { HealthClient } from './backends.js';
import { backendReadiness, type BackendName } from './readiness.js';

/** Text as a failing process writes it: a message, a stack trace with absolute paths, a Windows path. */
const leakyText = fc
  .tuple(fc.string({ maxLength: 20 }), fc.constantFrom('/home/alice/agent', '/usr/lib/node_modules/x', 'C:\\Users\\bob\\agent'))
  .map(
    ([words, root]) =>
      `Error: ${words} ENOENT ${root}/data/resources.db\n    at Object.openSync (node:fs:573:18)\n    at ${root}/dist/cli/main.js:12:7`,
  );

type Behaviour =
  | { kind: 'status'; status: 'SERVING' | 'NOT_SERVING' | 'UNKNOWN' | 'SERVICE_UNKNOWN' }
  | { kind: 'rpc-error'; code: GrpcStatus; message: string }
  | { kind: 'throws'; message: string };

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom('SERVING', 'NOT_SERVING', 'UNKNOWN', 'SERVICE_UNKNOWN') }),
  fc.record({
    kind: fc.constant('rpc-error' as const),
    code: fc.constantFrom(
      GrpcStatus.UNAVAILABLE,
      GrpcStatus.DEADLINE_EXCEEDED,
      GrpcStatus.NOT_FOUND,
      GrpcStatus.UNIMPLEMENTED,
      GrpcStatus.INTERNAL,
      GrpcStatus.UNKNOWN,
    ),
    message: leakyText,
  }),
  fc.record({ kind: fc.constant('throws' as const), message: leakyText }),
);

function healthClient(answer: Behaviour): HealthClient {
  const client = {
    async Check() {
      if (answer.kind === 'status') return { status: answer.status };
      if (answer.kind === 'rpc-error') throw new RpcError(answer.code, answer.message, '/grpc.health.v1.Health/Check');
      throw new Error(answer.message);
    },
  };
  return client as unknown as HealthClient;
}

const toolServers = fc.oneof(
  fc.constant(undefined),
  fc.constant('throws' as const),
  fc.array(
    fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/),
      available: fc.boolean(),
      error: leakyText,
      required: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
);

// A path of two segments or more (/home/alice, C:\Users), or a stack frame (at x (file:1:2), at file:1:2).
const ABSOLUTE_PATH = /(?:^|[\s"'(=])\/[\w.-]+\/|[A-Za-z]:\\/;
const STACK_FRAME = /\bat \S+.*:\d+:\d+|\n\s+at /;
const BACKEND_WORDS: Record<BackendName, string> = { orchestrator: 'the orchestrator', conversation_store: 'the conversation store' };

/** A logger that keeps each warning's fields, and writes nothing: 300 runs would flood the output. */
function warningsLogger(warnings: Record<string, unknown>[]): Logger {
  const quiet = () => {};
  const logger: Logger = {
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (_message, fields) => warnings.push(fields ?? {}),
    child: () => logger,
  };
  return logger;
}

/** Every string inside a JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

describe('GET /ready over its failure states', () => {
  it('says which dependency is down, in words, and never a path or a stack frame; the log gets why', async () => {
    await fc.assert(
      fc.asyncProperty(behaviour, behaviour, toolServers, fc.boolean(), async (orchestrator, store, servers, draining) => {
        const warnings: Record<string, unknown>[] = [];
        const readiness = backendReadiness(
          { orchestrator: healthClient(orchestrator), conversation_store: healthClient(store) },
          () => draining,
          servers === undefined
            ? undefined
            : async () => {
                if (servers === 'throws') throw new Error('tool listing failed at /srv/agent/dist/x.js:1:1');
                return servers as ToolServer[];
              },
          warningsLogger(warnings),
        );
        const report = await readiness.check();
        const text = JSON.stringify(report);
        expect(text).not.toMatch(ABSOLUTE_PATH);
        for (const value of strings(report)) expect(value).not.toMatch(STACK_FRAME);
        expect(text).not.toMatch(/node:fs|\.js:\d+/);
        if (draining) {
          expect(report).toEqual({ status: 'draining', error: 'the gateway is stopping and takes no new requests' });
          return;
        }
        const down = (Object.entries({ orchestrator, conversation_store: store }) as [BackendName, Behaviour][]).filter(
          ([, answer]) => !(answer.kind === 'status' && answer.status === 'SERVING'),
        );
        if (down.length > 0) {
          expect(report.status).toBe('not_ready');
          const error = (report as { error: string }).error;
          for (const [backend] of down) expect(error).toContain(BACKEND_WORDS[backend]);
          // Why each is down went to the log, the error's own text included.
          for (const [backend, answer] of down) {
            const logged = warnings.find((fields) => fields.backend === backend);
            expect(logged, `a log line for ${backend}`).toBeDefined();
            if (answer.kind !== 'status') expect(logged!.error).toBe(answer.message);
          }
          return;
        }
        expect(report.status).toBe('ready');
        const unavailable = Array.isArray(servers) ? servers.filter((server) => !server.available) : [];
        const warning = (report as { warning?: string }).warning;
        if (unavailable.length === 0) expect(warning).toBeUndefined();
        for (const server of unavailable) expect(warning).toContain(`"${server.name}"`);
      }),
      { numRuns: 300 },
    );
  });
});
