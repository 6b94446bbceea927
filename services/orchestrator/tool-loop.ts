import { TaskState, type RemoteApproval } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { LlmGatewayServiceService, type GenerateRequest, type GenerateResponse, type ToolCallPart, type ToolDefinition } from '../../gen/ts/asg/llm/v1/llm.js';
import type { NewApproval, NewMessage, TokenUsage, ToolCall } from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import type { CallOpts } from '../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import { HEADROOM_MS, type OrchestratorClients } from './clients.js';
import { toModelHistory, type HistoryEntry } from './domain/history.js';
import { assistantCall, assistantText, rejectedResult, toolResult } from './domain/messages.js';
import { repeatedRejection } from './domain/rejections.js';
import { DEFERRED_REASON, describeCall, planToolCalls, type PlannedCall } from './domain/plan.js';
import { proxyDescription, remoteOutcome, type A2aPeer } from './domain/a2a-tools.js';
import { modelErrorCategory } from './domain/error-category.js';
import { StreamedReply, StreamedTextRedactor } from './domain/streamed-reply.js';
import { EXIT_LOOP_TOOL } from './domain/tree.js';
import { LiveEvents } from './live-events.js';

export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** An A2A peer answered input-required: the call waits for the peer's approval (a proxy approval here). */
  remote?: RemoteWait;
}

/** A delegation that waits at the peer for an approval. */
export interface RemoteWait {
  /** The peer's name as configured. */
  agent: string;
  taskId: string;
  approval: RemoteApproval | undefined;
  /** The peer's status text ("Approval required (id: …): …"). */
  text: string;
}

/** One model/tool loop: simple mode runs it with the conversation's prompt and model, an llm node with its own. */
export interface ToolLoopSpec {
  conversationId: string;
  model: string;
  /** This loop's model-call deadline in ms (an llm node's `timeout`); llm.timeout when absent. */
  timeoutMs?: number;
  systemPrompt: string;
  /** What the model sees before this loop's own steps. Steps are appended to it as they run. */
  history: HistoryEntry[];
  catalogue: ReadonlyMap<string, Tool>;
  /** False inside parallel and loop nodes: destructive calls run without approval. */
  gateDestructive: boolean;
  /** Offers the `exit_loop` tool; calling it ends the loop after that step. */
  canExitLoop: boolean;
  /**
   * Someone watches the conversation's events (Conversation.watched): the model call is
   * streamed and its text published as it comes, and tool calls in flight are published.
   * Without a watcher the unary Generate serves, and nothing live is published.
   */
  live: boolean;
  /** The agent-tree node the messages are tagged with (orchestrated mode). */
  node?: string;
  /**
   * Writes steps at once. Called after a step that ran a destructive call without approval:
   * unlike a safe step, its effect must not be lost from the conversation if the process
   * dies before the loop ends. Those messages are then not in the outcome again.
   */
  persist?: (messages: NewMessage[]) => Promise<void>;
}

/** A call that stops for approval: a destructive one, or a delegation the peer holds for its own approval (`proxy`). */
export type GatedCall = Extract<PlannedCall, { kind: 'gate' }> & { proxy?: RemoteWait };

/** The approval to store for a gated call: its stored arguments, and for a proxy where the call waits. */
export function approvalOf(gate: GatedCall, uuid: string): NewApproval {
  const base = { uuid, toolCallId: gate.call.id, toolName: gate.call.name, toolArgs: gate.args };
  if (!gate.proxy) return { ...base, description: describeCall(gate.call.name, gate.tool.server, gate.args), agentChain: [] };
  const remote = gate.proxy;
  return {
    ...base,
    description: proxyDescription(remote.agent, remote.approval?.description || remote.text),
    remoteTaskId: remote.taskId,
    remoteAgentName: remote.agent,
    agentChain: [remote.agent, ...(remote.approval?.chain ?? [])],
  };
}

/**
 * How a loop ended. Nothing is stored yet: `messages` are the loop's steps (and for an
 * answer its final text message), tagged with the node; the caller writes them together
 * with whatever the ending changes (DESIGN rule 2: one change, one transaction).
 */
export type ToolLoopOutcome =
  | { kind: 'answer'; text: string; messages: NewMessage[]; exitLoop: boolean }
  | { kind: 'gate'; gate: GatedCall; messages: NewMessage[] };

const EXIT_LOOP_DEFINITION: ToolDefinition = {
  name: EXIT_LOOP_TOOL,
  description: 'Ends the loop this step runs in. Call it when the goal of the loop is reached.',
  inputSchema: { type: 'object', properties: {} },
};

const UNAPPROVED_REASON = (node: string | undefined) => `approvals: auto inside a parallel or loop node (node "${node ?? '?'}")`;

