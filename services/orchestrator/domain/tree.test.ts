import { describe, expect, it } from 'vitest';
import { childGates, joinOutputs, nodeAt, resolvePlaceholders, resumeIndex, treeFingerprint, type AgentNode } from './tree.js';

const tree: AgentNode = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', prompt: 'Analyze: {user_message}', output_key: 'analysis' },
    {
      name: 'inner',
      type: 'sequential',
      agents: [
        { name: 'executor', type: 'llm', prompt: 'Execute based on {analysis}' },
        { name: 'reporter', type: 'llm' },
      ],
    },
  ],
};

describe('nodeAt', () => {
  it('follows child indexes from the root, and leads nowhere past the leaves', () => {
    expect(nodeAt(tree, [])?.name).toBe('pipeline');
    expect(nodeAt(tree, [1, 0])?.name).toBe('executor');
    expect(nodeAt(tree, [1, 2])).toBeUndefined();
    expect(nodeAt(tree, [0, 0])).toBeUndefined();
  });
});

describe('treeFingerprint', () => {
  const edited = (change: (copy: AgentNode) => void): AgentNode => {
    const copy = structuredClone(tree);
    change(copy);
    return copy;
  };

  it('is stable, and ignores key order and edits off the path', () => {
    const fingerprint = treeFingerprint(tree, [1, 0]);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(treeFingerprint(structuredClone(tree), [1, 0])).toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => (copy.agents![1]!.agents![1]!.prompt = 'Report.')),
        [1, 0],
      ),
    ).toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => (copy.agents![0]!.prompt = 'Think harder: {user_message}')),
        [1, 0],
      ),
    ).toBe(fingerprint);
    const reordered: AgentNode = {
      ...tree,
      agents: [tree.agents![0]!, { agents: tree.agents![1]!.agents, type: 'sequential', name: 'inner' }],
    };
    expect(treeFingerprint(reordered, [1, 0])).toBe(fingerprint);
  });

  it('changes when the path leads to another node or a node on it changes', () => {
    const fingerprint = treeFingerprint(tree, [1, 0]);
    expect(treeFingerprint(tree, [1, 1])).not.toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => (copy.agents![1]!.agents![0]!.prompt = 'Delete everything')),
        [1, 0],
      ),
    ).not.toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => copy.agents![1]!.agents!.reverse()),
        [1, 0],
      ),
    ).not.toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => (copy.agents![1]!.name = 'renamed')),
        [1, 0],
      ),
    ).not.toBe(fingerprint);
    expect(
      treeFingerprint(
        edited((copy) => copy.agents![1]!.agents!.splice(0, 2)),
        [1, 0],
      ),
    ).toBeUndefined();
  });
});

describe('resolvePlaceholders', () => {
  it('fills {key} from the session state and {user_message} from the run', () => {
    const state = new Map([['analysis', 'three servers']]);
    expect(resolvePlaceholders('Execute based on {analysis} for "{user_message}"', state, 'list all')).toEqual({
      text: 'Execute based on three servers for "list all"',
      unknown: [],
    });
  });

  it('leaves unknown placeholders as written and reports each once', () => {
    const result = resolvePlaceholders('{missing} and {missing} and {other} and {analysis}', new Map([['analysis', 'A']]), 'm');
    expect(result).toEqual({ text: '{missing} and {missing} and {other} and A', unknown: ['missing', 'other'] });
  });

  it('does not take JSON braces for placeholders', () => {
    expect(resolvePlaceholders('Answer as {"a": 1}', new Map(), 'm').text).toBe('Answer as {"a": 1}');
  });
});

describe('walker decisions', () => {
  it('resumes a sequential node at its child on the paused path only', () => {
    expect(resumeIndex(undefined, [])).toBeUndefined();
    expect(resumeIndex([1, 0], [])).toBe(1);
    expect(resumeIndex([1, 0], [1])).toBe(0);
    expect(resumeIndex([1, 0], [1, 0])).toBeUndefined();
    expect(resumeIndex([1, 0], [0])).toBeUndefined();
  });

  it('gates destructive calls only with no parallel or loop node above', () => {
    expect(childGates(true, tree)).toBe(true);
    expect(childGates(true, { name: 'p', type: 'parallel', agents: [] })).toBe(false);
    expect(childGates(true, { name: 'l', type: 'loop', agents: [] })).toBe(false);
    expect(childGates(false, tree)).toBe(false);
  });

  it('keeps the gate below parallel and loop nodes with approvals: required, the nearest deciding', () => {
    expect(childGates(true, { name: 'p', type: 'parallel', approvals: 'required', agents: [] })).toBe(true);
    expect(childGates(false, { name: 'l', type: 'loop', approvals: 'required', agents: [] })).toBe(true);
    expect(childGates(true, { name: 'p', type: 'parallel', approvals: 'auto', agents: [] })).toBe(false);
  });

  it('joins parallel outputs in declaration order, skipping empty ones', () => {
    expect(joinOutputs(['first', '', 'third'])).toBe('first\n\nthird');
  });
});
