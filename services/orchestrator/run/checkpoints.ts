import type { NewMessage } from '../../../gen/ts/asg/store/v1/store.js';
import { wholeTreeFingerprint } from '../domain/tree.js';
import type { BranchOutput, Checkpoint, StoredRun, WalkEntry } from './state.js';
import type { CheckpointState, Effect, RunState } from './types.js';
import { MAX_WRITE_ATTEMPTS, type Transition, end, keyOf, log, outOfPhase, refuse } from './transition.js';
import { emitWrite, withChanges } from './writes.js';

/**
 * A tree node's finish is a checkpoint: its messages, its output and where the walk stands
 * (each container on its way: the child running, the branches finished) are one
 * compare-and-set write of the run, and the next node starts only once it is stored. A
 * takeover then goes on from the last checkpoint (walk.ts, `restore`): no finished node runs
 * again, a node cut mid-way runs again from its start. The write replaces the append a node's
 * messages had before, so a node costs the same one transaction; it costs one store round
 * trip more on the way to the next node. Simple mode has no checkpoint: its turn writes once.
 *
 * Finishes that come while a checkpoint is on its way (parallel branches) are queued and go
 * with the next one; a pause, a settled branch or the run's end carries the queued ones in
 * its own write instead, once the checkpoint on its way is stored.
 */

/** Work held while a checkpoint is on its way: nothing of the next node starts before its predecessor's finish is stored. */
const HELD = new Set<Effect['kind']>(['loadHistory', 'callModel', 'callTool']);

function checkpointState(state: RunState): CheckpointState {
  state.checkpoint ??= { queued: [], due: false, held: [] };
  return state.checkpoint;
}

/** A tree node finished with these messages (its steps and answer): they go with the next checkpoint. */
export function nodeFinishedCheckpoint(transition: Transition, messages: readonly NewMessage[]): void {
  const checkpoint = checkpointState(transition.state);
  checkpoint.queued.push(...messages);
  checkpoint.due = true;
}

/** The messages queued for a checkpoint, taken for a write that carries them instead. */
export function takeQueued(state: RunState): NewMessage[] {
  const checkpoint = state.checkpoint;
  if (!checkpoint) return [];
  const queued = checkpoint.queued;
  checkpoint.queued = [];
  checkpoint.due = false;
  return queued;
}

/** Messages a dropped write carried, queued again (first) for the write that replaces it. */
export function requeue(state: RunState, messages: readonly NewMessage[]): void {
  if (messages.length === 0) return;
  const checkpoint = checkpointState(state);
  checkpoint.queued = [...messages, ...checkpoint.queued];
  checkpoint.due = true;
}

/** A write of the run waits while a checkpoint is on its way: its expected revision is the checkpoint's. */
export function checkpointOnItsWay(state: RunState): boolean {
  return state.checkpoint?.sending !== undefined;
}

/** Where the walk stands now, from the frames of the containers on their way. */
export function checkpointOf(state: RunState, root: NonNullable<Transition['env']['root']>): Checkpoint {
  const walk: Record<string, WalkEntry> = {};
  for (const [key, frame] of Object.entries(state.frames)) {
    if (frame.kind === 'sequential') walk[key] = { kind: 'sequential', index: frame.index, output: frame.output };
    else if (frame.kind === 'loop') walk[key] = { kind: 'loop', iteration: frame.iteration, index: frame.index, output: frame.output };
    else if (frame.kind === 'parallel') {
      // A resumed parallel node's finished branches are the run's branch outputs already.
      const done: Record<string, BranchOutput> = {};
      if (!frame.resumed)
        frame.outcomes.forEach((outcome, index) => {
          if (outcome?.kind === 'done') done[String(index)] = { output: outcome.output, exitLoop: outcome.exitLoop };
        });
      walk[key] = { kind: 'parallel', done };
    }
  }
  return { tree: wholeTreeFingerprint(root), walk };
}

/**
 * At the end of a transition: a node that finished is written as a checkpoint now, unless a
 * checkpoint is on its way (it goes next) or a write of the run carries it. While a checkpoint
 * is on its way, the work asked for waits for it.
 */
