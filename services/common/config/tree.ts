import type { AgentNodeInput } from './schema.js';

/**
 * The rules of the agent tree that a per-node schema cannot express (docs/configuration.md, "The agent
 * tree"): which fields belong to which node type, children only on
 * container nodes, names unique in the whole tree. Pure: a parsed tree in, problems out,
 * each with the path of the node it is about (`['agent', 'agents', 1]`).
 */

export interface TreeProblem {
  /** Path of the node from the config's top level, e.g. ['agent', 'agents', 1, 'agents', 0]. */
  path: (string | number)[];
  /** The node's name, so the message names it beside its path. */
  node: string;
  message: string;
}

const CONTAINER_TYPES = ['sequential', 'parallel', 'loop'] as const;

/** Node fields by the node types that may carry them; `name` and `type` belong to every node. */
const FIELD_TYPES: Record<string, readonly string[]> = {
  agents: CONTAINER_TYPES,
  model: ['llm'],
  timeout: ['llm'],
  prompt: ['llm', 'a2a'],
  output_key: ['llm', 'a2a'],
  can_exit_loop: ['llm'],
  max_iterations: ['loop'],
  approvals: ['parallel', 'loop'],
  url: ['a2a'],
  description: ['a2a'],
  destructiveHint: ['a2a'],
  a2a: ['llm'],
};

export function treeProblems(root: AgentNodeInput, rootPath: (string | number)[] = ['agent']): TreeProblem[] {
  const problems: TreeProblem[] = [];
  const firstPathOf = new Map<string, string>();

  const visit = (node: AgentNodeInput, path: (string | number)[], inLoop: boolean): void => {
    const problem = (message: string) => problems.push({ path, node: node.name, message });
    const earlier = firstPathOf.get(node.name);
    if (earlier !== undefined) problem(`node names must be unique in the tree; "${node.name}" is also the name of ${earlier}`);
    else firstPathOf.set(node.name, describeNodePath(path));

    for (const [field, types] of Object.entries(FIELD_TYPES)) {
      if ((node as unknown as Record<string, unknown>)[field] !== undefined && !types.includes(node.type)) {
        problem(`"${field}" is a field of ${listed(types)} nodes, not of ${withArticle(node.type)} node`);
      }
    }
    const isContainer = (CONTAINER_TYPES as readonly string[]).includes(node.type);
    if (isContainer && (node.agents === undefined || node.agents.length === 0)) {
      problem(`${withArticle(node.type)} node needs at least one child under "agents"`);
    }
    if (node.type === 'a2a' && node.url === undefined) problem('an a2a node needs a "url"');
    // exit_loop ends the nearest loop above; without one it would cut the pipeline short.
    if (node.can_exit_loop && !inLoop) problem('"can_exit_loop" needs a loop node above this node');
    // Children of a node that may not have them are not walked: the node is already wrong.
    if (isContainer) {
      node.agents?.forEach((child, index) => {
        visit(child, [...path, 'agents', index], inLoop || node.type === 'loop');
      });
    }
  };

  visit(root, rootPath, false);
  return problems;
}

const listed = (words: readonly string[]) => (words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);
// "llm" and "a2a" are read letter by letter: an llm, an a2a.
const withArticle = (type: string) => `${/^[aeiol]/.test(type) && type !== 'loop' ? 'an' : 'a'} ${type}`;

/** `agent.agents[1].agents[0]`, the way config errors write paths. */
export function describeNodePath(path: readonly (string | number)[]): string {
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${part}`)).join('');
}
