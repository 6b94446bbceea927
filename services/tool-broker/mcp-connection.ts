import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  isInputRequiredResult,
  type CallToolResult,
  type InputRequiredResult,
  type Tool as McpTool,
  type Transport,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AttemptsFailed, retry } from '../common/backoff.js';
import type { McpServerConfig } from '../common/config/schema.js';
import { deadlineExceeded, unavailable } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { tracedFetch } from '../common/telemetry.js';
import { authorizingFetch, withCallAuthorization } from './call-authorization.js';
import { schemaProblems } from '../common/json-schema.js';
import { toolPolicy, type ToolPolicy } from './policy.js';
import { RECONNECT, reconnectBackoff, startFailure, StderrTail, type ReconnectPolicy } from './reconnect.js';
import { serverAuth, type ServerAuth } from './server-auth.js';
import { exitedAtProbe, LEGACY_ERA, ObservedStdioTransport, signalGroup, type ProcessExit } from './stdio-probe.js';
import { invalidResultReason } from './tool-result.js';

const CLIENT_INFO = { name: 'asg-tool-broker', version: '0.1.0' };

/** list_changed notifications often come in bursts (a server registering several tools): one listing per burst. */
const LIST_CHANGED_DEBOUNCE_MS = 100;

export interface CallOptions {
  /** The whole budget of the call, restart included. */
  timeoutMs: number;
  /** The caller's `Authorization` value, sent on this call's HTTP requests only. */
  authorization?: string;
  /** The answers to an earlier `input_required` of this call: sent with the server's requestState. */
  continuation?: { requestState?: string; inputResponses?: Record<string, unknown> };
}

/** Which elicitation a 2025-era server may not send: the broker cannot hold a server's request open across a human's wait. */
const LEGACY_ELICITATION_REFUSED =
  "this client (the agent's tool broker) answers elicitation only as an MCP 2026-07-28 input_required result, which it hands back to the agent; a 2025-era elicitation/create during a call cannot be held open across a human's wait";

/** The least time a connect outside a call gets (see McpConnection.connectBudget). */
const CONNECT_MIN_MS = 10_000;

