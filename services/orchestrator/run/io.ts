import { TaskState } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import {
  LlmGatewayServiceService,
  type GenerateRequest,
  type GenerateResponse,
  type ToolCallPart,
} from '../../../gen/ts/asg/llm/v1/llm.js';
import type { ToolCall } from '../../../gen/ts/asg/store/v1/store.js';
import type { CallOpts } from '../../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../../common/grpc/errors.js';
import type { Logger } from '../../common/log.js';
import { redactSecrets } from '../../common/secrets.js';
import type { OrchestratorClients } from '../clients.js';
import { remoteOutcome, type A2aPeer } from '../domain/a2a-tools.js';
import { StreamedReply, StreamedTextRedactor } from '../domain/streamed-reply.js';
import { LiveEvents } from './live-events.js';
import { inputDescription } from '../domain/elicitation.js';
import type { ToolOutcome } from './types.js';

/**
 * The run's I/O with the model and the tools (driver.ts runs the machine's callModel and
 * callTool effects through it). The model's answer streams (GenerateStream) while someone
 * watches the conversation: watchers see its text as it comes and each tool call as it
 * starts and finishes (live events, live-events.ts).
 */
export class AgentIo {
  private readonly events: LiveEvents;

  constructor(
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
    /** A2A peers by tool name (domain/a2a-tools.ts a2aPeers). */
    private readonly peers: ReadonlyMap<string, A2aPeer> = new Map(),
  ) {
    this.events = new LiveEvents(clients.store, log);
  }

  /**
   * One model call, streamed: each text delta is published (redacted, a word at a time) as it
   * arrives, and the events are put together into the reply Generate would give. Errors are
   * Generate's: the llm-gateway retries a stream until its first event and reports every
   * failure with the same codes, so the caller reads them as before. A stream that ends
   * without its finish event was cut off: INTERNAL.
   */
  async generate(
    live: { conversationId: string; watched: boolean; node?: string },
    request: GenerateRequest,
    opts: CallOpts,
  ): Promise<GenerateResponse> {
    if (!live.watched) return this.clients.llm.generate(request, opts);
    const reply = new StreamedReply();
    const shown = new StreamedTextRedactor();
    for await (const event of this.clients.llm.generateStream(request, opts)) {
      const delta = reply.add(event);
      if (delta !== undefined) this.events.textDelta(live.conversationId, shown.push(delta), live.node);
    }
    const whole = reply.reply();
    if (!whole)
      throw new RpcError(
        GrpcStatus.INTERNAL,
        `the answer of model ${request.model} ended without its finish event`,
        LlmGatewayServiceService.generateStream.path,
      );
    this.events.textDelta(live.conversationId, shown.end(), live.node);
    return whole;
  }

  /**
   * Runs a tool call with its live events: tool_call_started before it, tool_call_finished
   * with its outcome after it. `run` reports failures in its outcome; it does not throw.
   */
  async withCallEvents(
    conversationId: string,
    call: Pick<ToolCallPart, 'id' | 'name'>,
    args: Record<string, unknown>,
    run: () => Promise<ToolOutcome>,
    live = true,
  ): Promise<ToolOutcome> {
    if (!live) return run();
    const started: ToolCall = { id: call.id, name: call.name, argumentsJson: JSON.stringify(args) };
    this.events.toolCallStarted(conversationId, started);
    const outcome = await run();
    this.events.toolCallFinished(conversationId, { ...started, result: outcome.text, isError: outcome.isError });
    return outcome;
  }

  /**
   * One tool call. With `answer`, the continuation of a call whose server asked for input:
   * its request state and the human's answers. A server that asks (again) comes
   * back as `input`: the run waits for a human, as for an approval.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    approvalUuid = '',
    unapprovedReason = '',
    answer?: { requestState: string; responses: Record<string, unknown> },
  ): Promise<ToolOutcome> {
    const peer = this.peers.get(name);
    if (peer) return this.delegate(name, peer, { text: typeof args.message === 'string' ? args.message : JSON.stringify(args) });
    try {
      const result = await this.clients.tools.callTool({
        name,
        argumentsJson: JSON.stringify(args),
        approvalUuid,
        unapprovedReason,
        ...(answer && { requestState: answer.requestState, inputResponsesJson: JSON.stringify(answer.responses) }),
      });
      if (result.inputRequired) {
        const input = {
          server: result.server,
          requestState: result.inputRequired.requestState ?? '',
          requests: result.inputRequired.inputRequests ?? {},
        };
        this.log.info('MCP server asks for input', { tool: name, server: result.server });
        return { text: inputDescription(name, input), isError: false, input };
      }
      return { text: result.text, isError: result.isError, ...(result.server && { server: result.server }) };
    } catch (error) {
      this.log.warn('tool call failed', { tool: name, error: errorText(error) });
      return { text: `${name} failed: ${errorText(error)}`, isError: true };
    }
  }

  /**
   * Answers a peer that waits for an approval (a proxy approval was decided here): the
   * decision goes to the peer's task as a continuation, and the peer's answer comes back.
   */
  async continueRemote(toolName: string, taskId: string, approved: boolean, reason?: string): Promise<ToolOutcome> {
    const peer = this.peers.get(toolName);
    if (!peer)
      return { text: `${toolName} is no longer configured, so the decision could not be sent to it; nothing was run here.`, isError: true };
    return this.delegate(toolName, peer, {
      text: approved ? 'approved' : 'rejected',
      taskId,
      approved,
      ...(!approved && reason && { reason }),
    });
  }

  /** One message to an A2A peer through the a2a-bridge; its answer as a tool outcome. */
  private async delegate(
    name: string,
    remote: A2aPeer,
    message: { text: string; taskId?: string; approved?: boolean; reason?: string },
  ): Promise<ToolOutcome> {
    try {
      const { task } = await this.clients.a2a.sendMessage({
        peer: remote.peer,
        text: message.text,
        taskId: message.taskId,
        approved: message.approved,
        reason: message.reason,
      });
      if (!task) return { text: `${name} failed: the a2a-bridge returned no task`, isError: true };
      if (task.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        this.log.info('sub-agent waits for approval', { agent: remote.peer.name, task: task.id });
        return {
          text: task.text,
          isError: false,
          remote: { agent: remote.peer.name, taskId: task.id, approval: task.approval, text: task.text },
        };
      }
      return remoteOutcome(remote.peer.name, task);
    } catch (error) {
      this.log.warn('a2a call failed', { agent: remote.peer.name, error: errorText(error) });
      return { text: `${name} failed: ${errorText(error)}`, isError: true };
    }
  }
}

export function errorText(error: unknown): string {
  const message = error instanceof RpcError || error instanceof Error ? error.message : String(error);
  return redactSecrets(message);
}
