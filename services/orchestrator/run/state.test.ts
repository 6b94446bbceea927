/**
 * The stored run's bytes: the current version round-trips, version 0 (the pipeline
 * state stored before runs were versioned values) migrates, and
 * anything else is refused with an UnreadableRun that says what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { decodeRun, encodeRun, legacySimpleRun, pipelineView, RUN_SCHEMA_VERSION, UnreadableRun, type StoredRun } from './state.js';

const treeRun: StoredRun = {
  runId: '4b1d0c9e-0000-4000-8000-000000000001',
  mode: 'tree',
  userMessage: 'give me a full overview',
  session: { analysis: 'three servers' },
  pending: [
    {
      approvalUuid: 'a-1',
      path: [0, 0],
      outputKey: 'a',
      fingerprint: 'f'.repeat(64),
      loopIterations: {},
      nodeMessages: 2,
      toolName: 'resources_add',
      argsHash: 'e'.repeat(64),
    },
    {
      approvalUuid: 'b-1',
      path: [0, 1],
      outputKey: 'b',
      fingerprint: 'd'.repeat(64),
      loopIterations: { '': 3 },
      nodeMessages: 1,
      toolName: 'resources_remove',
      argsHash: 'c'.repeat(64),
    },
  ],
  branchOutputs: { '0.2': { output: 'C out', exitLoop: false } },
  modelCalls: 7,
};

const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('the current version', () => {
  it('encodes as JSON with RUN_SCHEMA_VERSION and decodes to the same run', () => {
    const record = encodeRun(treeRun);
    expect(record.schemaVersion).toBe(RUN_SCHEMA_VERSION);
    expect(RUN_SCHEMA_VERSION).toBe(2);
    expect(JSON.parse(Buffer.from(record.state).toString('utf8'))).toEqual(treeRun);
    expect(decodeRun(record)).toEqual(treeRun);
  });

  it('round-trips a tree run with its checkpoint (every kind of walk entry)', () => {
    const checkpointed: StoredRun = {
      ...treeRun,
      pending: [],
      checkpoint: {
        tree: 'f'.repeat(64),
        walk: {
          '': { kind: 'sequential', index: 1, output: 'three servers' },
          '1': { kind: 'loop', iteration: 2, index: 0, output: 'round one' },
          '1.0': { kind: 'parallel', done: { '1': { output: 'B out', exitLoop: false } } },
        },
      },
    };
    expect(decodeRun(encodeRun(checkpointed))).toEqual(checkpointed);
    const broken = { ...checkpointed, checkpoint: { tree: 't', walk: { '': { kind: 'loop', iteration: 0, index: 0, output: '' } } } };
    expect(() => decodeRun({ state: bytes(broken), schemaVersion: 2 })).toThrow(
      /^the stored run does not match schema version 2: checkpoint\.walk\.\.iteration: /,
    );
  });

  it('round-trips a simple run and a run with a pause of a migrated state (nodeMessages null)', () => {
    const simple = legacySimpleRun({ uuid: 'u-1', toolName: 'resources_add', argsHash: 'a'.repeat(64) });
    expect(decodeRun(encodeRun(simple))).toEqual(simple);
    const migrated: StoredRun = { ...treeRun, pending: [{ ...treeRun.pending[0]!, nodeMessages: null, toolName: '', argsHash: '' }] };
    expect(decodeRun(encodeRun(migrated))).toEqual(migrated);
  });

  it('a version-1 record (stored before checkpoints) reads as the same run with no checkpoint', () => {
    const { checkpoint: _none, ...older } = { ...treeRun, checkpoint: { tree: 't', walk: {} } };
    expect(decodeRun({ state: bytes({ ...older, checkpoint: { tree: 't', walk: {} } }), schemaVersion: 1 })).toEqual(older);
    expect(decodeRun({ state: bytes(older), schemaVersion: 1 }).checkpoint).toBeUndefined();
  });

  it('a version-1 record that does not match the schema → UnreadableRun naming the field', () => {
    const broken = { ...treeRun, pending: [{ ...treeRun.pending[0]!, path: ['zero'] }] };
    const read = () => decodeRun({ state: bytes(broken), schemaVersion: 1 });
    expect(read).toThrow(UnreadableRun);
    expect(read).toThrow(/^the stored run does not match schema version 1: pending\.0\.path\.0: /);
    expect(() => decodeRun({ state: bytes({ ...treeRun, mode: 'other' }), schemaVersion: 1 })).toThrow(
      /^the stored run does not match schema version 1: mode: /,
    );
  });
});

describe('version 0: the pipeline state stored before runs were versioned values', () => {
  it('a state with `pauses` migrates each pause, its branch outputs and its run id', () => {
    const legacy = {
      paused_node_path: [0, 0],
      paused_node_output_key: 'a',
      session_state: { analysis: 'three servers' },
      user_message: 'overview',
      tree_fingerprint: 'f'.repeat(64),
      pauses: [
        {
          approval_uuid: 'a-1',
          node_path: [0, 0],
          output_key: 'a',
          tree_fingerprint: 'f'.repeat(64),
          loop_iterations: { '': 2 },
          node_messages: 3,
        },
        { approval_uuid: 'b-1', node_path: [0, 1], tree_fingerprint: 'd'.repeat(64) },
      ],
      branch_outputs: { '0.2': { output: 'C out', exit_loop: true } },
      run_id: 'run-legacy',
    };
    expect(decodeRun({ state: bytes(legacy), schemaVersion: 0 })).toEqual({
      runId: 'run-legacy',
      mode: 'tree',
      userMessage: 'overview',
      session: { analysis: 'three servers' },
      pending: [
        {
          approvalUuid: 'a-1',
          path: [0, 0],
          outputKey: 'a',
          fingerprint: 'f'.repeat(64),
          loopIterations: { '': 2 },
          nodeMessages: 3,
          toolName: '',
          argsHash: '',
        },
        {
          approvalUuid: 'b-1',
          path: [0, 1],
          outputKey: '',
          fingerprint: 'd'.repeat(64),
          loopIterations: {},
          nodeMessages: null,
          toolName: '',
          argsHash: '',
        },
      ],
      branchOutputs: { '0.2': { output: 'C out', exitLoop: true } },
      modelCalls: 0,
    });
  });

  it("the single-pause shape (no pauses) names its one pause through the conversation's pending approval", () => {
    const single = {
      paused_node_path: [1],
      paused_node_output_key: 'result',
      session_state: { analysis: 'x' },
      user_message: 'add resource test-seq with value 55',
      tree_fingerprint: 'a'.repeat(64),
    };
    expect(decodeRun({ state: bytes(single), schemaVersion: 0 }, 'pending-uuid')).toEqual({
      runId: '',
      mode: 'tree',
      userMessage: 'add resource test-seq with value 55',
      session: { analysis: 'x' },
      pending: [
        {
          approvalUuid: 'pending-uuid',
          path: [1],
          outputKey: 'result',
          fingerprint: 'a'.repeat(64),
          loopIterations: {},
          nodeMessages: null,
          toolName: '',
          argsHash: '',
        },
      ],
      branchOutputs: {},
      modelCalls: 0,
    });
    // Without a pending approval there is nothing it waits for.
    expect(decodeRun({ state: bytes(single), schemaVersion: 0 }).pending).toEqual([]);
    // Before fingerprints existed: an empty one, which no resume accepts (the machine refuses it).
    const { tree_fingerprint: _dropped, ...older } = single;
    expect(decodeRun({ state: bytes(older), schemaVersion: 0 }, 'p').pending[0]!.fingerprint).toBe('');
  });

  it('an empty `pauses` with a paused path is read as the single-pause shape; with no path, as no pause', () => {
    expect(decodeRun({ state: bytes({ paused_node_path: [2], pauses: [] }), schemaVersion: 0 }, 'p').pending).toMatchObject([
      { approvalUuid: 'p', path: [2] },
    ]);
    expect(decodeRun({ state: bytes({ paused_node_path: [], pauses: [] }), schemaVersion: 0 }, 'p').pending).toEqual([]);
  });

  it('every field has its default: `{}` reads as an empty tree run', () => {
    expect(decodeRun({ state: bytes({}), schemaVersion: 0 })).toEqual({
      runId: '',
      mode: 'tree',
      userMessage: '',
      session: {},
      pending: [],
      branchOutputs: {},
      modelCalls: 0,
    });
  });

  it('a version-0 record that does not match its schema → UnreadableRun naming the field', () => {
    const read = () => decodeRun({ state: bytes({ paused_node_path: 'one' }), schemaVersion: 0 }, 'p');
    expect(read).toThrow(UnreadableRun);
    expect(read).toThrow(
      /^the stored run does not match schema version 0 \(the pipeline state stored before runs were versioned values\): paused_node_path: /,
    );
    expect(() => decodeRun({ state: bytes('null'), schemaVersion: 0 })).toThrow(UnreadableRun);
  });
});

describe('what cannot be read is refused with a clear message', () => {
  it('an unknown (newer) version', () => {
    const read = () => decodeRun({ state: encodeRun(treeRun).state, schemaVersion: 3 });
    expect(read).toThrow(UnreadableRun);
    expect(read).toThrow(
      'the stored run has schema version 3, which this release (version 2) cannot read; it was written by a newer release',
    );
  });

  it('corrupt bytes, in any version', () => {
    for (const schemaVersion of [0, 1]) {
      const read = () => decodeRun({ state: Buffer.from([0x7b, 0xff, 0x00, 0x22]), schemaVersion });
      expect(read).toThrow(UnreadableRun);
      expect(read).toThrow(/^the stored run is not valid JSON: /);
    }
    expect(() => decodeRun({ state: Buffer.alloc(0), schemaVersion: 1 })).toThrow(/^the stored run is not valid JSON: /);
  });
});

describe('pipelineView: REST "pipeline_state"', () => {
  it('a tree run on its way, stored only as its checkpoint, shows none (nothing is paused)', () => {
    const running: StoredRun = { ...treeRun, pending: [], branchOutputs: {}, checkpoint: { tree: 't', walk: {} } };
    expect(pipelineView(running)).toBeUndefined();
    expect(pipelineView({ ...treeRun, checkpoint: { tree: 't', walk: {} } })?.pauses).toHaveLength(2);
  });

  it('a tree run: the single-pause fields from the first pause, with every pause and the branch outputs', () => {
    expect(pipelineView(treeRun)).toEqual({
      pausedNodePath: [0, 0],
      pausedNodeOutputKey: 'a',
      sessionState: { analysis: 'three servers' },
      userMessage: 'give me a full overview',
      pauses: [
        { approvalUuid: 'a-1', pausedNodePath: [0, 0], pausedNodeOutputKey: 'a', loopIterations: {} },
        { approvalUuid: 'b-1', pausedNodePath: [0, 1], pausedNodeOutputKey: 'b', loopIterations: { '': 3 } },
      ],
      branchOutputs: { '0.2': 'C out' },
    });
  });

  it('is a copy: changing the view leaves the run as it was', () => {
    const copy = structuredClone(treeRun);
    const view = pipelineView(copy)!;
    view.sessionState.analysis = 'changed';
    view.pauses[0]!.pausedNodePath.push(9);
    view.pauses[1]!.loopIterations[''] = 0;
    expect(copy).toEqual(treeRun);
  });

  it('a tree run waiting for nothing shows the root; a simple run shows none', () => {
    expect(pipelineView({ ...treeRun, pending: [], branchOutputs: {} })).toMatchObject({
      pausedNodePath: [],
      pausedNodeOutputKey: '',
      pauses: [],
      branchOutputs: {},
    });
    expect(pipelineView(legacySimpleRun({ uuid: 'u', toolName: 't', argsHash: 'h' }))).toBeUndefined();
  });
});

describe('legacySimpleRun: a simple-mode pause stored before runs were versioned values', () => {
  it('is a simple run waiting for that one approval at the root, with its call', () => {
    expect(legacySimpleRun({ uuid: 'u-1', toolName: 'resources_add', argsHash: 'a'.repeat(64) })).toEqual({
      runId: '',
      mode: 'simple',
      userMessage: '',
      session: {},
      pending: [
        {
          approvalUuid: 'u-1',
          path: [],
          outputKey: '',
          fingerprint: '',
          loopIterations: {},
          nodeMessages: null,
          toolName: 'resources_add',
          argsHash: 'a'.repeat(64),
        },
      ],
      branchOutputs: {},
      modelCalls: 0,
    });
  });
});
