import type { CallToolResponse, ListToolsResponse, Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import type { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { invalidArgument } from '../common/grpc/errors.js';
import { parseJsonObject } from '../common/json-value.js';
import type { UnaryHandlers } from '../common/grpc/server.js';
import type { RateLimiter } from '../common/rate-limit.js';
import { recordError, recordToolCall } from '../common/metrics.js';
import type { BrokerTool, ToolComposite } from './composite.js';

/** The gRPC face of the composite: decode, call, encode; every decision lives in composite.ts. */

function toProtoTool(tool: BrokerTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    destructive: tool.destructive,
    server: tool.server,
    readOnlyHint: tool.readOnlyHint,
    destructiveHint: tool.destructiveHint,
    unavailable: tool.unavailable,
  };
}

/**
 * A `*_json` field of CallTool: the text of a JSON object, empty for none; INVALID_ARGUMENT
 * otherwise. Its size was bounded where the value entered the mesh; a call stored before the
 * bounds existed still runs as it was approved.
 */
function callObject(text: string, field: string): Record<string, unknown> {
  if (text === '') return {};
  const read = parseJsonObject(text, field);
  if (!read.ok) throw invalidArgument(read.problem);
  return read.value;
}

export function toolBrokerHandlers(composite: ToolComposite, limiter?: RateLimiter): UnaryHandlers<typeof ToolBrokerServiceService> {
  return {
    listTools: async (): Promise<ListToolsResponse> => ({
      tools: composite.listTools().map(toProtoTool),
      servers: composite.servers().map((server) => ({ ...server, error: server.error ?? '' })),
    }),
    callTool: async (request, { request: caller }): Promise<CallToolResponse> => {
      if (!request.name) throw invalidArgument('CallTool needs the name of a tool');
      // rate_limits.tools: a call over the limit waits for a slot or fails RESOURCE_EXHAUSTED, before anything runs.
      await limiter?.acquire(request.name, caller.deadline);
      let result: Awaited<ReturnType<ToolComposite['callTool']>>;
      try {
        result = await composite.callTool(request.name, callObject(request.argumentsJson, 'arguments_json'), {
          authorization: caller.authorization,
          deadline: caller.deadline,
          approvalUuid: request.approvalUuid || undefined,
          unapprovedReason: request.unapprovedReason || undefined,
          ...((request.requestState !== undefined || request.inputResponsesJson !== undefined) && {
            continuation: {
              requestState: request.requestState,
              ...(request.inputResponsesJson !== undefined && {
                inputResponses: callObject(request.inputResponsesJson, 'input_responses_json'),
              }),
            },
          }),
        });
      } catch (error) {
        // Only the names of known tools become labels: a caller's made-up name would grow the series without bound.
        const known = composite.listTools().some((tool) => tool.name === request.name);
        recordToolCall(known ? request.name : '(unknown)', 'failed');
        recordError('tool_call_failed');
        throw error;
      }
      recordToolCall(request.name, result.inputRequired ? 'input_required' : result.isError ? 'tool_error' : 'ok');
      return {
        text: result.text,
        isError: result.isError,
        structuredContent: result.structuredContent,
        server: result.server,
        inputRequired: result.inputRequired,
      };
    },
  };
}
