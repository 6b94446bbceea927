import type { ToolCallPart, ToolDefinition } from '../../../gen/ts/asg/llm/v1/llm.js';
import type { NewMessage } from '../../../gen/ts/asg/store/v1/store.js';
import { assistantCall, assistantText, rejectedResult, toolResult } from '../domain/messages.js';
import { DEFERRED_REASON, planToolCalls, policyRejectionText } from '../domain/plan.js';
import { repeatedRejection } from '../domain/rejections.js';
import { EXIT_LOOP_TOOL } from '../domain/tree.js';
import type { Frame, GatedCall, LlmFrame, ModelReply, Path, ToolOutcome } from './types.js';
import { type Transition, keyOf, describePath, outOfPhase, nodeOf, log } from './transition.js';
import { setOutput, gateNode, complete } from './walk.js';
import { policyAt } from './policies.js';
import { callStep, modelCallStep, policyDecisionStep } from './journal.js';
import { nodeFinishedCheckpoint } from './checkpoints.js';

/** An llm node's loop: the model's reply, the tool calls of its step in the model's order, and the node's end; an a2a node's delegation. */

export const EXIT_LOOP_RESULT = 'The loop ends after this step.';

const EXIT_LOOP_DEFINITION: ToolDefinition = {
  name: EXIT_LOOP_TOOL,
  description: 'Ends the loop this step runs in. Call it when the goal of the loop is reached.',
  inputSchema: { type: 'object', properties: {} },
};

const UNAPPROVED_REASON = (node: string | undefined) => `approvals: auto inside a parallel or loop node (node "${node ?? '?'}")`;

/** Why the tool broker runs a destructive call that a policy approved without an approval record. */
export const POLICY_APPROVED_REASON = (rule: string) => `approved by policy "${rule}"`;

/** The definitions the model gets of the node's tools (without exit_loop). */
export function toolDefinitionsOf(frame: LlmFrame): ToolDefinition[] {
  return Object.values(frame.tools).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
}

