import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStatus, MessageRole, type Conversation, type NewMessage, type PipelineState } from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import type { AgentConfig } from '../common/config/schema.js';
import { describeNodePath } from '../common/config/tree.js';
import { failedPrecondition, internal } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import type { HistoryEntry } from './domain/history.js';
import { assistantText } from './domain/messages.js';
import {
  childGates,
  DEFAULT_MAX_ITERATIONS,
  joinOutputs,
  nodeAt,
  resolvePlaceholders,
  resumeIndex,
  treeFingerprint,
  type AgentNode,
} from './domain/tree.js';
import type { ToolCatalogue } from './tool-catalogue.js';
import { errorText, type GatedCall, type ToolLoop } from './tool-loop.js';

/** How a run ended, with the conversation as stored at that point. */
export interface StepsOutcome {
  result: TurnResult;
  conversation: Conversation;
}

/** Stops the turn for approval (TurnRunner.stopForApproval): one CreateApproval transaction. */
export type StopForApproval = (conversationId: string, gate: GatedCall, messages: NewMessage[], pipelineState: PipelineState) => Promise<StepsOutcome>;

/** What one run of the tree knows; nothing of it outlives the request except what a pause stores. */
interface RunContext {
  conversationId: string;
  userMessage: string;
  /**
   * Session state: output_key values. Node runs are async functions on one event loop, so
   * concurrent parallel branches never interleave inside a read or a write of the map.
   */
  state: Map<string, string>;
  catalogue: ReadonlyMap<string, Tool>;
  /** Set while a resumed run has not yet reached the paused node. */
  resume?: { path: number[]; history: HistoryEntry[] };
}

type NodeOutcome = { kind: 'done'; output: string; exitLoop: boolean } | { kind: 'paused'; outcome: StepsOutcome };

/**
 * Orchestrated mode: walks the agent tree for one user message. llm nodes run the tool loop
 * of simple mode with their own prompt and model; sequential nodes run children in order
 * and are the only place a destructive call stops the pipeline (the seed's default);
 * parallel nodes run children concurrently; loop nodes repeat until `exit_loop` or
 * `max_iterations`. A pause stores the path to the paused node, the session state and a
 * fingerprint of the nodes on that path; a resume fast-forwards along the path.
 */
export class PipelineRunner {
  constructor(
    private readonly root: AgentNode,
    private readonly config: AgentConfig,
    private readonly clients: OrchestratorClients,
    private readonly loop: ToolLoop,
    private readonly catalogue: ToolCatalogue,
    private readonly stop: StopForApproval,
    private readonly log: Logger,
  ) {}

  /** A fresh run of the tree for the message that StartTurn just appended. */
  async run(conversation: Conversation, userMessage: string): Promise<StepsOutcome> {
    return this.walk(conversation.id, { userMessage, state: new Map() });
  }

  /**
   * The node a stored pipeline state pauses at, when the configured tree still leads to the
   * same node; FAILED_PRECONDITION otherwise, before anything is claimed or run.
   */
  pausedNode(state: PipelineState, approvalUuid: string): AgentNode {
    const where = describeNodePath(['agent', ...state.pausedNodePath.flatMap((index) => ['agents', index])]);
    const node = nodeAt(this.root, state.pausedNodePath);
    if (!node || state.treeFingerprint === '' || treeFingerprint(this.root, state.pausedNodePath) !== state.treeFingerprint) {
      throw failedPrecondition(
        `approval ${approvalUuid} cannot resume its pipeline: the agent tree changed since it paused at ${where}, so that path no longer leads to the same node. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`,
      );
    }
    return node;
  }

  /** The name of the paused node, when the path still leads to one (for tagging messages). */
  nodeNameAt(state: PipelineState): string | undefined {
    return nodeAt(this.root, state.pausedNodePath)?.name;
  }

  /** Goes on after an approved call ran: the paused llm node's loop, then the rest of the tree. */
  async resume(conversation: Conversation, state: PipelineState, approvalUuid: string): Promise<StepsOutcome> {
    const node = this.pausedNode(state, approvalUuid);
    // The node's own steps of this run: after the run's user message, tagged with its name
    // (names are unique in the tree, and a node that gates runs once per run).
    const lastUser = conversation.messages.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
    const history = conversation.messages.slice(lastUser + 1).filter((message) => message.node === node.name);
    return this.walk(conversation.id, {
      userMessage: state.userMessage,
      state: new Map(Object.entries(state.sessionState)),
      resume: { path: [...state.pausedNodePath], history },
    });
  }

  private async walk(conversationId: string, run: Pick<RunContext, 'userMessage' | 'state' | 'resume'>): Promise<StepsOutcome> {
    let catalogue: ReadonlyMap<string, Tool>;
    try {
      catalogue = await this.catalogue.current();
    } catch (error) {
      return this.finish(conversationId, `The tools are unavailable right now: ${errorText(error)}`, [assistantText(`The tools are unavailable right now: ${errorText(error)}`)]);
    }
    const outcome = await this.runNode({ conversationId, catalogue, ...run }, this.root, [], true);
    if (outcome.kind === 'paused') return outcome.outcome;
    return this.finish(conversationId, outcome.output, []);
  }

