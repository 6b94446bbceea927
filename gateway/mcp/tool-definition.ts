import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentConfig } from '../../services/common/config/schema.js';

/**
 * The one tool the agent offers as an MCP server (the agent served as an MCP
 * tool): its name, description and message argument come from `serve_mcp.tool`; an optional
 * second argument continues a conversation. Pure definitions, no I/O.
 */

export type AskToolConfig = AgentConfig['serve_mcp']['tool'];

/** The optional second argument: continue this conversation instead of starting one. */
export const CONVERSATION_ID_ARGUMENT = 'conversation_id';

/**
 * readOnlyHint false: a call can change the world, through the agent's tools.
 * destructiveHint false: the tool makes no destructive update on its own — every destructive
 * call the agent wants stops at its approval gate and runs only after a human said yes, asked
 * by this tool itself (elicitation) or decided outside the call (REST, a later call). Marking
 * it destructive would make annotation-gated clients (this project's own tool broker among
 * them) ask for an approval before every question, reads included, and then ask a second time
 * for the destructive call inside. idempotentHint false: every call is a new turn.
 * openWorldHint true: the agent reaches MCP servers, A2A agents and models outside.
 */
export const ASK_TOOL_ANNOTATIONS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const nonBlank = (what: string) => z.string().refine((text) => text.trim() !== '', `${what} must contain some text`);

export function askInputSchema(tool: AskToolConfig) {
  if (tool.argument_name === CONVERSATION_ID_ARGUMENT) {
    throw new Error(
      `serve_mcp.tool.argument_name must not be "${CONVERSATION_ID_ARGUMENT}": the tool uses that argument to continue a conversation; choose another name`,
    );
  }
  return z.object({
    [tool.argument_name]: nonBlank(`"${tool.argument_name}"`).describe(tool.argument_description),
    [CONVERSATION_ID_ARGUMENT]: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Optional. The conversation_id of an earlier answer, to continue that conversation; omit it to start a new one. ' +
          'When that conversation waits for an approval, the message "yes" or "no" decides it.',
      ),
  });
}

const approvalSchema = z.object({
  uuid: z.string(),
  tool_name: z.string(),
  tool_args: z.record(z.string(), z.unknown()),
  description: z.string(),
});

/** structuredContent of every successful call. */
export const askOutputSchema = z.object({
  conversation_id: z.string(),
  /** The agent's answer; empty while it waits for an approval and had nothing to say. */
  response: z.string(),
  waiting_approval: z.boolean(),
  /** Present while the conversation waits: what a human has to decide. */
  approval: approvalSchema.optional(),
});

export type AskOutput = z.infer<typeof askOutputSchema>;

/** What one call asks for, from arguments the SDK has validated against askInputSchema. */
export interface AskArguments {
  message: string;
  conversationId?: string;
}

export function readAskArguments(tool: AskToolConfig, args: Record<string, unknown>): AskArguments {
  const message = String(args[tool.argument_name] ?? '');
  const conversationId = args[CONVERSATION_ID_ARGUMENT];
  return typeof conversationId === 'string' ? { message, conversationId } : { message };
}
