import { VIA_HEADER } from '../gateway/app/decider.js';
import type { ApprovalListReply, ConversationReply, VoteRecordedReply } from '../gateway/app/replies.js';
import type { ApprovalRecordJson } from '../gateway/app/shapes.js';
import { agentVersion } from '../gateway/app/version.js';
import type { RunJson, RunListReply } from '../gateway/app/run-shapes.js';

/**
 * The agent's REST API as `asg approvals` uses it: a few calls over fetch, each failure turned
 * into an ApiFailure whose exit code and message say what went wrong and what to do. The token
 * travels only in the Authorization header; no message ever contains it.
 */

/** Exit codes of `asg approvals` (documented in its help text). */
const EXIT = {
  ok: 0,
  /** The agent failed (5xx) or answered something this CLI does not understand. */
  failed: 1,
  /** Bad usage, or input the agent refused (400). */
  usage: 2,
  /** The agent could not be reached (refused, unknown host, timed out). */
  unreachable: 3,
  /** Not signed in (401) or not allowed (403). */
  denied: 4,
  /** No such approval, run or conversation (404). */
  notFound: 5,
  /** The approval was decided already, or expired; a fork of a step outside its run, or of a run that cannot be forked (409). */
  conflict: 6,
} as const;

class ApiFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** A command line this CLI refuses before asking the agent anything (exit 2). */
export class UsageError extends Error {}

/** Where a command's output goes: stdout and stderr, or a test's buffers. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/**
 * The exit code of `asg <command>` for what it threw, told on stderr: the agent's refusal with
 * its own code, a usage error (parseArgs's own refusals, an unknown option or a missing value,
 * included) with a pointer to the help. Anything else is a bug, and is thrown on.
 */
function failureExit(command: string, error: unknown, io: Output): number {
  if (error instanceof ApiFailure) {
    io.err(`asg ${command}: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof UsageError || (error as { code?: unknown }).code?.toString().startsWith('ERR_PARSE_ARGS')) {
    io.err(`asg ${command}: ${(error as Error).message}\nRun asg ${command} --help for the options.\n`);
    return EXIT.usage;
  }
  throw error;
}

export interface ApiTarget {
  /** The agent's base URL, e.g. http://127.0.0.1:8080 (no trailing slash needed). */
  url: string;
  token?: string;
}

export const DEFAULT_AGENT_URL = 'http://127.0.0.1:8080';

/** The agent's URL: the option's, else $ASG_URL, else DEFAULT_AGENT_URL; undefined when it is no http(s) URL. */
function agentUrlOf(given: string | undefined, env: NodeJS.ProcessEnv): { url: string; valid: boolean } {
  const url = given ?? (env.ASG_URL || DEFAULT_AGENT_URL);
  try {
    const { protocol } = new URL(url);
    return { url, valid: protocol === 'http:' || protocol === 'https:' };
  } catch {
    return { url, valid: false };
  }
}

/**
 * The frame every `asg <group>` command shares: its arguments parsed, the help (exit 2 when no
 * command is given), the agent to call — `target()`: --url or $ASG_URL (an http(s) URL, else a
 * usage error) with --token or $ASG_TOKEN — and a failure's exit code (failureExit).
 */
export async function commandGroup<V extends { help?: boolean | undefined; url?: string | undefined; token?: string | undefined }>(
  group: string,
  help: string,
  parse: () => { values: V; positionals: string[] },
  env: NodeJS.ProcessEnv,
  io: Output,
  perform: (command: string, rest: string[], values: V, target: () => ApiTarget) => Promise<void>,
): Promise<number> {
  try {
    const { values, positionals } = parse();
    const [command, ...rest] = positionals;
    if (values.help || command === undefined || command === 'help') {
      io.out(help);
      return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
    }
    const target = (): ApiTarget => {
      const { url, valid } = agentUrlOf(values.url, env);
      if (!valid) throw new UsageError(`--url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
      const token = values.token ?? (env.ASG_TOKEN || undefined);
      return { url, ...(token && { token }) };
    };
    await perform(command, rest, values, target);
    return EXIT.ok;
  } catch (error) {
    return failureExit(group, error, io);
  }
}

/** Reads are single store queries; a decision runs a turn and may take as long as the agent's turn deadline. */
const READ_TIMEOUT_MS = 30_000;

export interface DecisionBody {
  approved: boolean;
  reason?: string;
  arguments?: Record<string, unknown>;
  /** The answer to an MCP server's question (an approval of kind input). */
  input?: Record<string, unknown>;
}

export interface ApprovalsApi {
  list(query: {
    status?: string;
    conversationId?: string;
    needsMyVote?: boolean;
    limit?: number;
    cursor?: string;
  }): Promise<ApprovalListReply>;
  show(uuid: string): Promise<ApprovalRecordJson>;
  /** A decision, or (202) a vote that did not complete the approval's quorum. */
  decide(uuid: string, body: DecisionBody): Promise<ConversationReply | VoteRecordedReply>;
  /** Who the token is (GET /auth/whoami): the principal, as decided_by and votes name it. */
  whoami(): Promise<{ principal: string }>;
}

