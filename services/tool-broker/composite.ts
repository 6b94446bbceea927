import { isInputRequiredResult, type Tool as McpTool } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../common/config/schema.js';
import { deadlineExceeded, failedPrecondition, invalidArgument, notFound } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { schemaProblems } from '../common/json-schema.js';
import { McpConnection } from './mcp-connection.js';
import { RECONNECT, type ReconnectPolicy } from './reconnect.js';
import { toolOutcome, type ToolOutcome } from './tool-result.js';

/** A tool as the broker offers it: the server's definition plus where it lives and its policy. */
export interface BrokerTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Needs a human approval before it runs: the effective policy (the MCP annotations and the server's config; policy.ts). */
  destructive: boolean;
  server: string;
  /** The server's own annotations, as advertised (undefined when absent). */
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  /** Its server is down now; calls fail UNAVAILABLE until it is back. */
  unavailable?: boolean;
}

export interface ToolCallResult extends ToolOutcome {
  server: string;
  /** The server asks for input before it can finish: the outcome fields are then empty. */
  inputRequired?: { inputRequests: Record<string, unknown>; requestState?: string };
}

export interface CallerContext {
  /** The caller's `Authorization` value, forwarded to HTTP servers for this call only. */
  authorization?: string;
  /** Epoch milliseconds by which the caller needs the answer. */
  deadline?: number;
  /** The approval that allows a destructive call. */
  approvalUuid?: string;
  /** Why the caller's policy runs a destructive call without an approval (CallToolRequest.unapproved_reason). */
  unapprovedReason?: string;
  /** The answers to the server's earlier input_required for this call. */
  continuation?: { requestState?: string; inputResponses?: Record<string, unknown> };
}

export interface BrokerServer {
  name: string;
  required: boolean;
  available: boolean;
  error?: string;
}

function brokerTool(tool: McpTool, connection: McpConnection): BrokerTool {
  return {
    ...(!connection.availability.available && { unavailable: true }),
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
    destructive: connection.policy(tool.name, tool.annotations).destructive,
    server: connection.name,
    readOnlyHint: tool.annotations?.readOnlyHint,
    destructiveHint: tool.annotations?.destructiveHint,
  };
}

/** The first tool name two connections both offer, if any. */
function findDuplicate(connections: readonly McpConnection[]): { tool: string; first: string; second: string } | undefined {
  const owners = new Map<string, string>();
  for (const connection of connections) {
    for (const tool of connection.tools) {
      const owner = owners.get(tool.name);
      if (owner !== undefined) return { tool: tool.name, first: owner, second: connection.name };
      owners.set(tool.name, connection.name);
    }
  }
  return undefined;
}

/**
 * One client over every MCP server: every configured server's tools in one name space and each call
 * routed to the server that offers the tool. Names must be unique across servers at startup;
 * a server restarted later that comes back with a name another server owns keeps only its own
 * unique tools (the routing table never changes owner under a running agent).
 */
export class ToolComposite {
  private routes = new Map<string, McpConnection>();

  private constructor(
    private readonly connections: readonly McpConnection[],
    private readonly log: Logger,
  ) {
    for (const connection of connections) {
      connection.onToolsListed = () => {
        this.reroute();
        this.logOverrides(connection);
      };
      this.logOverrides(connection);
    }
    this.reroute();
  }