  private async runNode(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    switch (node.type) {
      case 'llm':
        return this.runLlm(ctx, node, path, gates);
      case 'sequential':
        return this.runSequential(ctx, node, path, gates);
      case 'parallel':
        return this.runParallel(ctx, node, path);
      case 'loop':
        return this.runLoop(ctx, node, path);
      case 'a2a': {
        const text = `The a2a node "${node.name}" was skipped: a2a nodes are not supported yet.`;
        this.log.warn('a2a node skipped', { conversation: ctx.conversationId, node: node.name });
        await this.append(ctx.conversationId, [{ ...assistantText(text), node: node.name }]);
        return { kind: 'done', output: text, exitLoop: false };
      }
    }
  }

  private async runLlm(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const resuming = ctx.resume !== undefined && samePath(ctx.resume.path, path);
    const earlierSteps = resuming ? ctx.resume!.history : [];
    if (resuming) ctx.resume = undefined;
    const { text: systemPrompt, unknown } = resolvePlaceholders(node.prompt ?? '', ctx.state, ctx.userMessage);
    if (unknown.length > 0) this.log.warn('placeholders without a value left as written', { conversation: ctx.conversationId, node: node.name, placeholders: unknown.join(',') });
    const outcome = await this.loop.run({
      conversationId: ctx.conversationId,
      model: node.model ?? this.config.llm.model,
      timeoutMs: node.timeout,
      systemPrompt,
      // Each node sees the run's user message and its own steps, not other nodes' calls.
      history: [{ role: MessageRole.MESSAGE_ROLE_USER, content: ctx.userMessage }, ...earlierSteps],
      catalogue: ctx.catalogue,
      gateDestructive: gates,
      canExitLoop: node.can_exit_loop ?? false,
      node: node.name,
      persist: (messages) => this.append(ctx.conversationId, messages),
    });
    if (outcome.kind === 'gate') {
      const pipelineState: PipelineState = {
        pausedNodePath: path,
        pausedNodeOutputKey: node.output_key ?? '',
        sessionState: Object.fromEntries(ctx.state),
        userMessage: ctx.userMessage,
        treeFingerprint: treeFingerprint(this.root, path) ?? '',
      };
      this.log.info('pipeline paused', { conversation: ctx.conversationId, node: node.name, path: path.join('.') });
      return { kind: 'paused', outcome: await this.stop(ctx.conversationId, outcome.gate, outcome.messages, pipelineState) };
    }
    await this.append(ctx.conversationId, outcome.messages);
    if (node.output_key) ctx.state.set(node.output_key, outcome.text);
    return { kind: 'done', output: outcome.text, exitLoop: outcome.exitLoop };
  }

  private async runSequential(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    let output = '';
    for (let index = resumeIndex(ctx.resume?.path, path) ?? 0; index < children.length; index++) {
      const outcome = await this.runNode(ctx, children[index]!, [...path, index], childGates(gates, node));
      if (outcome.kind === 'paused') return outcome;
      output = outcome.output;
      // exit_loop ends the nearest enclosing loop, so the rest of this sequence is skipped too.
      if (outcome.exitLoop) return outcome;
    }
    return { kind: 'done', output, exitLoop: false };
  }

  private async runParallel(ctx: RunContext, node: AgentNode, path: number[]): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    const outcomes = await Promise.all(children.map((child, index) => this.runNode(ctx, child, [...path, index], false)));
    const outputs = outcomes.map((outcome) => (outcome.kind === 'done' ? outcome.output : ''));
    return { kind: 'done', output: joinOutputs(outputs), exitLoop: outcomes.some((outcome) => outcome.kind === 'done' && outcome.exitLoop) };
  }

  private async runLoop(ctx: RunContext, node: AgentNode, path: number[]): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    const maxIterations = node.max_iterations ?? DEFAULT_MAX_ITERATIONS;
    let output = '';
    let iteration = 0;
    let exited = false;
    while (!exited && iteration < maxIterations) {
      iteration += 1;
      for (let index = 0; index < children.length; index++) {
        const outcome = await this.runNode(ctx, children[index]!, [...path, index], false);
        if (outcome.kind === 'paused') return outcome;
        output = outcome.output || output;
        if (outcome.exitLoop) {
          exited = true;
          break;
        }
      }
    }
    this.log.info('loop finished', { conversation: ctx.conversationId, node: node.name, iterations: iteration, exited });
    return { kind: 'done', output, exitLoop: false };
  }

  private async append(conversationId: string, messages: NewMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.clients.store.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      clearPipelineState: false,
      returnConversation: false,
    });
  }

  /** Ends the run: its last messages and the cleared pipeline state in one transaction. */
  private async finish(conversationId: string, response: string, messages: NewMessage[]): Promise<StepsOutcome> {
    const { conversation } = await this.clients.store.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      clearPipelineState: true,
      returnConversation: true,
    });
    if (!conversation) throw internal('the store returned no conversation');
    return { result: { response, waitingApproval: false }, conversation };
  }
}

function samePath(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((index, position) => index === b[position]);
}