export function flushCheckpoint(transition: Transition): void {
  const state = transition.state;
  const checkpoint = state.checkpoint;
  if (!checkpoint || state.phase === 'finished') return;
  // A stopped run goes on to no next node: its finished nodes' messages go with its finish write.
  if (checkpoint.due && !checkpoint.sending && !state.write && state.stop === undefined) {
    const root = transition.env.root;
    const laid = root && withChanges(state, root);
    const run = laid && { ...laid, pending: laid.pending.filter((pause) => !isNew(state, pause)) };
    if (!run || run.pending.length > 0) {
      // Other approvals of the run wait (a resumed branch of a parallel node): those approvals
      // resume the run, and its write ends the turn, so the node's messages are appended as
      // they were before checkpoints.
      const messages = takeQueued(state);
      if (messages.length > 0) transition.effects.push({ kind: 'append', messages });
    } else {
      const messages = takeQueued(state);
      checkpoint.sending = { messages, run, modelCalls: state.modelCalls, attempts: 0 };
      transition.effects.push({ kind: 'checkpoint', messages, run, expectedRevision: state.revision });
    }
  }
  if (checkpoint.sending) {
    checkpoint.held.push(...transition.effects.filter((effect) => HELD.has(effect.kind)));
    transition.effects = transition.effects.filter((effect) => !HELD.has(effect.kind));
  }
}

/** A pause of this activation, not written yet: a checkpoint does not store it (its approval does not exist yet). */
function isNew(state: RunState, pause: StoredRun['pending'][number]): boolean {
  return state.changes.pauses.some((reached) => reached.approvalUuid === pause.approvalUuid);
}

/** The checkpoint is stored: it is the run's base now, and the work it held starts (or a write that waited is sent). */
export function checkpointed(transition: Transition, revision: number): void {
  const state = transition.state;
  const sending = state.checkpoint?.sending;
  if (!state.checkpoint || !sending) {
    outOfPhase(transition, 'checkpointed', 'no checkpoint of the run is on its way');
    return;
  }
  state.base = sending.run;
  state.revision = revision;
  // The model calls it counted are in the base now; the changes laid over it stay (each is set again, the same).
  state.modelCalls -= sending.modelCalls;
  state.checkpoint.sending = undefined;
  transition.effects.push(...state.checkpoint.held);
  state.checkpoint.held = [];
  if (state.write) emitWrite(transition);
}

/** Another write of the run came first: the checkpoint is computed again on what is stored now. */
export function checkpointConflict(transition: Transition, latest: StoredRun | undefined, revision: number): void {
  const state = transition.state;
  const sending = state.checkpoint?.sending;
  if (!state.checkpoint || !sending) {
    outOfPhase(transition, 'checkpointConflict', 'no checkpoint of the run is on its way');
    return;
  }
  const runId = state.base?.runId || state.runId;
  if (!latest || latest.runId !== runId) {
    state.checkpoint.sending = undefined;
    const reason = latest ? 'a newer message started another run' : 'the run was cancelled or finished while this node ran';
    log(transition, 'warn', 'pipeline run superseded', { reason });
    end(transition, { kind: 'superseded', reason, endTurn: latest === undefined });
    return;
  }
  sending.attempts += 1;
  if (sending.attempts >= MAX_WRITE_ATTEMPTS) {
    state.checkpoint.sending = undefined;
    refuse(
      transition,
      'aborted',
      `the run of this conversation kept changing under this request (${MAX_WRITE_ATTEMPTS} writes lost a race); try again`,
    );
    return;
  }
  state.base = latest;
  state.revision = revision;
  const root = transition.env.root!;
  const run = withChanges({ ...state, modelCalls: sending.modelCalls }, root);
  sending.run = { ...run, checkpoint: sending.run.checkpoint, pending: run.pending.filter((pause) => !isNew(state, pause)) };
  transition.effects.push({ kind: 'checkpoint', messages: sending.messages, run: sending.run, expectedRevision: revision });
}

/** The positions a taken-over tree run goes on from: its checkpoint's walk (entries are used once, as the walk enters each). */
export function restoreFrom(state: RunState, checkpoint: Checkpoint): void {
  state.restore = { ...checkpoint.walk };
}

/** The walk entry of the container at `path` a restored run goes on from, used once. */
export function restored(transition: Transition, path: readonly number[]): WalkEntry | undefined {
  const restore = transition.state.restore;
  if (!restore) return undefined;
  const key = keyOf(path);
  const entry = restore[key];
  if (entry) delete restore[key];
  return entry;
}
