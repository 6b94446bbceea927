import type { NewApproval, NewMessage } from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import { a2aTool, a2aToolsOf, proxyDescription } from '../domain/a2a-tools.js';
import { assistantCall, rejectedResult, userMessage } from '../domain/messages.js';
import { inputDescription } from '../domain/elicitation.js';
import { describeCall, policyGate, policyRejectionText, type PolicyGate } from '../domain/plan.js';
import { childGates, DEFAULT_MAX_ITERATIONS, joinOutputs, resolvePlaceholders, treeFingerprint, type AgentNode } from '../domain/tree.js';
import type { BranchOutput, PendingCall } from './state.js';
import type { GatedCall, LlmFrame, NodeOutcome, Path } from './types.js';
import { type Transition, keyOf, describePath, outOfPhase, treeRoot, nodeOf, log, freshId } from './transition.js';
import { callModel, POLICY_APPROVED_REASON } from './model-steps.js';
import { policyAt } from './policies.js';
import { pauseRun, finishRun, emitWrite } from './writes.js';
import { nodePath, placeInConversation, policyDecisionStep, record, timing } from './journal.js';
import { nodeFinishedCheckpoint, restored } from './checkpoints.js';
import { redactArguments } from '../../common/run-steps.js';

/** Walking the agent tree: entering a node, resuming at a pause, a node paused for approval, and handing a node's outcome to its parent. */

/** Whether destructive calls of the node at `path` stop for approval. */
function gatesAt(transition: Transition, path: Path): boolean {
  if (transition.state.mode === 'simple') return true;
  let gates = true;
  for (let depth = 0; depth < path.length; depth++) gates = childGates(gates, nodeOf(transition, path.slice(0, depth)));
  return gates;
}

function session(transition: Transition): ReadonlyMap<string, string> {
  return new Map(Object.entries({ ...transition.state.base?.session, ...transition.state.changes.session }));
}

function placeholders(transition: Transition, node: AgentNode, template: string): string {
  const { text, unknown } = resolvePlaceholders(template, session(transition), transition.state.userMessage);
  if (unknown.length > 0)
    log(transition, 'warn', 'placeholders without a value left as written', { node: node.name, placeholders: unknown.join(',') });
  return text;
}

function toolsFor(transition: Transition, extra: readonly Tool[]): Record<string, Tool> {
  const tools = { ...transition.state.tools };
  for (const tool of extra) tools[tool.name] = tool;
  return tools;
}

export function enter(transition: Transition, path: Path): void {
  const key = keyOf(path);
  if (transition.state.mode === 'simple') {
    transition.state.frames[key] = simpleFrame(transition);
    transition.effects.push({ kind: 'loadHistory', path, nodeMessages: null });
    return;
  }
  const node = nodeOf(transition, path);
  const children = node.agents ?? [];
  // A taken-over run goes on from its checkpoint: a container on its way there started before.
  const from = node.type === 'llm' || node.type === 'a2a' ? undefined : restored(transition, path);
  if (!from) nodeStarted(transition, path, node.type);
  switch (node.type) {
    case 'llm': {
      const frame = nodeFrame(transition, node, path);
      frame.history = [userMessage(transition.state.userMessage)];
      transition.state.frames[key] = frame;
      callModel(transition, path, frame);
      return;
    }
    case 'a2a':
      enterA2a(transition, node, path);
      return;
    case 'sequential':
      if (children.length === 0) {
        complete(transition, path, { kind: 'done', output: '', exitLoop: false });
        return;
      }
      if (from?.kind === 'sequential' && from.index < children.length) {
        transition.state.frames[key] = { kind: 'sequential', index: from.index, output: from.output };
        enter(transition, [...path, from.index]);
        return;
      }
      transition.state.frames[key] = { kind: 'sequential', index: 0, output: '' };
      enter(transition, [...path, 0]);
      return;
    case 'parallel':
      if (children.length === 0) {
        complete(transition, path, { kind: 'done', output: '', exitLoop: false });
        return;
      }
      transition.state.frames[key] = {
        kind: 'parallel',
        resumed: false,
        outcomes: children.map((_, index) => (from?.kind === 'parallel' ? restoredBranch(transition, path, index, from.done) : null)),
      };
      // A child may finish or pause at once (a gated a2a node); the frame is there to take it.
      for (let index = 0; index < children.length; index++) {
        const frame = transition.state.frames[key];
        if (frame?.kind === 'parallel' && !frame.resumed && frame.outcomes[index] === null) enter(transition, [...path, index]);
      }
      // Restored with every branch finished or waiting: it ends now.
      {
        const frame = transition.state.frames[key];
        if (frame?.kind === 'parallel' && !frame.resumed) parallelSettled(transition, path, frame.outcomes);
      }
      return;
    case 'loop':
      if (children.length === 0 || (node.max_iterations ?? DEFAULT_MAX_ITERATIONS) < 1) {
        complete(transition, path, { kind: 'done', output: '', exitLoop: false });
        return;
      }
      if (from?.kind === 'loop' && from.index < children.length) {
        transition.state.frames[key] = { kind: 'loop', iteration: from.iteration, index: from.index, output: from.output };
        enter(transition, [...path, from.index]);
        return;
      }
      transition.state.frames[key] = { kind: 'loop', iteration: 1, index: 0, output: '' };
      enter(transition, [...path, 0]);
      return;
  }
}

