import { randomUUID } from 'node:crypto';
import type { TurnResult } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ConversationStatus,
  MessageRole,
  type Conversation,
  type NewApproval,
  type NewMessage,
  type PipelinePause,
  type PipelineState,
} from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import { describeNodePath } from '../common/config/tree.js';
import { failedPrecondition, GrpcStatus, internal, isCode } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import type { HistoryEntry } from './domain/history.js';
import { approvalRequiredText, assistantCall, assistantText, stillWaitingText, toolResult } from './domain/messages.js';
import { a2aTool, a2aToolsOf } from './domain/a2a-tools.js';
import { isBelow, noChanges, pathKey, pausesOf, takeBranchOutputs, waitsBelow, withChanges, type PipelineChanges } from './domain/pipeline-state.js';
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
import { catalogueWith, type ToolCatalogue } from './tool-catalogue.js';
import { endTurn } from './turn-end.js';
import { approvalOf, errorText, type GatedCall, type ToolLoop } from './tool-loop.js';

/** How a run ended, with the conversation as stored at that point. */
export interface StepsOutcome {
  result: TurnResult;
  conversation: Conversation;
}

/** A write of the pipeline state lost the race this many times in a row: give up (ABORTED). */
const MAX_WRITE_ATTEMPTS = 8;

/** What one run of the tree knows; nothing of it outlives the request except what it writes. */
interface RunContext {
  conversationId: string;
  /** Someone watches the conversation's events (Conversation.watched): model text and tool calls go out live. */
  live: boolean;
  runId: string;
  userMessage: string;
  /**
   * Session state: output_key values. Node runs are async functions on one event loop, so
   * concurrent parallel branches never interleave inside a read or a write of the map.
   */
  state: Map<string, string>;
  catalogue: ReadonlyMap<string, Tool>;
  /** Set while a resumed run has not yet reached the paused node. */
  resume?: { path: number[]; history: HistoryEntry[]; loopIterations: Record<string, number> };
  /** The pipeline state as last read or written (none for a fresh run before its first write). */
  stored: PipelineState | undefined;
  /** The revision the next write expects the store to be at. */
  revision: number;
  /** What this run changed since `stored`. */
  changes: PipelineChanges;
  /** Approvals this run pauses for, with the steps that led to each; written with the pause. */
  gates: { approval: NewApproval; messages: NewMessage[] }[];
}

type NodeOutcome =
  | { kind: 'done'; output: string; exitLoop: boolean }
  /** The node waits for approvals (in RunContext.changes and .gates, not yet written). */
  | { kind: 'paused' }
  /** This run finished its branch and stored it; other branches still wait, so it stops here. */
  | { kind: 'waiting'; outcome: StepsOutcome };

/** The stored state now belongs to another run, or none: this run is over. */
class RunSuperseded extends Error {
  constructor(
    message: string,
    /** Another run holds the conversation now (and its running mark, which stays). */
    readonly byNewerRun: boolean,
  ) {
    super(message);
  }
}

/**
 * Orchestrated mode: walks the agent tree for one user message. llm nodes run the tool loop
 * of simple mode with their own prompt and model; sequential nodes run children in order;
 * parallel nodes run children concurrently; loop nodes repeat until `exit_loop` or
 * `max_iterations`. A destructive call stops for approval where its nearest parallel or
 * loop ancestor has `approvals: required`, or where there is none (the seed's rule).
 *
 * A pause stores one record per waiting node: its path, the loop iterations above it and a
 * fingerprint of the nodes on the path; finished sibling branches keep their outputs in the
 * state. Each approval resumes its own node: the run fast-forwards along the path, finishes
 * that branch and, when no sibling branch waits any more, goes on with the rest of the tree.
 * Resumes of sibling branches may run at once; each write of the state names the revision it
 * was computed from, and a write that lost the race is redone on the newer state, so exactly
 * one of them goes past the parallel node.
 */
export class PipelineRunner {
  constructor(
    private readonly root: AgentNode,
    private readonly config: OrchestratorConfig,
    private readonly clients: OrchestratorClients,
    private readonly loop: ToolLoop,
    private readonly catalogue: ToolCatalogue,
    private readonly log: Logger,
  ) {}

  /** A fresh run of the tree for the message that StartTurn just appended. */
  async run(conversation: Conversation, userMessage: string): Promise<StepsOutcome> {
    return this.walk({
      conversationId: conversation.id,
      live: conversation.watched,
      runId: randomUUID(),
      userMessage,
      state: new Map(),
      stored: undefined,
      revision: conversation.pipelineRevision,
      changes: noChanges(),
    });
  }

