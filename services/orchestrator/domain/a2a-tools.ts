import type { Peer, RemoteTask } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import { TaskState } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import type { A2aAgentConfig, AgentConfig } from '../../common/config/schema.js';
import type { AgentNode } from './tree.js';

/**
 * A2A agents as tools (synthetic tools `a2a_<name>` with one `message`
 * parameter) and the registry that maps such a tool, or an a2a node, to its peer. Pure.
 */

/** The `server` of an A2A tool in the catalogue (GET /tools shows it). */
export const A2A_SERVER = 'a2a';

const a2aToolName = (agent: string) => `a2a_${agent}`;

/** Where an A2A tool or node is, and whether delegating to it needs an approval first. */
export interface A2aPeer {
  peer: Peer;
  destructive: boolean;
  description: string;
}

export function a2aTool(agent: Pick<A2aAgentConfig, 'name' | 'description' | 'destructiveHint'>): Tool {
  return {
    name: a2aToolName(agent.name),
    description: agent.description || `Delegates a task to the A2A agent "${agent.name}".`,
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: `What to ask ${agent.name}, in plain language.` } },
      required: ['message'],
    },
    destructive: agent.destructiveHint,
    server: A2A_SERVER,
    destructiveHint: agent.destructiveHint,
  };
}

/**
 * Every A2A peer of the configuration by tool name: the top-level `a2a` agents, each llm
 * node's `a2a` agents and each a2a node (as `a2a_<node name>`). The first one configured
 * under a name wins; names are unique in each list and the tree.
 */
export function a2aPeers(config: Pick<AgentConfig, 'a2a' | 'agent'>): Map<string, A2aPeer> {
  const peers = new Map<string, A2aPeer>();
  const add = (
    name: string,
    url: string,
    timeout: number | undefined,
    destructive: boolean | undefined,
    description: string | undefined,
  ) => {
    const tool = a2aToolName(name);
    if (!peers.has(tool))
      peers.set(tool, {
        peer: { name, url, timeoutMs: timeout ?? 60_000 },
        destructive: destructive ?? false,
        description: description ?? '',
      });
  };
  for (const agent of config.a2a) add(agent.name, agent.url, agent.timeout, agent.destructiveHint, agent.description);
  const visit = (node: AgentNode): void => {
    for (const agent of node.a2a ?? [])
      add(agent.name, agent.url, agent.timeout as number | undefined, agent.destructiveHint, agent.description);
    if (node.type === 'a2a' && node.url) add(node.name, node.url, undefined, node.destructiveHint, node.description);
    node.agents?.forEach(visit);
  };
  if (config.agent) visit(config.agent);
  return peers;
}

/** The tools of an llm node's own `a2a` list (or simple mode's top-level list). */
export function a2aToolsOf(agents: readonly { name: string; description?: string; destructiveHint?: boolean }[] | undefined): Tool[] {
  return (agents ?? []).map((agent) =>
    a2aTool({ name: agent.name, description: agent.description ?? '', destructiveHint: agent.destructiveHint ?? false }),
  );
}

/** How a remote task's end reads as a tool result: its text, or why it ended without one. */
export function remoteOutcome(agent: string, task: RemoteTask): { text: string; isError: boolean } {
  switch (task.state) {
    case TaskState.TASK_STATE_COMPLETED:
      return { text: task.text || `${agent} completed without a text answer.`, isError: false };
    case TaskState.TASK_STATE_CANCELED:
      return { text: task.text || `${agent} cancelled the task.`, isError: true };
    case TaskState.TASK_STATE_REJECTED:
      return { text: `${agent} rejected the task${task.text ? `: ${task.text}` : '.'}`, isError: true };
    case TaskState.TASK_STATE_FAILED:
      return { text: `${agent} failed${task.text ? `: ${task.text}` : '.'}`, isError: true };
    default:
      return {
        text: `${agent} answered in state ${TaskState[task.state] ?? task.state}${task.text ? `: ${task.text}` : ''}`,
        isError: true,
      };
  }
}

/** A proxy approval's description: the peer's own, nested in ours. */
export function proxyDescription(agent: string, remoteDescription: string): string {
  return `${agent} asks for approval: ${remoteDescription}`;
}
