import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { compileSafeRegex, PatternError, type SafeRegex } from '../common/safe-regex.js';
import type { ResourceStore } from './store.js';

/**
 * The three tools of the built-in mcp-resources server. Every failure a caller can cause
 * (a bad regex, a missing argument, an unknown id) comes back as a tool result with
 * `isError: true`, so the model reads what went wrong instead of the call crashing.
 */

const SERVER_INFO = { name: 'mcp-resources', version: '0.1.0' };

// Matching is linear in RE2 whatever the pattern; the length cap keeps compiling cheap.
const MAX_PATTERN_LENGTH = 500;

const PATTERN_DESCRIPTION =
  'Regular expression (RE2 syntax: JavaScript-like, without lookaround or backreferences) matched against resource names';

function success(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Runs `use` with `pattern` compiled (or with none), or answers why the pattern is unusable. */
function withPattern(pattern: string | undefined, use: (regex: SafeRegex | undefined) => CallToolResult): CallToolResult {
  if (pattern === undefined) return use(undefined);
  if (pattern.length > MAX_PATTERN_LENGTH)
    return failure(`pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  let regex: SafeRegex | undefined;
  try {
    regex = compileSafeRegex(pattern, { what: 'regular expression' });
    return use(regex);
  } catch (error) {
    if (error instanceof PatternError) return failure(error.message);
    throw error;
  } finally {
    regex?.dispose();
  }
}

/** A fresh MCP server over `store`: the HTTP face builds one per request, stdio one per connection. */
export function createResourcesServer(store: ResourceStore): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });

  server.registerTool(
    'resources_add',
    {
      description: 'Add a new resource with a name and an integer value. Returns the created resource with its id.',
      inputSchema: z.object({
        name: z.string().trim().min(1).describe('Name of the resource'),
        value: z.number().int().describe('Integer value of the resource'),
      }),
      annotations: { title: 'Add resource', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    ({ name, value }) => success({ ...store.add(name, value) }),
  );

  server.registerTool(
    'resources_remove',
    {
      description:
        'Remove resources by id or by a regular expression matched against their names. ' +
        'At least one of id and pattern is required; with both, only the resource with that id is removed, and only if its name matches.',
      inputSchema: z.object({
        id: z.string().min(1).optional().describe('Id of the resource to remove'),
        pattern: z.string().optional().describe(PATTERN_DESCRIPTION),
      }),
      annotations: { title: 'Remove resources', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    ({ id, pattern }) => {
      if (id === undefined && pattern === undefined)
        return failure('resources_remove needs "id" or "pattern" (or both); neither was given');
      return withPattern(pattern, (regex) => {
        const removal = store.remove({ id, pattern: regex });
        if (id !== undefined && removal.removed === 0) {
          return failure(
            pattern === undefined
              ? `no resource with id ${JSON.stringify(id)}`
              : `no resource with id ${JSON.stringify(id)} whose name matches ${JSON.stringify(pattern)}`,
          );
        }
        return success({ ...removal });
      });
    },
  );

  server.registerTool(
    'resources_list',
    {
      description: 'List resources, oldest first, optionally only those whose name matches a regular expression.',
      inputSchema: z.object({
        pattern: z.string().optional().describe(PATTERN_DESCRIPTION),
      }),
      annotations: { title: 'List resources', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ pattern }) =>
      withPattern(pattern, (regex) => {
        const resources = store.list(regex);
        return success({ resources, count: resources.length });
      }),
  );

  return server;
}