  /**
   * The pause of `approvalUuid` and its node, when the configured tree still leads to the
   * same node; FAILED_PRECONDITION otherwise, before anything is claimed or run.
   */
  pausedNode(state: PipelineState, approvalUuid: string): { pause: PipelinePause; node: AgentNode } {
    const pause = pausesOf(state, approvalUuid).find((candidate) => candidate.approvalUuid === approvalUuid);
    if (!pause) throw failedPrecondition(`approval ${approvalUuid} is not one its conversation's pipeline waits for`);
    const where = describeNodePath(['agent', ...pause.nodePath.flatMap((index) => ['agents', index])]);
    const node = nodeAt(this.root, pause.nodePath);
    if (!node || pause.treeFingerprint === '' || treeFingerprint(this.root, pause.nodePath) !== pause.treeFingerprint) {
      throw failedPrecondition(
        `approval ${approvalUuid} cannot resume its pipeline: the agent tree changed since it paused at ${where}, so that path no longer leads to the same node. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`,
      );
    }
    return { pause, node };
  }

  /** The names of the nodes each pause waits at, by approval, where the path still leads to one (for tagging messages). */
  nodeNames(state: PipelineState, pendingUuid: string): Map<string, string> {
    const names = new Map<string, string>();
    for (const pause of pausesOf(state, pendingUuid)) {
      const name = nodeAt(this.root, pause.nodePath)?.name;
      if (name !== undefined) names.set(pause.approvalUuid, name);
    }
    return names;
  }

  /** Goes on after an approved call ran: the paused llm node's loop, then its branch, then (when nothing else waits) the rest of the tree. */
  async resume(conversation: Conversation, state: PipelineState, approvalUuid: string): Promise<StepsOutcome> {
    const { pause, node } = this.pausedNode(state, approvalUuid);
    const history = nodeStepsOf(conversation, node.name, pause.nodeMessages);
    return this.walk({
      conversationId: conversation.id,
      live: conversation.watched,
      runId: state.runId,
      userMessage: state.userMessage,
      state: new Map(Object.entries(state.sessionState)),
      resume: { path: [...pause.nodePath], history, loopIterations: pause.loopIterations },
      stored: { ...state, pauses: pausesOf(state, approvalUuid) },
      revision: state.revision,
      changes: { ...noChanges(), resumed: approvalUuid },
    });
  }

  /**
   * The approved call of `approvalUuid` did not finish: the peer that holds it asks for
   * another approval. The pause stays where it is, waiting for a new (proxy) approval.
   */
  async repause(conversation: Conversation, state: PipelineState, approvalUuid: string, gate: GatedCall): Promise<StepsOutcome> {
    const { pause } = this.pausedNode(state, approvalUuid);
    const uuid = randomUUID();
    const ctx: RunContext = {
      conversationId: conversation.id,
      live: conversation.watched,
      runId: state.runId,
      userMessage: state.userMessage,
      state: new Map(Object.entries(state.sessionState)),
      catalogue: new Map(),
      stored: { ...state, pauses: pausesOf(state, approvalUuid) },
      revision: state.revision,
      changes: { ...noChanges(), resumed: approvalUuid, pauses: [{ ...pause, approvalUuid: uuid }] },
      gates: [{ approval: approvalOf(gate, uuid), messages: [] }],
    };
    return this.superseding(conversation.id, () => this.pause(ctx));
  }

  private async walk(run: Omit<RunContext, 'catalogue' | 'gates'>): Promise<StepsOutcome> {
    let catalogue: ReadonlyMap<string, Tool>;
    try {
      catalogue = await this.catalogue.current();
    } catch (error) {
      const text = `The tools are unavailable right now: ${errorText(error)}`;
      return this.superseding(run.conversationId, () => this.finish({ ...run, catalogue: new Map(), gates: [] }, text, [assistantText(text)]));
    }
    const ctx: RunContext = { ...run, catalogue, gates: [] };
    return this.superseding(ctx.conversationId, async () => {
      const outcome = await this.runNode(ctx, this.root, [], true);
      if (outcome.kind === 'waiting') return outcome.outcome;
      if (outcome.kind === 'paused') return this.pause(ctx);
      return this.finish(ctx, outcome.output, []);
    });
  }

