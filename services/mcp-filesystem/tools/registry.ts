import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { RootToolName } from '../config.js';
import { ToolError } from '../errors.js';
import type { Sandbox } from '../sandbox.js';

/**
 * One tool of mcp-filesystem, independent of any transport: a name, an input schema, whether it
 * only reads, and what it does with a sandbox. server.ts turns each into an MCP tool; tests call
 * them through `callTool`, the same validate → lock → run → map path the MCP server takes.
 */
export interface FilesystemTool<Input extends z.ZodObject = z.ZodObject> {
  name: RootToolName | 'list_roots';
  title: string;
  description: string;
  input: Input;
  /** Read tools say `readOnlyHint: true`; every other tool is destructive. */
  readOnly: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  idempotent: boolean;
  run(sandbox: Sandbox, args: z.output<Input>): Promise<Record<string, unknown>>;
}

export function defineTool<Input extends z.ZodObject>(tool: FilesystemTool<Input>): FilesystemTool<Input> {
  return tool;
}

export function annotationsOf(tool: FilesystemTool): ToolAnnotations {
  // MCP spec: destructiveHint defaults to true when readOnlyHint is false; both are said explicitly.
  return tool.readOnly
    ? { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
    : { title: tool.title, readOnlyHint: false, destructiveHint: true, idempotentHint: tool.idempotent, openWorldHint: false };
}

function success(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Reports an error that is not a ToolError (a bug, or an fs failure nobody mapped); never shown to the caller. */
export type UnexpectedErrorSink = (tool: string, error: unknown) => void;

/** Runs an already-validated call under the sandbox's lock and maps every failure to a tool result. */
export async function runTool(
  sandbox: Sandbox,
  tool: FilesystemTool,
  args: unknown,
  onUnexpected?: UnexpectedErrorSink,
): Promise<CallToolResult> {
  try {
    const payload = await sandbox.lock.run(!tool.readOnly, () => tool.run(sandbox, args as never));
    return success(payload);
  } catch (error) {
    if (error instanceof ToolError) return failure(error.message);
    onUnexpected?.(tool.name, error);
    // Node's messages carry absolute host paths: say only what failed.
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    return failure(`${tool.name} failed unexpectedly${code ? ` (${code})` : ''}; the server log has the details`);
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'arguments'}: ${issue.message}`).join('; ');
}

/** Validates raw arguments with the tool's schema, then runs it (what an MCP tools/call does). */
export async function callTool(
  sandbox: Sandbox,
  tool: FilesystemTool,
  raw: unknown,
  onUnexpected?: UnexpectedErrorSink,
): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) return failure(`invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`);
  return runTool(sandbox, tool, parsed.data, onUnexpected);
}

// Argument schemas every path-taking tool shares.
export const rootArg = z.string().min(1).describe('Name of the root to act in (see list_roots)');
export const pathArg = (what: string) =>
  z
    .string()
    .describe(
      `${what}, relative to the root ("." or "" is the root itself; a leading "/" also means the root; ".." may not climb above it)`,
    );
export const maxDepthArg = z
  .number()
  .int()
  .min(0)
  .max(1000)
  .optional()
  .describe('How deep to descend: 0 = only the folder itself, 1 = also its subfolders, and so on (default: no limit)');
