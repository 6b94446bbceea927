import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Tool as McpTool,
  type Transport,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { McpServerConfig } from '../common/config/schema.js';
import { deadlineExceeded, unavailable } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { tracedFetch } from '../common/telemetry.js';
import { authorizingFetch, withCallAuthorization } from './call-authorization.js';

/** Seed 000: "with retry: up to 20 attempts, 500ms delay". */
export interface ConnectRetry {
  attempts: number;
  delayMs: number;
}
export const STARTUP_RETRY: ConnectRetry = { attempts: 20, delayMs: 500 };

const CLIENT_INFO = { name: 'asg-tool-broker', version: '0.1.0' };

export interface CallOptions {
  /** The whole budget of the call, restart included. */
  timeoutMs: number;
  /** The caller's `Authorization` value, sent on this call's HTTP requests only. */
  authorization?: string;
}

/** "30s", "1.5s", "500ms": how long a call was given, for error messages. */
export function formatBudget(ms: number): string {
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
 * How a tools/call failed: it ran out of time; the server answered with a JSON-RPC error
 * (`rejected`); the HTTP server is up but turned this request away, e.g. 401 for the caller's
 * token (`refused`; 404 is not one: it is how a server says a session is gone); or the
 * connection itself broke and must be reopened (`broken`).
 */
function classifyFailure(error: unknown): 'timeout' | 'rejected' | 'refused' | 'broken' {
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return 'timeout';
  if (error instanceof ProtocolError) return 'rejected';
  const status = httpStatus(error);
  if (status !== undefined && status >= 400 && status < 500 && status !== 404) return 'refused';
  return 'broken';
}

/** A failure the model should read, as a tool result (the call itself completed). */
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
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
 * reopened by the next call that needs it, and its tools are listed again.
 */
export class McpConnection {
  readonly name: string;
  private client: Client | undefined;
  private reopening: Promise<Client> | undefined;
  private listed: McpTool[] = [];
  private closed = false;

  /** Told when a (re)connect listed the server's tools. */
  onToolsListed?: (connection: McpConnection) => void;

  constructor(
    readonly config: McpServerConfig,
    private readonly log: Logger,
  ) {
    this.name = config.name;
  }

  /** The tools of the last listing; kept while the server is down so ListTools still answers. */
  get tools(): readonly McpTool[] {
    return this.listed;
  }

  get transportKind(): 'http' | 'stdio' {
    return this.config.url ? 'http' : 'stdio';
  }

  /** Startup: connect and list the tools, retrying as seed 000 says before giving up. */
  async start(retry: ConnectRetry = STARTUP_RETRY): Promise<void> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= retry.attempts && !this.closed; attempt++) {
      try {
        const client = await this.open(this.config.timeout);
        if (this.closed) {
          await client.close().catch(() => undefined);
          break;
        }
        this.client = client;
        return;
      } catch (error) {
        lastError = error;
        this.log.warn('MCP server not reachable yet', { attempt, of: retry.attempts, endpoint: endpointOf(this.config), error: describe(error) });
        if (attempt < retry.attempts) await delay(retry.delayMs);
      }
    }
    if (this.closed) throw new Error(`MCP server ${this.name}: stopped while connecting`);
    throw new Error(`MCP server ${this.name} (${endpointOf(this.config)}) could not be reached after ${retry.attempts} attempts: ${describe(lastError)}`);
  }

  /**
   * Calls a tool within `timeoutMs`, reopening a broken connection first. Fails with
   * UNAVAILABLE when the server is down and DEADLINE_EXCEEDED when it does not answer in time;
   * an error the server answers with (JSON-RPC) comes back as a tool error for the model to read.
   */
  async callTool(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const started = Date.now();
    const client = await this.liveClient(tool, options.timeoutMs);
    const remaining = options.timeoutMs - (Date.now() - started);
    if (remaining <= 0) throw this.timedOut(tool, options.timeoutMs);
    try {
      return await withCallAuthorization(options.authorization, () => client.callTool({ name: tool, arguments: args }, { timeout: remaining }));
    } catch (error) {
      switch (classifyFailure(error)) {
        case 'timeout':
          throw this.timedOut(tool, options.timeoutMs);
        case 'rejected':
          return toolError(`MCP server ${this.name} rejected the call of ${tool}: ${describe(error)}`);
        case 'refused':
          return toolError(`MCP server ${this.name} refused the call of ${tool}: HTTP ${httpStatus(error)}`);
        case 'broken':
          this.discard(client);
          throw this.notRunning(error);
      }
    }
  }

  /** Closes the client; for stdio this ends the child process. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    await this.reopening?.then((reopened) => reopened.close()).catch(() => undefined);
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
      return client;
    } catch (error) {
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) throw this.timedOut(tool, timeoutMs);
      throw this.notRunning(error, 'restart failed: ');
    }
  }

  /** Connects a fresh client and lists the tools; the connection is usable only if both worked. */
  private async open(timeoutMs: number): Promise<Client> {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
    let closedEarly = false;
    client.onclose = () => {
      closedEarly = true;
      if (this.client === client) {
        this.log.warn('MCP server connection closed; the next call restarts it', { endpoint: endpointOf(this.config) });
        this.client = undefined;
      }
    };
    client.onerror = (error) => this.log.debug('MCP transport error', { error: describe(error) });
    try {
      await client.connect(this.transport(), { timeout: timeoutMs });
      const { tools } = await client.listTools(undefined, { timeout: timeoutMs });
      if (closedEarly) throw new Error('the connection closed right after the handshake');
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

  private transport(): Transport {
    if (this.config.url) {
      return new StreamableHTTPClientTransport(new URL(this.config.url), { fetch: authorizingFetch(tracedFetch('tool-broker')) });
    }
    const transport = new StdioClientTransport({
      command: this.config.command!,
      args: this.config.args,
      // Only the SDK's safe defaults (PATH, HOME, …) plus the configured env: API keys stay here.
      env: { ...getDefaultEnvironment(), ...this.config.env },
      stderr: 'pipe',
    });
    const stderr = transport.stderr as Readable | null;
    if (stderr) {
      createInterface({ input: stderr }).on('line', (line) => this.log.info('MCP server stderr', { line }));
    }
    return transport;
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
    const reason = closed ? (this.transportKind === 'stdio' ? 'its process exited' : 'the connection closed') : describe(error);
    return unavailable(`MCP server ${this.name} is not running: ${prefix}${reason}`);
  }
}
