import { McpServer } from '@modelcontextprotocol/server';
import { logToStderr } from './log.js';
import type { Sandbox } from './sandbox.js';
import { annotationsOf, FILESYSTEM_TOOLS, runTool } from './tools/index.js';

export const SERVER_INFO = { name: 'mcp-filesystem', version: '0.1.0' };

/**
 * A fresh MCP server over `sandbox`: the HTTP face builds one per request, stdio one per
 * connection. They share the sandbox, and so its lock. The SDK validates arguments against each
 * tool's schema before the tool runs; whatever the tool throws comes back as an `isError` result.
 */
export function createFilesystemServer(sandbox: Sandbox): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      'Sandboxed filesystem. Call list_roots first: every other tool takes a root name and a path relative to that root. ' +
      'Paths cannot leave their root; each root allows only some tools.',
  });
  for (const tool of FILESYSTEM_TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: annotationsOf(tool) },
      (args: unknown) =>
        runTool(sandbox, tool, args, (name, error) =>
          logToStderr('error', 'tool failed unexpectedly', {
            tool: name,
            error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          }),
        ),
    );
  }
  return server;
}
