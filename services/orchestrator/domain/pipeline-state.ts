import type { BranchOutput, PipelinePause, PipelineState } from '../../../gen/ts/asg/store/v1/store.js';

/**
 * The stored state of a paused agent-tree run, as pure functions: where it waits (one
 * pause per pending approval), what finished branches of parallel nodes produced while a
 * sibling waits, and how one run's changes are laid over the state another run wrote in
 * the meantime. Several approvals of one pipeline may be resolved at once, each by its own
 * request, so every write is computed as "the latest stored state + my changes" and retried
 * on a newer state (the store refuses a write computed from an older revision).
 */

/** "0.2.1": how paths key loop iterations and branch outputs. */
export function pathKey(path: readonly number[]): string {
  return path.join('.');
}

/** True when `path` lies strictly below `ancestor`. */
export function isBelow(path: readonly number[], ancestor: readonly number[]): boolean {
  return path.length > ancestor.length && ancestor.every((index, depth) => path[depth] === index);
}

/**
 * The pauses of a state. A state stored before several pauses existed has none listed; its
 * one pause is the seed-shaped fields, for the approval the conversation waits for.
 */
export function pausesOf(state: PipelineState, pendingUuid: string): PipelinePause[] {
  if (state.pauses.length > 0 || state.pausedNodePath.length === 0) return state.pauses;
  return [
    {
      approvalUuid: pendingUuid,
      nodePath: state.pausedNodePath,
      outputKey: state.pausedNodeOutputKey,
      treeFingerprint: state.treeFingerprint,
      loopIterations: {},
      nodeMessages: undefined,
    },
  ];
}

/** What one run changed since it last read or wrote the state. */
export interface PipelineChanges {
  /** The approval whose pause this run resumed; its pause goes. */
  resumed?: string;
  /** Pauses this run reached, one per new approval. */
  pauses: PipelinePause[];
  /** Outputs of branches this run finished while a sibling waits. */
  outputs: Record<string, BranchOutput>;
  /** Session state keys this run set (output_key values). */
  session: Record<string, string>;
}

export const noChanges = (): PipelineChanges => ({ pauses: [], outputs: {}, session: {} });

/** The stored state (or none, for a fresh run) with one run's changes laid over it. */
export function withChanges(base: PipelineState | undefined, changes: PipelineChanges, run: { runId: string; userMessage: string }): PipelineState {
  const pauses = [...(base?.pauses ?? []).filter((pause) => pause.approvalUuid !== changes.resumed), ...changes.pauses];
  const first = pauses[0];
  return {
    // The seed's fields show the first pause, for clients that know one.
    pausedNodePath: first?.nodePath ?? [],
    pausedNodeOutputKey: first?.outputKey ?? '',
    treeFingerprint: first?.treeFingerprint ?? '',
    sessionState: { ...base?.sessionState, ...changes.session },
    userMessage: base?.userMessage ?? run.userMessage,
    runId: base?.runId || run.runId,
    pauses,
    branchOutputs: { ...base?.branchOutputs, ...changes.outputs },
    revision: base?.revision ?? 0,
  };
}

/** True when any pause of the state lies below the node at `path`. */
export function waitsBelow(state: PipelineState, path: readonly number[]): boolean {
  return state.pauses.some((pause) => isBelow(pause.nodePath, path));
}

/**
 * Takes the outputs of a parallel node's children out of the state once none of them waits:
 * they are joined now, and a later round of an enclosing loop starts without them.
 */
export function takeBranchOutputs(state: PipelineState, path: readonly number[], children: number): { state: PipelineState; outputs: BranchOutput[] } {
  const outputs = Array.from({ length: children }, (_, index) => state.branchOutputs[pathKey([...path, index])] ?? { output: '', exitLoop: false });
  const kept = Object.fromEntries(Object.entries(state.branchOutputs).filter(([key]) => !isBelow(key.split('.').map(Number), path)));
  return { state: { ...state, branchOutputs: kept }, outputs };
}
