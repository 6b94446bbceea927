import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  McpServer,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Logger } from '../../services/common/log.js';
import { failureOf } from '../app/errors.js';
import { answerOf, APPROVAL_INPUT_KEY, approvalQuestion, canAskByForm } from './approval-question.js';
import { currentExchange } from './exchange.js';
import { decodeQuestionState, encodeQuestionState, type QuestionState } from './request-state.js';
import { ASK_TOOL_ANNOTATIONS, askInputSchema, askOutputSchema, readAskArguments, type AskToolConfig } from './tool-definition.js';
import { answerResult, approvalResult, toolErrorResult } from './tool-result.js';
import { McpTurns, type TurnAgent, type TurnStep } from './turns.js';

/**
 * The agent as an MCP server: one McpServer instance per 2026-07-28 request, per 2025-era
 * session, or per session-less 2025-era request, all from this one factory.
 *
 * A call that stops for an approval asks the client's user through form elicitation when the
 * client declared it, in the way its protocol era allows:
 * - 2026-07-28 (stateless): the call returns `input_required` with the question and a
 *   `requestState`; the client asks its user and retries the call with the answer, which any
 *   replica can serve.
 * - 2025-era, in a session: a server→client `elicitation/create` on the call's own response
 *   stream, awaited in the call. The SDK's legacy shim would do the same, but a failed or
 *   timed-out question would then end the call in a bare error; asking here, such a call
 *   returns the approval instead, which the client can still decide.
 * After a yes the approval is resolved and the turn goes on, asking again if it stops again,
 * until it finishes or the turn deadline passes; a no, a decline or a cancel rejects it.
 * Without elicitation the call returns the approval, to be decided over REST or by calling
 * the tool again with the conversation id and "yes" or "no".
 */

export type ProtocolEra = 'legacy' | 'modern';

export interface AgentMcpServerOptions {
  agent: TurnAgent;
  /** The MCP server's name and version; the description becomes its instructions. */
  identity: { name: string; description: string; version: string };
  tool: AskToolConfig;
  /** chat.turn_timeout: how long one call may go on asking for approvals. */
  turnTimeoutMs: number;
  log: Logger;
}

const NO_ELICITATION =
  'It was not asked here: the client did not declare the elicitation capability (form mode); a 2025-era client also needs an MCP session for it.';
const DEADLINE_PASSED = 'It was not asked here: the turn deadline (chat.turn_timeout) of this call has passed.';
const UNCLEAR_ANSWER = 'The answer to the approval question said neither approve nor reject, so nothing was decided.';

type CallOutcome = CallToolResult | InputRequiredResult;

function clientCapabilities(server: McpServer, era: ProtocolEra, ctx: ServerContext): ClientCapabilities | undefined {
  if (era === 'modern') {
    // 2026-07-28: each request declares the client's capabilities in its own envelope.
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  }
  // 2025-era: what the session's initialize declared; nothing on a session-less request.
  return server.server.getClientCapabilities();
}

export function createAgentMcpServer(options: AgentMcpServerOptions, era: ProtocolEra): McpServer {
  const { identity, tool, log } = options;
  const turns = new McpTurns(options.agent);
  const server = new McpServer(
    { name: identity.name, version: identity.version },
    {
      capabilities: { tools: { listChanged: false } },
      ...(identity.description && { instructions: identity.description }),
      // A state this server did not make is refused before the tool runs (-32602).
      requestState: { verify: (state) => decodeQuestionState(state) },
      // 2025-era questions are asked by the tool itself (see above); an input_required
      // result towards a 2025-era client would be a bug here, and should fail loudly.
      inputRequired: { legacyShim: false },
    },
  );

  async function call(args: Record<string, unknown>, ctx: ServerContext): Promise<CallOutcome> {
    const canAsk = canAskByForm(clientCapabilities(server, era, ctx));
    const state = ctx.mcpReq.requestState<QuestionState>();
    const deadline = state?.deadline ?? Date.now() + options.turnTimeoutMs;

    /** From a step, to the call's outcome: asking as long as the turn keeps stopping and the client can answer. */
    const settle = async (first: TurnStep, notAskedBecause?: string): Promise<CallOutcome> => {
      let step = first;
      for (;;) {
        currentExchange()?.adoptSessionId(step.sessionId);
        if (step.kind === 'answered') return answerResult(step);
        const remaining = deadline - Date.now();
        const reason = notAskedBecause ?? (!canAsk ? NO_ELICITATION : remaining <= 0 ? DEADLINE_PASSED : undefined);
        if (reason) return approvalResult(tool, step, reason);
        const question = approvalQuestion(step.approval);
        if (era === 'modern') {
          const next: QuestionState = { conversation_id: step.conversationId, approval_uuid: step.approval.uuid, deadline };
          return inputRequired({
            inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicit(question) },
            requestState: encodeQuestionState(next),
          });
        }
        let reply: unknown;
        try {
          // On the call's own response stream (relatedRequestId), as the 2025 transport needs.
          reply = await server.server.elicitInput(question, {
            relatedRequestId: ctx.mcpReq.id,
            timeout: remaining,
            signal: ctx.mcpReq.signal,
          });
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          return approvalResult(tool, step, `The approval question got no answer (${why}), so nothing was decided.`);
        }
        const answer = answerOf(reply);
        if (answer !== 'approved' && answer !== 'rejected') return approvalResult(tool, step, UNCLEAR_ANSWER);
        step = await turns.decide(step.approval.uuid, answer);
      }
    };

    try {
      if (!state) return await settle(await turns.begin(readAskArguments(tool, args)));
      // A 2026-07-28 retry carrying the user's answer to the question this call asked.
      const answer = answerOf(ctx.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY]);
      if (answer === 'approved' || answer === 'rejected') return await settle(await turns.decide(state.approval_uuid, answer));
      // No answer at all: ask again (what waits now, which someone may have decided meanwhile).
      return await settle(await turns.current(state.conversation_id), answer === 'unclear' ? UNCLEAR_ANSWER : undefined);
    } catch (error) {
      const failure = failureOf(error);
      if (failure.unexpected) log.error('mcp tool call failed', { tool: tool.name, error: failure.message });
      return toolErrorResult(failure.message);
    }
  }

  server.registerTool(
    tool.name,
    {
      title: identity.name,
      description: tool.description,
      inputSchema: askInputSchema(tool),
      outputSchema: askOutputSchema,
      annotations: ASK_TOOL_ANNOTATIONS,
    },
    (args, ctx) => call(args as Record<string, unknown>, ctx),
  );
  return server;
}
