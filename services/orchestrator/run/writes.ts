import type { NewMessage } from '../../../gen/ts/asg/store/v1/store.js';
import { CANCELLED_BY_USER } from '../domain/messages.js';
import type { AgentNode } from '../domain/tree.js';
import type { StoredRun } from './state.js';
import type { RunState } from './types.js';
import { checkpointOf, checkpointOnItsWay, takeQueued } from './checkpoints.js';
import { MAX_WRITE_ATTEMPTS, type Transition, noChanges, keyOf, outOfPhase, log, refuse, end } from './transition.js';
import { complete, joined, isBelow } from './walk.js';

/** Writes of the run: the compare-and-set write of a pause, a finish or a settled branch, and what its answer (written, or a lost race) leads to. */

/**
 * The stored run this state would write now: the base with this activation's changes laid
 * over it; with the tree's `root`, with where the walk stands (its checkpoint).
 */
export function withChanges(state: RunState, root?: AgentNode): StoredRun {
  const base = state.base;
  const changes = state.changes;
  const requester = base?.requester ?? state.requester;
  const checkpoint = state.mode === 'tree' && root ? checkpointOf(state, root) : base?.checkpoint;
  return {
    runId: base?.runId || state.runId,
    mode: state.mode,
    userMessage: base?.userMessage ?? state.userMessage,
    session: { ...base?.session, ...changes.session },
    pending: [...(base?.pending ?? []).filter((pause) => pause.approvalUuid !== changes.resumed), ...changes.pauses],
    branchOutputs: { ...base?.branchOutputs, ...changes.outputs },
    modelCalls: (base?.modelCalls ?? 0) + state.modelCalls,
    ...(requester && { requester }),
    ...(checkpoint && { checkpoint }),
  };
}

export function pauseRun(transition: Transition): void {
  transition.state.write = { purpose: 'pause', attempts: 0 };
  emitWrite(transition);
}

export function finishRun(transition: Transition, response: string, messages: NewMessage[]): void {
  transition.state.frames = {};
  transition.state.write = { purpose: 'finish', attempts: 0, messages, response };
  emitWrite(transition);
}

/**
 * The write of the pending purpose, computed from the latest stored run and this activation's
 * changes, with the messages of finished nodes no checkpoint carried yet (before its own). It
 * waits while a checkpoint is on its way: it is sent once that is stored, at its revision.
 */
export function emitWrite(transition: Transition): void {
  const write = transition.state.write!;
  if (checkpointOnItsWay(transition.state)) return;
  write.nodeMessages = [...(write.nodeMessages ?? []), ...takeQueued(transition.state)];
  const nodeMessages = write.nodeMessages;
  const expectedRevision = transition.state.revision;
  const root = transition.env.root;
  switch (write.purpose) {
    case 'finish':
      transition.effects.push({
        kind: 'write',
        messages: [...nodeMessages, ...write.messages],
        approvals: [],
        run: write.keepWaiting ? withChanges(transition.state, root) : undefined,
        expectedRevision,
      });
      return;
    case 'pause':
      transition.effects.push({
        kind: 'write',
        messages: [...nodeMessages, ...transition.state.gates.flatMap((gate) => gate.messages)],
        approvals: transition.state.gates.map((gate) => gate.approval),
        run: withChanges(transition.state, root),
        expectedRevision,
      });
      return;
    case 'settle': {
      const nextRun = withChanges(transition.state, root);
      if (nextRun.pending.some((pause) => isBelow(pause.path, write.path))) {
        write.joined = undefined;
        transition.effects.push({ kind: 'write', messages: nodeMessages, approvals: [], run: nextRun, expectedRevision });
        return;
      }
      // No sibling waits any more: the outputs are joined now, and a later round of an enclosing loop starts without them.
      write.joined = Array.from(
        { length: write.children },
        (_, index) => nextRun.branchOutputs[keyOf([...write.path, index])] ?? { output: '', exitLoop: false },
      );
      transition.effects.push({ kind: 'write', messages: nodeMessages, approvals: [], run: joinedRun(nextRun, write), expectedRevision });
      return;
    }
  }
}