export const EXIT_LOOP_RESULT = 'The loop ends after this step.';

export function toolDefinitionsOf(catalogue: ReadonlyMap<string, Tool>): ToolDefinition[] {
  return [...catalogue.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
}

/**
 * The model/tool loop, up to `chat.max_llm_iterations` model calls: each step's calls are
 * planned (domain/plan.ts), safe ones run, the first destructive one ends the loop with a
 * gate unless destructive calls run unapproved here, and a text answer ends it. The model's
 * answer streams (GenerateStream): watchers of the conversation see its text as it comes and
 * each tool call as it starts and finishes (live events, live-events.ts).
 */
export class ToolLoop {
  private readonly events: LiveEvents;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
    /** A2A peers by tool name (domain/a2a-tools.ts a2aPeers). */
    private readonly peers: ReadonlyMap<string, A2aPeer> = new Map(),
  ) {
    this.events = new LiveEvents(clients.store, log);
  }

  async run(spec: ToolLoopSpec): Promise<ToolLoopOutcome> {
    const tag = (message: NewMessage): NewMessage => (spec.node === undefined ? message : { ...message, node: spec.node });
    const tools = toolDefinitionsOf(spec.catalogue);
    if (spec.canExitLoop) tools.push(EXIT_LOOP_DEFINITION);
    const history = spec.history;
    const steps: NewMessage[] = [];
    const answer = (text: string, usage?: TokenUsage, exitLoop = false): ToolLoopOutcome => {
      const response = redactSecrets(text);
      return { kind: 'answer', text: response, messages: [...steps, tag({ ...assistantText(response), usage })], exitLoop };
    };

    for (let step = 0; step < this.config.chat.max_llm_iterations; step++) {
      let reply;
      try {
        reply = await this.generate(
          spec,
          { model: spec.model, systemPrompt: spec.systemPrompt, messages: toModelHistory(history), tools, timeoutMs: spec.timeoutMs },
          // The gRPC deadline leaves the llm-gateway room to report its own timeout first.
          spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs + HEADROOM_MS },
        );
      } catch (error) {
        this.log.warn('model call failed', { conversation: spec.conversationId, node: spec.node, error: errorText(error) });
        const category = modelErrorCategory(error instanceof RpcError ? error.code : undefined);
        return answer(`The model could not answer (${category} error): ${errorText(error)}`);
      }
      const usage = reply.usage && { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
      if (reply.toolCalls.length === 0) return answer(reply.text || '(the model returned an empty answer)', usage);

      const plan = planToolCalls(reply.toolCalls, spec.catalogue, { gateDestructive: spec.gateDestructive, exitTool: spec.canExitLoop ? EXIT_LOOP_TOOL : undefined });
      const recorded: NewMessage[] = [];
      if (reply.text) recorded.push(assistantText(reply.text));
      for (const planned of plan) {
        const call = assistantCall(planned.call, planned.args);
        // Marked on the call (not its result, which the model reads): it ran without a human's approval.
        recorded.push(planned.kind === 'run' && planned.unapproved ? { ...call, content: `${call.content} (destructive; ran without approval inside a parallel or loop node)` } : call);
      }
      // The step's tokens go on its first message, so the conversation's sum counts each call once.
      recorded[0] = { ...recorded[0]!, usage };
      let exitLoop = false;
      // A delegation that the peer holds for its own approval stops the step like a gate.
      let waiting: GatedCall | undefined;
      for (const planned of plan) {
        if (planned.kind === 'reject') recorded.push(toolResult(planned.call, planned.args, planned.reason, true));
        else if (planned.kind === 'defer') recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
        else if (planned.kind === 'exit') {
          exitLoop = true;
          recorded.push(toolResult(planned.call, planned.args, EXIT_LOOP_RESULT, false));
        } else if (planned.kind === 'run') {
          if (planned.unapproved) this.log.warn('destructive call ran without approval', { conversation: spec.conversationId, node: spec.node, tool: planned.call.name });
          const unapprovedReason = planned.unapproved ? UNAPPROVED_REASON(spec.node) : '';
          const outcome = await this.withCallEvents(spec.conversationId, planned.call, planned.args, () => this.callTool(planned.call.name, planned.args, '', unapprovedReason), spec.live);
          if (outcome.remote && !waiting) waiting = { kind: 'gate', call: planned.call, args: planned.args, tool: planned.tool, proxy: outcome.remote };
          else if (outcome.remote) recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
          else recorded.push(toolResult(planned.call, planned.args, outcome.text, outcome.isError));
        }
      }
      let planned = plan.find((call): call is GatedCall => call.kind === 'gate');
      // Issue 13: a call identical to one a human rejected in this run gets the same "no" at once.
      const earlier = planned && repeatedRejection(history, planned.call.name, planned.args);
      if (planned && earlier) {
        this.log.info('call repeats one rejected in this run; answered without asking again', { conversation: spec.conversationId, node: spec.node, tool: planned.call.name });
        recorded.push(rejectedResult(planned.call, planned.args, earlier.reason, earlier.text));
        planned = undefined;
      }
      // One approval per step: with a proxy waiting, a destructive call of the same step is deferred.
      if (waiting && planned) recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
      const gate = waiting ?? planned;
      if (gate) return { kind: 'gate', gate, messages: [...steps, ...recorded.map(tag)] };
      steps.push(...recorded.map(tag));
      history.push(...recorded);
      if (spec.persist && plan.some((planned) => planned.kind === 'run' && planned.unapproved)) {
        await spec.persist(steps.splice(0));
      }
      if (exitLoop) {
        // The step's text, if any, is already recorded; the node's output is that text.
        return { kind: 'answer', text: redactSecrets(reply.text), messages: steps, exitLoop: true };
      }
    }
    return answer(`Stopped after ${this.config.chat.max_llm_iterations} model calls in one turn (chat.max_llm_iterations) without a final answer.`);
  }

  /**
   * One model call, streamed: each text delta is published (redacted, a word at a time) as it
   * arrives, and the events are put together into the reply Generate would give. Errors are
   * Generate's: the llm-gateway retries a stream until its first event and reports every
   * failure with the same codes, so the caller reads them as before. A stream that ends
   * without its finish event was cut off: INTERNAL.
   */
  private async generate(spec: ToolLoopSpec, request: GenerateRequest, opts: CallOpts): Promise<GenerateResponse> {
    if (!spec.live) return this.clients.llm.generate(request, opts);
    const reply = new StreamedReply();
    const shown = new StreamedTextRedactor();
    for await (const event of this.clients.llm.generateStream(request, opts)) {
      const delta = reply.add(event);
      if (delta !== undefined) this.events.textDelta(spec.conversationId, shown.push(delta), spec.node);
    }
    const whole = reply.reply();
    if (!whole) throw new RpcError(GrpcStatus.INTERNAL, `the answer of model ${request.model} ended without its finish event`, LlmGatewayServiceService.generateStream.path);
    this.events.textDelta(spec.conversationId, shown.end(), spec.node);
    return whole;
  }

  /**
   * Runs a tool call with its live events: tool_call_started before it, tool_call_finished
   * with its outcome after it. `run` reports failures in its outcome; it does not throw.
   */
  async withCallEvents(conversationId: string, call: Pick<ToolCallPart, 'id' | 'name'>, args: Record<string, unknown>, run: () => Promise<ToolOutcome>, live = true): Promise<ToolOutcome> {
    if (!live) return run();
    const started: ToolCall = { id: call.id, name: call.name, arguments: args };
    this.events.toolCallStarted(conversationId, started);
    const outcome = await run();
    this.events.toolCallFinished(conversationId, { ...started, result: outcome.text, isError: outcome.isError });
    return outcome;
  }

  async callTool(name: string, args: Record<string, unknown>, approvalUuid = '', unapprovedReason = ''): Promise<ToolOutcome> {
    const peer = this.peers.get(name);
    if (peer) return this.delegate(name, peer, { text: typeof args.message === 'string' ? args.message : JSON.stringify(args) });
    try {
      const result = await this.clients.tools.callTool({ name, arguments: args, approvalUuid, unapprovedReason });
      return { text: result.text, isError: result.isError };
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
    if (!peer) return { text: `${toolName} is no longer configured, so the decision could not be sent to it; nothing was run here.`, isError: true };
    return this.delegate(toolName, peer, { text: approved ? 'approved' : 'rejected', taskId, approved, ...(!approved && reason && { reason }) });
  }

  /** One message to an A2A peer through the a2a-bridge; its answer as a tool outcome. */
  private async delegate(name: string, remote: A2aPeer, message: { text: string; taskId?: string; approved?: boolean; reason?: string }): Promise<ToolOutcome> {
    try {
      const { task } = await this.clients.a2a.sendMessage({ peer: remote.peer, text: message.text, taskId: message.taskId, approved: message.approved, reason: message.reason });
      if (!task) return { text: `${name} failed: the a2a-bridge returned no task`, isError: true };
      if (task.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        this.log.info('sub-agent waits for approval', { agent: remote.peer.name, task: task.id });
        return { text: task.text, isError: false, remote: { agent: remote.peer.name, taskId: task.id, approval: task.approval, text: task.text } };
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