export function callModel(transition: Transition, path: Path, frame: LlmFrame): void {
  frame.awaiting = 'model';
  frame.askedAt = transition.at;
  const tools = toolDefinitionsOf(frame);
  if (frame.canExit) tools.push(EXIT_LOOP_DEFINITION);
  transition.effects.push({
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

export function llmFrame(transition: Transition, path: Path, awaiting: LlmFrame['awaiting']): LlmFrame | undefined {
  const frame = transition.state.frames[keyOf(path)];
  return frame?.kind === 'llm' && frame.awaiting === awaiting ? frame : undefined;
}

const tagged =
  (frame: LlmFrame) =>
  (message: NewMessage): NewMessage =>
    frame.node === undefined ? message : { ...message, node: frame.node };

export function modelAnswered(transition: Transition, path: Path, reply: ModelReply): void {
  const frame = llmFrame(transition, path, 'model');
  if (!frame) {
    outOfPhase(transition, 'modelAnswered', `no node at ${describePath(path)} waits for the model`);
    return;
  }
  frame.calls += 1;
  transition.state.modelCalls += 1;
  modelCallStep(transition, path, frame.model, frame.askedAt, reply);
  const usage = reply.usage && { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
  if (reply.toolCalls.length === 0) {
    answerNode(transition, path, frame, reply.text || '(the model returned an empty answer)', usage);
    return;
  }
  const plan = planToolCalls(reply.toolCalls, new Map(Object.entries(frame.tools)), {
    gateDestructive: frame.gates,
    exitTool: frame.canExit ? EXIT_LOOP_TOOL : undefined,
    policy: policyAt(transition, path),
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
  advanceStep(transition, path, frame);
}

/**
 * A fork's run goes on from a history that ends with calls the model asked for and whose results
 * are not in it: they are planned and worked through as if the model had just asked for them
 * (read-only calls run, destructive ones stop for a new approval of their own), without a model
 * call; their messages are already in the conversation.
 */
export function runOpenCalls(transition: Transition, path: Path, frame: LlmFrame, calls: ToolCallPart[]): void {
  const plan = planToolCalls(calls, new Map(Object.entries(frame.tools)), {
    gateDestructive: frame.gates,
    exitTool: frame.canExit ? EXIT_LOOP_TOOL : undefined,
    policy: policyAt(transition, path),
  });
  frame.awaiting = 'tools';
  frame.step = { plan, index: 0, recorded: [], exitLoop: false, text: '', unapproved: false };
  advanceStep(transition, path, frame);
}

/** Works through the step's calls in the model's order; a call to run waits for its toolFinished. */
function advanceStep(transition: Transition, path: Path, frame: LlmFrame): void {
  const step = frame.step!;
  while (step.index < step.plan.length) {
    const planned = step.plan[step.index]!;
    if (planned.kind === 'run') {
      if (planned.unapproved) {
        log(transition, 'warn', 'destructive call ran without approval', { node: frame.node, tool: planned.call.name });
        step.unapproved = true;
      }
      step.askedAt = transition.at;
      if (planned.policy !== undefined) policyDecisionStep(transition, path, planned.policy, true);
      transition.effects.push({
        kind: 'callTool',
        path,
        ...(frame.node !== undefined && { node: frame.node }),
        call: planned.call,
        args: planned.args,
        ...(planned.policy !== undefined
          ? { unapprovedReason: POLICY_APPROVED_REASON(planned.policy), policy: planned.policy }
          : { unapprovedReason: planned.unapproved ? UNAPPROVED_REASON(frame.node) : '' }),
      });
      return;
    }
    if (planned.kind === 'reject') step.recorded.push(toolResult(planned.call, planned.args, planned.reason, true));
    else if (planned.kind === 'refuse') {
      // Told as a human's rejection is (marked rejected, with the reason), and audited as the rule's decision.
      step.recorded.push(rejectedResult(planned.call, planned.args, planned.reason, policyRejectionText(planned.rule, planned.reason)));
      policyDecisionStep(transition, path, planned.rule, false, planned.reason);
      transition.effects.push({
        kind: 'auditPolicy',
        rule: planned.rule,
        call: planned.call,
        args: planned.args,
        ...(planned.reason !== undefined && { reason: planned.reason }),
      });
    } else if (planned.kind === 'defer')
      step.recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
    else if (planned.kind === 'exit') {
      step.exitLoop = true;
      step.recorded.push(toolResult(planned.call, planned.args, EXIT_LOOP_RESULT, false));
    }
    step.index += 1;
  }
  endStep(transition, path, frame);
}

export function toolFinished(transition: Transition, path: Path, callId: string, outcome: ToolOutcome): void {
  const frame = transition.state.frames[keyOf(path)];
  if (frame?.kind === 'a2a' && frame.call.id === callId) {
    a2aFinished(transition, path, frame, outcome);
    return;
  }
  if (frame?.kind !== 'llm' || frame.awaiting !== 'tools' || !frame.step) {
    outOfPhase(transition, 'toolFinished', `no node at ${describePath(path)} waits for a tool call`);
    return;
  }
  const step = frame.step;
  const planned = step.plan[step.index];
  if (planned?.kind !== 'run' || planned.call.id !== callId) {
    outOfPhase(transition, 'toolFinished', `the node at ${describePath(path)} waits for another call than ${callId}`);
    return;
  }
  callStep(transition, path, planned.call, planned.tool, planned.args, outcome, step.askedAt);
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
  advanceStep(transition, path, frame);
}

function endStep(transition: Transition, path: Path, frame: LlmFrame): void {
  const step = frame.step!;
  frame.step = undefined;
  let planned = step.plan.find((call): call is GatedCall => call.kind === 'gate');
  // A call identical to one a human rejected in this run gets the same "no" at once.
  const earlier = planned && repeatedRejection(frame.history, planned.call.name, planned.args);
  if (planned && earlier) {
    log(transition, 'info', 'call repeats one rejected in this run; answered without asking again', {
      node: frame.node,
      tool: planned.call.name,
    });
    step.recorded.push(rejectedResult(planned.call, planned.args, earlier.reason, earlier.text));
    planned = undefined;
  }
  // One approval per step: with a proxy waiting, a destructive call of the same step is deferred.
  if (step.waiting && planned) step.recorded.push(toolResult(planned.call, planned.args, DEFERRED_REASON(planned.call.name), true));
  const gate = step.waiting ?? planned;
  const recorded = step.recorded.map(tagged(frame));
  if (gate) {
    gateNode(transition, path, gate, [...frame.steps, ...recorded], frame.earlier);
    return;
  }
  frame.steps.push(...recorded);
  frame.history.push(...step.recorded);
  if (step.unapproved && transition.state.mode === 'tree') {
    // Unlike a safe step, a destructive call's effect must not be lost if the process dies before the node ends.
    const appended = frame.steps.splice(0);
    // Still the node's steps in this run: a later pause of the node (a peer's approval) resumes with them.
    frame.earlier += appended.length;
    transition.effects.push({ kind: 'append', messages: appended });
  }
  if (step.exitLoop) {
    nodeDone(transition, path, step.text, frame.steps, true);
    return;
  }
  if (frame.calls >= transition.env.maxModelCalls) {
    answerNode(
      transition,
      path,
      frame,
      `Stopped after ${transition.env.maxModelCalls} model calls in one turn (chat.max_llm_iterations) without a final answer.`,
    );
    return;
  }
  callModel(transition, path, frame);
}

export function answerNode(transition: Transition, path: Path, frame: LlmFrame, text: string, usage?: NewMessage['usage']): void {
  nodeDone(transition, path, text, [...frame.steps, tagged(frame)({ ...assistantText(text), usage })], false);
}

function nodeDone(transition: Transition, path: Path, output: string, messages: NewMessage[], exitLoop: boolean): void {
  delete transition.state.frames[keyOf(path)];
  if (transition.state.mode === 'simple') {
    transition.state.final = messages;
    complete(transition, path, { kind: 'done', output, exitLoop });
    return;
  }
  nodeFinishedCheckpoint(transition, messages);
  setOutput(transition, nodeOf(transition, path), output);
  complete(transition, path, { kind: 'done', output, exitLoop });
}

function a2aFinished(transition: Transition, path: Path, frame: Extract<Frame, { kind: 'a2a' }>, outcome: ToolOutcome): void {
  delete transition.state.frames[keyOf(path)];
  callStep(transition, path, frame.call, frame.tool, frame.args, outcome, frame.askedAt);
  if (outcome.remote) {
    gateNode(
      transition,
      path,
      { kind: 'gate', call: frame.call, args: frame.args, tool: frame.tool, proxy: outcome.remote },
      [frame.callMessage],
      0,
    );
    return;
  }
  const node = nodeOf(transition, path);
  nodeFinishedCheckpoint(transition, [
    frame.callMessage,
    { ...toolResult(frame.call, frame.args, outcome.text, outcome.isError), node: node.name },
  ]);
  setOutput(transition, node, outcome.text);
  complete(transition, path, { kind: 'done', output: outcome.text, exitLoop: false });
}