export function written(transition: Transition, revision: number): void {
  const write = transition.state.write;
  if (!write) {
    outOfPhase(transition, 'written', 'no write of the run is on its way');
    return;
  }
  const stored = lastWrittenRun(transition, write);
  transition.state.write = undefined;
  transition.state.base = stored;
  transition.state.revision = revision;
  transition.state.changes = noChanges();
  transition.state.modelCalls = 0;
  switch (write.purpose) {
    case 'finish':
      end(transition, {
        kind: 'answered',
        response: transition.state.afterRejection ? afterRejection(write.response) : write.response,
      });
      return;
    case 'pause': {
      const approvals = transition.state.gates.map((gate) => gate.approval.uuid);
      transition.state.gates = [];
      end(transition, { kind: 'paused', approvals });
      return;
    }
    case 'settle':
      if (!write.joined) {
        log(transition, 'info', 'branch finished; other branches still wait', { node: keyOf(write.path) });
        end(transition, { kind: 'waiting' });
        return;
      }
      delete transition.state.frames[keyOf(write.path)];
      complete(transition, write.path, joined(write.joined));
      return;
  }
}

/**
 * The run a settle that joins writes: the joined branches' outputs leave the run's branch
 * outputs (a later round of an enclosing loop starts without them) and stay in its checkpoint,
 * as the parallel node's finished branches, until the walk goes past it.
 */
function joinedRun(run: StoredRun, write: Extract<NonNullable<RunState['write']>, { purpose: 'settle' }>): StoredRun {
  const branchOutputs = Object.fromEntries(
    Object.entries(run.branchOutputs).filter(([key]) => !isBelow(key.split('.').map(Number), write.path)),
  );
  const checkpoint = run.checkpoint && {
    ...run.checkpoint,
    walk: {
      ...run.checkpoint.walk,
      [keyOf(write.path)]: {
        kind: 'parallel' as const,
        done: Object.fromEntries((write.joined ?? []).map((branch, index) => [String(index), branch])),
      },
    },
  };
  return { ...run, branchOutputs, ...(checkpoint && { checkpoint }) };
}

/** The run that the write of `write` stored (what the effect carried), as the new base. */
function lastWrittenRun(transition: Transition, write: NonNullable<RunState['write']>): StoredRun | undefined {
  if (write.purpose === 'finish' && !write.keepWaiting) return undefined;
  const run = withChanges(transition.state, transition.env.root);
  if (write.purpose === 'settle' && write.joined) return joinedRun(run, write);
  return run;
}

export function writeConflict(transition: Transition, latest: StoredRun | undefined, revision: number): void {
  const write = transition.state.write;
  if (!write) {
    outOfPhase(transition, 'writeConflict', 'no write of the run is on its way');
    return;
  }
  const runId = transition.state.base?.runId || transition.state.runId;
  if (!latest || latest.runId !== runId) {
    transition.state.write = undefined;
    const reason = latest ? 'a newer message started another run' : 'the run was cancelled or finished while this branch ran';
    log(transition, 'warn', 'pipeline run superseded', { reason });
    // Cancelled under it (a sibling's approval was rejected): no write of this activation ends the turn, so the driver ends it.
    end(transition, { kind: 'superseded', reason, endTurn: latest === undefined });
    return;
  }
  write.attempts += 1;
  if (write.attempts >= MAX_WRITE_ATTEMPTS) {
    transition.state.write = undefined;
    refuse(
      transition,
      'aborted',
      `the run of this conversation kept changing under this request (${MAX_WRITE_ATTEMPTS} writes lost a race); try again`,
    );
    return;
  }
  transition.state.base = latest;
  transition.state.revision = revision;
  emitWrite(transition);
}

/** The answer of a simple-mode activation that went on after a rejection: it says first that the operation was cancelled, which clients look for. */
function afterRejection(response: string): string {
  return response ? `${CANCELLED_BY_USER}\n\n${response}` : CANCELLED_BY_USER;
}
