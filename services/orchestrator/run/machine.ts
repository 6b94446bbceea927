import { createHash } from 'node:crypto';
import type { ToolDefinition } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  type ApprovalRejection,
  type NewApproval,
  type NewMessage,
  type PendingApproval,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import { jsonObjectOf } from '../../common/json-value.js';
import { firstSchemaProblem } from '../../common/json-schema.js';
import { describeNodePath } from '../../common/config/tree.js';
import { a2aTool, a2aToolsOf, A2A_SERVER, proxyDescription } from '../domain/a2a-tools.js';
import {
  assistantCall,
  assistantText,
  CANCELLED_BY_USER,
  expiredText,
  gatedCall,
  NOT_RETRIED,
  rejectedResult,
  toolResult,
  userMessage,
} from '../domain/messages.js';
import { inputDescription, inputResponses } from '../domain/elicitation.js';
import { DEFERRED_REASON, describeCall, planToolCalls } from '../domain/plan.js';
import { repeatedRejection } from '../domain/rejections.js';
import {
  childGates,
  DEFAULT_MAX_ITERATIONS,
  EXIT_LOOP_TOOL,
  joinOutputs,
  nodeAt,
  resolvePlaceholders,
  treeFingerprint,
  type AgentNode,
} from '../domain/tree.js';
import type { BranchOutput, PendingCall, StoredRun } from './state.js';
import type {
  DecisionFacts,
  Effect,
  Frame,
  GatedCall,
  LlmFrame,
  MachineEnv,
  ModelReply,
  NodeOutcome,
  Path,
  RunAnswer,
  RunEvent,
  RunPhase,
  RunState,
  ToolOutcome,
} from './types.js';

/**
 * The stop-and-go state machine: `next(state, event, env)` → the new state and the effects
 * to run. Pure: no I/O, no clock, no randomness (fresh ids derive from the activation value
 * that the activation's first event brings). The driver runs the effects and feeds their
 * outcomes back as events, one at a time.
 *
 * A run walks the agent tree (simple mode: a tree of one llm node that sees the whole
 * conversation). llm nodes run the model/tool loop; sequential nodes run their children in
 * order; parallel nodes run them all at once; loop nodes repeat until `exit_loop` or
 * `max_iterations`. A destructive call stops its node for approval where the node gates
 * (domain/tree.ts childGates); when nothing runs any more the run pauses: its gates, their
 * steps and the run state are one compare-and-set write. A decision resumes exactly the
 * paused node; a resumed branch of a parallel node that finishes while siblings still wait
 * stores its output and ends its activation, and of two branches finishing at once exactly
 * one joins (the loser's write is redone on the newer state).
 */

/** A write of the run lost the race this many times in a row: the activation gives up (ABORTED). */
export const MAX_WRITE_ATTEMPTS = 8;

export const EXIT_LOOP_RESULT = 'The loop ends after this step.';

const EXIT_LOOP_DEFINITION: ToolDefinition = {
  name: EXIT_LOOP_TOOL,
  description: 'Ends the loop this step runs in. Call it when the goal of the loop is reached.',
  inputSchema: { type: 'object', properties: {} },
};

const UNAPPROVED_REASON = (node: string | undefined) => `approvals: auto inside a parallel or loop node (node "${node ?? '?'}")`;

/** The answer of a run stopped by a cancel or by its deadline. */
export const STOPPED_BY_DEADLINE =
  'The turn ran past its deadline (chat.turn_timeout) and was stopped: steps it had not recorded yet were dropped, and none of its calls waits for approval.';

export function stoppedText(reason: string): string {
  return `The run was cancelled (${reason}): steps it had not recorded yet were dropped, and none of its calls waits for approval.`;
}

/** A fresh run for a user message, in a conversation whose run is at `revision`. */
export function freshRun(mode: 'simple' | 'tree', revision: number): RunState {
  return {
    phase: 'starting',
    runId: '',
    mode,
    userMessage: '',
    base: undefined,
    revision,
    changes: noChanges(),
    modelCalls: 0,
    activation: '',
    ids: 0,
    frames: {},
    gates: [],
    afterRejection: false,
    inFlight: 0,
  };
}

/** A stored run, read for a decision on one of its approvals. */
export function storedRun(stored: StoredRun, revision: number): RunState {
  return { ...freshRun(stored.mode, revision), runId: stored.runId, userMessage: stored.userMessage, base: stored };
}

export function next(state: RunState, event: RunEvent, env: MachineEnv): { state: RunState; effects: Effect[] } {
  if (state.phase === 'finished') {
    // A stop or a lost lease after the end has nothing left to stop; any other event is out of phase.
    if (ANY_PHASE.has(event.kind)) return { state, effects: [] };
    return { state, effects: [outOfPhaseEffect(state.phase, event.kind, 'the activation has already answered')] };
  }
  const m: Step = { s: copyForStep(state), env, fx: [] };
  if (ANSWERS.has(event.kind)) m.s.inFlight = Math.max(0, m.s.inFlight - 1);
  if (fitsPhase(m.s.phase, event.kind)) handle(m, event);
  else m.fx.push(outOfPhaseEffect(m.s.phase, event.kind, `the run is ${m.s.phase.replace('_', ' ')}`));
  if (m.s.stop !== undefined && isRunning(m.s)) applyStop(m, m.s.stop);
  if (m.s.lost !== undefined && isRunning(m.s)) applyLoss(m, m.s.lost);
  const asked = m.fx.filter((effect) => ASKS.has(effect.kind));
  m.s.inFlight += asked.length;
  // The phase follows what was asked last: its answer is what the run waits for now.
  const last = asked.at(-1);
  if (isRunning(m.s) && last) m.s.phase = PHASE_OF_ASK[last.kind as keyof typeof PHASE_OF_ASK];
  return { state: m.s, effects: m.fx };
}

const isRunning = (state: RunState) => state.phase !== 'finished';

/** Events that may come in any phase: they stop the run, whatever it waits for. */
const ANY_PHASE = new Set<RunEvent['kind']>(['timerFired', 'cancel', 'leaseLost']);

/** The events each phase waits for (besides ANY_PHASE). */
const EVENTS_OF_PHASE: Record<RunPhase, ReadonlySet<RunEvent['kind']>> = {
  starting: new Set(['userMessage', 'approvalDecided', 'takenOver']),
  loading_tools: new Set(['toolsLoaded', 'toolsFailed']),
  walking_tree: new Set(['historyLoaded', 'modelAnswered', 'modelFailed', 'toolFinished']),
  deciding: new Set(['approvalsLoaded', 'claimed', 'claimConflict']),
  executing_approved: new Set(['approvedCallFinished']),
  writing: new Set(['written', 'writeConflict']),
  finished: new Set(),
};

/** The phase a run is in once it asked for this effect: the answer it waits for. */
const PHASE_OF_ASK = {
  loadTools: 'loading_tools',
  loadHistory: 'walking_tree',
  callModel: 'walking_tree',
  callTool: 'walking_tree',
  loadApprovals: 'deciding',
  claim: 'deciding',
  runApproved: 'executing_approved',
  write: 'writing',
} as const satisfies Partial<Record<Effect['kind'], RunPhase>>;

function fitsPhase(phase: RunPhase, event: RunEvent['kind']): boolean {
  return ANY_PHASE.has(event) || EVENTS_OF_PHASE[phase].has(event);
}