  /**
   * Connects to every server, in parallel. A server that cannot be started is reported and
   * retried in the background (mcp-connection.ts); only a `required` one that fails, or two
   * servers offering the same tool name, stop them all.
   */
  static async start(servers: readonly McpServerConfig[], log: Logger, reconnect: ReconnectPolicy = RECONNECT): Promise<ToolComposite> {
    const connections = servers.map((server) => new McpConnection(server, log.child({ mcp_server: server.name })));
    const outcomes = await Promise.allSettled(connections.map((connection) => connection.start(reconnect)));
    const failures = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason)] : [],
    );
    const duplicate = failures.length === 0 ? findDuplicate(connections) : undefined;
    if (failures.length > 0 || duplicate) {
      await Promise.all(connections.map((connection) => connection.close()));
      if (duplicate) {
        throw new Error(
          `tool ${JSON.stringify(duplicate.tool)} is offered by both MCP server ${JSON.stringify(duplicate.first)} and MCP server ${JSON.stringify(duplicate.second)}; tool names must be unique across mcp_servers`,
        );
      }
      throw new Error(failures.join('; '));
    }
    return new ToolComposite(connections, log);
  }

  /** Every routable tool, in config order: served from the listing cache, no network. */
  listTools(): BrokerTool[] {
    return this.connections.flatMap((connection) =>
      connection.tools.filter((tool) => this.routes.get(tool.name) === connection).map((tool) => brokerTool(tool, connection)),
    );
  }

  /** Every configured server, in config order, and whether its tools can be called now. */
  servers(): BrokerServer[] {
    return this.connections.map((connection) => ({
      name: connection.name,
      required: connection.config.required,
      ...connection.availability,
    }));
  }

  /**
   * Runs one call on the server that offers the tool. Refused before anything is sent:
   * an unknown tool (NOT_FOUND), arguments that do not fit the tool's inputSchema
   * (INVALID_ARGUMENT), a destructive tool without an approval or a reason (FAILED_PRECONDITION),
   * a deadline already past (DEADLINE_EXCEEDED).
   */
  async callTool(name: string, args: Record<string, unknown> | undefined, caller: CallerContext = {}): Promise<ToolCallResult> {
    const connection = this.routes.get(name);
    if (!connection) throw notFound(`unknown tool ${name}`);
    const tool = connection.tools.find((candidate) => candidate.name === name);
    const problem = schemaProblems(tool?.inputSchema as Record<string, unknown> | undefined, args ?? {}, 'arguments');
    if (problem)
      throw invalidArgument(
        `the arguments of tool ${name} on server ${connection.name} do not match its inputSchema: ${problem}; nothing was executed`,
      );
    // The orchestrator gates destructive calls; refusing one that comes without an approval
    // here keeps the rule even if a caller skipped the gate or had a stale tool list.
    const destructive = tool ? connection.policy(name, tool.annotations).destructive : true;
    if (destructive && !caller.approvalUuid && !caller.unapprovedReason) {
      throw failedPrecondition(
        `tool ${name} on server ${connection.name} is destructive and was called without an approval; nothing was executed`,
      );
    }
    if (destructive && !caller.approvalUuid) {
      // An audit line for every destructive call the caller's policy runs without a human.
      this.log.warn('destructive call without approval', { tool: name, server: connection.name, reason: caller.unapprovedReason });
    }
    // No call waits forever: the server's own timeout, cut short by the caller's deadline.
    const timeoutMs = Math.min(connection.config.timeout, caller.deadline !== undefined ? caller.deadline - Date.now() : Infinity);
    if (timeoutMs <= 0)
      throw deadlineExceeded(`tool ${name} on server ${connection.name} was not called: the request's deadline had already passed`);
    const result = await connection.callTool(name, args, {
      timeoutMs,
      authorization: caller.authorization,
      continuation: caller.continuation,
    });
    if (isInputRequiredResult(result)) {
      // Not a failure and not a result: the call waits for a human's answer.
      return {
        text: '',
        isError: false,
        server: connection.name,
        inputRequired: {
          inputRequests: (result.inputRequests ?? {}) as Record<string, unknown>,
          ...(result.requestState !== undefined && { requestState: result.requestState }),
        },
      };
    }
    return { ...toolOutcome(result), server: connection.name };
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
  }

  /** Says which tools the config holds to its own policy rather than their annotations: what an operator wants to see. One line per listing. */
  private logOverrides(connection: McpConnection): void {
    const approval: string[] = [];
    const noApproval: string[] = [];
    for (const tool of connection.tools) {
      const decision = connection.policy(tool.name, tool.annotations);
      if (decision.source !== 'annotations') (decision.destructive ? approval : noApproval).push(tool.name);
    }
    if (approval.length === 0 && noApproval.length === 0) return;
    this.log.info('approval policy set by config', {
      server: connection.name,
      needs_approval: approval.join(',') || undefined,
      no_approval: noApproval.join(',') || undefined,
    });
  }

  /** Rebuilds the routing table after a listing: a name stays with its owner while the owner still offers it. */
  private reroute(): void {
    const routes = new Map<string, McpConnection>();
    for (const [name, owner] of this.routes) {
      if (owner.tools.some((tool) => tool.name === name)) routes.set(name, owner);
    }
    for (const connection of this.connections) {
      for (const tool of connection.tools) {
        const owner = routes.get(tool.name);
        if (owner === undefined) routes.set(tool.name, connection);
        else if (owner !== connection)
          this.log.warn('tool name offered by two MCP servers; the first keeps it', {
            tool: tool.name,
            kept: owner.name,
            ignored: connection.name,
          });
      }
    }
    this.routes = routes;
  }
}