/** One REST call of the CLI: its JSON answer (undefined for 204), or an ApiFailure. */
export type RestCall = <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<T>;

/** The REST calls of the CLI to one agent: labelled `cli` (the agent records decisions and deletions as made through it). */
export function restCaller(target: ApiTarget): RestCall {
  const base = target.url.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'user-agent': `asg-cli/${agentVersion()}`, [VIA_HEADER]: 'cli', accept: 'application/json' };
  if (target.token) headers.authorization = `Bearer ${target.token}`;

  return async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    } else {
      init.signal = AbortSignal.timeout(READ_TIMEOUT_MS);
    }
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, init);
    } catch (error) {
      throw new ApiFailure(unreachableMessage(base, error), EXIT.unreachable);
    }
    if (response.status === 204) return undefined as T;
    const text = await response.text().catch(() => '');
    const parsed = parseJson(text);
    if (response.ok && parsed !== undefined) return parsed as T;
    throw failureOf(response.status, parsed, text, `${method} ${path}`);
  };
}

export function approvalsApi(target: ApiTarget): ApprovalsApi {
  const call = restCaller(target);
  return {
    list({ status, conversationId, needsMyVote, limit, cursor }) {
      const query = new URLSearchParams();
      if (status) query.set('status', status);
      if (conversationId) query.set('conversation_id', conversationId);
      if (needsMyVote) query.set('needs_my_vote', 'true');
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor) query.set('cursor', cursor);
      const search = query.toString();
      return call('GET', `/approvals${search ? `?${search}` : ''}`);
    },
    show: (uuid) => call('GET', `/approvals/${encodeURIComponent(uuid)}`),
    decide: (uuid, body) => call('POST', `/approvals/${encodeURIComponent(uuid)}`, body),
    whoami: () => call('GET', '/auth/whoami'),
  };
}

/** The agent's runs and their steps, as `asg runs` reads them. */
export interface RunsApi {
  list(conversationId: string, page: { limit?: number; cursor?: string }): Promise<RunListReply>;
  show(runId: string): Promise<RunJson>;
  fork(runId: string, body: { step: number; message?: string }): Promise<ForkReply>;
}

/** POST /runs/:run_id/fork's answer: the new conversation, how it went on, and whether nothing ran. */
export type ForkReply = ConversationReply & { copied_only: boolean };

export function runsApi(target: ApiTarget): RunsApi {
  const call = restCaller(target);
  return {
    list(conversationId, { limit, cursor }) {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor) query.set('cursor', cursor);
      const search = query.toString();
      return call('GET', `/conversations/${encodeURIComponent(conversationId)}/runs${search ? `?${search}` : ''}`);
    },
    show: (runId) => call('GET', `/runs/${encodeURIComponent(runId)}`),
    fork: (runId, body) => call('POST', `/runs/${encodeURIComponent(runId)}/fork`, body),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The agent's own `{"error": "…"}`, else the start of whatever it sent. */
function serverMessage(parsed: unknown, text: string): string {
  if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string')
    return (parsed as { error: string }).error;
  const trimmed = text.trim().slice(0, 200);
  return trimmed || 'no answer body';
}

function failureOf(status: number, parsed: unknown, text: string, what: string): ApiFailure {
  const message = serverMessage(parsed, text);
  switch (status) {
    case 400:
      return new ApiFailure(`the agent refused the request: ${message}`, EXIT.usage);
    case 401:
      return new ApiFailure(`not signed in: ${message}; pass a token with --token or ASG_TOKEN`, EXIT.denied);
    case 403:
      return new ApiFailure(
        `not allowed: ${message}; the token's roles do not allow this (deciding needs "approve" or "admin"; deleting a conversation, its owner or "admin")`,
        EXIT.denied,
      );
    case 404:
      return new ApiFailure(message, EXIT.notFound);
    case 409:
      return new ApiFailure(message, EXIT.conflict);
    default:
      if (status >= 200 && status < 300) return new ApiFailure(`the agent's answer to ${what} is not JSON: ${message}`, EXIT.failed);
      return new ApiFailure(`the agent failed (${status}): ${message}`, EXIT.failed);
  }
}

/** fetch's "fetch failed" says nothing; its cause names what happened (ECONNREFUSED, ENOTFOUND, a timeout). */
function unreachableMessage(base: string, error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const name = error instanceof Error ? error.name : '';
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'unknown host'
        : name === 'TimeoutError'
          ? `no answer within ${READ_TIMEOUT_MS / 1000} s`
          : (code ?? (typeof cause?.message === 'string' ? cause.message : error instanceof Error ? error.message : String(error)));
  return `cannot reach the agent at ${base} (${why}); is it running? Point --url or ASG_URL at it`;
}