function outOfPhaseEffect(phase: RunPhase, event: RunEvent['kind'], detail: string): Effect {
  return { kind: 'outOfPhase', phase, event, detail };
}

/** An event of the right phase that names something not waiting for it (another path, call, decision or write): refused, and said so. */
function outOfPhase(m: Step, event: RunEvent['kind'], detail: string): void {
  m.fx.push(outOfPhaseEffect(m.s.phase, event, detail));
}

/** Effects whose outcome comes back as an event. */
const ASKS = new Set<Effect['kind']>(Object.keys(PHASE_OF_ASK) as Effect['kind'][]);
/** Events that answer one of ASKS. */
const ANSWERS = new Set<RunEvent['kind']>([
  'toolsLoaded',
  'toolsFailed',
  'historyLoaded',
  'modelAnswered',
  'modelFailed',
  'toolFinished',
  'approvalsLoaded',
  'claimed',
  'claimConflict',
  'approvedCallFinished',
  'written',
  'writeConflict',
]);
/** Effects that begin new work, which a stopped run does not start (a won claim's call still runs: it was decided). */
const STARTS_WORK = new Set<Effect['kind']>(['loadTools', 'loadHistory', 'callModel', 'callTool', 'loadApprovals', 'claim']);

/** The stored run this state would write now: the base with this activation's changes laid over it. */
export function withChanges(s: RunState): StoredRun {
  const base = s.base;
  const changes = s.changes;
  return {
    runId: base?.runId || s.runId,
    mode: s.mode,
    userMessage: base?.userMessage ?? s.userMessage,
    session: { ...base?.session, ...changes.session },
    pending: [...(base?.pending ?? []).filter((pause) => pause.approvalUuid !== changes.resumed), ...changes.pauses],
    branchOutputs: { ...base?.branchOutputs, ...changes.outputs },
    modelCalls: (base?.modelCalls ?? 0) + s.modelCalls,
  };
}

/**
 * The state `next` may change: every container a transition writes to is copied, while what
 * no transition ever changes in place — messages, tools, the stored run, planned calls — is
 * shared. A whole deep copy per event would cost time in the length of the conversation
 * (simple mode's history), on every step of every turn.
 */
function copyForStep(state: RunState): RunState {
  const frames: Record<string, Frame> = {};
  for (const [key, frame] of Object.entries(state.frames)) frames[key] = copyFrame(frame);
  return {
    ...state,
    changes: {
      ...state.changes,
      pauses: state.changes.pauses.map((pause) => ({ ...pause, loopIterations: { ...pause.loopIterations } })),
      outputs: { ...state.changes.outputs },
      session: { ...state.changes.session },
    },
    frames,
    gates: [...state.gates],
    ...(state.write && { write: { ...state.write } }),
    ...(state.decision && { decision: { ...state.decision, nodes: { ...state.decision.nodes }, others: [...state.decision.others] } }),
  };
}

function copyFrame(frame: Frame): Frame {
  switch (frame.kind) {
    case 'llm':
      return {
        ...frame,
        history: [...frame.history],
        steps: [...frame.steps],
        ...(frame.step && { step: { ...frame.step, recorded: [...frame.step.recorded] } }),
      };
    case 'parallel':
      return frame.resumed ? { ...frame } : { ...frame, outcomes: [...frame.outcomes] };
    default:
      return { ...frame };
  }
}

interface Step {
  s: RunState;
  env: MachineEnv;
  fx: Effect[];
}

const noChanges = () => ({ pauses: [], outputs: {}, session: {} });
const keyOf = (path: Path) => path.join('.');
const describePath = (path: Path) => (path.length === 0 ? 'the root' : `path ${keyOf(path)}`);

function handle(m: Step, event: RunEvent): void {
  switch (event.kind) {
    case 'userMessage':
      m.s.runId = event.runId;
      m.s.activation = event.activation;
      m.s.userMessage = event.text;
      m.fx.push({ kind: 'loadTools' });
      return;
    case 'toolsLoaded':
      if (m.s.decision && !m.s.decision.claimed) return checkEdit(m, event.tools);
      m.s.tools = Object.fromEntries(event.tools.map((tool) => [tool.name, tool]));
      if (m.s.resume) resumeAt(m, m.s.resume);
      else enter(m, []);
      return;
    case 'toolsFailed': {
      if (m.s.decision && !m.s.decision.claimed) {
        const toolName = m.s.decision.approval.toolName;
        return refuse(
          m,
          'unavailable',
          `the tools could not be read (${event.error}), so the edited arguments cannot be checked against the input schema of ${toolName}. Nothing was decided; decide again.`,
        );
      }
      const text = `The tools are unavailable right now: ${event.error}`;
      return finishRun(m, text, [assistantText(text)]);
    }
    case 'historyLoaded':
      return historyLoaded(m, event.path, event.history, event.systemPrompt);
    case 'modelAnswered':
      return modelAnswered(m, event.path, event.reply);
    case 'modelFailed': {
      const frame = llmFrame(m, event.path, 'model');
      if (!frame) return outOfPhase(m, event.kind, `no node at ${describePath(event.path)} waits for the model`);
      return answerNode(m, event.path, frame, `The model could not answer (${event.category} error): ${event.error}`);
    }
    case 'toolFinished':
      return toolFinished(m, event.path, event.callId, event.outcome);
    case 'approvalDecided':
      return approvalDecided(m, event);
    case 'approvalsLoaded':
      if (!m.s.decision) return outOfPhase(m, event.kind, 'no decision is being claimed');
      m.s.decision.others = event.approvals.filter((other) => other.uuid !== m.s.decision!.uuid);
      return claim(m);
    case 'claimed':
      return claimed(m, event.won);
    case 'claimConflict':
      return claimConflict(m, event.latest, event.revision);
    case 'approvedCallFinished':
      return approvedCallFinished(m, event.outcome);
    case 'written':
      return written(m, event.revision);
    case 'writeConflict':
      return writeConflict(m, event.latest, event.revision);
    case 'timerFired':
      m.s.stop ??= STOPPED_BY_DEADLINE;
      return;
    case 'cancel':
      m.s.stop ??= stoppedText(event.reason);
      return;
    case 'leaseLost':
      m.s.lost ??= event.reason;
      return;
    case 'takenOver':
      return takenOver(m, event);
  }
}

// ---- the walk -------------------------------------------------------------------------

function treeRoot(m: Step): AgentNode {
  if (!m.env.root) throw new Error('an agent-tree run needs the configured tree');
  return m.env.root;
}

function nodeOf(m: Step, path: Path): AgentNode {
  const node = nodeAt(treeRoot(m), path);
  if (!node) throw new Error(`no node at path ${keyOf(path) || '(root)'}`);
  return node;
}

/** Whether destructive calls of the node at `path` stop for approval. */
function gatesAt(m: Step, path: Path): boolean {
  if (m.s.mode === 'simple') return true;
  let gates = true;
  for (let depth = 0; depth < path.length; depth++) gates = childGates(gates, nodeOf(m, path.slice(0, depth)));
  return gates;
}

function session(m: Step): ReadonlyMap<string, string> {
  return new Map(Object.entries({ ...m.s.base?.session, ...m.s.changes.session }));
}