  /** Runs `body`; when the run turns out to be superseded, says so with the conversation as it is. */
  private async superseding(conversationId: string, body: () => Promise<StepsOutcome>): Promise<StepsOutcome> {
    try {
      return await body();
    } catch (error) {
      if (!(error instanceof RunSuperseded)) throw error;
      this.log.warn('pipeline run superseded', { conversation: conversationId, reason: error.message });
      // Cancelled under it (a sibling's approval was rejected): no write of this run ends the
      // turn, so it is ended here, or the conversation would stay busy (issue 13).
      if (!error.byNewerRun) await endTurn(this.clients, this.log, conversationId, error);
      const { conversation } = await this.clients.store.getConversation({ id: conversationId, includeMessages: true });
      const response = `This run of the pipeline stopped: ${error.message}. What it did so far is recorded in the conversation.`;
      const waiting = conversation?.pendingApproval;
      return { result: { response, waitingApproval: waiting !== undefined, approval: waiting }, conversation: required(conversation) };
    }
  }

  private async runNode(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    switch (node.type) {
      case 'llm':
        return this.runLlm(ctx, node, path, gates);
      case 'sequential':
        return this.runSequential(ctx, node, path, gates);
      case 'parallel':
        return this.runParallel(ctx, node, path, gates);
      case 'loop':
        return this.runLoop(ctx, node, path, gates);
      case 'a2a':
        return this.runA2a(ctx, node, path, gates);
    }
  }

  /**
   * An a2a node delegates its resolved prompt to its peer; the peer's answer is its output.
   * With `destructiveHint` the delegation itself waits for an approval where the node gates;
   * a peer that asks for its own approval makes the node wait for it (a proxy approval)
   * everywhere, since nobody here may approve on the human's behalf.
   */
  private async runA2a(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const done = (output: string): NodeOutcome => {
      if (node.output_key) {
        ctx.state.set(node.output_key, output);
        ctx.changes.session[node.output_key] = output;
      }
      return { kind: 'done', output, exitLoop: false };
    };
    if (ctx.resume !== undefined && samePath(ctx.resume.path, path)) {
      // The approved delegation ran before the resume; its result is the node's last message.
      const result = ctx.resume.history.at(-1);
      ctx.resume = undefined;
      return done(result?.content ?? '');
    }
    const { text: message, unknown } = resolvePlaceholders(node.prompt ?? '{user_message}', ctx.state, ctx.userMessage);
    if (unknown.length > 0) this.log.warn('placeholders without a value left as written', { conversation: ctx.conversationId, node: node.name, placeholders: unknown.join(',') });
    const tool = a2aTool({ name: node.name, description: node.description ?? '', destructiveHint: node.destructiveHint ?? false });
    const call = { id: `a2a-${randomUUID()}`, name: tool.name, argumentsJson: JSON.stringify({ message }) };
    const args = { message };
    const callMessage: NewMessage = { ...assistantCall(call, args), node: node.name };
    if (tool.destructive && gates) return this.gateNode(ctx, node, path, { kind: 'gate', call, args, tool }, [callMessage]);
    if (tool.destructive) this.log.warn('destructive call ran without approval', { conversation: ctx.conversationId, node: node.name, tool: tool.name });
    const outcome = await this.loop.withCallEvents(ctx.conversationId, call, args, () => this.loop.callTool(tool.name, args), ctx.live);
    if (outcome.remote) return this.gateNode(ctx, node, path, { kind: 'gate', call, args, tool, proxy: outcome.remote }, [callMessage]);
    await this.append(ctx.conversationId, [callMessage, { ...toolResult(call, args, outcome.text, outcome.isError), node: node.name }]);
    return done(outcome.text);
  }