/** "30s", "1.5s", "500ms": how long a call was given, for error messages. */
function formatBudget(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

/** An error's message with its cause, e.g. "fetch failed: connect ECONNREFUSED 127.0.0.1:9". */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message}: ${cause}` : error.message;
}

function httpStatus(error: unknown): number | undefined {
  return error instanceof SdkHttpError ? (error.data as { status?: number } | undefined)?.status : undefined;
}

/**
 * A 2025-era HTTP session the server no longer knows (it restarted, or expired the session):
 * the spec says 404; some servers (server-everything) answer 400 "No valid session ID".
 * Either way the request was turned away before it reached a tool, so it is safe to send it
 * again on a new session.
 */
function isLostSession(error: unknown, hadSession: boolean): boolean {
  const status = httpStatus(error);
  if (!hadSession || status === undefined) return false;
  return status === 404 || (status === 400 && /session/i.test(error instanceof Error ? error.message : ''));
}

type Failure = 'timeout' | 'invalid' | 'rejected' | 'refused' | 'lost-session' | 'broken';

/**
 * How a tools/call failed: it ran out of time; the server answered with something that is
 * not a valid result (`invalid`: it may have run; the connection is fine); the server answered
 * with a JSON-RPC error (`rejected`); the HTTP session is gone (`lost-session`: nothing ran);
 * the HTTP server is up but turned this request away, e.g. 401 for the caller's token
 * (`refused`); or the connection itself broke and must be reopened (`broken`).
 */
function classifyFailure(error: unknown, hadSession: boolean): Failure {
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return 'timeout';
  if (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult) return 'invalid';
  if (error instanceof ProtocolError) return 'rejected';
  if (isLostSession(error, hadSession)) return 'lost-session';
  const status = httpStatus(error);
  if (status !== undefined && status >= 400 && status < 500 && status !== 404) return 'refused';
  return 'broken';
}

/** A failure the model should read, as a tool result (the call itself completed). */
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** How long a stdio server gets to exit after its stdin closed, and then after SIGTERM. */
const CHILD_EXIT_MS = 1000;

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Until the process is gone or `ms` passed; true when it is gone. */
async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await delay(20);
  }
  return true;
}

/**
 * Closes a client and, for stdio, makes sure its process is gone: the SDK ends stdin and
 * waits 2 s, then SIGTERM and 2 s more, then SIGKILL without waiting, and its close() can
 * hang on a child whose pipes stay open. Here: stdin closed (the SDK's close), then SIGTERM
 * after CHILD_EXIT_MS, SIGKILL after another, and a last wait for the exit, so a stop is
 * bounded and leaves no process behind. The signals go to the server's process group (it runs
 * detached: stdio-probe.ts), which holds whatever it started itself.
 */
async function closeClient(client: Client | undefined): Promise<void> {
  if (!client) return;
  const transport = client.transport;
  const pid = transport instanceof StdioClientTransport ? transport.pid : null;
  const closing = client.close().catch(() => undefined);
  if (pid === null) return closing;
  if (await exitedWithin(pid, CHILD_EXIT_MS)) return;
  signalGroup(pid, 'SIGTERM');
  if (await exitedWithin(pid, CHILD_EXIT_MS)) return;
  signalGroup(pid, 'SIGKILL');
  await exitedWithin(pid, CHILD_EXIT_MS);
}

/** Where the server is, for logs: a URL's credentials and query are left out. */
function endpointOf(config: McpServerConfig): string {
  if (!config.url) return `stdio:${config.command}`;
  const url = new URL(config.url);
  return url.origin + url.pathname;
}

/**
 * One configured MCP server: its client, the tools it offered when last listed, and its health.
 * A connection that broke (a stdio process that died, an HTTP server that stopped answering) is
 * reopened by the next call that needs it, and its tools are listed again. The listing is a
 * cache: refreshed when the server says `notifications/tools/list_changed` (2025 era: an
 * unsolicited notification; 2026-07-28: the SDK's `subscriptions/listen` stream) and on every
 * reconnect.
 */
export class McpConnection {
  readonly name: string;
  /** The approval policy of this server's tools (annotations and config). */
  readonly policy: ToolPolicy;
  private client: Client | undefined;
  private reopening: Promise<Client> | undefined;
  private listed: McpTool[] = [];
  private closed = false;
  /** The 2026-07-28 client whose `subscriptions/listen` stream is open or opening. */
  private watching: Client | undefined;
  /** The client whose subscription ended or failed: its next one starts with a fresh listing. */
  private missedChanges: Client | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  /** A stdio server that exited at the protocol probe once: started with a plain `initialize` from then on (stdio-probe.ts). */
  private exitsAtProbe = false;
  /** Why the last connect failed (startFailure's words); undefined while the server is up. */
  private failure: string | undefined;
  /** Failed connects in a row, for the logs. */
  private failures = 0;
  /** Aborted by close(): ends the connect retries. */
  private readonly stopping = new AbortController();
  /** What the stdio process of the connect in progress said and how it ended, for startFailure. */
  private starting: { stderr: StderrTail; exit: () => ProcessExit | undefined } | undefined;
  /** Credentials for an HTTP server (bearer_token_env, oauth), read from the environment once. */
  private auth: ServerAuth | undefined;

  /** Told whenever the cached listing changed: a (re)connect, or the server's list_changed. */
  onToolsListed?: (connection: McpConnection) => void;

  constructor(
    readonly config: McpServerConfig,
    private readonly log: Logger,
  ) {
    this.name = config.name;
    this.policy = toolPolicy(config);
  }

  /** The tools of the last listing; kept while the server is down so ListTools still answers. */
  get tools(): readonly McpTool[] {
    return this.listed;
  }

  get transportKind(): 'http' | 'stdio' {
    return this.config.url ? 'http' : 'stdio';
  }

  /**
   * How long a connect outside any call (startup, background retry) may take: the server's
   * call timeout, but at least CONNECT_MIN_MS, since starting a process and its handshake can
   * take longer than a short call deadline allows, and each failed connect is now reported.
   */
  private get connectBudget(): number {
    return Math.max(this.config.timeout, CONNECT_MIN_MS);
  }

  /** Whether calls can reach the server now, and if not, why (GET /tools, GET /ready). */
  get availability(): { available: boolean; error?: string } {
    return this.failure === undefined ? { available: true } : { available: false, error: this.failure };
  }

  /**
   * Startup: connect and list the tools, retrying with backoff (reconnect.ts). A server that
   * fails is reported once (startFailure: command, exit code, stderr tail) and retried in the
   * background while the broker serves without its tools; its tools appear when it comes up.
   * A `required` server is retried for `startupMs`, then this throws that report.
   */
  async start(policy: ReconnectPolicy = RECONNECT): Promise<void> {
    try {
      this.auth = serverAuth(this.config);
    } catch (error) {
      // A missing secret does not fix itself: no retries.
      this.failure = `MCP server ${this.name} (${endpointOf(this.config)}) cannot be used: ${describe(error)}`;
      if (this.config.required) throw new Error(this.failure);
      this.log.error('MCP server unavailable; the agent runs without its tools', {
        endpoint: endpointOf(this.config),
        error: this.failure,
      });
      return;
    }
    const required = this.config.required;
    let inBackground = false;
    let startedWithout!: () => void;
    const started = new Promise<void>((resolve) => (startedWithout = resolve));
    let reported: string | undefined;
    const connected = retry(
      async (attempt) => {
        // A call reopened it meanwhile: nothing left to retry.
        if (this.client) return;
        if (await this.attempt()) {
          if (attempt > 1 && inBackground)
            this.log.info('MCP server is available again; its tools are back', {
              endpoint: endpointOf(this.config),
              tools: this.listed.length,
            });
          return;
        }
        throw new Error(this.failure);
      },
      reconnectBackoff(policy),
      {
        signal: this.stopping.signal,
        ...(required && { deadline: Date.now() + policy.startupMs }),
        onRetry: ({ delayMs }) => {
          if (!required && !inBackground) {
            this.log.error('MCP server unavailable; the agent runs without its tools and retries in the background', {
              endpoint: endpointOf(this.config),
              error: this.failure,
            });
            inBackground = true;
            startedWithout();
          } else if (inBackground && this.failure !== reported) {
            this.log.warn('MCP server still unavailable, for another reason', { endpoint: endpointOf(this.config), error: this.failure });
          }
          reported = this.failure;
          this.log.debug('MCP server retry scheduled', { in_ms: delayMs, failures: this.failures });
        },
      },
    ).catch((error: unknown) => {
      if (this.stopping.signal.aborted) throw new Error(`MCP server ${this.name}: stopped while connecting`);
      if (error instanceof AttemptsFailed) throw new Error(`${this.failure} (required: true, so the agent does not start without it)`);
      throw error;
    });
    // Once in the background, the run ends by itself (connected) or with close(): nothing waits for it.
    connected.catch(() => undefined);
    await Promise.race([connected, started]);
  }

  /** One connect; true when the server is up. A failure is kept in `failure`, not logged: the caller says it once. */
  private async attempt(): Promise<boolean> {
    try {
      const client = await this.open(this.connectBudget);
      if (this.closed) {
        await closeClient(client);
        return false;
      }
      this.client = client;
      this.failure = undefined;
      this.failures = 0;
      this.watchToolList(client);
      return true;
    } catch (error) {
      this.failures++;
      this.failure = this.explain(error);
      return false;
    }
  }

  /** An operator's account of a failed connect: startFailure with what the process left behind. */
  private explain(error: unknown): string {
    const starting = this.starting;
    this.starting = undefined;
    const reason =
      error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout
        ? `no answer within ${formatBudget(this.connectBudget)} (${describe(error)})`
        : describe(error);
    return startFailure(this.config, endpointOf(this.config), reason, starting?.exit(), starting?.stderr.take() ?? []);
  }

  /**
   * Calls a tool within `timeoutMs`, reopening a broken connection first. Fails with
   * UNAVAILABLE when the server is down and DEADLINE_EXCEEDED when it does not answer in time;
   * an error the server answers with (JSON-RPC), an answer that is not a valid result and a
   * structured result that does not fit the tool's `outputSchema` come back as tool errors for
   * the model to read. A call is sent once: only a request the server provably turned away
   * unread (a lost HTTP session) is sent again, on a new session.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<CallToolResult | InputRequiredResult> {
    const started = Date.now();
    const remaining = () => options.timeoutMs - (Date.now() - started);
    let client = await this.liveClient(tool, options.timeoutMs);
    this.watchToolList(client);
    for (let attempt = 1; ; attempt++) {
      const budget = remaining();
      if (budget <= 0) throw this.timedOut(tool, options.timeoutMs);
      const definition = this.listed.find((candidate) => candidate.name === tool);
      const hadSession = Boolean(client.transport?.sessionId);
      try {
        const continuation = options.continuation;
        const result = await withCallAuthorization(options.authorization, () =>
          client.callTool(
            {
              name: tool,
              arguments: args,
              ...(continuation?.requestState !== undefined && { requestState: continuation.requestState }),
              ...(continuation?.inputResponses && { inputResponses: continuation.inputResponses }),
            } as Parameters<Client['callTool']>[0],
            // The listed definition without its outputSchema turns the SDK's own output check off:
            // the SDK throws the same ProtocolError for "your result is wrong" (after the tool ran)
            // as for a server's JSON-RPC error, and the two need different words (see checkOutput).
            // allowInputRequired: a server's input_required comes back as such, for a
            // human to answer, instead of failing the call.
            {
              timeout: budget,
              allowInputRequired: true,
              ...(definition && { toolDefinition: { ...definition, outputSchema: undefined } }),
            },
          ),
        );
        if (isInputRequiredResult(result)) {
          this.log.info('MCP server asks for input before it can finish the call', {
            tool,
            requests: Object.keys(result.inputRequests ?? {}).join(',') || undefined,
          });
          return result;
        }
        return this.checkOutput(tool, definition, result);
      } catch (error) {
        switch (classifyFailure(error, hadSession)) {
          case 'timeout':
            throw this.timedOut(tool, options.timeoutMs);
          case 'invalid':
            this.log.warn('MCP server answered a call with an invalid result', { tool, error: describe(error) });
            return toolError(
              `MCP server ${this.name} answered the call of ${tool} with a result that is not valid MCP (${invalidResultReason(describe(error))}); the call may have run and is not retried`,
            );
          case 'rejected':
            return toolError(`MCP server ${this.name} rejected the call of ${tool}: ${describe(error)}`);
          case 'refused':
            return toolError(`MCP server ${this.name} refused the call of ${tool}: HTTP ${httpStatus(error)}`);
          case 'lost-session':
            this.discard(client);
            if (attempt > 1) throw this.notRunning(error);
            this.log.info('MCP session lost (the server restarted or expired it); reconnecting and sending the call again', {
              tool,
              status: httpStatus(error),
            });
            client = await this.liveClient(tool, Math.max(1, remaining()));
            continue;
          case 'broken':
            this.discard(client);
            throw this.notRunning(error);
        }
      }
    }
  }

  /** Closes the client; for stdio this ends the child process, within a few seconds whatever it does. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    clearTimeout(this.relistTimer);
    const client = this.client;
    this.client = undefined;
    await closeClient(client);
    await this.reopening?.then(closeClient).catch(() => undefined);
  }

  /**
   * MCP spec: a tool with an `outputSchema` must return `structuredContent` that fits it.
   * The tool ran, so nothing is retried; the model reads why its result was set aside.
   */
  private checkOutput(tool: string, definition: McpTool | undefined, result: CallToolResult): CallToolResult {
    const schema = definition?.outputSchema as Record<string, unknown> | undefined;
    if (!schema || result.isError) return result;
    const problem =
      result.structuredContent === undefined
        ? 'it returned no structuredContent although the tool declares an outputSchema'
        : schemaProblems(schema, result.structuredContent, 'structuredContent');
    if (!problem) return result;
    this.log.warn('MCP tool result does not match its outputSchema', { tool, problem });
    return toolError(
      `MCP server ${this.name} answered the call of ${tool} with a result that does not match the tool's outputSchema (${problem}); the call ran and is not retried`,
    );
  }

  private async liveClient(tool: string, timeoutMs: number): Promise<Client> {
    if (this.closed) throw unavailable(`MCP server ${this.name} is not running: the tool broker is stopping`);
    if (this.client) return this.client;
    // One reopen serves every call that finds the connection broken.
    this.reopening ??= this.open(timeoutMs).finally(() => (this.reopening = undefined));
    try {
      const client = await this.reopening;
      if (this.closed) {
        await client.close().catch(() => undefined);
        throw new Error('the tool broker is stopping');
      }
      this.client = client;
      this.failure = undefined;
      return client;
    } catch (error) {
      this.failure = this.explain(error);
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) throw this.timedOut(tool, timeoutMs);
      throw this.notRunning(error, 'restart failed: ');
    }
  }

  /**
   * Connects a fresh client and lists the tools within `timeoutMs`. A stdio server is started
   * once per connect; only one that exits at the protocol probe is started a second time, for a
   * plain 2025-era `initialize` (stdio-probe.ts).
   */
  private async open(timeoutMs: number): Promise<Client> {
    const deadline = Date.now() + timeoutMs;
    try {
      return await this.connect(timeoutMs, this.exitsAtProbe);
    } catch (error) {
      if (this.transportKind !== 'stdio' || this.exitsAtProbe || !exitedAtProbe(error)) throw error;
      this.exitsAtProbe = true;
      this.log.info('MCP server exited at the protocol probe (server/discover); starting it again for a 2025-era initialize', {
        endpoint: endpointOf(this.config),
      });
      return this.connect(Math.max(1, deadline - Date.now()), true);
    }
  }

  /** One connect of a fresh client, and the listing of its tools; the connection is usable only if both worked. */
  private async connect(timeoutMs: number, legacyOnly: boolean): Promise<Client> {
    const client = new Client(CLIENT_INFO, {
      versionNegotiation: { mode: 'auto' },
      // Form elicitation: declared so that a 2026-07-28 server asks with
      // input_required, which is handed back to the caller as is (autoFulfill: false).
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    });
    client.setRequestHandler('elicitation/create', () => {
      this.log.warn('MCP server sent a 2025-era elicitation/create during a call; refused', { endpoint: endpointOf(this.config) });
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, LEGACY_ELICITATION_REFUSED);
    });
    let closedEarly = false;
    let strayMessages = 0;
    client.onclose = () => {
      closedEarly = true;
      if (this.client === client) {
        this.log.warn('MCP server connection closed; the next call restarts it', { endpoint: endpointOf(this.config) });
        this.client = undefined;
      }
    };
    client.onerror = (error) => {
      // A line on stdout that is JSON but not JSON-RPC (lines that are not JSON at all the SDK
      // skips silently): the server is noisy, not broken. Said once per connection.
      if (error.name === 'ZodError' && strayMessages++ === 0) {
        this.log.warn('MCP server wrote a message that is not JSON-RPC; ignoring it (and any more)', { endpoint: endpointOf(this.config) });
        return;
      }
      this.log.debug('MCP transport error', { error: describe(error) });
    };
    // Registered before connect: a 2025-era server may say it at any moment after the handshake.
    client.setNotificationHandler('notifications/tools/list_changed', () => this.toolsChanged(client));
    try {
      await client.connect(this.transport(), { timeout: timeoutMs, ...(legacyOnly && { prior: LEGACY_ERA }) });
      const { tools } = await client.listTools(undefined, { timeout: timeoutMs });
      if (closedEarly) throw new Error('the connection closed right after the handshake');
      this.flushStartupStderr();
      this.listed = tools;
      this.log.info('MCP server connected', {
        endpoint: endpointOf(this.config),
        protocol: client.getNegotiatedProtocolVersion(),
        tools: tools.length,
      });
      this.onToolsListed?.(this);
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * 2026-07-28 servers send list_changed only on a `subscriptions/listen` stream the client
   * opens. Opened in the background (connect does not wait for its acknowledgement: a server
   * slow to acknowledge must not hold calls up), and opened again by the next call after it
   * ended, with a fresh listing in case a change was missed meanwhile. 2025-era servers send
   * the notification unsolicited: nothing to open.
   */
  private watchToolList(client: Client): void {
    if (this.watching === client || this.closed) return;
    if (client.getProtocolEra() !== 'modern' || !client.getServerCapabilities()?.tools?.listChanged) return;
    this.watching = client;
    const ended = () => {
      if (this.watching !== client) return;
      this.watching = undefined;
      this.missedChanges = client;
    };
    client
      .listen({ toolsListChanged: true }, { timeout: this.config.timeout })
      .then((subscription) => {
        this.log.debug('MCP tools/list_changed subscription open');
        if (this.missedChanges === client) {
          this.missedChanges = undefined;
          this.toolsChanged(client);
        }
        void subscription.closed.then((how) => {
          if (how === 'local' || this.watching !== client || this.closed) return;
          this.log.info('MCP server ended the tools/list_changed subscription; the next call opens it again', { how });
          ended();
        });
      })
      .catch((error: unknown) => {
        this.log.debug('MCP tools/list_changed subscription failed; the next call tries again', { error: describe(error) });
        ended();
      });
  }

  /** The server said its tools changed: list them again, once per burst of notifications. */
  private toolsChanged(client: Client): void {
    clearTimeout(this.relistTimer);
    this.relistTimer = setTimeout(() => void this.relist(client), LIST_CHANGED_DEBOUNCE_MS);
    this.relistTimer.unref();
  }

  private async relist(client: Client): Promise<void> {
    let tools: McpTool[];
    try {
      ({ tools } = await client.listTools(undefined, { cacheMode: 'refresh', timeout: this.config.timeout }));
    } catch (error) {
      if (this.client === client)
        this.log.warn('MCP server said its tools changed, but listing them failed; the last listing stays', { error: describe(error) });
      return;
    }
    if (this.client !== client || this.closed) return;
    const before = new Set(this.listed.map((tool) => tool.name));
    const after = new Set(tools.map((tool) => tool.name));
    this.listed = tools;
    this.log.info('MCP server tools changed', {
      tools: tools.length,
      added: [...after].filter((name) => !before.has(name)).join(',') || undefined,
      removed: [...before].filter((name) => !after.has(name)).join(',') || undefined,
    });
    this.onToolsListed?.(this);
  }

  private transport(): Transport {
    if (this.config.url) {
      // A server with credentials of its own gets those, not the caller's Authorization.
      const fetch = this.auth ? tracedFetch('tool-broker') : authorizingFetch(tracedFetch('tool-broker'));
      return new StreamableHTTPClientTransport(new URL(this.config.url), { fetch, ...(this.auth && { authProvider: this.auth.provider }) });
    }
    const transport = new ObservedStdioTransport({
      command: this.config.command!,
      args: this.config.args,
      // Only the SDK's safe defaults (PATH, HOME, …) plus the configured env: API keys stay here.
      env: { ...getDefaultEnvironment(), ...this.config.env },
      stderr: 'pipe',
    });
    // Until the handshake is done, stderr is kept rather than logged: a server that fails to
    // start is reported once, with these lines in its report (startFailure).
    const starting = { stderr: new StderrTail(), exit: () => transport.exit };
    this.starting = starting;
    const stderr = transport.stderr as Readable | null;
    if (stderr) {
      createInterface({ input: stderr }).on('line', (line) => {
        if (this.starting === starting) starting.stderr.push(line);
        else this.log.info('MCP server stderr', { line });
      });
    }
    return transport;
  }

  /** A server that started: what it wrote to stderr meanwhile is logged as any later line is. */
  private flushStartupStderr(): void {
    const starting = this.starting;
    this.starting = undefined;
    for (const line of starting?.stderr.take() ?? []) this.log.info('MCP server stderr', { line });
  }

  private discard(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.close().catch(() => undefined);
  }

  private timedOut(tool: string, timeoutMs: number) {
    return deadlineExceeded(`tool ${tool} on server ${this.name} did not answer within ${formatBudget(timeoutMs)}`);
  }

  private notRunning(error: unknown, prefix = '') {
    const status = httpStatus(error);
    // Up but failing (a 5xx, a lost session) is not the same news as gone.
    if (status !== undefined) return unavailable(`MCP server ${this.name} is not available: ${prefix}it answered HTTP ${status}`);
    const closed = error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
    if (closed && !prefix) {
      // The connection broke under a call in flight: it may or may not have run, and it is not sent again.
      const what = this.transportKind === 'stdio' ? 'its process exited during the call' : 'the connection closed during the call';
      return unavailable(
        `MCP server ${this.name} is not running: ${what} (the call may have run and is not retried); the next call restarts the server`,
      );
    }
    const reason = closed ? (this.transportKind === 'stdio' ? 'its process exited' : 'the connection closed') : describe(error);
    return unavailable(`MCP server ${this.name} is not running: ${prefix}${reason}`);
  }
}