function placeholders(m: Step, node: AgentNode, template: string): string {
  const { text, unknown } = resolvePlaceholders(template, session(m), m.s.userMessage);
  if (unknown.length > 0)
    log(m, 'warn', 'placeholders without a value left as written', { node: node.name, placeholders: unknown.join(',') });
  return text;
}

function log(
  m: Step,
  level: 'info' | 'warn' | 'error',
  message: string,
  fields: Record<string, string | number | boolean | undefined>,
): void {
  m.fx.push({ kind: 'log', level, message, fields });
}

/** A UUID (version 4 layout) derived from the activation and a counter: unique per activation, the same on replay. */
function freshId(m: Step): string {
  const hex = createHash('sha256')
    .update(`${m.s.activation}:${m.s.ids++}`)
    .digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function toolsFor(m: Step, extra: readonly Tool[]): Record<string, Tool> {
  const tools = { ...m.s.tools };
  for (const tool of extra) tools[tool.name] = tool;
  return tools;
}

function enter(m: Step, path: Path): void {
  const key = keyOf(path);
  if (m.s.mode === 'simple') {
    m.s.frames[key] = simpleFrame(m);
    m.fx.push({ kind: 'loadHistory', path, nodeMessages: null });
    return;
  }
  const node = nodeOf(m, path);
  const children = node.agents ?? [];
  switch (node.type) {
    case 'llm': {
      const frame = nodeFrame(m, node, path);
      frame.history = [userMessage(m.s.userMessage)];
      m.s.frames[key] = frame;
      return callModel(m, path, frame);
    }
    case 'a2a':
      return enterA2a(m, node, path);
    case 'sequential':
      if (children.length === 0) return complete(m, path, { kind: 'done', output: '', exitLoop: false });
      m.s.frames[key] = { kind: 'sequential', index: 0, output: '' };
      return enter(m, [...path, 0]);
    case 'parallel':
      if (children.length === 0) return complete(m, path, { kind: 'done', output: '', exitLoop: false });
      m.s.frames[key] = { kind: 'parallel', resumed: false, outcomes: children.map(() => null) };
      // A child may finish or pause at once (a gated a2a node); the frame is there to take it.
      for (let index = 0; index < children.length; index++) {
        if (m.s.frames[key]) enter(m, [...path, index]);
      }
      return;
    case 'loop':
      if (children.length === 0 || (node.max_iterations ?? DEFAULT_MAX_ITERATIONS) < 1)
        return complete(m, path, { kind: 'done', output: '', exitLoop: false });
      m.s.frames[key] = { kind: 'loop', iteration: 1, index: 0, output: '' };
      return enter(m, [...path, 0]);
  }
}

function simpleFrame(m: Step): LlmFrame {
  return {
    kind: 'llm',
    model: m.env.simple.model,
    systemPrompt: '',
    gates: true,
    canExit: false,
    tools: toolsFor(m, m.env.simple.a2aTools),
    history: [],
    steps: [],
    earlier: 0,
    calls: 0,
    awaiting: 'history',
  };
}

function nodeFrame(m: Step, node: AgentNode, path: Path): LlmFrame {
  return {
    kind: 'llm',
    node: node.name,
    model: node.model ?? m.env.defaultModel,
    ...(node.timeout !== undefined && { timeoutMs: node.timeout }),
    systemPrompt: placeholders(m, node, node.prompt ?? ''),
    gates: gatesAt(m, path),
    canExit: node.can_exit_loop ?? false,
    tools: toolsFor(m, a2aToolsOf(node.a2a)),
    history: [],
    steps: [],
    earlier: 0,
    calls: 0,
    awaiting: 'history',
  };
}

/** An a2a node delegates its resolved prompt to its peer; a destructiveHint delegation waits for approval where the node gates. */
function enterA2a(m: Step, node: AgentNode, path: Path): void {
  const message = placeholders(m, node, node.prompt ?? '{user_message}');
  const tool = a2aTool({ name: node.name, description: node.description ?? '', destructiveHint: node.destructiveHint ?? false });
  const call = { id: `a2a-${freshId(m)}`, name: tool.name, argumentsJson: JSON.stringify({ message }) };
  const args = { message };
  const callMessage: NewMessage = { ...assistantCall(call, args), node: node.name };
  if (tool.destructive && gatesAt(m, path)) return gateNode(m, path, { kind: 'gate', call, args, tool }, [callMessage], 0);
  if (tool.destructive) log(m, 'warn', 'destructive call ran without approval', { node: node.name, tool: tool.name });
  m.s.frames[keyOf(path)] = { kind: 'a2a', call, args, callMessage, tool };
  m.fx.push({ kind: 'callTool', path, node: node.name, call, args, unapprovedReason: '' });
}

/** The frames from the root down to a pause, so that the run goes on exactly there. */
function resumeAt(m: Step, pause: PendingCall): void {
  if (m.s.mode === 'simple') return enter(m, []);
  const path = pause.path;
  for (let depth = 0; depth < path.length; depth++) {
    const prefix = path.slice(0, depth);
    const node = nodeOf(m, prefix);
    const index = path[depth]!;
    const key = keyOf(prefix);
    if (node.type === 'sequential') m.s.frames[key] = { kind: 'sequential', index, output: '' };
    else if (node.type === 'loop') m.s.frames[key] = { kind: 'loop', iteration: pause.loopIterations[key] ?? 1, index, output: '' };
    else if (node.type === 'parallel')
      m.s.frames[key] = { kind: 'parallel', resumed: true, branch: index, children: node.agents?.length ?? 0 };
  }
  const node = nodeOf(m, path);
  m.s.frames[keyOf(path)] = node.type === 'a2a' ? { kind: 'a2aResumed' } : nodeFrame(m, node, path);
  m.fx.push({ kind: 'loadHistory', path, node: node.name, nodeMessages: pause.nodeMessages });
}

function historyLoaded(m: Step, path: Path, history: NewMessage[] | readonly NewMessage[], systemPrompt: string | undefined): void {
  const key = keyOf(path);
  const frame = m.s.frames[key];
  if (frame?.kind === 'a2aResumed') {
    // The approved delegation ran before the resume; its result is the node's last message.
    delete m.s.frames[key];
    const output = history.at(-1)?.content ?? '';
    setOutput(m, nodeOf(m, path), output);
    return complete(m, path, { kind: 'done', output, exitLoop: false });
  }
  if (frame?.kind !== 'llm' || frame.awaiting !== 'history')
    return outOfPhase(m, 'historyLoaded', `no node at ${describePath(path)} waits for its history`);
  if (m.s.mode === 'simple') {
    frame.history = [...history];
    frame.systemPrompt = systemPrompt ?? '';
  } else {
    // A node sees the run's user message and its own steps, not other nodes' calls.
    frame.history = [userMessage(m.s.userMessage), ...history];
    frame.earlier = history.length;
  }
  callModel(m, path, frame);
}

function callModel(m: Step, path: Path, frame: LlmFrame): void {
  frame.awaiting = 'model';
  const tools: ToolDefinition[] = Object.values(frame.tools).map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
  if (frame.canExit) tools.push(EXIT_LOOP_DEFINITION);
  m.fx.push({
    kind: 'callModel',
    path,
    ...(frame.node !== undefined && { node: frame.node }),
    model: frame.model,
    ...(frame.timeoutMs !== undefined && { timeoutMs: frame.timeoutMs }),
    systemPrompt: frame.systemPrompt,
    history: [...frame.history],
    tools,
  });
}

function llmFrame(m: Step, path: Path, awaiting: LlmFrame['awaiting']): LlmFrame | undefined {
  const frame = m.s.frames[keyOf(path)];
  return frame?.kind === 'llm' && frame.awaiting === awaiting ? frame : undefined;
}

const tagged =
  (frame: LlmFrame) =>
  (message: NewMessage): NewMessage =>
    frame.node === undefined ? message : { ...message, node: frame.node };

function modelAnswered(m: Step, path: Path, reply: ModelReply): void {
  const frame = llmFrame(m, path, 'model');
  if (!frame) return outOfPhase(m, 'modelAnswered', `no node at ${describePath(path)} waits for the model`);
  frame.calls += 1;
  m.s.modelCalls += 1;
  const usage = reply.usage && { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
  if (reply.toolCalls.length === 0) return answerNode(m, path, frame, reply.text || '(the model returned an empty answer)', usage);
  const plan = planToolCalls(reply.toolCalls, new Map(Object.entries(frame.tools)), {
    gateDestructive: frame.gates,
    exitTool: frame.canExit ? EXIT_LOOP_TOOL : undefined,
  });
  const recorded: NewMessage[] = [];
  if (reply.text) recorded.push(assistantText(reply.text));
  for (const planned of plan) {
    const call = assistantCall(planned.call, planned.args);
    // Marked on the call (not its result, which the model reads): it ran without a human's approval.
    recorded.push(
      planned.kind === 'run' && planned.unapproved
        ? { ...call, content: `${call.content} (destructive; ran without approval inside a parallel or loop node)` }
        : call,
    );
  }
  // The step's tokens go on its first message, so the conversation's sum counts each call once.
  recorded[0] = { ...recorded[0]!, usage };
  frame.awaiting = 'tools';
  frame.step = { plan, index: 0, recorded, exitLoop: false, text: reply.text, unapproved: false };
  advanceStep(m, path, frame);
}

/** Works through the step's calls in the model's order; a call to run waits for its toolFinished. */
function advanceStep(m: Step, path: Path, frame: LlmFrame): void {
  const step = frame.step!;
  while (step.index < step.plan.length) {
    const planned = step.plan[step.index]!;
    if (planned.kind === 'run') {
      if (planned.unapproved) {
        log(m, 'warn', 'destructive call ran without approval', { node: frame.node, tool: planned.call.name });
        step.unapproved = true;
      }
      m.fx.push({
        kind: 'callTool',
        path,
        ...(frame.node !== undefined && { node: frame.node }),
        call: planned.call,
        args: planned.args,
        unapprovedReason: planned.unapproved ? UNAPPROVED_REASON(frame.node) : '',
      });
      return;
    }
    if (planned.kind === 'reject') step.recorded.push(toolResult(planned.call, planned.args, planned.reason, true));
    else if (planned.kind === 'defer') step.recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
    else if (planned.kind === 'exit') {
      step.exitLoop = true;
      step.recorded.push(toolResult(planned.call, planned.args, EXIT_LOOP_RESULT, false));
    }
    step.index += 1;
  }
  endStep(m, path, frame);
}

function toolFinished(m: Step, path: Path, callId: string, outcome: ToolOutcome): void {
  const frame = m.s.frames[keyOf(path)];
  if (frame?.kind === 'a2a' && frame.call.id === callId) return a2aFinished(m, path, frame, outcome);
  if (frame?.kind !== 'llm' || frame.awaiting !== 'tools' || !frame.step)
    return outOfPhase(m, 'toolFinished', `no node at ${describePath(path)} waits for a tool call`);
  const step = frame.step;
  const planned = step.plan[step.index];
  if (planned?.kind !== 'run' || planned.call.id !== callId)
    return outOfPhase(m, 'toolFinished', `the node at ${describePath(path)} waits for another call than ${callId}`);
  // A delegation that the peer holds for its own approval, or a server's question for a human, stops the step like a gate.
  const waits = outcome.remote || outcome.input;
  if (waits && !step.waiting)
    step.waiting = {
      kind: 'gate',
      call: planned.call,
      args: planned.args,
      tool: planned.tool,
      ...(outcome.remote && { proxy: outcome.remote }),
      ...(outcome.input && { input: outcome.input }),
    };
  else if (waits) step.recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
  else step.recorded.push(toolResult(planned.call, planned.args, outcome.text, outcome.isError));
  step.index += 1;
  advanceStep(m, path, frame);
}

function endStep(m: Step, path: Path, frame: LlmFrame): void {
  const step = frame.step!;
  frame.step = undefined;
  let planned = step.plan.find((call): call is GatedCall => call.kind === 'gate');
  // A call identical to one a human rejected in this run gets the same "no" at once.
  const earlier = planned && repeatedRejection(frame.history, planned.call.name, planned.args);
  if (planned && earlier) {
    log(m, 'info', 'call repeats one rejected in this run; answered without asking again', { node: frame.node, tool: planned.call.name });
    step.recorded.push(rejectedResult(planned.call, planned.args, earlier.reason, earlier.text));
    planned = undefined;
  }
  // One approval per step: with a proxy waiting, a destructive call of the same step is deferred.
  if (step.waiting && planned) step.recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
  const gate = step.waiting ?? planned;
  const recorded = step.recorded.map(tagged(frame));
  if (gate) return gateNode(m, path, gate, [...frame.steps, ...recorded], frame.earlier);
  frame.steps.push(...recorded);
  frame.history.push(...step.recorded);
  if (step.unapproved && m.s.mode === 'tree') {
    // Unlike a safe step, a destructive call's effect must not be lost if the process dies before the node ends.
    const appended = frame.steps.splice(0);
    // Still the node's steps in this run: a later pause of the node (a peer's approval) resumes with them.
    frame.earlier += appended.length;
    m.fx.push({ kind: 'append', messages: appended });
  }
  if (step.exitLoop) return nodeDone(m, path, frame, step.text, frame.steps, true);
  if (frame.calls >= m.env.maxModelCalls) {
    return answerNode(
      m,
      path,
      frame,
      `Stopped after ${m.env.maxModelCalls} model calls in one turn (chat.max_llm_iterations) without a final answer.`,
    );
  }
  callModel(m, path, frame);
}

function answerNode(m: Step, path: Path, frame: LlmFrame, text: string, usage?: NewMessage['usage']): void {
  nodeDone(m, path, frame, text, [...frame.steps, tagged(frame)({ ...assistantText(text), usage })], false);
}

function nodeDone(m: Step, path: Path, frame: LlmFrame, output: string, messages: NewMessage[], exitLoop: boolean): void {
  delete m.s.frames[keyOf(path)];
  if (m.s.mode === 'simple') {
    m.s.final = messages;
    return complete(m, path, { kind: 'done', output, exitLoop });
  }
  if (messages.length > 0) m.fx.push({ kind: 'append', messages });
  setOutput(m, nodeOf(m, path), output);
  complete(m, path, { kind: 'done', output, exitLoop });
}

function a2aFinished(m: Step, path: Path, frame: Extract<Frame, { kind: 'a2a' }>, outcome: ToolOutcome): void {
  delete m.s.frames[keyOf(path)];
  if (outcome.remote)
    return gateNode(
      m,
      path,
      { kind: 'gate', call: frame.call, args: frame.args, tool: frame.tool, proxy: outcome.remote },
      [frame.callMessage],
      0,
    );
  const node = nodeOf(m, path);
  m.fx.push({
    kind: 'append',
    messages: [frame.callMessage, { ...toolResult(frame.call, frame.args, outcome.text, outcome.isError), node: node.name }],
  });
  setOutput(m, node, outcome.text);
  complete(m, path, { kind: 'done', output: outcome.text, exitLoop: false });
}

function setOutput(m: Step, node: AgentNode, output: string): void {
  if (node.output_key) m.s.changes.session[node.output_key] = output;
}

/** The approval to store for a gated call: its stored arguments, and for a proxy where the call waits. */
export function approvalOf(gate: GatedCall, uuid: string): NewApproval {
  const base = { uuid, toolCallId: gate.call.id, toolName: gate.call.name, toolArgsJson: JSON.stringify(gate.args) };
  if (gate.input) return { ...base, description: inputDescription(gate.call.name, gate.input), agentChain: [] };
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

/** Records a pause at the node at `path` for `gate`, with the node's steps of this run that led to it. */
function gateNode(m: Step, path: Path, gate: GatedCall, messages: NewMessage[], earlierSteps: number): void {
  const uuid = freshId(m);
  const tree = m.s.mode === 'tree';
  const node = tree ? nodeOf(m, path) : undefined;
  m.s.changes.pauses.push({
    approvalUuid: uuid,
    path: [...path],
    outputKey: node?.output_key ?? '',
    fingerprint: tree ? (treeFingerprint(treeRoot(m), path) ?? '') : '',
    loopIterations: {},
    // The node's steps in this run of it: what it resumes with after the approved call's result.
    nodeMessages: earlierSteps + messages.length,
    toolName: gate.call.name,
    argsHash: callHash(gate.call.name, gate.args),
    ...(gate.input && { input: gate.input }),
  });
  m.s.gates.push({ approval: approvalOf(gate, uuid), messages });
  if (node) log(m, 'info', 'pipeline paused', { node: node.name, path: keyOf(path), approval: uuid });
  delete m.s.frames[keyOf(path)];
  complete(m, path, { kind: 'paused' });
}

/** Hands a node's outcome to its parent. */
function complete(m: Step, path: Path, outcome: NodeOutcome): void {
  if (path.length === 0) {
    if (outcome.kind === 'paused') return pauseRun(m);
    return finishRun(m, outcome.output, m.s.final ?? []);
  }
  const parentPath = path.slice(0, -1);
  const parentKey = keyOf(parentPath);
  const index = path[path.length - 1]!;
  const parent = m.s.frames[parentKey];
  if (!parent) return;
  const children = nodeOf(m, parentPath).agents ?? [];
  switch (parent.kind) {
    case 'sequential':
      if (outcome.kind === 'paused' || outcome.exitLoop) {
        // exit_loop ends the nearest enclosing loop, so the rest of this sequence is skipped too.
        delete m.s.frames[parentKey];
        return complete(m, parentPath, outcome);
      }
      parent.output = outcome.output;
      parent.index = index + 1;
      if (parent.index < children.length) return enter(m, [...parentPath, parent.index]);
      delete m.s.frames[parentKey];
      return complete(m, parentPath, { kind: 'done', output: parent.output, exitLoop: false });
    case 'loop': {
      if (outcome.kind === 'paused') {
        for (const pause of m.s.changes.pauses) if (isBelow(pause.path, parentPath)) pause.loopIterations[parentKey] = parent.iteration;
        delete m.s.frames[parentKey];
        return complete(m, parentPath, outcome);
      }
      parent.output = outcome.output || parent.output;
      const node = nodeOf(m, parentPath);
      if (!outcome.exitLoop) {
        if (index + 1 < children.length) {
          parent.index = index + 1;
          return enter(m, [...parentPath, parent.index]);
        }
        if (parent.iteration < (node.max_iterations ?? DEFAULT_MAX_ITERATIONS)) {
          parent.iteration += 1;
          parent.index = 0;
          return enter(m, [...parentPath, 0]);
        }
      }
      log(m, 'info', 'loop finished', { node: node.name, iterations: parent.iteration, exited: outcome.exitLoop });
      delete m.s.frames[parentKey];
      return complete(m, parentPath, { kind: 'done', output: parent.output, exitLoop: false });
    }
    case 'parallel':
      if (parent.resumed) {
        if (outcome.kind === 'paused') {
          delete m.s.frames[parentKey];
          return complete(m, parentPath, outcome);
        }
        m.s.changes.outputs[keyOf(path)] = { output: outcome.output, exitLoop: outcome.exitLoop };
        m.s.write = { purpose: 'settle', attempts: 0, path: [...parentPath], children: parent.children };
        return emitWrite(m);
      }
      parent.outcomes[index] = outcome;
      if (parent.outcomes.some((branch) => branch === null)) return;
      delete m.s.frames[parentKey];
      if (parent.outcomes.some((branch) => branch?.kind === 'paused')) {
        // The finished branches keep their outputs until the waiting ones are approved.
        parent.outcomes.forEach((branch, at) => {
          if (branch?.kind === 'done')
            m.s.changes.outputs[keyOf([...parentPath, at])] = { output: branch.output, exitLoop: branch.exitLoop };
        });
        return complete(m, parentPath, { kind: 'paused' });
      }
      return complete(
        m,
        parentPath,
        joined(parent.outcomes.map((branch) => (branch?.kind === 'done' ? branch : { output: '', exitLoop: false }))),
      );
    default:
      return;
  }
}

function joined(outputs: readonly BranchOutput[]): NodeOutcome {
  return { kind: 'done', output: joinOutputs(outputs.map((branch) => branch.output)), exitLoop: outputs.some((branch) => branch.exitLoop) };
}

export function isBelow(path: readonly number[], ancestor: readonly number[]): boolean {
  return path.length > ancestor.length && ancestor.every((index, depth) => path[depth] === index);
}

// ---- writes ---------------------------------------------------------------------------

function pauseRun(m: Step): void {
  m.s.write = { purpose: 'pause', attempts: 0 };
  emitWrite(m);
}

function finishRun(m: Step, response: string, messages: NewMessage[]): void {
  m.s.frames = {};
  m.s.write = { purpose: 'finish', attempts: 0, messages, response };
  emitWrite(m);
}

/** The write of the pending purpose, computed from the latest stored run and this activation's changes. */
function emitWrite(m: Step): void {
  const write = m.s.write!;
  const expectedRevision = m.s.revision;
  switch (write.purpose) {
    case 'finish':
      m.fx.push({
        kind: 'write',
        messages: write.messages,
        approvals: [],
        run: write.keepWaiting ? withChanges(m.s) : undefined,
        expectedRevision,
      });
      return;
    case 'pause':
      m.fx.push({
        kind: 'write',
        messages: m.s.gates.flatMap((gate) => gate.messages),
        approvals: m.s.gates.map((gate) => gate.approval),
        run: withChanges(m.s),
        expectedRevision,
      });
      return;
    case 'settle': {
      const nextRun = withChanges(m.s);
      if (nextRun.pending.some((pause) => isBelow(pause.path, write.path))) {
        write.joined = undefined;
        m.fx.push({ kind: 'write', messages: [], approvals: [], run: nextRun, expectedRevision });
        return;
      }
      // No sibling waits any more: the outputs are joined now, and a later round of an enclosing loop starts without them.
      write.joined = Array.from(
        { length: write.children },
        (_, index) => nextRun.branchOutputs[keyOf([...write.path, index])] ?? { output: '', exitLoop: false },
      );
      const kept = Object.fromEntries(
        Object.entries(nextRun.branchOutputs).filter(([key]) => !isBelow(key.split('.').map(Number), write.path)),
      );
      m.fx.push({ kind: 'write', messages: [], approvals: [], run: { ...nextRun, branchOutputs: kept }, expectedRevision });
      return;
    }
  }
}

function written(m: Step, revision: number): void {
  const write = m.s.write;
  if (!write) return outOfPhase(m, 'written', 'no write of the run is on its way');
  const stored = lastWrittenRun(m, write);
  m.s.write = undefined;
  m.s.base = stored;
  m.s.revision = revision;
  m.s.changes = noChanges();
  m.s.modelCalls = 0;
  switch (write.purpose) {
    case 'finish':
      return end(m, { kind: 'answered', response: m.s.afterRejection ? afterRejection(write.response) : write.response });
    case 'pause': {
      const approvals = m.s.gates.map((gate) => gate.approval.uuid);
      m.s.gates = [];
      return end(m, { kind: 'paused', approvals });
    }
    case 'settle':
      if (!write.joined) {
        log(m, 'info', 'branch finished; other branches still wait', { node: keyOf(write.path) });
        return end(m, { kind: 'waiting' });
      }
      delete m.s.frames[keyOf(write.path)];
      return complete(m, write.path, joined(write.joined));
  }
}

/** The run that the write of `write` stored (what the effect carried), as the new base. */
function lastWrittenRun(m: Step, write: NonNullable<RunState['write']>): StoredRun | undefined {
  if (write.purpose === 'finish' && !write.keepWaiting) return undefined;
  const run = withChanges(m.s);
  if (write.purpose === 'settle' && write.joined) {
    return {
      ...run,
      branchOutputs: Object.fromEntries(
        Object.entries(run.branchOutputs).filter(([key]) => !isBelow(key.split('.').map(Number), write.path)),
      ),
    };
  }
  return run;
}

function writeConflict(m: Step, latest: StoredRun | undefined, revision: number): void {
  const write = m.s.write;
  if (!write) return outOfPhase(m, 'writeConflict', 'no write of the run is on its way');
  const runId = m.s.base?.runId || m.s.runId;
  if (!latest || latest.runId !== runId) {
    m.s.write = undefined;
    const reason = latest ? 'a newer message started another run' : 'the run was cancelled or finished while this branch ran';
    log(m, 'warn', 'pipeline run superseded', { reason });
    // Cancelled under it (a sibling's approval was rejected): no write of this activation ends the turn, so the driver ends it.
    return end(m, { kind: 'superseded', reason, endTurn: latest === undefined });
  }
  write.attempts += 1;
  if (write.attempts >= MAX_WRITE_ATTEMPTS) {
    m.s.write = undefined;
    return refuse(
      m,
      'aborted',
      `the run of this conversation kept changing under this request (${MAX_WRITE_ATTEMPTS} writes lost a race); try again`,
    );
  }
  m.s.base = latest;
  m.s.revision = revision;
  emitWrite(m);
}

function end(m: Step, answer: RunAnswer): void {
  m.s.phase = 'finished';
  m.s.frames = {};
  m.fx.push({ kind: 'done', answer });
}

/**
 * A cancel or the deadline: no new work starts (what is in flight finishes and comes back),
 * and once nothing is in flight the run ends with `text`. What is not written yet is dropped:
 * a call that would have waited for approval is never asked. A decision that was not claimed
 * yet is dropped too (nothing was decided); the other waiting approvals of a run stay.
 */
function applyStop(m: Step, text: string): void {
  m.fx = m.fx.filter((effect) => !STARTS_WORK.has(effect.kind));
  if (m.s.write?.purpose === 'pause' && m.fx.some((effect) => effect.kind === 'write')) {
    // A pause reached after the stop (not one in flight before it): its calls are never asked.
    m.fx = m.fx.filter((effect) => effect.kind !== 'write');
    m.s.write = undefined;
  }
  const waitingFor = m.s.inFlight + m.fx.filter((effect) => ASKS.has(effect.kind)).length;
  if (m.s.write || waitingFor > 0) return;
  if (m.s.decision && !m.s.decision.claimed) return end(m, { kind: 'answered', response: text });
  m.s.gates = [];
  m.s.changes.pauses = [];
  m.s.changes.outputs = {};
  const keepWaiting = withChanges(m.s).pending.length > 0;
  m.s.frames = {};
  m.s.write = { purpose: 'finish', attempts: 0, messages: [assistantText(text)], response: text, keepWaiting };
  emitWrite(m);
}

/**
 * The lease is lost: the run is no longer this activation's, so it asks for nothing more, and
 * ends at once — unless a write or a claim it asked for before is on its way. A write passed
 * the store's fence or it will be refused; when it is stored (written) its answer stands: the
 * turn answered (or paused) before the lease went, and a renewal that reaches the store just
 * after the turn's last write ended it is not a lost run. A claim's answer says whether the
 * decision stands (what it decided is then carried out from what is stored) or nothing was
 * decided. A write or a claim it would ask for now is not asked.
 */
function applyLoss(m: Step, reason: string): void {
  const wroteNow = m.fx.some((effect) => effect.kind === 'write');
  const claimedNow = m.fx.some((effect) => effect.kind === 'claim');
  m.fx = m.fx.filter((effect) => effect.kind === 'log');
  if (wroteNow) m.s.write = undefined;
  if (claimedNow && m.s.decision) m.s.decision.inClaim = false;
  if (m.s.write || m.s.decision?.inClaim) return;
  end(m, { kind: 'lost', reason });
}

/** The answer of a simple-mode activation that went on after a rejection: it says first that the operation was cancelled, which clients look for. */
function afterRejection(response: string): string {
  return response ? `${CANCELLED_BY_USER}\n\n${response}` : CANCELLED_BY_USER;
}

// ---- decisions ------------------------------------------------------------------------

function approvalDecided(m: Step, event: Extract<RunEvent, { kind: 'approvalDecided' }>): void {
  m.s.activation = event.activation;
  const approval = event.approval;
  const pause = m.s.base?.pending.find((candidate) => candidate.approvalUuid === event.uuid);
  const facts = decisionFacts(event);
  m.s.decision = {
    uuid: event.uuid,
    approved: event.approved,
    ...(event.reason !== undefined && { reason: event.reason }),
    ...facts,
    approval,
    ...(pause && { pause }),
    nodes: {},
    others: [],
    claimed: false,
    conflicts: 0,
  };
  if (event.editedArgs !== undefined && !event.approved) return refuse(m, 'invalidArgument', EDIT_WITHOUT_APPROVAL);
  if (approval.status !== ApprovalStatus.APPROVAL_STATUS_PENDING) {
    // Decided already: the claim loses and says how; nothing else is checked or prepared.
    m.s.decision.inClaim = true;
    m.fx.push({
      kind: 'claim',
      uuid: event.uuid,
      approved: event.approved,
      ...(event.reason !== undefined && { reason: event.reason }),
      ...facts,
      messages: [],
      clearRun: false,
      alsoReject: [],
      continuesTurn: false,
    });
    return;
  }
  if (event.editedArgs !== undefined && approval.remoteTaskId) {
    return refuse(
      m,
      'failedPrecondition',
      `approval ${event.uuid} is held by the sub-agent ${approval.remoteAgentName ?? approval.toolName}, which runs its own stored call: its arguments cannot be edited here. Nothing was decided; approve it as it is, or reject it.`,
    );
  }
  // Edited arguments must fit the tool's input schema, as the model's own had to: the tools are read first.
  // (With a server's question, the "edit" is the human's answer, already checked against what the server asked.)
  if (event.editedArgs !== undefined && !pause?.input) {
    m.fx.push({ kind: 'loadTools' });
    return;
  }
  prepareClaim(m);
}

/** Only an approval runs a call, so only an approval can change its arguments. */
const EDIT_WITHOUT_APPROVAL = 'arguments can only be given with an approval ("approved": true)';

/**
 * Edited arguments against the input schema of the approval's tool: the catalogue's, or one the
 * configuration brings (an A2A agent as a tool, an a2a node's delegation). INVALID_ARGUMENT
 * naming the first problem, before anything is claimed.
 */
function checkEdit(m: Step, catalogue: readonly Tool[]): void {
  const decision = m.s.decision!;
  const toolName = decision.approval.toolName;
  const tool = [...catalogue, ...(m.env.configuredTools ?? [])].findLast((candidate) => candidate.name === toolName);
  if (!tool) {
    return refuse(
      m,
      'failedPrecondition',
      `the tool ${toolName} is not available now, so edited arguments cannot be checked against its input schema. Nothing was decided.`,
    );
  }
  const problem = firstSchemaProblem(tool.inputSchema, decision.editedArgs, 'arguments');
  if (problem)
    return refuse(
      m,
      'invalidArgument',
      `the edited arguments do not fit the input schema of ${toolName}: ${problem}. Nothing was decided.`,
    );
  prepareClaim(m);
}

/** The activation stops with an error and nothing done (or, for `aborted`, nothing it could keep). */
function refuse(m: Step, code: Extract<Effect, { kind: 'refuse' }>['code'], message: string): void {
  m.s.phase = 'finished';
  m.fx.push({ kind: 'refuse', code, message });
}

/** Who decided and how, as the claim records it: an edit only with an approval, an expiry only with a rejection. */
function decisionFacts(event: DecisionFacts & { approved: boolean }): DecisionFacts {
  return {
    ...(event.decidedBy !== undefined && { decidedBy: event.decidedBy }),
    ...(event.via !== undefined && { via: event.via }),
    ...(event.approved && event.editedArgs !== undefined && { editedArgs: event.editedArgs }),
    ...(!event.approved && event.expired === true && { expired: true }),
  };
}

/**
 * A run taken over from another replica. Its stored value is the base; what the
 * cut-off activation had not written is done again: a claimed call that never started runs
 * (its claim stands, and starting it is still at most once), a decided approval's
 * continuation goes on after it, and a message's turn runs from the stored history. The
 * caller has checked that nothing the activation recorded would be done twice
 * (orchestrator/takeover-plan.ts).
 */
function takenOver(m: Step, event: Extract<RunEvent, { kind: 'takenOver' }>): void {
  m.s.activation = event.activation;
  m.s.runId = m.s.base?.runId || event.runId;
  m.s.userMessage = m.s.base?.userMessage || event.userMessage;
  if (event.approved) {
    const approval = event.approved;
    const pause = m.s.base?.pending.find((candidate) => candidate.approvalUuid === approval.uuid);
    // A claim with edited arguments runs them, whichever replica carries it out.
    const facts = decisionFacts({
      approved: true,
      ...(approval.decidedBy && { decidedBy: approval.decidedBy }),
      ...(approval.via && { via: approval.via }),
      ...(approval.editedArgsJson && { editedArgs: jsonObjectOf(approval.editedArgsJson) }),
    });
    m.s.decision = {
      uuid: approval.uuid,
      approved: true,
      ...facts,
      approval,
      ...(pause && { pause }),
      nodes: pauseNodes(m),
      others: [],
      claimed: false,
      conflicts: 0,
    };
    return claimed(m, true);
  }
  if (event.resumed) {
    const pause = m.s.base?.pending.find((candidate) => candidate.approvalUuid === event.resumed!.uuid);
    m.s.changes.resumed = event.resumed.uuid;
    if (pause) m.s.resume = pause;
    m.s.afterRejection = event.resumed.rejected && m.s.mode === 'simple';
  }
  m.fx.push({ kind: 'loadTools' });
}

/** The node names of the stored run's pauses, by approval (agent trees), for tagging messages. */
function pauseNodes(m: Step): Record<string, string> {
  const nodes: Record<string, string> = {};
  const root = m.env.root;
  if (m.s.mode !== 'tree' || !root) return nodes;
  for (const waiting of m.s.base?.pending ?? []) {
    const name = nodeAt(root, waiting.path)?.name;
    if (name !== undefined) nodes[waiting.approvalUuid] = name;
  }
  return nodes;
}

/** Checks the decision against the stored run and prepares its claim (tree rejections load the other waiting approvals first). */
function prepareClaim(m: Step): void {
  const decision = m.s.decision!;
  if (m.s.mode === 'tree') {
    const root = m.env.root;
    if (decision.approved) {
      const refusal = resumeProblem(root, decision.pause, decision.uuid);
      if (refusal) return refuse(m, 'failedPrecondition', refusal);
    }
    decision.nodes = pauseNodes(m);
    // A rejection cancels the tree's run, and with it its other waiting calls: they are needed to record that.
    if (!decision.approved && (m.s.base?.pending.length ?? 0) > 1) {
      m.fx.push({ kind: 'loadApprovals' });
      return;
    }
  }
  claim(m);
}

/** The run changed between reading it and claiming a rejection that cancels it: decide again on what is stored now. */
function claimConflict(m: Step, latest: StoredRun | undefined, revision: number): void {
  const decision = m.s.decision;
  if (!decision || decision.claimed) return outOfPhase(m, 'claimConflict', 'no claim of a decision is on its way');
  decision.inClaim = false;
  decision.conflicts += 1;
  if (decision.conflicts >= MAX_WRITE_ATTEMPTS) {
    return refuse(
      m,
      'aborted',
      `the run of this conversation kept changing under this decision (${MAX_WRITE_ATTEMPTS} claims refused); try again`,
    );
  }
  m.s.base = latest;
  m.s.revision = revision;
  decision.others = [];
  const pause = latest?.pending.find((candidate) => candidate.approvalUuid === decision.uuid);
  if (pause) decision.pause = pause;
  else delete decision.pause;
  prepareClaim(m);
}

/** Why an approved call of an agent tree cannot resume where it paused; undefined when it can. */
function resumeProblem(root: AgentNode | undefined, pause: PendingCall | undefined, uuid: string): string | undefined {
  if (!root)
    return `approval ${uuid} cannot resume its pipeline: the configuration has no agent tree any more. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`;
  if (!pause) return `approval ${uuid} is not one its conversation's pipeline waits for`;
  const where = describeNodePath(['agent', ...pause.path.flatMap((index) => ['agents', index])]);
  if (!nodeAt(root, pause.path) || pause.fingerprint === '' || treeFingerprint(root, pause.path) !== pause.fingerprint) {
    return `approval ${uuid} cannot resume its pipeline: the agent tree changed since it paused at ${where}, so that path no longer leads to the same node. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`;
  }
  return undefined;
}

function claim(m: Step): void {
  const decision = m.s.decision!;
  const reason = decision.reason;
  const facts = decisionFacts(decision);
  decision.inClaim = true;
  if (decision.approved) {
    m.fx.push({
      kind: 'claim',
      uuid: decision.uuid,
      approved: true,
      ...(reason !== undefined && { reason }),
      ...facts,
      messages: [],
      clearRun: false,
      alsoReject: [],
      continuesTurn: true,
    });
    return;
  }
  const approval = decision.approval;
  const node = decision.nodes[decision.uuid];
  // The model reads "Rejected by a human: <reason>" and that the call did not run;
  // after an expiry, that nobody decided in time.
  const asked = decision.pause?.input;
  const text = facts.expired ? expiredText(reason) : asked ? declinedText(approval.toolName, asked.server, reason) : undefined;
  const rejected: NewMessage = {
    ...rejectedResult(gatedCall(approval), jsonObjectOf(approval.toolArgsJson), reason, text),
    ...(node && { node }),
  };
  // Simple mode goes on after a rejection, so that the model answers the "no" in the same run;
  // a rejection in an agent tree cancels its run (README, "rejecting any of them").
  const continues = m.s.mode === 'simple';
  const alsoReject = continues
    ? []
    : decision.others.map((other) => cancelledWith(approval, other, decision.nodes[other.uuid], reason, facts.expired === true));
  // Cancelling a tree's run names the run it read: an approval created since then must not be left pending without it.
  m.fx.push({
    kind: 'claim',
    uuid: decision.uuid,
    approved: false,
    ...(reason !== undefined && { reason }),
    ...facts,
    messages: [rejected],
    clearRun: !continues,
    alsoReject,
    continuesTurn: continues,
    ...(!continues && { expectedRunRevision: m.s.revision }),
  });
}

/** What the model reads when a human declined to answer a server's question. */
export function declinedText(toolName: string, server: string, reason: string | undefined): string {
  const said = reason?.trim() ? `: ${reason.trim()}` : '';
  return `${toolName} did not finish: a human declined to answer the question of MCP server ${server}${said}. The server is told so, and the call ends there; do not retry it unless the user asks you to.`;
}

/** A waiting call cancelled with a rejected one, recorded as rejected with a result that names the rejection and its reason. */
function cancelledWith(
  rejected: PendingApproval,
  other: PendingApproval,
  node: string | undefined,
  reason: string | undefined,
  expired: boolean,
): ApprovalRejection {
  const said = reason?.trim() ? `: ${reason.trim()}` : '';
  const how = expired ? 'expired without a decision' : 'was rejected by a human';
  const text = `Cancelled: the pipeline was cancelled when approval ${rejected.uuid} (${rejected.toolName}) ${how}${said}; ${other.toolName} was not run. ${NOT_RETRIED}`;
  return {
    uuid: other.uuid,
    messages: [{ ...rejectedResult(gatedCall(other), jsonObjectOf(other.toolArgsJson), reason, text), ...(node && { node }) }],
  };
}

function claimed(m: Step, won: boolean): void {
  const decision = m.s.decision;
  if (!decision) return outOfPhase(m, 'claimed', 'no decision is being claimed');
  decision.inClaim = false;
  if (!won) return end(m, { kind: 'notDecided' });
  decision.claimed = true;
  const pause = decision.pause ?? {
    approvalUuid: decision.uuid,
    path: [],
    outputKey: '',
    fingerprint: '',
    loopIterations: {},
    nodeMessages: null,
    toolName: decision.approval.toolName,
    argsHash: decision.approval.argsHash,
  };
  if (decision.approved) {
    m.s.resume = pause;
    const node = decision.nodes[decision.uuid];
    const approval = decision.approval;
    // An input request's "edit" is the human's answer to the server, not arguments.
    const input = pause.input && { request: pause.input, responses: inputResponses(pause.input, decision.editedArgs ?? {}) };
    // A proxied call is the peer's own stored call: only a local call runs edited arguments.
    const edited = !input &&
      !approval.remoteTaskId &&
      decision.editedArgs && { args: decision.editedArgs, by: decision.decidedBy || 'anonymous' };
    // The approved call is the stored call: one whose arguments no longer match the hash taken when it was asked is not run.
    const matches = callHash(approval.toolName, jsonObjectOf(approval.toolArgsJson)) === approval.argsHash;
    if (!matches) log(m, 'error', 'approved call does not match its hash', { approval: decision.uuid });
    m.fx.push({
      kind: 'runApproved',
      uuid: decision.uuid,
      ...(node !== undefined && { node }),
      ...(edited && { edited }),
      ...(input && { input }),
      ...(!matches && { notRun: `${approval.toolName} was not executed: the stored call no longer matches the one that was approved.` }),
    });
    return;
  }
  // A declined question reaches the server that asked it, once, now that the decline stands.
  if (pause.input) m.fx.push({ kind: 'declineInput', approval: decision.approval, request: pause.input });
  // A rejection reaches the agent that holds the call: each proxied one is answered "rejected".
  for (const refused of [decision.approval, ...decision.others]) {
    if (refused.remoteTaskId)
      m.fx.push({ kind: 'forwardRejection', approval: refused, ...(decision.reason !== undefined && { reason: decision.reason }) });
  }
  if (m.s.mode === 'tree') return end(m, { kind: 'cancelled' });
  m.s.afterRejection = true;
  m.s.resume = pause;
  m.s.changes.resumed = decision.uuid;
  m.fx.push({ kind: 'loadTools' });
}

function approvedCallFinished(m: Step, outcome: ToolOutcome): void {
  const decision = m.s.decision;
  const pause = m.s.resume;
  if (!decision || !pause) return outOfPhase(m, 'approvedCallFinished', 'no approved call runs');
  m.s.changes.resumed = decision.uuid;
  if (!outcome.remote && !outcome.input) {
    m.fx.push({ kind: 'loadTools' });
    return;
  }
  // The peer asks for another approval, or the server for more input, before it finishes: the same call waits again.
  const approval = decision.approval;
  const args = jsonObjectOf(approval.toolArgsJson);
  const tool = outcome.input
    ? { ...proxiedTool(approval.toolName), destructive: false, server: outcome.input.server }
    : proxiedTool(approval.toolName);
  const gate: GatedCall = {
    kind: 'gate',
    call: { ...gatedCall(approval), argumentsJson: JSON.stringify(args) },
    args,
    tool,
    ...(outcome.remote && { proxy: outcome.remote }),
    ...(outcome.input && { input: outcome.input }),
  };
  const uuid = freshId(m);
  const { input: _answered, ...rest } = pause;
  m.s.changes.pauses.push({ ...rest, approvalUuid: uuid, ...(outcome.input && { input: outcome.input }) });
  m.s.gates.push({ approval: approvalOf(gate, uuid), messages: [] });
  pauseRun(m);
}

/** The catalogue entry an approval's tool stands for when only its name is known (a proxied delegation). */
function proxiedTool(name: string): Tool {
  return { name, description: '', inputSchema: {}, destructive: true, server: A2A_SERVER };
}