/**
 * A branch of a restored parallel node: finished (its checkpoint, or the run's branch outputs
 * of a node whose branches waited for approvals), waiting for an approval of the run, or null:
 * it runs (again, from its start).
 */
function restoredBranch(
  transition: Transition,
  path: Path,
  index: number,
  done: Readonly<Record<string, BranchOutput>>,
): NodeOutcome | null {
  const branch = [...path, index];
  const finished = done[String(index)] ?? transition.state.base?.branchOutputs[keyOf(branch)];
  if (finished) return { kind: 'done', output: finished.output, exitLoop: finished.exitLoop };
  const waits = (transition.state.base?.pending ?? []).some(
    (pause) => pause.path.length >= branch.length && isBelowOrAt(pause.path, branch),
  );
  return waits ? { kind: 'paused' } : null;
}

function isBelowOrAt(path: readonly number[], ancestor: readonly number[]): boolean {
  return ancestor.every((index, depth) => path[depth] === index);
}

function simpleFrame(transition: Transition): LlmFrame {
  return {
    kind: 'llm',
    model: transition.env.simple.model,
    systemPrompt: '',
    gates: true,
    canExit: false,
    tools: toolsFor(transition, transition.env.simple.a2aTools),
    history: [],
    steps: [],
    earlier: 0,
    calls: 0,
    awaiting: 'history',
  };
}

function nodeFrame(transition: Transition, node: AgentNode, path: Path): LlmFrame {
  return {
    kind: 'llm',
    node: node.name,
    model: node.model ?? transition.env.defaultModel,
    ...(node.timeout !== undefined && { timeoutMs: node.timeout }),
    systemPrompt: placeholders(transition, node, node.prompt ?? ''),
    gates: gatesAt(transition, path),
    canExit: node.can_exit_loop ?? false,
    tools: toolsFor(transition, a2aToolsOf(node.a2a)),
    history: [],
    steps: [],
    earlier: 0,
    calls: 0,
    awaiting: 'history',
  };
}

/** An a2a node delegates its resolved prompt to its peer; a destructiveHint delegation waits for approval where the node gates. */
function enterA2a(transition: Transition, node: AgentNode, path: Path): void {
  const message = placeholders(transition, node, node.prompt ?? '{user_message}');
  const tool = a2aTool({ name: node.name, description: node.description ?? '', destructiveHint: node.destructiveHint ?? false });
  const call = { id: `a2a-${freshId(transition)}`, name: tool.name, argumentsJson: JSON.stringify({ message }) };
  const args = { message };
  const callMessage: NewMessage = { ...assistantCall(call, args), node: node.name };
  // A policy judges the delegation by its tool name, as it judges a model's call.
  const verdict = policyAt(transition, path)?.(call, tool, args) ?? { kind: 'none' };
  if (verdict.kind === 'reject') {
    const text = policyRejectionText(verdict.rule, verdict.reason);
    policyDecisionStep(transition, path, verdict.rule, false, verdict.reason);
    transition.effects.push({
      kind: 'auditPolicy',
      rule: verdict.rule,
      call,
      args,
      ...(verdict.reason !== undefined && { reason: verdict.reason }),
    });
    nodeFinishedCheckpoint(transition, [callMessage, { ...rejectedResult(call, args, verdict.reason, text), node: node.name }]);
    setOutput(transition, node, text);
    complete(transition, path, { kind: 'done', output: text, exitLoop: false });
    return;
  }
  if (verdict.kind === 'require') {
    gateNode(transition, path, { kind: 'gate', call, args, tool, policy: policyGate(verdict) }, [callMessage], 0);
    return;
  }
  if (verdict.kind === 'approve') {
    transition.state.frames[keyOf(path)] = { kind: 'a2a', call, args, callMessage, tool, askedAt: transition.at };
    policyDecisionStep(transition, path, verdict.rule, true);
    transition.effects.push({
      kind: 'callTool',
      path,
      node: node.name,
      call,
      args,
      unapprovedReason: POLICY_APPROVED_REASON(verdict.rule),
      policy: verdict.rule,
    });
    return;
  }
  if (tool.destructive && gatesAt(transition, path)) {
    gateNode(transition, path, { kind: 'gate', call, args, tool }, [callMessage], 0);
    return;
  }
  if (tool.destructive) log(transition, 'warn', 'destructive call ran without approval', { node: node.name, tool: tool.name });
  transition.state.frames[keyOf(path)] = { kind: 'a2a', call, args, callMessage, tool, askedAt: transition.at };
  transition.effects.push({ kind: 'callTool', path, node: node.name, call, args, unapprovedReason: '' });
}

