import { describe, expect, it } from 'vitest';
import { TaskState, type RemoteTask } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { a2aPeers, a2aTool, a2aToolsOf, proxyDescription, remoteOutcome } from './a2a-tools.js';

const task = (state: TaskState, text: string): RemoteTask => ({
  id: 't-1',
  contextId: 'c-1',
  state,
  text,
  approval: undefined,
  dialect: 0,
});

describe('A2A agents as tools', () => {
  it('offers a2a_<name> with one message parameter, gated by destructiveHint', () => {
    expect(a2aTool({ name: 'deployer', description: 'Deploys', destructiveHint: true })).toEqual({
      name: 'a2a_deployer',
      description: 'Deploys',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'What to ask deployer, in plain language.' } },
        required: ['message'],
      },
      destructive: true,
      server: 'a2a',
      destructiveHint: true,
    });
    expect(a2aToolsOf([{ name: 'summarizer' }])[0]).toMatchObject({
      name: 'a2a_summarizer',
      destructive: false,
      description: 'Delegates a task to the A2A agent "summarizer".',
    });
    expect(a2aToolsOf(undefined)).toEqual([]);
  });

  it("finds every peer of the configuration by tool name: top-level agents, llm nodes' agents and a2a nodes", () => {
    const peers = a2aPeers({
      a2a: [{ name: 'summarizer', url: 'http://127.0.0.1:9001/a2a', description: 'S', destructiveHint: false, timeout: 5000 }],
      agent: {
        name: 'root',
        type: 'sequential',
        agents: [
          { name: 'planner', type: 'llm', a2a: [{ name: 'validator', url: 'http://127.0.0.1:9002/a2a', destructiveHint: true }] },
          { name: 'remote', type: 'a2a', url: 'http://127.0.0.1:9003/a2a', destructiveHint: true },
        ],
      },
    });
    expect([...peers.keys()]).toEqual(['a2a_summarizer', 'a2a_validator', 'a2a_remote']);
    expect(peers.get('a2a_summarizer')).toEqual({
      peer: { name: 'summarizer', url: 'http://127.0.0.1:9001/a2a', timeoutMs: 5000 },
      destructive: false,
      description: 'S',
    });
    expect(peers.get('a2a_validator')).toMatchObject({ peer: { timeoutMs: 60_000 }, destructive: true });
    expect(peers.get('a2a_remote')).toMatchObject({ peer: { name: 'remote', url: 'http://127.0.0.1:9003/a2a' }, destructive: true });
  });

  it('reads a finished remote task as a tool result', () => {
    expect(remoteOutcome('b', task(TaskState.TASK_STATE_COMPLETED, 'all done'))).toEqual({ text: 'all done', isError: false });
    expect(remoteOutcome('b', task(TaskState.TASK_STATE_COMPLETED, ''))).toEqual({
      text: 'b completed without a text answer.',
      isError: false,
    });
    expect(remoteOutcome('b', task(TaskState.TASK_STATE_CANCELED, 'Operation cancelled by user.'))).toEqual({
      text: 'Operation cancelled by user.',
      isError: true,
    });
    expect(remoteOutcome('b', task(TaskState.TASK_STATE_FAILED, 'disk full'))).toEqual({ text: 'b failed: disk full', isError: true });
    expect(remoteOutcome('b', task(TaskState.TASK_STATE_REJECTED, ''))).toEqual({ text: 'b rejected the task.', isError: true });
  });

  it("nests the peer's approval description in its own", () => {
    expect(proxyDescription('agent-b', 'resources_add on resources with arguments {"name":"x"}')).toBe(
      'agent-b asks for approval: resources_add on resources with arguments {"name":"x"}',
    );
  });
});