  /** Records a pause at `node` for `gate`, with the node's steps of this run that led to it. */
  private gateNode(ctx: RunContext, node: AgentNode, path: number[], gate: GatedCall, messages: NewMessage[], earlierSteps = 0): NodeOutcome {
    const uuid = randomUUID();
    ctx.changes.pauses.push({
      approvalUuid: uuid,
      nodePath: path,
      outputKey: node.output_key ?? '',
      treeFingerprint: treeFingerprint(this.root, path) ?? '',
      loopIterations: {},
      // The node's steps in this run of it: what it resumes with after the approved call's result.
      nodeMessages: earlierSteps + messages.length,
    });
    ctx.gates.push({ approval: approvalOf(gate, uuid), messages });
    this.log.info('pipeline paused', { conversation: ctx.conversationId, node: node.name, path: pathKey(path), approval: uuid });
    return { kind: 'paused' };
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
      catalogue: catalogueWith(ctx.catalogue, a2aToolsOf(node.a2a)),
      gateDestructive: gates,
      canExitLoop: node.can_exit_loop ?? false,
      live: ctx.live,
      node: node.name,
      persist: (messages) => this.append(ctx.conversationId, messages),
    });
    if (outcome.kind === 'gate') return this.gateNode(ctx, node, path, outcome.gate, outcome.messages, earlierSteps.length);
    await this.append(ctx.conversationId, outcome.messages);
    if (node.output_key) {
      ctx.state.set(node.output_key, outcome.text);
      ctx.changes.session[node.output_key] = outcome.text;
    }
    return { kind: 'done', output: outcome.text, exitLoop: outcome.exitLoop };
  }

  private async runSequential(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    let output = '';
    for (let index = resumeIndex(ctx.resume?.path, path) ?? 0; index < children.length; index++) {
      const outcome = await this.runNode(ctx, children[index]!, [...path, index], childGates(gates, node));
      if (outcome.kind !== 'done') return outcome;
      output = outcome.output;
      // exit_loop ends the nearest enclosing loop, so the rest of this sequence is skipped too.
      if (outcome.exitLoop) return outcome;
    }
    return { kind: 'done', output, exitLoop: false };
  }

  private async runParallel(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    const branchGates = childGates(gates, node);
    const resumed = resumeIndex(ctx.resume?.path, path);
    if (resumed !== undefined) {
      // Only the branch of the resumed pause runs; the others finished or wait for their own approvals.
      const outcome = await this.runNode(ctx, children[resumed]!, [...path, resumed], branchGates);
      if (outcome.kind !== 'done') return outcome;
      ctx.changes.outputs[pathKey([...path, resumed])] = { output: outcome.output, exitLoop: outcome.exitLoop };
      const settled = await this.settleBranch(ctx, path, children.length);
      if (settled.kind === 'waiting') return settled;
      return joined(settled.outputs);
    }
    const outcomes = await Promise.all(children.map((child, index) => this.runNode(ctx, child, [...path, index], branchGates)));
    if (outcomes.some((outcome) => outcome.kind === 'paused')) {
      // The finished branches keep their outputs until the waiting ones are approved.
      outcomes.forEach((outcome, index) => {
        if (outcome.kind === 'done') ctx.changes.outputs[pathKey([...path, index])] = { output: outcome.output, exitLoop: outcome.exitLoop };
      });
      return { kind: 'paused' };
    }
    return joined(outcomes.map((outcome) => (outcome.kind === 'done' ? outcome : { output: '', exitLoop: false })));
  }

  private async runLoop(ctx: RunContext, node: AgentNode, path: number[], gates: boolean): Promise<NodeOutcome> {
    const children = node.agents ?? [];
    const maxIterations = node.max_iterations ?? DEFAULT_MAX_ITERATIONS;
    const key = pathKey(path);
    const resumedChild = resumeIndex(ctx.resume?.path, path);
    // A resumed loop goes on in the iteration it paused in, at the child on the way to the pause.
    let iteration = resumedChild === undefined ? 0 : (ctx.resume!.loopIterations[key] ?? 1) - 1;
    let firstChild = resumedChild ?? 0;
    let output = '';
    let exited = false;
    while (!exited && iteration < maxIterations) {
      iteration += 1;
      for (let index = firstChild; index < children.length; index++) {
        const outcome = await this.runNode(ctx, children[index]!, [...path, index], childGates(gates, node));
        if (outcome.kind === 'waiting') return outcome;
        if (outcome.kind === 'paused') {
          for (const pause of ctx.changes.pauses) if (isBelow(pause.nodePath, path)) pause.loopIterations[key] = iteration;
          return outcome;
        }
        output = outcome.output || output;
        if (outcome.exitLoop) {
          exited = true;
          break;
        }
      }
      firstChild = 0;
    }
    this.log.info('loop finished', { conversation: ctx.conversationId, node: node.name, iterations: iteration, exited });
    return { kind: 'done', output, exitLoop: false };
  }

  /**
   * After a resumed branch of the parallel node at `path` finished: stores its output and,
   * when no sibling branch waits any more, takes all outputs out for the join. The decision
   * is made on the latest stored state and written with it, so of two branches finishing at
   * once exactly one sees the other's output and goes on.
   */
  private async settleBranch(ctx: RunContext, path: number[], children: number): Promise<{ kind: 'joined'; outputs: { output: string; exitLoop: boolean }[] } | Extract<NodeOutcome, { kind: 'waiting' }>> {
    return this.writeState(ctx, async (next) => {
      if (waitsBelow(next, path)) {
        const conversation = await this.store(ctx, { state: next, returnConversation: true });
        this.log.info('branch finished; other branches still wait', { conversation: ctx.conversationId, node: pathKey(path) });
        const waiting = required(conversation).pendingApproval;
        const response = waiting ? stillWaitingText(waiting) : 'The pipeline waits for other approvals.';
        return { kind: 'waiting', outcome: { result: { response, waitingApproval: waiting !== undefined, approval: waiting }, conversation: required(conversation) } };
      }
      const taken = takeBranchOutputs(next, path, children);
      await this.store(ctx, { state: taken.state, returnConversation: false });
      return { kind: 'joined', outputs: taken.outputs };
    });
  }

  /** Pauses the run: its gated steps, one approval per waiting node and the state, in one transaction. */
  private async pause(ctx: RunContext): Promise<StepsOutcome> {
    const gates = ctx.gates;
    return this.writeState(ctx, async (next) => {
      const conversation = required(
        await this.store(ctx, {
          state: next,
          messages: gates.flatMap((gate) => gate.messages),
          approvals: gates.map((gate) => gate.approval),
          returnConversation: true,
        }),
      );
      ctx.gates = [];
      const created = gates.map((gate) => conversation.pendingApprovals.find((approval) => approval.uuid === gate.approval.uuid)).filter((approval) => approval !== undefined);
      for (const approval of created) this.log.info('approval requested', { conversation: ctx.conversationId, approval: approval.uuid, tool: approval.toolName });
      const response = created.map(approvalRequiredText).join('\n');
      return { result: { response, waitingApproval: true, approval: created[0] ?? conversation.pendingApproval }, conversation };
    });
  }

  /** Ends the run: its last messages and the cleared pipeline state in one transaction. */
  private async finish(ctx: RunContext, response: string, messages: NewMessage[]): Promise<StepsOutcome> {
    return this.writeState(ctx, async () => {
      const conversation = await this.store(ctx, { state: undefined, messages, returnConversation: true });
      return { result: { response, waitingApproval: false }, conversation: required(conversation) };
    });
  }

  /**
   * Computes the state to write from the latest stored one and this run's changes, and
   * lets `write` store it; when another run wrote first, reads the state again and redoes
   * the decision. A state that is gone or belongs to another run ends this one.
   */
  private async writeState<T>(ctx: RunContext, write: (next: PipelineState) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write(withChanges(ctx.stored, ctx.changes, ctx));
      } catch (error) {
        if (!isCode(error, GrpcStatus.ABORTED) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
        const { conversation } = await this.clients.store.getConversation({ id: ctx.conversationId, includeMessages: false });
        const latest = required(conversation).pipelineState;
        if (!latest || latest.runId !== ctx.runId) {
          throw new RunSuperseded(latest ? 'a newer message started another run' : 'the pipeline was cancelled or finished while this branch ran', latest !== undefined);
        }
        ctx.stored = latest;
        ctx.revision = latest.revision;
      }
    }
  }

  /** One UpdatePipeline at the run's expected revision; afterwards the written state is the run's base. */
  private async store(
    ctx: RunContext,
    write: { state: PipelineState | undefined; messages?: NewMessage[]; approvals?: NewApproval[]; returnConversation: boolean },
  ): Promise<Conversation | undefined> {
    const { revision, conversation } = await this.clients.store.updatePipeline({
      conversationId: ctx.conversationId,
      messages: write.messages ?? [],
      approvals: write.approvals ?? [],
      pipelineState: write.state,
      expectedRevision: ctx.revision,
      returnConversation: write.returnConversation,
    });
    ctx.stored = write.state && { ...write.state, revision };
    ctx.revision = revision;
    ctx.changes = noChanges();
    return conversation;
  }

  private async append(conversationId: string, messages: NewMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.clients.store.appendMessages({
      conversationId,
      messages,
      status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
      returnConversation: false,
    });
  }
}

/** A parallel node's outcome from its branches' outputs, in declaration order. */
function joined(outputs: readonly { output: string; exitLoop: boolean }[]): NodeOutcome {
  return { kind: 'done', output: joinOutputs(outputs.map((branch) => branch.output)), exitLoop: outputs.some((branch) => branch.exitLoop) };
}

/**
 * The paused node's steps in the run of it that paused, and the approved call's result:
 * its latest `nodeMessages + 1` messages. States stored before the count existed: its
 * messages since the run's user message (a node that gates ran once per run then).
 */
function nodeStepsOf(conversation: Conversation, node: string, nodeMessages: number | undefined): HistoryEntry[] {
  if (nodeMessages === undefined) {
    const lastUser = conversation.messages.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
    return conversation.messages.slice(lastUser + 1).filter((message) => message.node === node);
  }
  const own = conversation.messages.filter((message) => message.node === node);
  return own.slice(Math.max(0, own.length - nodeMessages - 1));
}

function samePath(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((index, position) => index === b[position]);
}

function required(conversation: Conversation | undefined): Conversation {
  if (!conversation) throw internal('the store returned no conversation');
  return conversation;
}