/** The frames from the root down to a pause, so that the run goes on exactly there. */
export function resumeAt(transition: Transition, pause: PendingCall): void {
  if (transition.state.mode === 'simple') {
    enter(transition, []);
    return;
  }
  const path = pause.path;
  for (let depth = 0; depth < path.length; depth++) {
    const prefix = path.slice(0, depth);
    const node = nodeOf(transition, prefix);
    const index = path[depth]!;
    const key = keyOf(prefix);
    if (node.type === 'sequential') transition.state.frames[key] = { kind: 'sequential', index, output: '' };
    else if (node.type === 'loop')
      transition.state.frames[key] = { kind: 'loop', iteration: pause.loopIterations[key] ?? 1, index, output: '' };
    else if (node.type === 'parallel')
      transition.state.frames[key] = { kind: 'parallel', resumed: true, branch: index, children: node.agents?.length ?? 0 };
  }
  const node = nodeOf(transition, path);
  nodeStarted(transition, path, node.type);
  transition.state.frames[keyOf(path)] = node.type === 'a2a' ? { kind: 'a2aResumed' } : nodeFrame(transition, node, path);
  transition.effects.push({ kind: 'loadHistory', path, node: node.name, nodeMessages: pause.nodeMessages });
}

export function historyLoaded(transition: Transition, path: Path, history: readonly NewMessage[]): void {
  const key = keyOf(path);
  const frame = transition.state.frames[key];
  if (frame?.kind === 'a2aResumed') {
    // The approved delegation ran before the resume; its result is the node's last message.
    delete transition.state.frames[key];
    const output = history.at(-1)?.content ?? '';
    nodeFinishedCheckpoint(transition, []);
    setOutput(transition, nodeOf(transition, path), output);
    complete(transition, path, { kind: 'done', output, exitLoop: false });
    return;
  }
  // Simple mode's root reads the whole conversation instead (conversationLoaded).
  if (frame?.kind !== 'llm' || frame.awaiting !== 'history' || transition.state.mode === 'simple') {
    outOfPhase(transition, 'historyLoaded', `no node at ${describePath(path)} waits for its history`);
    return;
  }
  // A node sees the run's user message and its own steps, not other nodes' calls.
  frame.history = [userMessage(transition.state.userMessage), ...history];
  frame.earlier = history.length;
  callModel(transition, path, frame);
}

export function setOutput(transition: Transition, node: AgentNode, output: string): void {
  if (node.output_key) transition.state.changes.session[node.output_key] = output;
}

/**
 * The approval to store for a gated call: its stored arguments, and for a proxy where the call
 * waits. A policy that asks for more than one decision by anyone who may decide approvals — a
 * quorum, a role, not the requester — stores it as the approval's quorum, with the requester
 * (the principal whose message started the run) that not_requester refuses.
 */
