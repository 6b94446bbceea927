import type { RunJournalEntry } from '../../../gen/ts/asg/store/v1/store.js';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import { type JournalStep, providerOf, type RunStatus, redactArguments, summaryOf } from '../../common/run-steps.js';
import { redactSecrets } from '../../common/secrets.js';
import { A2A_SERVER } from '../domain/a2a-tools.js';
import { nodeAt } from '../domain/tree.js';
import type { Effect, ModelReply, Path, ToolOutcome } from './types.js';
import type { Transition } from './transition.js';

/**
 * What a run records in its journal (common/run-steps.ts has the format), and when it is
 * written. A transition records its steps as they happen (the time is the event's: the
 * machine has no clock of its own; a call's duration runs from the event that asked for it
 * to the one that answered). They are written with the next write the run makes anyway —
 * a tree node's messages, the write that pauses or ends the run, a decision's claim — in
 * that write's transaction: the journal costs no call and no commit of its own. A write that
 * is refused takes its steps with it (a lost claim recorded no decision); a compare-and-set
 * write that is redone carries them again.
 */

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Effects that write to the store in the run's name, and so carry its journal. */
const JOURNALED = new Set<Effect['kind']>(['append', 'checkpoint', 'write', 'claim', 'endTurnWithNote']);

/**
 * A step of the run, now, with its place in the conversation (`messageSeq`: the messages before
 * it, stored or on their way) where the machine knows it: simple mode, once the conversation is
 * loaded. Elsewhere the store places it before the messages of the write that carries it.
 */
export function record(transition: Transition, step: JournalStep, messageSeq = placeInConversation(transition)): void {
  transition.state.journal = [...(transition.state.journal ?? []), messageSeq === undefined ? step : { ...step, messageSeq }];
}

/** Simple mode: the conversation's last stored seq when it was loaded, and the run's messages made since, in their order. */
export function placeInConversation(transition: Transition, pending?: number): number | undefined {
  if (transition.state.mode !== 'simple') return undefined;
  const frame = transition.state.frames[''];
  if (frame?.kind !== 'llm' || frame.baseSeq === undefined) return undefined;
  return frame.baseSeq + (pending ?? frame.steps.length + (frame.step?.recorded.length ?? 0));
}

/**
 * The node's path in the tree as its names say it ("pipeline/analyzer"); simple mode: the
 * agent's name.
 */
export function nodePath(transition: Transition, path: Path): string {
  const root = transition.env.root;
  if (transition.state.mode === 'simple' || !root) return transition.env.simple.node ?? 'agent';
  const names = [root.name];
  for (let depth = 1; depth <= path.length; depth++) names.push(nodeAt(root, path.slice(0, depth))?.name ?? String(path[depth - 1]));
  return names.join('/');
}

/**
 * A policy rule's decision on a call, which asks nobody: a `decision` step with no approval
 * (approval_uuid empty), decided by `policy:<rule>` via `policy`, as the audit names it.
 */
export function policyDecisionStep(transition: Transition, path: Path, rule: string, approved: boolean, reason?: string): void {
  record(transition, {
    kind: 'decision',
    node: nodePath(transition, path),
    ...timing(transition),
    body: {
      approval_uuid: '',
      approved,
      decided_by: `policy:${rule}`,
      via: 'policy',
      ...(reason !== undefined && { reason: redactSecrets(reason) }),
    },
  });
}

export function modelCallStep(
  transition: Transition,
  path: Path,
  model: string,
  askedAt: number | undefined,
  reply: ModelReply | { error: string },
): void {
  const answered = 'text' in reply ? reply : undefined;
  record(transition, {
    kind: 'model_call',
    node: nodePath(transition, path),
    ...timing(transition, askedAt),
    body: {
      model,
      provider: providerOf(model),
      input_tokens: Number(answered?.usage?.inputTokens ?? 0),
      output_tokens: Number(answered?.usage?.outputTokens ?? 0),
      finish_reason: answered ? answered.finishReason || (answered.toolCalls.length > 0 ? 'tool-calls' : 'stop') : 'error',
      ...(answered && answered.toolCalls.length > 0 && { tool_calls: answered.toolCalls.map((call) => call.name) }),
      ...('error' in reply && { error: reply.error }),
    },
  });
}

