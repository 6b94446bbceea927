import { describe, expect, it } from 'vitest';
import type { PipelinePause, PipelineState } from '../../../gen/ts/asg/store/v1/store.js';
import { isBelow, noChanges, pathKey, pausesOf, takeBranchOutputs, waitsBelow, withChanges } from './pipeline-state.js';

const pause = (approvalUuid: string, nodePath: number[]): PipelinePause => ({ approvalUuid, nodePath, outputKey: '', treeFingerprint: `fp-${approvalUuid}`, loopIterations: {}, nodeMessages: 2 });
const run = { runId: 'run-1', userMessage: 'go' };

describe('pipeline state (issue 4 item 6: several pauses in one pipeline)', () => {
  it('keys paths and tells what lies below a node', () => {
    expect(pathKey([0, 2, 1])).toBe('0.2.1');
    expect(isBelow([1, 0], [1])).toBe(true);
    expect(isBelow([1], [1])).toBe(false);
    expect(isBelow([2, 0], [1])).toBe(false);
    expect(isBelow([0], [])).toBe(true);
  });

  it('reads a state stored before several pauses existed as one pause for the pending approval', () => {
    const legacy = withChanges(undefined, noChanges(), run);
    expect(pausesOf({ ...legacy, pausedNodePath: [1], pausedNodeOutputKey: 'k', treeFingerprint: 'fp' }, 'a-1')).toEqual([
      { approvalUuid: 'a-1', nodePath: [1], outputKey: 'k', treeFingerprint: 'fp', loopIterations: {}, nodeMessages: undefined },
    ]);
  });

  it('lays a run over the stored state: its resumed pause goes, its new pauses, outputs and keys come', () => {
    const base: PipelineState = {
      ...withChanges(undefined, { ...noChanges(), pauses: [pause('a', [0, 0]), pause('b', [0, 1])], session: { plan: 'p' } }, run),
      revision: 7,
    };
    const next = withChanges(base, { resumed: 'a', pauses: [pause('c', [0, 0])], outputs: { '0.2': { output: 'x', exitLoop: false } }, session: { fix: 'f' } }, { runId: 'other', userMessage: 'ignored' });
    expect(next.pauses.map((p) => p.approvalUuid)).toEqual(['b', 'c']);
    // The seed's fields follow the first pause.
    expect(next.pausedNodePath).toEqual([0, 1]);
    expect(next.treeFingerprint).toBe('fp-b');
    expect(next.sessionState).toEqual({ plan: 'p', fix: 'f' });
    expect(next.branchOutputs).toEqual({ '0.2': { output: 'x', exitLoop: false } });
    expect(next.userMessage).toBe('go');
    expect(next.runId).toBe('run-1');
    expect(next.revision).toBe(7);
  });

  it('joins a parallel node only when none of its branches waits, and takes its outputs out', () => {
    const state = withChanges(undefined, { ...noChanges(), pauses: [pause('b', [3, 1])], outputs: { '3.0': { output: 'zero', exitLoop: false }, '4.0': { output: 'other', exitLoop: false } } }, run);
    expect(waitsBelow(state, [3])).toBe(true);
    expect(waitsBelow(state, [4])).toBe(false);
    const done = withChanges(state, { ...noChanges(), resumed: 'b', outputs: { '3.1': { output: 'one', exitLoop: true } } }, run);
    expect(waitsBelow(done, [3])).toBe(false);
    const taken = takeBranchOutputs(done, [3], 3);
    expect(taken.outputs).toEqual([
      { output: 'zero', exitLoop: false },
      { output: 'one', exitLoop: true },
      { output: '', exitLoop: false },
    ]);
    expect(taken.state.branchOutputs).toEqual({ '4.0': { output: 'other', exitLoop: false } });
  });
});