export function approvalOf(gate: GatedCall, uuid: string, requester?: string): NewApproval {
  const base = { uuid, toolCallId: gate.call.id, toolName: gate.call.name, toolArgsJson: JSON.stringify(gate.args) };
  if (gate.input) return { ...base, description: inputDescription(gate.call.name, gate.input), agentChain: [] };
  if (!gate.proxy)
    return {
      ...base,
      description: describeCall(gate.call.name, gate.tool.server, gate.args, gate.policy),
      agentChain: [],
      ...quorumOf(gate.policy, requester),
    };
  const remote = gate.proxy;
  return {
    ...base,
    description: proxyDescription(remote.agent, remote.approval?.description || remote.text),
    remoteTaskId: remote.taskId,
    remoteAgentName: remote.agent,
    agentChain: [remote.agent, ...(remote.approval?.chain ?? [])],
  };
}

function quorumOf(policy: PolicyGate | undefined, requester: string | undefined): Pick<NewApproval, 'quorum' | 'escalation'> {
  const require = policy?.require;
  if (!require) return {};
  // One decision by anyone who may decide approvals is what every approval needs: no quorum to store.
  if (require.approvals <= 1 && require.role === undefined && !require.notRequester && !require.escalate) return {};
  return {
    quorum: {
      required: require.approvals,
      role: require.role ?? DEFAULT_QUORUM_ROLE,
      notRequester: require.notRequester,
      ...(requester && { requester }),
    },
    ...(require.escalate && { escalation: { afterMs: require.escalate.afterMs, toRole: require.escalate.toRole } }),
  };
}

/** The role a quorum's voters hold when the rule names none. */
const DEFAULT_QUORUM_ROLE = 'approve';

/** Records a pause at the node at `path` for `gate`, with the node's steps of this run that led to it. */
export function gateNode(transition: Transition, path: Path, gate: GatedCall, messages: NewMessage[], earlierSteps: number): void {
  const uuid = freshId(transition);
  const tree = transition.state.mode === 'tree';
  const node = tree ? nodeOf(transition, path) : undefined;
  transition.state.changes.pauses.push({
    approvalUuid: uuid,
    path: [...path],
    outputKey: node?.output_key ?? '',
    fingerprint: tree ? (treeFingerprint(treeRoot(transition), path) ?? '') : '',
    loopIterations: {},
    // The node's steps in this run of it: what it resumes with after the approved call's result.
    nodeMessages: earlierSteps + messages.length,
    toolName: gate.call.name,
    argsHash: callHash(gate.call.name, gate.args),
    ...(gate.input && { input: gate.input }),
  });
  const approval = approvalOf(gate, uuid, transition.state.requester?.name);
  transition.state.gates.push({ approval, messages });
  record(
    transition,
    {
      kind: 'approval',
      node: nodePath(transition, path),
      ...timing(transition),
      body: {
        approval_uuid: uuid,
        tool: gate.call.name,
        arguments: redactArguments(gate.args),
        args_hash: callHash(gate.call.name, gate.args),
        asks: gate.input ? 'input' : gate.proxy ? 'remote_approval' : 'approval',
      },
    },
    // After the step's messages that the pause writes (the model's calls, results of calls before the gated one).
    placeInConversation(transition, messages.length),
  );
  if (node) log(transition, 'info', 'pipeline paused', { node: node.name, path: keyOf(path), approval: uuid });
  delete transition.state.frames[keyOf(path)];
  complete(transition, path, { kind: 'paused' });
}

