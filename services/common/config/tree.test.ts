import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './load.js';
import { treeProblems } from './tree.js';

const llm = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'llm' as const, ...extra });

describe('treeProblems', () => {
  it('accepts the documented trees', () => {
    expect(treeProblems({ name: 'p', type: 'sequential', agents: [llm('a', { output_key: 'x' }), llm('b', { prompt: '{x}' })] })).toEqual(
      [],
    );
    expect(treeProblems({ name: 'l', type: 'loop', max_iterations: 3, agents: [llm('c', { can_exit_loop: true })] })).toEqual([]);
    expect(treeProblems(llm('solo', { model: 'gemini-2.5-pro' }))).toEqual([]);
  });

  it('takes approvals: auto | required on parallel and loop nodes only', () => {
    expect(treeProblems({ name: 'p', type: 'parallel', approvals: 'required', agents: [llm('a')] })).toEqual([]);
    expect(treeProblems({ name: 'l', type: 'loop', approvals: 'auto', agents: [llm('a')] })).toEqual([]);
    expect(treeProblems({ name: 's', type: 'sequential', approvals: 'required', agents: [llm('a')] })).toEqual([
      { path: ['agent'], node: 's', message: '"approvals" is a field of parallel and loop nodes, not of a sequential node' },
    ]);
    const raw = { agent: { name: 'p', type: 'parallel', approvals: 'sometimes', agents: [llm('a')] } };
    expect(() => parseConfig(raw, 'agent.yaml')).toThrow('agent.yaml: agent.approvals: expected one of "auto", "required"');
  });

  it('wants a loop above a node that can exit one', () => {
    expect(treeProblems({ name: 'p', type: 'sequential', agents: [llm('a', { can_exit_loop: true })] })).toEqual([
      { path: ['agent', 'agents', 0], node: 'a', message: '"can_exit_loop" needs a loop node above this node' },
    ]);
    expect(
      treeProblems({ name: 'l', type: 'loop', agents: [{ name: 's', type: 'sequential', agents: [llm('a', { can_exit_loop: true })] }] }),
    ).toEqual([]);
  });

  it('names the path and node of each problem', () => {
    const problems = treeProblems({
      name: 'root',
      type: 'sequential',
      agents: [
        llm('a', { agents: [llm('x')] }),
        { name: 'inner', type: 'parallel', agents: [llm('a'), { name: 'empty', type: 'loop', agents: [] }] },
        llm('b', { url: 'http://127.0.0.1:1/a2a', max_iterations: 2 }),
        { name: 'remote', type: 'a2a' },
      ],
    });
    expect(problems).toEqual([
      {
        path: ['agent', 'agents', 0],
        node: 'a',
        message: '"agents" is a field of sequential, parallel and loop nodes, not of an llm node',
      },
      {
        path: ['agent', 'agents', 1, 'agents', 0],
        node: 'a',
        message: 'node names must be unique in the tree; "a" is also the name of agent.agents[0]',
      },
      { path: ['agent', 'agents', 1, 'agents', 1], node: 'empty', message: 'a loop node needs at least one child under "agents"' },
      { path: ['agent', 'agents', 2], node: 'b', message: '"max_iterations" is a field of loop nodes, not of an llm node' },
      { path: ['agent', 'agents', 2], node: 'b', message: '"url" is a field of a2a nodes, not of an llm node' },
      { path: ['agent', 'agents', 3], node: 'remote', message: 'an a2a node needs a "url"' },
    ]);
  });
});

describe('parseConfig with a bad tree', () => {
  it('is a config error naming the file, the node path and the node', () => {
    const raw = {
      agent: {
        name: 'pipeline',
        type: 'sequential',
        agents: [llm('analyzer'), { name: 'inner', type: 'sequential', agents: [llm('executor', { agents: [llm('deeper')] })] }],
      },
    };
    expect(() => parseConfig(raw, 'agent.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(raw, 'agent.yaml')).toThrow(
      'agent.yaml: agent.agents[1].agents[0] (node "executor"): "agents" is a field of sequential, parallel and loop nodes, not of an llm node',
    );
  });

  it('names the path of a node of unknown type', () => {
    const raw = { agent: { name: 'pipeline', type: 'sequential', agents: [{ name: 'odd', type: 'fork' }] } };
    expect(() => parseConfig(raw, 'agent.yaml')).toThrow(
      'agent.yaml: agent.agents[0].type: expected one of "llm", "sequential", "parallel", "loop", "a2a"',
    );
  });

  it('leaves simple mode alone when there is no tree', () => {
    expect(parseConfig({}, 'agent.yaml').agent).toBeUndefined();
  });
});

describe('per-node timeout (llm.timeout also settable per node)', () => {
  it('reads a duration on an llm node and refuses it elsewhere', () => {
    const config = parseConfig(
      { agent: { name: 'p', type: 'sequential', agents: [llm('slow', { timeout: '2m' }), llm('quick', { timeout: 5 })] } },
      'tree.yaml',
    );
    expect(config.agent?.agents?.map((node) => node.timeout)).toEqual([120_000, 5000]);
    expect(() => parseConfig({ agent: { name: 'p', type: 'sequential', timeout: '1s', agents: [llm('a')] } }, 'tree.yaml')).toThrow(
      ConfigError,
    );
    expect(() => parseConfig({ agent: { name: 'p', type: 'sequential', agents: [llm('a', { timeout: 'soon' })] } }, 'tree.yaml')).toThrow(
      /agents\[0\]\.timeout/,
    );
  });
});