/** A call that ran and came back: a tool's, or a delegation to an A2A agent. */
export function callStep(
  transition: Transition,
  path: Path,
  call: Pick<ToolCallPart, 'name'>,
  tool: Pick<Tool, 'server'> | undefined,
  args: Record<string, unknown>,
  outcome: ToolOutcome,
  askedAt: number | undefined,
  approvalUuid?: string,
): void {
  const node = nodePath(transition, path);
  const how = outcome.remote || outcome.input ? 'waiting' : outcome.isError ? 'error' : 'ok';
  if (tool?.server === A2A_SERVER) {
    const message = typeof args.message === 'string' ? args.message : JSON.stringify(args);
    record(transition, {
      kind: 'a2a_call',
      node,
      ...timing(transition, askedAt),
      body: { agent: call.name, message: summaryOf(message), outcome: how, summary: summaryOf(outcome.text) },
    });
    return;
  }
  record(transition, {
    kind: 'tool_call',
    node,
    ...timing(transition, askedAt),
    body: {
      tool: call.name,
      server: tool?.server ?? '',
      arguments: redactArguments(args),
      args_hash: callHash(call.name, args),
      outcome: how,
      summary: summaryOf(outcome.text),
      ...(approvalUuid !== undefined && { approval_uuid: approvalUuid }),
    },
  });
}

/**
 * Hands the steps recorded so far to the first write of this transition that carries a
 * journal; every write of the run (`write`) carries one, steps or not, for the run's status.
 * A compare-and-set write keeps its steps (PendingWrite.steps) for when it is redone.
 */
export function attachJournal(transition: Transition): void {
  const state = transition.state;
  // Runs stored by releases before run ids were UUIDs keep no journal: their writes go on as they did.
  if (!RUN_ID.test(state.runId)) return;
  transition.effects = transition.effects.map((effect) => {
    if (!JOURNALED.has(effect.kind)) return effect;
    const pending = state.journal ?? [];
    state.journal = [];
    if (effect.kind === 'write') {
      const write = state.write;
      const steps = write ? [...(write.steps ?? []), ...pending] : pending;
      if (write) write.steps = steps;
      return { ...effect, journal: entry(transition, writeStatus(transition), steps) };
    }
    if (effect.kind === 'checkpoint') {
      // Redone after a lost race, a checkpoint carries its steps again.
      const sending = state.checkpoint?.sending;
      const steps = sending ? [...(sending.steps ?? []), ...pending] : pending;
      if (sending) sending.steps = steps;
      return { ...effect, journal: entry(transition, 'running', steps) };
    }
    if (pending.length === 0) return effect;
    const status: RunStatus =
      effect.kind === 'endTurnWithNote'
        ? 'interrupted'
        : effect.kind === 'claim'
          ? effect.clearRun
            ? 'cancelled'
            : effect.continuesTurn
              ? 'running'
              : 'waiting_approval'
          : 'running';
    return { ...effect, journal: entry(transition, status, pending) };
  });
}

function entry(transition: Transition, status: RunStatus, steps: readonly JournalStep[]): RunJournalEntry {
  return {
    runId: transition.state.runId,
    startedAtMs: transition.state.startedAt ?? 0,
    status,
    steps: steps.map((step) => ({
      index: 0,
      kind: step.kind,
      node: step.node,
      startedAtMs: Math.max(0, Math.round(step.startedAtMs)),
      durationMs: Math.max(0, Math.round(step.durationMs)),
      bodyJson: JSON.stringify(step.body),
      ...(step.messageSeq !== undefined && { messageSeq: step.messageSeq }),
    })),
  };
}

/** The run's status once the write on its way is stored. */
function writeStatus(transition: Transition): RunStatus {
  const write = transition.state.write;
  if (!write) return 'running';
  switch (write.purpose) {
    case 'pause':
      return 'waiting_approval';
    case 'finish':
      if (write.keepWaiting) return 'waiting_approval';
      return transition.state.stop !== undefined ? 'cancelled' : 'completed';
    case 'settle':
      return write.joined ? 'running' : 'waiting_approval';
  }
}

/** A step that lasts from `askedAt` (undefined: a moment) to now. */
export function timing(transition: Transition, askedAt?: number): { startedAtMs: number; durationMs: number } {
  const startedAtMs = askedAt ?? transition.at;
  return { startedAtMs, durationMs: Math.max(0, transition.at - startedAtMs) };
}