/** Hands a node's outcome to its parent. */
export function complete(transition: Transition, path: Path, outcome: NodeOutcome): void {
  if (transition.state.mode === 'tree') nodeFinished(transition, path, outcome);
  if (path.length === 0) {
    if (outcome.kind === 'paused') {
      pauseRun(transition);
      return;
    }
    finishRun(transition, outcome.output, transition.state.final ?? []);
    return;
  }
  const parentPath = path.slice(0, -1);
  const parentKey = keyOf(parentPath);
  const index = path[path.length - 1]!;
  const parent = transition.state.frames[parentKey];
  if (!parent) return;
  const children = nodeOf(transition, parentPath).agents ?? [];
  switch (parent.kind) {
    case 'sequential':
      if (outcome.kind === 'paused' || outcome.exitLoop) {
        // exit_loop ends the nearest enclosing loop, so the rest of this sequence is skipped too.
        delete transition.state.frames[parentKey];
        complete(transition, parentPath, outcome);
        return;
      }
      parent.output = outcome.output;
      parent.index = index + 1;
      if (parent.index < children.length) {
        enter(transition, [...parentPath, parent.index]);
        return;
      }
      delete transition.state.frames[parentKey];
      complete(transition, parentPath, { kind: 'done', output: parent.output, exitLoop: false });
      return;
    case 'loop': {
      if (outcome.kind === 'paused') {
        for (const pause of transition.state.changes.pauses)
          if (isBelow(pause.path, parentPath)) pause.loopIterations[parentKey] = parent.iteration;
        delete transition.state.frames[parentKey];
        complete(transition, parentPath, outcome);
        return;
      }
      parent.output = outcome.output || parent.output;
      const node = nodeOf(transition, parentPath);
      if (!outcome.exitLoop) {
        if (index + 1 < children.length) {
          parent.index = index + 1;
          enter(transition, [...parentPath, parent.index]);
          return;
        }
        if (parent.iteration < (node.max_iterations ?? DEFAULT_MAX_ITERATIONS)) {
          parent.iteration += 1;
          parent.index = 0;
          enter(transition, [...parentPath, 0]);
          return;
        }
      }
      log(transition, 'info', 'loop finished', { node: node.name, iterations: parent.iteration, exited: outcome.exitLoop });
      delete transition.state.frames[parentKey];
      complete(transition, parentPath, { kind: 'done', output: parent.output, exitLoop: false });
      return;
    }
    case 'parallel':
      if (parent.resumed) {
        if (outcome.kind === 'paused') {
          delete transition.state.frames[parentKey];
          complete(transition, parentPath, outcome);
          return;
        }
        transition.state.changes.outputs[keyOf(path)] = { output: outcome.output, exitLoop: outcome.exitLoop };
        transition.state.write = { purpose: 'settle', attempts: 0, path: [...parentPath], children: parent.children };
        emitWrite(transition);
        return;
      }
      parent.outcomes[index] = outcome;
      parallelSettled(transition, parentPath, parent.outcomes);
      return;
    default:
      return;
  }
}

/** A parallel node whose branches all finished or wait ends: joined, or paused with the finished branches' outputs kept. */
function parallelSettled(transition: Transition, path: Path, outcomes: readonly (NodeOutcome | null)[]): void {
  if (outcomes.some((branch) => branch === null)) return;
  delete transition.state.frames[keyOf(path)];
  if (outcomes.some((branch) => branch?.kind === 'paused')) {
    // The finished branches keep their outputs until the waiting ones are approved.
    outcomes.forEach((branch, at) => {
      if (branch?.kind === 'done')
        transition.state.changes.outputs[keyOf([...path, at])] = { output: branch.output, exitLoop: branch.exitLoop };
    });
    complete(transition, path, { kind: 'paused' });
    return;
  }
  complete(transition, path, joined(outcomes.map((branch) => (branch?.kind === 'done' ? branch : { output: '', exitLoop: false }))));
}

/** A tree node begins (simple mode's one node is no node of the journal's). */
function nodeStarted(transition: Transition, path: Path, type: string): void {
  transition.state.nodeStarts = { ...transition.state.nodeStarts, [keyOf(path)]: transition.at };
  record(transition, { kind: 'node_started', node: nodePath(transition, path), ...timing(transition), body: { type } });
}

/** A tree node ends, done (with the key its output is stored under) or paused. */
function nodeFinished(transition: Transition, path: Path, outcome: NodeOutcome): void {
  const key = keyOf(path);
  const outputKey = nodeOf(transition, path).output_key;
  const started = transition.state.nodeStarts?.[key];
  if (transition.state.nodeStarts && started !== undefined) delete transition.state.nodeStarts[key];
  record(transition, {
    kind: 'node_finished',
    node: nodePath(transition, path),
    ...timing(transition, started),
    body: {
      outcome: outcome.kind,
      ...(outcome.kind === 'done' && outputKey && { output_key: outputKey }),
      ...(outcome.kind === 'done' && outcome.exitLoop && { exit_loop: true }),
    },
  });
}

export function joined(outputs: readonly BranchOutput[]): NodeOutcome {
  return { kind: 'done', output: joinOutputs(outputs.map((branch) => branch.output)), exitLoop: outputs.some((branch) => branch.exitLoop) };
}

export function isBelow(path: readonly number[], ancestor: readonly number[]): boolean {
  return path.length > ancestor.length && ancestor.every((index, depth) => path[depth] === index);
}
